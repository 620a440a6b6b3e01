// Live pages: subscribe to the page's view over the websocket and update
// its figures in place. An update (views.Update on the server) maps the
// data-live keys of the page's elements to texts (t), meter values (m),
// data times (ages) and sparkline samples (spark: the whole series, or
// with "after" and "keep" the samples to append), and carries the
// partition cells by their index in the page (c: colour level, text, state
// class and title, each state and title named once); the server renders
// the page and builds the update from one model, so every key names one
// element. Text is set with textContent and levels and titles as
// attributes; nothing is parsed as HTML. When the layout changes (another
// shape, a key the page does not have, another number of cells), the
// page's own server rendering is fetched and swapped in.

import { appendSamples, compareKeys, formatAge, keysHash, reconnectDelay, sparkData, sparkRange } from "./livefmt.js";
import { ids } from "./ids.js";
import uPlot from "../vendor/uplot/uPlot.esm.js";

// inView reports whether an element is wholly in the viewport.
function inView(el) {
  if (!el) return false;
  const r = el.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= innerHeight;
}

export function startLive(root) {
  // following is true while the page keeps a link's highlighted row in view.
  let following = false;
  const follow = () => {
    if (!following) return;
    const hl = root.querySelector("tr.hl");
    if (hl && !inView(hl)) hl.scrollIntoView({ block: "center" });
  };
  const base = document.body.dataset.base || "";
  const topic = root.getAttribute(ids.liveTopic);
  let byKey = null;
  // cells are the page's partition cells in the order of their keys,
  // which the update's cells follow, and cellsHash the hash of those keys
  // that the update names (see views.Update).
  let cells = [];
  let cellsHash = "";
  let ws = null;
  let retry = 500;
  let refetching = false;
  // askedWhole is true from a subscription asking for whole sparklines
  // until an update brings them.
  let askedWhole = false;
  let lastShape = root.getAttribute(ids.shape) || "";

  const collect = () => {
    // A key names one element, and its copies (data-live-copy) shown
    // elsewhere on the page.
    byKey = new Map();
    for (const el of root.querySelectorAll(`[${ids.live}]`)) {
      const k = el.getAttribute(ids.live);
      if (!byKey.has(k)) byKey.set(k, []);
      byKey.get(k).push(el);
    }
    cells = [...root.querySelectorAll(`[${ids.live}][data-st]`)]
      .map((el) => [el.getAttribute(ids.live), el])
      .sort(([a], [b]) => compareKeys(a, b));
    cellsHash = keysHash(cells.map(([k]) => k));
    cells = cells.map(([, el]) => el);
  };

  const setState = (state) => {
    for (const el of document.querySelectorAll(`[${ids.liveState}]`)) el.textContent = state;
    for (const el of document.querySelectorAll(".livebar .dot")) el.classList.toggle("stale", state !== "live");
  };

  // each calls f(element, value) for every key of part, and reports
  // whether every key names an element of the page.
  const each = (part, f) => {
    for (const [k, v] of Object.entries(part || {})) {
      const els = byKey.get(k);
      if (!els) return false;
      for (const el of els) f(el, v);
    }
    return true;
  };

  // applyCells sets each cell's colour level, text, state class and
  // reading from c = {k: keys' hash, st: [states], ti: [readings], kd:
  // [[level, state index, reading index], …], x: one character per cell,
  // its triple's index in kd (cellCodes), tx: the cells' texts joined by
  // "|"}, or, in place of kd, x and tx, v: [level, text, state index,
  // reading index, …], four values per cell; the cells in the order of
  // their keys. It reports false when the update's cells are not the
  // page's (another hash or number of cells).
  const cellCodes = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_";
  const cellValues = (c) => {
    if (typeof c.x === "string" && typeof c.tx === "string" && Array.isArray(c.kd)) {
      const texts = c.tx.split("|");
      if (c.x.length !== cells.length || texts.length !== cells.length) return null;
      const v = new Array(4 * cells.length);
      for (let n = 0; n < cells.length; n++) {
        const kind = c.kd[cellCodes.indexOf(c.x[n])];
        if (!Array.isArray(kind) || kind.length !== 3) return null;
        v[4 * n] = kind[0];
        v[4 * n + 1] = texts[n];
        v[4 * n + 2] = kind[1];
        v[4 * n + 3] = kind[2];
      }
      return v;
    }
    const v = Array.isArray(c.v) ? c.v : [];
    return v.length === 4 * cells.length ? v : null;
  };
  const applyCells = (c) => {
    if (!c) return true;
    const states = Array.isArray(c.st) ? c.st : [];
    const titles = Array.isArray(c.ti) ? c.ti : [];
    if (c.k !== cellsHash) return false;
    const v = cellValues(c);
    if (!v) return false;
    for (let n = 0; n < cells.length; n++) {
      const el = cells[n];
      const s = String(v[4 * n]);
      const text = String(v[4 * n + 1]);
      const state = String(states[v[4 * n + 2]] ?? "");
      const title = String(titles[v[4 * n + 3]] ?? "");
      if (el.dataset.l !== s) el.dataset.l = s;
      const i = el.querySelector("i");
      if (i && i.textContent !== text) i.textContent = text;
      // The state is one class of the cell, named in its data-st.
      const was = el.dataset.st || "";
      if (was !== state) {
        if (was) el.classList.remove(was);
        if (state) el.classList.add(state);
        el.dataset.st = state;
      }
      // The reading is the figure's title; without one the cell's own
      // (static) title shows.
      if (i && (i.getAttribute("title") || "") !== title) {
        if (title) i.setAttribute("title", title);
        else i.removeAttribute("title");
      }
    }
    return true;
  };

  // applySparks draws the update's sparklines. A sparkline is [samples,
  // column max, label]; its table's axis (times) comes first in the
  // update, so rows draw at the new times. An update with "after" carries
  // only the samples to append after the axis's sample of that time,
  // keeping the last "keep": a page whose last time is another (it missed
  // an update, or was rendered anew) subscribes again, which brings the
  // whole series with the next update.
  const applySparks = (u) => {
    const appending = typeof u.after === "number";
    if (!appending) askedWhole = false;
    if (appending) {
      for (const k of Object.keys(u.spark || {})) {
        for (const el of byKey.get(k) || []) {
          if (el.hasAttribute(ids.sparkAxis) && sparkAxisLast(el) !== u.after) {
            resubscribe();
            return true;
          }
        }
      }
    }
    const keep = Number(u.keep) || 0;
    const series = (el, attr, xs) => {
      if (!appending) return xs;
      return appendSamples(el._xs || parseSamples(el.getAttribute(attr)), xs, keep);
    };
    return each(u.spark, (el, [xs = [], max = 0, label = ""] = []) => {
      if (!Array.isArray(xs)) xs = [];
      if (el.hasAttribute(ids.sparkAxis)) {
        const times = series(el, ids.sparkAxis, xs);
        el._xs = times;
        el.setAttribute(ids.sparkAxis, JSON.stringify(times));
        return;
      }
      el.setAttribute(ids.sparkMax, String(max));
      if (el.getAttribute("aria-label") !== label) {
        el.setAttribute("aria-label", label);
        el.setAttribute("title", label);
      }
      const samples = series(el, ids.spark, xs);
      el._xs = samples;
      drawSpark(el, samples);
    });
  };

  // resubscribe asks the server for whole updates again.
  const resubscribe = () => {
    if (askedWhole || !ws || ws.readyState !== WebSocket.OPEN) return;
    askedWhole = true;
    ws.send(JSON.stringify({ subscribe: [topic] }));
  };

  const apply = (u) => {
    if (!byKey) collect();
    if (u.shape !== lastShape) {
      refetch();
      return;
    }
    const known =
      each(u.t, (el, v) => {
        if (el.textContent !== v) el.textContent = v;
      }) &&
      applyCells(u.c) &&
      each(u.m, (el, v) => {
        // A meter shows its value; any other element takes it as its
        // colour step (data-level), which the style sheet colours.
        if (el instanceof HTMLMeterElement) el.value = Number(v);
        else if (el.dataset.level !== String(v)) el.dataset.level = String(v);
      }) &&
      applySparks(u) &&
      each(u.ages, (el, v) => {
        el.setAttribute(ids.at, String(v));
      });
    if (!known) {
      refetch();
      return;
    }
    setState(u.stale ? "stale" : "live");
    tick();
    follow();
  };

  // refetch swaps in the server's rendering of this page (same URL).
  const refetch = async () => {
    if (refetching) return;
    refetching = true;
    try {
      const resp = await fetch(location.href, { headers: { Accept: "text/html" } });
      if (!resp.ok) return;
      const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
      const fresh = doc.querySelector(`[${ids.liveTopic}="${CSS.escape(topic)}"]`);
      if (!fresh) return;
      // A highlighted row that was in view stays in view: the new
      // rendering may be taller above it (a line more in the why panel).
      const keep = following || inView(root.querySelector("tr.hl"));
      const adopted = document.adoptNode(fresh);
      root.replaceWith(adopted);
      root = adopted;
      if (keep) root.querySelector("tr.hl")?.scrollIntoView({ block: following ? "center" : "nearest" });
      lastShape = root.getAttribute(ids.shape) || "";
      collect();
      drawAll();
      tick();
      // A change carries only what moved since the socket's last update,
      // which may be older or newer than this rendering: the next update
      // comes whole.
      resubscribe();
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
      askedWhole = false;
      ws.send(JSON.stringify({ subscribe: [topic] }));
    });
    ws.addEventListener("message", (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg && Array.isArray(msg.subscribed)) retry = 500;
      if (msg && msg.topic === topic && msg.data) apply(msg.data);
    });
    ws.addEventListener("close", (ev) => {
      const d = reconnectDelay(ev.code, retry);
      setState(d.refused ? `refused: ${ev.reason || "over a limit"}; retrying in ${Math.round(d.wait / 1000)} s` : "reconnecting");
      setTimeout(connect, d.wait);
      retry = d.next;
    });
  };

  const tick = () => {
    const now = Date.now();
    for (const el of document.querySelectorAll(`[${ids.age}][${ids.at}]`)) {
      const at = Number(el.getAttribute(ids.at));
      const txt = at > 0 ? formatAge((now - at) / 1000) : "never";
      if (el.textContent !== txt) el.textContent = txt;
    }
  };

  const drawAll = () => {
    for (const c of root.querySelectorAll(`[${ids.spark}]`)) {
      c._xs = parseSamples(c.getAttribute(ids.spark));
      drawSpark(c, c._xs);
    }
  };

  collect();
  drawAll();
  tick();
  setInterval(tick, 1000);
  // A link's highlighted row is brought into view, and kept there while
  // updates and new renderings change the page above it, until the reader
  // scrolls or types; unless the page opens with its brief, which answers
  // for the row on the first screen and links to it.
  if (root.querySelector("tr.hl") && !root.querySelector(".brief")) {
    following = true;
    for (const ev of ["wheel", "touchstart", "keydown", "mousedown"]) {
      addEventListener(ev, () => (following = false), { once: true, passive: true });
    }
    follow();
    addEventListener("load", follow, { once: true });
  }
  connect();
}

// parseSamples reads a data-spark or data-spark-axis attribute: a JSON
// array of numbers, [] when it is not one.
function parseSamples(attr) {
  try {
    const xs = JSON.parse(attr || "[]");
    return Array.isArray(xs) ? xs : [];
  } catch {
    return [];
  }
}

// sparkAxisLast is the time of the last sample on a sparkline axis
// element, undefined when it has none.
function sparkAxisLast(el) {
  const xs = el._xs || parseSamples(el.getAttribute(ids.sparkAxis));
  return xs.length ? xs[xs.length - 1] : undefined;
}

// sparkTimes are the times of el's samples: its table's axis (data-spark-axis
// on the column head).
function sparkTimes(el) {
  const axis = el.closest("table")?.querySelector(`[${ids.sparkAxis}]`);
  if (axis?._xs) return axis._xs;
  try {
    return JSON.parse(axis?.getAttribute(ids.sparkAxis) || "[]") || [];
  } catch {
    return [];
  }
}

// drawSpark draws a row's recent lag or rate with uPlot (vendored, see
// static/vendor/VERSIONS.md) at the samples' times: no axes, legend or
// cursor, y from 0 to the column's max (data-spark-max), shared by its rows.
function drawSpark(el, xs) {
  const { data, known } = sparkData(xs, sparkTimes(el));
  if (el._plot) {
    el._plot.setData(data);
    return;
  }
  if (known < 2) return;
  el._plot = new uPlot(
    {
      width: Number(el.dataset.width) || 120,
      height: Number(el.dataset.height) || 24,
      legend: { show: false },
      cursor: { show: false },
      select: { show: false },
      axes: [{ show: false }, { show: false }],
      scales: { x: { time: false }, y: { range: () => sparkRange(Number(el.getAttribute(ids.sparkMax))) } },
      series: [{}, { stroke: getComputedStyle(el).color || "#555", width: 1.5, points: { show: false } }],
    },
    data,
    el,
  );
}
