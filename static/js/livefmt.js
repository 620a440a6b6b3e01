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
