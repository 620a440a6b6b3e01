import { test } from "node:test";
import assert from "node:assert/strict";
import { plannerQuery } from "./plan.js";

function form(obj) {
  const m = new Map(Object.entries(obj));
  return { get: (k) => (m.has(k) ? m.get(k) : null) };
}

test("topics become repeated topic= and defaults are dropped", () => {
  const q = plannerQuery(form({ topics: "orders:12\npayments:6\n", parallelism: "4", target: " 6 ", mode: "fresh", strategy: "flink", color: "topic", rates: "" }), false);
  assert.equal(q, "topic=orders%3A12&topic=payments%3A6&parallelism=4&target=6");
});

test("single-line topics split on commas", () => {
  const q = plannerQuery(form({ topics: "a:1, b:2" }), true);
  assert.equal(q, "topic=a%3A1&topic=b%3A2&embed=1");
});

test("hostile names are encoded, not interpreted", () => {
  const q = plannerQuery(form({ topics: "<script>alert(1)</script>:3" }), false);
  assert.equal(new URLSearchParams(q).get("topic"), "<script>alert(1)</script>:3");
});

test("non-default mode and strategy are kept", () => {
  const q = plannerQuery(form({ topics: "o:3", mode: "restore", strategy: "kafka-range" }), false);
  assert.equal(q, "topic=o%3A3&mode=restore&strategy=kafka-range");
});

test("a restore history is kept", () => {
  const q = plannerQuery(form({ topics: "o:3", parallelism: "6", history: " 4,6 " }), false);
  assert.equal(q, "topic=o%3A3&parallelism=6&history=4%2C6");
});

test("the page's theme is kept, and only a theme the server knows", () => {
  assert.equal(plannerQuery(form({ topics: "o:3" }), true, "dark"), "topic=o%3A3&embed=1&theme=dark");
  assert.equal(plannerQuery(form({ topics: "o:3" }), false, "light"), "topic=o%3A3&theme=light");
  assert.equal(plannerQuery(form({ topics: "o:3" }), false, "sepia"), "topic=o%3A3");
  assert.equal(plannerQuery(form({ topics: "o:3" }), false, null), "topic=o%3A3");
});
