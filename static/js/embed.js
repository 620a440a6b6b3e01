// Embedded pages (?embed=1), loaded only there. Their links and forms open
// where the document's <base target> says (?target=, default _top), those
// live.js swaps in later too; this module posts the content's height to
// the host page, so that a portal can size its iframe without scrollbars:
//
//   {type: "skewscope:height", height: N, part: "why,grid", url: location.href}
//
// posted with postMessage to each origin the server lists (the exact
// origins of --web.frame-ancestors; the page's own for 'self'), never to
// "*". It builds no HTML and changes no element.

import { heightMessage, heightTargets } from "./embedmsg.js";
import { ids } from "./ids.js";

const body = document.body;
if (window.parent !== window) {
  const listed = (body.getAttribute(ids.heightOrigins) || "").split(/\s+/).filter(Boolean);
  const ancestors = location.ancestorOrigins;
  const parent = ancestors && ancestors.length > 0 ? ancestors[0] : "";
  const origins = heightTargets(listed, location.origin, parent);
  const part = body.getAttribute(ids.part) || "";
  let last = -1;
  // The content's height is the body's: the document's own scrollHeight
  // is never less than the frame's, so a tile would never shrink.
  const post = () => {
    const height = Math.ceil(body.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    const msg = heightMessage(height, part, location.href);
    for (const o of origins) window.parent.postMessage(msg, o);
  };
  if (origins.length > 0) {
    const ro = new ResizeObserver(post);
    ro.observe(document.documentElement);
    ro.observe(body);
    post();
  }
}
