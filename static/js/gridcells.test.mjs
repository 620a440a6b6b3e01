import { test } from "node:test";
import assert from "node:assert/strict";
import {
  parseCells, keyGroupRange, subtaskTitle, rateText, cellText, rowText, layoutCells, cellAt, cellColour, mix,
} from "./gridcells.js";

test("codes with and without rates and flags", () => {
  assert.deepEqual(parseCells("3:17 4:2:0:m 0:9:7 1:1:5:muh"), [
    { topic: 3, partition: 17, band: 0, moved: false, uncertain: false, highlight: false },
    { topic: 4, partition: 2, band: 0, moved: true, uncertain: false, highlight: false },
    { topic: 0, partition: 9, band: 7, moved: false, uncertain: false, highlight: false },
    { topic: 1, partition: 1, band: 5, moved: true, uncertain: true, highlight: true },
  ]);
  assert.deepEqual(parseCells(""), []);
  assert.deepEqual(parseCells(undefined), []);
});

test("key-group ranges tile 0..maxP-1 like Flink's", () => {
  // assign.KeyGroupRangeFor(128, 3, i): 0–42, 43–85, 86–127.
  assert.deepEqual([0, 1, 2].map((i) => keyGroupRange(128, 3, i)), [{ start: 0, end: 42 }, { start: 43, end: 85 }, { start: 86, end: 127 }]);
  for (const [maxP, p] of [[32768, 1280], [32768, 1024], [128, 7], [4096, 4096]]) {
    let next = 0;
    for (let i = 0; i < p; i++) {
      const r = keyGroupRange(maxP, p, i);
      assert.equal(r.start, next, `maxP ${maxP} p ${p} subtask ${i}`);
      assert.ok(r.end >= r.start);
      next = r.end + 1;
    }
    assert.equal(next, maxP);
  }
});

test("titles and texts name the partition and its marks", () => {
  assert.equal(subtaskTitle(5, { start: 10, end: 19 }, true, false), "subtask 5 · key groups 10–19 · busiest");
  assert.equal(subtaskTitle(6, { start: 20, end: 29 }, false, true), "subtask 6 · key groups 20–29 · idle: no partitions");
  const topics = ["orders", "<b>pay</b>"];
  const [a, b] = parseCells("0:3:9:m 1:4:1:u");
  assert.equal(cellText(a, topics, 900), "orders-3 · 800–900 records/s · changes subtask");
  assert.equal(cellText(b, topics, 0), "<b>pay</b>-4 · owner not determined: depends on an order Flink does not fix");
  assert.equal(rateText(0, 900), "no records");
  assert.equal(rateText(3, 0), "");
  assert.equal(rowText(parseCells("0:1:0:m 1:2:0:m"), topics), "all change subtask: orders-1, <b>pay</b>-2");
  assert.equal(rowText(parseCells("0:1:0:m 1:2:0:h"), topics), "orders-1 (changes subtask), <b>pay</b>-2 (highlighted)");
  assert.equal(rowText(parseCells("7:1"), topics), "topic 7-1");
});

test("cells wrap to the width and the pointer finds them", () => {
  const l = layoutCells(16, 60); // 11 px a cell: 5 a line
  assert.deepEqual(l, { cols: 5, lines: 4, width: 54, height: 62 });
  assert.equal(cellAt(0, 0, l, 16), 0);
  assert.equal(cellAt(12, 17, l, 16), 6);
  assert.equal(cellAt(1, 50, l, 16), 15);
  assert.equal(cellAt(12, 50, l, 16), -1);
  assert.equal(cellAt(100, 0, l, 16), -1);
  assert.deepEqual(layoutCells(3, 1000), { cols: 3, lines: 1, width: 32, height: 14 });
});

test("colours follow the stylesheet's palettes", () => {
  const palette = { t: ["#000000", "#ff0000"], r: ["#000000", "#111111", "#222222", "#333333", "#444444", "#555555", "#666666", "#777777", "#888888", "#999999"], card: "#ffffff" };
  const [c] = parseCells("3:1:9");
  assert.equal(cellColour(c, false, false, palette), "#ff0000");
  assert.equal(cellColour(c, false, true, palette), "rgb(255, 0, 0)");
  assert.equal(cellColour(parseCells("1:1:1")[0], false, true, palette), "rgb(255, 179, 179)");
  assert.equal(cellColour(c, true, true, palette), "#999999");
  assert.equal(mix("#000000", "#ffffff", 0.5), "rgb(128, 128, 128)");
  assert.equal(mix("red", "#ffffff", 0.5), "red");
});
