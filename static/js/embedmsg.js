// Pure helpers of the embedded pages' script (embed.js), tested with
// node --test.

// heightTargets are the origins an embedded page posts its height to.
// listed are the origins the server names on the page (data-height-origins:
// the exact origins of --web.frame-ancestors, "self" for 'self'); self is
// the page's own origin. When the browser names the host page's origin
// (location.ancestorOrigins), only that one of them is kept, so that no
// message is addressed to a window that would refuse it. A message is never
// posted to "*": a page that no listed origin frames posts nothing.
export function heightTargets(listed, self, parent) {
  const out = [];
  for (const o of listed) {
    const origin = o === "self" ? self : o;
    if (!origin || origin === "*" || out.includes(origin)) continue;
    if (parent && origin !== parent) continue;
    out.push(origin);
  }
  return out;
}

// heightMessage is the message an embedded page posts to its host page.
export function heightMessage(height, part, url) {
  return { type: "skewscope:height", height: Math.ceil(Number(height) || 0), part: String(part || ""), url: String(url) };
}

