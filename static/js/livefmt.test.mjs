import { test } from "node:test";
import assert from "node:assert/strict";
import { formatAge, sparkPoints } from "./livefmt.js";

test("formatAge matches the server's wording", () => {
  assert.equal(formatAge(0), "0 s ago");
  assert.equal(formatAge(4.9), "4 s ago");
  assert.equal(formatAge(200), "3 m 20 s ago");
  assert.equal(formatAge(7500), "2 h 5 m ago");
  assert.equal(formatAge(-3), "0 s ago");
});

test("sparkPoints scales to the canvas and skips unknown samples", () => {
  assert.deepEqual(sparkPoints([], 100, 20, 0), []);
  assert.deepEqual(sparkPoints([5], 100, 20, 0), []);
  assert.deepEqual(sparkPoints([0, 10], 100, 20, 0), [[0, 20], [100, 0]]);
  const pts = sparkPoints([1, -1, 3], 100, 20, 0);
  assert.equal(pts.length, 2);
  assert.deepEqual(pts[1], [100, 0]);
  assert.deepEqual(sparkPoints([0, 0, 0], 10, 10, 1), [[1, 9], [5, 9], [9, 9]]);
});
