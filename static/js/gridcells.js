// Pure helpers for the planner's compact grids (grids of more than 2,000
// partitions), tested with node --test (gridcells.test.mjs). A compact row
// carries its cells as codes (views.GridRow.Codes): one per partition,
// "TOPIC:PARTITION[:BAND[:FLAGS]]", TOPIC an index into the grid's topic
// names, BAND the rate band 1..9 (0: no rate), FLAGS m (changes subtask),
// u (owner not fixed by Flink) and h (highlighted).

// parseCells reads a row's codes.
export function parseCells(codes) {
  const out = [];
  for (const code of String(codes || "").split(" ")) {
    if (!code) continue;
    const [t, p, band = "0", flags = ""] = code.split(":");
    out.push({
      topic: Number(t), partition: Number(p), band: Number(band) || 0,
      moved: flags.includes("m"), uncertain: flags.includes("u"), highlight: flags.includes("h"),
    });
  }
  return out;
}

// keyGroupRange is the key groups of subtask i of p under maxParallelism
// maxP, as Flink's KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex
// (assign.KeyGroupRangeFor) gives them.
export function keyGroupRange(maxP, p, i) {
  return { start: Math.floor((i * maxP + p - 1) / p), end: Math.floor(((i + 1) * maxP - 1) / p) };
}

// subtaskTitle is a compact row's header title, like the server's for small
// grids.
export function subtaskTitle(i, range, busiest, idle) {
  let s = `subtask ${i} · key groups ${range.start}–${range.end}`;
  if (busiest) s += " · busiest";
  if (idle) s += " · idle: no partitions";
  return s;
}

// rateText says which rates a band holds: band b of 9 are the rates from
// (b-1)/8.999 up to b/8.999 of the highest (web/plangrid.go rateBand).
export function rateText(band, maxRate) {
  if (!(maxRate > 0)) return "";
  if (band <= 0) return "no records";
  const lo = ((band - 1) * maxRate) / 8.999;
  const hi = Math.min(maxRate, (band * maxRate) / 8.999);
  return `${fmtRate(lo)}–${fmtRate(hi)} records/s`;
}

function fmtRate(x) {
  return x >= 100 ? Math.round(x).toLocaleString("en-US") : String(Math.round(x * 100) / 100);
}

// cellText describes one cell: its partition, then what its colour and
// marks say.
export function cellText(cell, topics, maxRate) {
  const parts = [`${topicName(topics, cell.topic)}-${cell.partition}`];
  const rate = rateText(cell.band, maxRate);
  if (rate) parts.push(rate);
  if (cell.moved) parts.push("changes subtask");
  if (cell.uncertain) parts.push("owner not determined: depends on an order Flink does not fix");
  if (cell.highlight) parts.push("highlighted");
  return parts.join(" · ");
}

// rowText lists a row's partitions for screen readers. A rescale moves most
// partitions, so a row whose partitions all change subtask says so once.
export function rowText(cells, topics) {
  const all = cells.length > 1 && cells.every((c) => c.moved);
  const items = cells.map((c) => {
    let s = `${topicName(topics, c.topic)}-${c.partition}`;
    if (c.moved && !all) s += " (changes subtask)";
    if (c.uncertain) s += " (owner not fixed by Flink)";
    if (c.highlight) s += " (highlighted)";
    return s;
  });
  return (all ? "all change subtask: " : "") + items.join(", ");
}

function topicName(topics, i) {
  return typeof topics[i] === "string" ? topics[i] : `topic ${i}`;
}

// Cell geometry in CSS pixels.
export const cell = { w: 10, h: 14, gapX: 1, gapY: 2 };

// layoutCells fits n cells into rows of at most width pixels.
export function layoutCells(n, width) {
  const pitchX = cell.w + cell.gapX;
  const cols = Math.max(1, Math.min(n, Math.floor((width + cell.gapX) / pitchX)));
  const lines = Math.max(1, Math.ceil(n / cols));
  return { cols, lines, width: cols * pitchX - cell.gapX, height: lines * (cell.h + cell.gapY) - cell.gapY };
}

// cellAt is the index of the cell at (x, y) in a layout of n cells, or -1.
export function cellAt(x, y, layout, n) {
  const col = Math.floor(x / (cell.w + cell.gapX));
  const line = Math.floor(y / (cell.h + cell.gapY));
  if (col < 0 || line < 0 || col >= layout.cols) return -1;
  const i = line * layout.cols + col;
  return i < n ? i : -1;
}

// intensity is how much of its topic's colour a cell shows, by rate band,
// as the stylesheet's .c.i1 … .c.i9 mix it with the card colour.
const intensity = [30, 38, 46, 55, 64, 73, 82, 91, 100];

// cellColour is the fill of a cell: palette holds the stylesheet's topic
// colours (t, 8 of them), rate ramp (r, 10) and card colour, as #rrggbb.
export function cellColour(c, byRate, hasRates, palette) {
  if (byRate) return palette.r[Math.max(0, Math.min(9, c.band))];
  const base = palette.t[c.topic % palette.t.length];
  if (!hasRates) return base;
  return mix(base, palette.card, intensity[Math.max(1, Math.min(9, c.band)) - 1] / 100);
}

// mix is colour a in share f over colour b, in sRGB like CSS color-mix.
export function mix(a, b, f) {
  const pa = hex(a), pb = hex(b);
  if (!pa || !pb) return a;
  const ch = (i) => Math.round(pa[i] * f + pb[i] * (1 - f));
  return `rgb(${ch(0)}, ${ch(1)}, ${ch(2)})`;
}

function hex(s) {
  const m = /^#([0-9a-f]{6})$/i.exec(String(s).trim());
  if (!m) return null;
  const n = parseInt(m[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}
