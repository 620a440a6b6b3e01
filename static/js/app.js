// skewscope's page enhancements. Pages work without JavaScript; this module
// makes the planner update as inputs change, keeping the URL in step so any
// view stays bookmarkable. It never builds HTML from data: it swaps in nodes
// parsed from the server's own rendering, and sets text with textContent.

import { plannerQuery, debounce } from "./plan.js";
import { ids } from "./ids.js";
import { prepareGrids, drawGrids } from "./grid.js";

const form = document.getElementById(ids.planForm);
if (form) {
  drawGrids(document);
  enhancePlanner(form);
}

function enhancePlanner(form) {
  let inflight = null;
  const base = document.body.dataset.base || "";
  const embed = new URLSearchParams(location.search).get("embed") === "1";
  const theme = document.documentElement.dataset.theme || "";

  const update = debounce(async () => {
    const q = plannerQuery(new FormData(form), embed, theme);
    const url = `${base}/plan?${q}`;
    if (inflight) inflight.abort();
    inflight = new AbortController();
    document.body.classList.add("busy");
    // The time from here to the new results on screen is the user timing
    // measure "plan-update"; "plan-update-render" leaves out the request.
    performance.mark("plan-update-start");
    try {
      // Short queries go by GET so the URL is the plan; long pastes are
      // posted and rendered in place.
      const long = url.length > 30000;
      const signal = inflight.signal;
      const load = async (grids) => {
        // The grids shown, which the server leaves out when unchanged; the
        // header also tells it that the form stays, so it sends no rates.
        const headers = { "X-Skewscope-Grids": grids };
        if (long) headers["X-Skewscope-Fragment"] = "1";
        const resp = await fetch(long ? `${base}/plan` : url, {
          method: long ? "POST" : "GET",
          body: long ? new URLSearchParams(new FormData(form)) : undefined,
          headers, signal,
        });
        const html = await resp.text();
        performance.mark("plan-update-response");
        return [resp, new DOMParser().parseFromString(html, "text/html")];
      };
      let [resp, doc] = await load(shownGrids());
      if (!doc.getElementById(ids.planResults)) {
        // Not a planner page (a proxy error, a 5xx): keep what is shown
        // and say so, rather than clearing it.
        showError(`Could not update the plan: the server answered ${resp.status} ${resp.statusText}.`);
        return;
      }
      if (!canSwap(doc)) {
        // A grid the server left out is no longer on the page: ask for
        // all of them.
        [resp, doc] = await load("");
      }
      swapResults(doc);
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
      requestAnimationFrame(() => setTimeout(() => {
        performance.measure("plan-update", "plan-update-start");
        performance.measure("plan-update-render", "plan-update-response");
      }, 0));
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

// shownGrids names the grids on the page with their keys, for the header
// X-Skewscope-Grids: the server leaves out those that have not changed.
function shownGrids() {
  const results = document.getElementById(ids.planResults);
  return [...(results?.querySelectorAll(`[${ids.gridKey}]`) || [])]
    .map((el) => `${el.id.replace(/^grid-/, "")}=${el.getAttribute(ids.gridKey)}`)
    .join(",");
}

// canSwap says whether every grid that doc leaves out (data-kept) is on
// the page with the same key.
function canSwap(doc) {
  return [...doc.querySelectorAll(`[${ids.kept}]`)].every((el) => {
    const old = el.id && document.getElementById(el.id);
    return old && !old.hasAttribute(ids.kept) && old.getAttribute(ids.gridKey) === el.getAttribute(ids.gridKey);
  });
}

// swapResults puts the results of doc in place of the page's. A grid whose
// key (data-grid-key) is the same in both stays where it is, drawn and
// scrolled as the reader left it, and is not even taken out of the page
// (which would make the browser lay it out anew): changing the target
// leaves the "now" grid alone, and the server sent only its place
// (data-kept). The new nodes are moved, not copied, out of doc.
function swapResults(doc) {
  const here = document.getElementById(ids.planResults);
  const fresh = doc.getElementById(ids.planResults);
  if (!here || !fresh) return;
  document.adoptNode(fresh);
  prepareGrids(fresh);
  const kept = new Set();
  for (const el of fresh.querySelectorAll(`[${ids.gridKey}]`)) {
    const old = el.id && document.getElementById(el.id);
    if (old && here.contains(old) && old.getAttribute(ids.gridKey) === el.getAttribute(ids.gridKey)) {
      kept.add(old);
      el.replaceWith(old.cloneNode(false)); // a stand-in, matched below
    }
  }
  if (kept.size === 0) {
    here.replaceWith(fresh);
  } else {
    patch(here, fresh, kept);
  }
  drawGrids(document.getElementById(ids.planResults));
}

// patch makes the children of here those of fresh, keeping the nodes of
// kept (whose stand-ins in fresh have the same id) and the containers on
// their way, in place.
function patch(here, fresh, kept) {
  const next = [...fresh.children].map((n) => {
    const old = n.id ? document.getElementById(n.id) : null;
    if (old && kept.has(old)) return old;
    const holds = [...kept].find((k) => n.querySelector(`#${CSS.escape(k.id)}`));
    if (holds) {
      const oldBox = [...here.children].find((c) => c.contains(holds) && c.tagName === n.tagName && c.className === n.className);
      if (oldBox) {
        patch(oldBox, n, kept);
        return oldBox;
      }
    }
    return n;
  });
  const stay = new Set(next);
  for (const c of [...here.children]) {
    if (!stay.has(c)) c.remove();
  }
  next.forEach((n, i) => {
    if (here.children[i] !== n) here.insertBefore(n, here.children[i] || null);
  });
}

// Live pages subscribe to their view and update in place.
const liveRoot = document.querySelector(`[${ids.liveTopic}]`);
if (liveRoot) {
  import("./live.js").then((m) => m.startLive(liveRoot));
}
