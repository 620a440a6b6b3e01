// Points each <iframe data-skewscope="PATH"> at the dashboard and sizes it
// from the height the embedded page posts:
//   {type: "skewscope:height", height: N, part: "grid", url: "..."}
// A message is taken only from the dashboard's origin and only for the
// frame that sent it.

const params = new URLSearchParams(location.search);
const dashboard = (params.get("dashboard") || "http://localhost:8080").replace(/\/+$/, "");
const origin = new URL(dashboard).origin;
const theme = params.get("theme") || "light";
const frames = [...document.querySelectorAll("iframe[data-skewscope]")];

for (const frame of frames) {
  const url = new URL(dashboard + frame.dataset.skewscope);
  url.searchParams.set("embed", "1");
  url.searchParams.set("theme", theme);
  frame.src = url.href;
}

addEventListener("message", (ev) => {
  if (ev.origin !== origin) return;
  const msg = ev.data;
  if (!msg || msg.type !== "skewscope:height" || !Number.isFinite(msg.height) || msg.height < 0) return;
  const frame = frames.find((f) => f.contentWindow === ev.source);
  if (!frame) return;
  frame.style.height = `${Math.ceil(msg.height)}px`;
  frame.dataset.postedHeight = String(msg.height);
  frame.dataset.postedPart = String(msg.part);
});
