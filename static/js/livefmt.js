// Pure helpers of the live pages, tested with node --test.

// formatAge writes an age in seconds like the server does ("4 s ago").
export function formatAge(sec) {
  const s = Math.max(0, Math.floor(sec));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} m ${s % 60} s ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} m ago`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h ago`;
}

// sparkData turns samples into uPlot's [xs, ys], oldest on the left, at
// their times (seconds) when there is one per sample, else at their index;
// negative samples (unknown) become gaps. known is the number of samples
// that are not gaps: a line needs two.
export function sparkData(xs, times = []) {
  const ys = xs.map((v) => (typeof v === "number" && v >= 0 ? v : null));
  const at = times.length === ys.length ? times : ys.map((_, i) => i);
  return { data: [at.slice(), ys], known: ys.filter((v) => v !== null).length };
}

// sparkRange is the y range of a sparkline whose column's highest sample
// is max: from 0 to max, a little room either side; 0 to 1 when max is
// not positive.
export function sparkRange(max) {
  const m = typeof max === "number" && max > 0 ? max : 1;
  return [-0.08 * m, 1.08 * m];
}

// Close codes with which the server refuses a socket for what it asked
// (1008: a subscription over a bound, 1009: a message too big): asking
// again at once would be refused again, so the page waits longer.
const refusedCodes = new Set([1008, 1009]);

// reconnectDelay says how long to wait before reconnecting after a close
// with code, given the current back-off in ms, and the back-off after
// that: doubling from 0.5 s to 15 s, and from 30 s to 2 min after a
// refusal. The back-off resets only once the server answers a
// subscription, so a socket that opens and is refused at once never
// reconnects in a tight loop.
export function reconnectDelay(code, current) {
  if (refusedCodes.has(code)) {
    const wait = Math.min(Math.max(current, 30000), 120000);
    return { wait, next: Math.min(wait * 2, 120000), refused: true };
  }
  const wait = Math.min(current, 15000);
  return { wait, next: Math.min(wait * 2, 15000), refused: false };
}

// appendSamples is a sparkline's samples after an update that appends
// add to them (see live.js): base then add, of which the last keep (all
// when keep is not positive). base is not changed.
export function appendSamples(base, add, keep) {
  const all = base.concat(Array.isArray(add) ? add : []);
  return keep > 0 ? all.slice(-keep) : all;
}

// compareKeys orders live keys as the server does (Go's strings.Compare:
// by their UTF-8 bytes), for the update's partition cells.
export function compareKeys(a, b) {
  // Keys are ASCII but for odd topic names: compare code units while they
  // are, bytes otherwise.
  const n0 = Math.min(a.length, b.length);
  let i = 0;
  while (i < n0 && a.charCodeAt(i) === b.charCodeAt(i) && a.charCodeAt(i) < 0x80) i++;
  if (i === a.length || i === b.length) return a.length - b.length;
  if (a.charCodeAt(i) < 0x80 && b.charCodeAt(i) < 0x80) return a.charCodeAt(i) - b.charCodeAt(i);
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    if (x[i] !== y[i]) return x[i] - y[i];
  }
  return x.length - y.length;
}

// keysHash is the hash the server sends with an update's partition cells:
// FNV-1a (32 bits, 8 hex digits) of their keys, in order, joined by
// newlines, as UTF-8.
export function keysHash(keys) {
  let h = 0x811c9dc5;
  for (const b of utf8.encode(keys.join("\n"))) {
    h = Math.imul(h ^ b, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

const utf8 = new TextEncoder();
