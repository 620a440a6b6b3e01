// Pure helpers of the live pages, tested with node --test.

// formatAge writes an age in seconds like the server does ("4 s ago").
export function formatAge(sec) {
  const s = Math.max(0, Math.floor(sec));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} m ${s % 60} s ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} m ago`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h ago`;
}

// sparkPoints maps samples to canvas points, oldest on the left; negative
// samples (unknown) are skipped. The y axis runs from 0 to the largest
// sample, so a flat line at the bottom means "no lag".
export function sparkPoints(xs, width, height, pad) {
  const known = xs.map((v, i) => [i, v]).filter(([, v]) => typeof v === "number" && v >= 0);
  if (known.length < 2) return [];
  const top = Math.max(...known.map(([, v]) => v));
  const n = xs.length - 1 || 1;
  return known.map(([i, v]) => [
    pad + ((width - 2 * pad) * i) / n,
    height - pad - (top > 0 ? ((height - 2 * pad) * v) / top : 0),
  ]);
}
