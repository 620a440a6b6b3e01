import { test } from "node:test";
import assert from "node:assert/strict";
import { heightMessage, heightTargets } from "./embedmsg.js";

test("heightTargets resolves self and keeps listed origins once", () => {
  assert.deepEqual(heightTargets(["self"], "https://dash.example.com", ""), ["https://dash.example.com"]);
  assert.deepEqual(heightTargets(["https://a.example", "https://b.example", "https://a.example"], "https://dash", ""), ["https://a.example", "https://b.example"]);
  assert.deepEqual(heightTargets([], "https://dash", ""), []);
});

test("heightTargets keeps only the host page's origin when the browser names it", () => {
  assert.deepEqual(heightTargets(["self", "https://portal.example"], "https://dash", "https://portal.example"), ["https://portal.example"]);
  assert.deepEqual(heightTargets(["self", "https://portal.example"], "https://dash", "https://dash"), ["https://dash"]);
  // Framed by an origin the page does not list: nothing is posted.
  assert.deepEqual(heightTargets(["https://portal.example"], "https://dash", "https://evil.example"), []);
});

test("heightTargets never posts to any origin", () => {
  assert.deepEqual(heightTargets(["*", "self"], "https://dash", ""), ["https://dash"]);
  // An opaque origin (a sandboxed frame) names no window.
  assert.deepEqual(heightTargets(["self"], "", ""), []);
});

test("heightMessage is the documented message", () => {
  assert.deepEqual(heightMessage(412.2, "why,grid", "https://dash/jobs/j/vertices/v?embed=1"),
    { type: "skewscope:height", height: 413, part: "why,grid", url: "https://dash/jobs/j/vertices/v?embed=1" });
  assert.deepEqual(heightMessage(undefined, undefined, "u"), { type: "skewscope:height", height: 0, part: "", url: "u" });
});
