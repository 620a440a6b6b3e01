// skewscope's page enhancements. Pages work without JavaScript; this module
// makes the planner update as inputs change, keeping the URL in step so any
// view stays bookmarkable. It never builds HTML from data: it swaps in nodes
// parsed from the server's own rendering, and sets text with textContent.

import { plannerQuery, debounce } from "./plan.js";
import { ids } from "./ids.js";

const form = document.getElementById(ids.planForm);
if (form) {
  enhancePlanner(form);
}

function enhancePlanner(form) {
  let inflight = null;
  const base = document.body.dataset.base || "";
  const embed = new URLSearchParams(location.search).get("embed") === "1";

  const update = debounce(async () => {
    const q = plannerQuery(new FormData(form), embed);
    const url = `${base}/plan?${q}`;
    if (inflight) inflight.abort();
    inflight = new AbortController();
    document.body.classList.add("busy");
    try {
      // Short queries go by GET so the URL is the plan; long pastes are
      // posted and rendered in place.
      const long = url.length > 30000;
      const resp = await fetch(long ? `${base}/plan` : url, {
        method: long ? "POST" : "GET",
        body: long ? new URLSearchParams(new FormData(form)) : undefined,
        headers: long ? { "X-Skewscope-Fragment": "1" } : {},
        signal: inflight.signal,
      });
      const html = await resp.text();
      const doc = new DOMParser().parseFromString(html, "text/html");
      if (!doc.getElementById(ids.planResults)) {
        // Not a planner page (a proxy error, a 5xx): keep what is shown
        // and say so, rather than clearing it.
        showError(`Could not update the plan: the server answered ${resp.status} ${resp.statusText}.`);
        return;
      }
      swap(doc, ids.planResults);
      for (const el of document.querySelectorAll(`[${ids.errorFor}]`)) {
        const fresh = doc.querySelector(`[${ids.errorFor}="${CSS.escape(el.getAttribute(ids.errorFor))}"]`);
        el.textContent = fresh ? fresh.textContent : "";
        const input = form.elements.namedItem(el.getAttribute(ids.errorFor));
        if (input && input.setAttribute) {
          input.setAttribute("aria-invalid", el.textContent ? "true" : "false");
        }
      }
      const hint = doc.getElementById(ids.maxpHint);
      const hintHere = document.getElementById(ids.maxpHint);
      if (hint && hintHere) hintHere.textContent = hint.textContent;
      const maxp = doc.getElementById(ids.maxpField);
      if (maxp) form.elements.namedItem("maxParallelism").placeholder = maxp.placeholder;
      // The URL follows the inputs, also when they are invalid, so that a
      // reload shows the same messages.
      if (!long) history.replaceState(null, "", url);
    } catch (err) {
      if (err.name !== "AbortError") {
        showError(`Could not update the plan: ${err.message}`);
      }
    } finally {
      document.body.classList.remove("busy");
    }
  }, 250);

  form.addEventListener("input", update);
  form.addEventListener("change", update);
}

// showError puts a message under the first field, as text.
function showError(msg) {
  const el = document.querySelector(`[${ids.errorFor}="topics"]`);
  if (el) el.textContent = msg;
}

// swap replaces the element with the given id by the one in doc.
function swap(doc, id) {
  const fresh = doc.getElementById(id);
  const here = document.getElementById(id);
  if (fresh && here) {
    here.replaceWith(document.importNode(fresh, true));
  }
}

// Live pages subscribe to their view and update in place.
const liveRoot = document.querySelector(`[${ids.liveTopic}]`);
if (liveRoot) {
  import("./live.js").then((m) => m.startLive(liveRoot));
}
