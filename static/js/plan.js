// Pure helpers for the planner, tested with node --test (plan.test.mjs).

// plannerQuery turns the planner form's data into the canonical query: one
// topic= per line of the topics box, defaults left out, like the server's
// canonical URL, with the page's embedding and ?theme= (light or dark)
// kept.
export function plannerQuery(data, embed, theme) {
  const q = new URLSearchParams();
  const topics = String(data.get("topics") || "");
  const lines = /[\n\r]/.test(topics) ? topics.split(/[\n\r]+/) : topics.split(/[,;]/);
  for (const line of lines) {
    const t = line.trim();
    if (t) q.append("topic", t);
  }
  const defaults = { mode: "fresh", strategy: "flink", color: "topic" };
  for (const key of ["parallelism", "target", "maxParallelism", "mode", "strategy", "color", "state", "rates", "highlight", "history", "busy", "observed", "capacity", "keyedIn", "keyedBusy", "keyedCapacity", "utilization", "observedAt", "job", "sample"]) {
    const v = data.get(key);
    if (v === null) continue;
    const s = key === "rates" ? String(v) : String(v).trim();
    if (s.trim() === "" || defaults[key] === s) continue;
    q.set(key, s);
  }
  if (embed) q.set("embed", "1");
  if (theme === "light" || theme === "dark") q.set("theme", theme);
  return q.toString();
}

// debounce calls fn once calls have stopped for ms milliseconds.
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
