import { test } from "node:test";
import assert from "node:assert/strict";
import { appendSamples, compareKeys, formatAge, keysHash, reconnectDelay, sparkData, sparkRange } from "./livefmt.js";

test("formatAge matches the server's wording", () => {
  assert.equal(formatAge(0), "0 s ago");
  assert.equal(formatAge(4.9), "4 s ago");
  assert.equal(formatAge(200), "3 m 20 s ago");
  assert.equal(formatAge(7500), "2 h 5 m ago");
  assert.equal(formatAge(-3), "0 s ago");
});

test("sparkData indexes samples and leaves unknown ones as gaps", () => {
  assert.deepEqual(sparkData([]), { data: [[], []], known: 0 });
  assert.deepEqual(sparkData([5]), { data: [[0], [5]], known: 1 });
  assert.deepEqual(sparkData([1, -1, 3]), { data: [[0, 1, 2], [1, null, 3]], known: 2 });
  assert.deepEqual(sparkData([0, "x", null, 0]), { data: [[0, 1, 2, 3], [0, null, null, 0]], known: 2 });
});

test("sparkData puts samples at their times when there is one per sample", () => {
  assert.deepEqual(sparkData([1, -1, 3], [100, 102.5, 160]), { data: [[100, 102.5, 160], [1, null, 3]], known: 2 });
  // Times that do not match the samples (an update between the two) fall back to indexes.
  assert.deepEqual(sparkData([1, 3], [100]), { data: [[0, 1], [1, 3]], known: 2 });
});

test("sparkRange spans 0 to the column's max, whatever the series' own max", () => {
  assert.deepEqual(sparkRange(1000), [-80, 1080]);
  assert.deepEqual(sparkRange(0), [-0.08, 1.08]);
  assert.deepEqual(sparkRange(undefined), [-0.08, 1.08]);
});

test("reconnectDelay backs off, and longer after a refusal", () => {
  assert.deepEqual(reconnectDelay(1006, 500), { wait: 500, next: 1000, refused: false });
  assert.deepEqual(reconnectDelay(1001, 15000), { wait: 15000, next: 15000, refused: false });
  assert.deepEqual(reconnectDelay(1008, 500), { wait: 30000, next: 60000, refused: true });
  assert.deepEqual(reconnectDelay(1009, 60000), { wait: 60000, next: 120000, refused: true });
  assert.deepEqual(reconnectDelay(1008, 120000), { wait: 120000, next: 120000, refused: true });
  // After a refusal an ordinary close still waits no more than 15 s.
  assert.deepEqual(reconnectDelay(1006, 120000), { wait: 15000, next: 15000, refused: false });
});

test("appendSamples adds an update's samples and keeps the window", () => {
  assert.deepEqual(appendSamples([1, 2, 3], [4, 5], 4), [2, 3, 4, 5]);
  assert.deepEqual(appendSamples([1, 2], [3], 5), [1, 2, 3]);
  assert.deepEqual(appendSamples([1, 2], [], 1), [2]);
  // Without a bound, or with a bad one, nothing is cut.
  assert.deepEqual(appendSamples([1], [2], 0), [1, 2]);
  assert.deepEqual(appendSamples([1], "x", 3), [1]);
  const base = [1, 2];
  appendSamples(base, [3], 2);
  assert.deepEqual(base, [1, 2], "the page's series is not changed in place");
});

test("keysHash and compareKeys agree with the server's cell keys (views.appendCells)", () => {
  assert.equal(keysHash(["c0.0"]), "60f97d18");
  assert.equal(keysHash(["c0.0", "c0.1", "c1.0"]), "cca9dd04");
  assert.deepEqual(["c1.0", "c10.2", "c0.1", "c1.12", "c1.2"].sort(compareKeys), ["c0.1", "c1.0", "c1.12", "c1.2", "c10.2"]);
  // By UTF-8 bytes, as Go compares: U+FF61 before U+1F600 (UTF-16 puts it after).
  assert.deepEqual(["c\u{1F600}", "c\uFF61"].sort(compareKeys), ["c\uFF61", "c\u{1F600}"]);
});
