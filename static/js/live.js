// Live pages: subscribe to the page's view over the websocket and update
// its figures in place. Updates are compact JSON (see web/liveupdate.go):
// texts for the [data-t] elements, colour levels for the table's [data-l]
// cells and values for the [data-m] meters, in document order. Text is set
// with textContent and levels as attributes; nothing is parsed as HTML. When
// the layout changes (a new shape), the page's own server rendering is
// fetched and swapped in.

import { formatAge, sparkPoints } from "./livefmt.js";

export function startLive(root) {
  const base = document.body.dataset.base || "";
  const topic = root.dataset.liveTopic;
  let targets = null;
  let ws = null;
  let retry = 500;
  let refetching = false;
  let lastShape = root.dataset.shape || "";

  const collect = () => {
    targets = {
      t: Array.from(root.querySelectorAll("[data-t]")),
      l: Array.from(root.querySelectorAll("tbody [data-l]")),
      m: Array.from(root.querySelectorAll("[data-m]")),
      spark: Array.from(root.querySelectorAll("canvas[data-spark]")),
    };
  };

  const setState = (state) => {
    for (const el of document.querySelectorAll("[data-live-state]")) el.textContent = state;
    for (const el of document.querySelectorAll(".livebar .dot")) el.classList.toggle("stale", state !== "live");
  };

  const apply = (u) => {
    if (!targets) collect();
    if (u.shape !== lastShape) {
      refetch();
      return;
    }
    const t = u.t || [];
    if (t.length !== targets.t.length) {
      refetch();
      return;
    }
    for (let i = 0; i < t.length; i++) {
      if (targets.t[i].textContent !== t[i]) targets.t[i].textContent = t[i];
    }
    const l = u.l || [];
    for (let i = 0; i < l.length && i < targets.l.length; i++) {
      const v = String(l[i]);
      if (targets.l[i].dataset.l !== v) targets.l[i].dataset.l = v;
    }
    const m = u.m || [];
    for (let i = 0; i < m.length && i < targets.m.length; i++) targets.m[i].value = Number(m[i]);
    const sp = u.spark || [];
    for (let i = 0; i < sp.length && i < targets.spark.length; i++) drawSpark(targets.spark[i], sp[i] || []);
    if (u.at) {
      for (const el of root.querySelectorAll("[data-livebar-age], .livebar [data-age]")) el.dataset.at = String(u.at);
    }
    setState(u.stale ? "stale" : "live");
    tick();
  };

  // refetch swaps in the server's rendering of this page (same URL).
  const refetch = async () => {
    if (refetching) return;
    refetching = true;
    try {
      const resp = await fetch(location.href, { headers: { Accept: "text/html" } });
      if (!resp.ok) return;
      const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
      const fresh = doc.querySelector(`[data-live-topic="${CSS.escape(topic)}"]`);
      if (!fresh) return;
      const adopted = document.adoptNode(fresh);
      root.replaceWith(adopted);
      root = adopted;
      lastShape = root.dataset.shape || "";
      targets = null;
      collect();
      drawAll();
      tick();
    } catch (err) {
      setState("stale");
    } finally {
      refetching = false;
    }
  };

  const connect = () => {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(`${proto}//${location.host}${base}/ws`);
    ws.addEventListener("open", () => {
      retry = 500;
      ws.send(JSON.stringify({ subscribe: [topic] }));
    });
    ws.addEventListener("message", (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg && msg.topic === topic && msg.data) apply(msg.data);
    });
    ws.addEventListener("close", () => {
      setState("reconnecting");
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 15000);
    });
  };

  const tick = () => {
    const now = Date.now();
    for (const el of document.querySelectorAll("[data-age][data-at]")) {
      const at = Number(el.dataset.at);
      const txt = at > 0 ? formatAge((now - at) / 1000) : "never";
      if (el.textContent !== txt) el.textContent = txt;
    }
  };

  const drawAll = () => {
    for (const c of root.querySelectorAll("canvas[data-spark]")) {
      let xs = [];
      try {
        xs = JSON.parse(c.dataset.spark || "[]") || [];
      } catch {
        xs = [];
      }
      drawSpark(c, xs);
    }
  };

  collect();
  drawAll();
  tick();
  setInterval(tick, 1000);
  const hl = root.querySelector("tr.hl");
  if (hl) hl.scrollIntoView({ block: "center" });
  connect();
}

function drawSpark(canvas, xs) {
  const ctx = canvas.getContext && canvas.getContext("2d");
  if (!ctx) return;
  const { width, height } = canvas;
  ctx.clearRect(0, 0, width, height);
  const pts = sparkPoints(xs, width, height, 2);
  if (pts.length < 2) return;
  ctx.strokeStyle = getComputedStyle(canvas).color || "#555";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(pts[0][0], pts[0][1]);
  for (let i = 1; i < pts.length; i++) ctx.lineTo(pts[i][0], pts[i][1]);
  ctx.stroke();
}
