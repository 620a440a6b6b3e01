// Draws the planner's compact grids (more than 2,000 partitions). The
// server sends each subtask row's cells as codes in a data attribute
// (gridcells.js reads them); this module lists them as text for screen
// readers, gives each row's header its title, and draws the cells of the
// rows in view into a canvas, whose cells say what they are on hover and
// click. It sets text with textContent only.

import { ids } from "./ids.js";
import {
  parseCells, keyGroupRange, subtaskTitle, cellText, rowText, layoutCells, cellAt, cellColour, cell,
} from "./gridcells.js";

const grids = new WeakMap(); // table → its settings
const drawn = new WeakMap(); // td → its layout and cells, once drawn
const described = new WeakSet(); // rows with their text
let observer = null;

// prepareGrids readies the compact grids under root (a document, or
// results not yet in the page): their settings, and the class that hides
// the codes' text fallback.
export function prepareGrids(root) {
  for (const table of root.querySelectorAll("table.compact")) {
    if (grids.has(table)) continue;
    let topics = [];
    try {
      topics = JSON.parse(table.getAttribute(ids.topics) || "[]");
    } catch {
      topics = [];
    }
    const d = table.dataset;
    grids.set(table, {
      topics,
      byRate: table.getAttribute(ids.colorBy) === "rate",
      maxRate: Number(d.maxRate) || 0,
      p: Number(d.p) || 1,
      maxP: Number(d.maxP) || 1,
      load: { max: Number(d.loadMax) || 1, low: Number(d.loadLow) || 0, high: Number(d.loadHigh) || 0 },
    });
    table.classList.add("drawn");
  }
}

// drawGrids starts drawing the compact grids under root as their groups of
// rows come into view, brings a highlighted row into its grid's view, and in idle
// time gives every row its text (so that a screen reader reads all rows,
// not only those drawn).
export function drawGrids(root) {
  prepareGrids(root);
  if (!observer) {
    observer = new IntersectionObserver(onIntersect, { rootMargin: "200px 0px" });
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", redrawAll);
    let timer = null;
    addEventListener("resize", () => {
      clearTimeout(timer);
      timer = setTimeout(redrawAll, 150);
    });
  }
  for (const table of root.querySelectorAll("table.compact.drawn")) {
    const g = grids.get(table);
    if (!g || g.observed) continue;
    g.observed = true;
    const rows = [...table.tBodies].flatMap((tb) => [...tb.rows]);
    for (const tb of table.tBodies) observer.observe(tb);
    table.addEventListener("mousemove", (e) => describe(table, e, false));
    table.addEventListener("click", (e) => describe(table, e, true));
    const hl = table.querySelector("tbody tr.hl");
    const box = table.closest("section");
    if (hl && box) {
      box.scrollTop = Math.max(0, box.scrollTop + hl.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3);
    }
    describeRows(table, g, rows);
  }
}

// describeRows gives each row its header's title and its partitions as
// text, a slice at a time in idle time; the table is aria-busy meanwhile.
function describeRows(table, g, rows) {
  table.setAttribute("aria-busy", "true");
  let next = 0;
  const idle = window.requestIdleCallback || ((fn) => setTimeout(() => fn({ timeRemaining: () => 8 }), 1));
  const step = (deadline) => {
    while (next < rows.length && deadline.timeRemaining() > 1) {
      const end = Math.min(rows.length, next + 64);
      for (; next < end; next++) describeRow(rows[next], g);
    }
    if (next < rows.length) idle(step);
    else table.removeAttribute("aria-busy");
  };
  idle(step);
}

function describeRow(tr, g) {
  if (described.has(tr)) return;
  described.add(tr);
  const i = subtaskOf(tr);
  const st = tr.querySelector("th .st");
  if (st) {
    st.title = subtaskTitle(i, keyGroupRange(g.maxP, g.p, i), st.classList.contains("busiest"), tr.classList.contains("idle"));
  }
  const td = tr.querySelector(`td[${ids.cells}]`);
  const codes = td?.getAttribute(ids.cells);
  if (codes) {
    const text = document.createElement("span");
    text.className = "sr-only";
    text.textContent = rowText(parseCells(codes), g.topics);
    td.append(text);
  }
}

// onIntersect draws the rows of a group of rows (a tbody) that comes
// into view.
function onIntersect(entries) {
  let palette = null;
  for (const e of entries) {
    if (!e.isIntersecting) continue;
    observer.unobserve(e.target);
    palette ??= readPalette();
    for (const tr of e.target.rows) drawRow(tr, palette);
  }
}

function subtaskOf(tr) {
  const m = /-st-(\d+)$/.exec(tr.id);
  return m ? Number(m[1]) : -1;
}

// readPalette reads the cell colours of the current colour scheme from the
// stylesheet.
function readPalette() {
  const cs = getComputedStyle(document.documentElement);
  const v = (name) => cs.getPropertyValue(name).trim();
  return {
    t: [0, 1, 2, 3, 4, 5, 6, 7].map((i) => v(`--t${i}`)),
    r: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => v(`--r${i}`)),
    card: v("--card"), fg: v("--fg"), hl: "#e69f00",
  };
}

function drawRow(tr, palette) {
  const table = tr.closest("table");
  const g = table && grids.get(table);
  const td = tr.querySelector(`td[${ids.cells}]`);
  const codes = td?.getAttribute(ids.cells);
  if (!g) return;
  describeRow(tr, g);
  drawLoad(tr, g.load);
  if (!codes) return;
  const cells = parseCells(codes);
  const layout = layoutCells(cells.length, Math.max(cell.w, td.clientWidth - 8));
  let canvas = td.querySelector("canvas");
  if (!canvas) {
    canvas = document.createElement("canvas");
    canvas.setAttribute("aria-hidden", "true");
    td.prepend(canvas);
  }
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.ceil(layout.width * dpr);
  canvas.height = Math.ceil(layout.height * dpr);
  canvas.style.width = `${layout.width}px`;
  canvas.style.height = `${layout.height}px`;
  const ctx = canvas.getContext("2d");
  ctx.scale(dpr, dpr);
  const hasRates = g.maxRate > 0;
  cells.forEach((c, i) => {
    const x = (i % layout.cols) * (cell.w + cell.gapX);
    const y = Math.floor(i / layout.cols) * (cell.h + cell.gapY);
    ctx.fillStyle = cellColour(c, g.byRate, hasRates, palette);
    ctx.fillRect(x, y, cell.w, cell.h);
    if (c.moved) {
      // As .c.mv: a dark bar along the cell's foot.
      ctx.fillStyle = "rgba(0, 0, 0, 0.45)";
      ctx.fillRect(x, y + cell.h - 3, cell.w, 3);
    }
    if (c.uncertain) {
      ctx.save();
      ctx.strokeStyle = palette.fg;
      ctx.lineWidth = 1.5;
      ctx.setLineDash([2, 2]);
      ctx.strokeRect(x + 0.75, y + 0.75, cell.w - 1.5, cell.h - 1.5);
      ctx.restore();
    }
    if (c.highlight) {
      ctx.strokeStyle = palette.hl;
      ctx.lineWidth = 2;
      ctx.strokeRect(x + 1, y + 1, cell.w - 2, cell.h - 2);
    }
  });
  drawn.set(td, { layout, cells });
}

// drawLoad fills a row's load bar: its length the row's load against the
// grid's largest, its colour as a meter's with optimum 0 (good up to low,
// bad above high).
function drawLoad(tr, load) {
  const td = tr.querySelector("td.load");
  const lt = td?.querySelector(".lt");
  if (!lt) return;
  const v = Number(lt.textContent.replace(/,/g, ""));
  if (!Number.isFinite(v)) return;
  td.style.setProperty("--f", `${Math.max(0, Math.min(100, (100 * v) / load.max)).toFixed(1)}%`);
  td.classList.toggle("good", v <= load.low);
  td.classList.toggle("bad", v > load.high);
}

// describe says which partition the pointer is on: the canvas's title (the
// hover text) and, on a click, the grid's readout line.
function describe(table, e, click) {
  const canvas = e.target;
  if (!(canvas instanceof HTMLCanvasElement)) return;
  const td = canvas.parentElement;
  const g = grids.get(table);
  const d = td && drawn.get(td);
  if (!g || !d) return;
  const r = canvas.getBoundingClientRect();
  const i = cellAt(e.clientX - r.left, e.clientY - r.top, d.layout, d.cells.length);
  if (i < 0) {
    canvas.removeAttribute("title");
    return;
  }
  const text = `${cellText(d.cells[i], g.topics, g.maxRate)} · subtask ${subtaskOf(td.parentElement)}`;
  if (canvas.title !== text) canvas.title = text;
  if (click) {
    const out = table.parentElement.querySelector(".cell-readout");
    if (out) out.textContent = text;
  }
}

function redrawAll() {
  const palette = readPalette();
  for (const td of document.querySelectorAll(`table.compact td[${ids.cells}]`)) {
    if (drawn.has(td)) drawRow(td.parentElement, palette);
  }
}
