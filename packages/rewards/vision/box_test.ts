import assert from "node:assert/strict";
import fc from "fast-check";
import { type Box, boxIou, parseBox } from "./box.ts";

const box = fc.tuple(
  fc.integer({ min: -50, max: 50 }),
  fc.integer({ min: -50, max: 50 }),
  fc.integer({ min: 1, max: 60 }),
  fc.integer({ min: 1, max: 60 }),
).map(([x, y, w, h]): Box => [x, y, x + w, y + h]);

Deno.test("boxIou: in [0, 1], symmetric, 1 on itself, matches a pixel count", () => {
  fc.assert(
    fc.property(box, box, (a, b) => {
      const v = boxIou(a, b);
      assert.ok(v >= 0 && v <= 1);
      assert.equal(boxIou(b, a), v);
      assert.equal(boxIou(a, a), 1);
      // Count unit cells.
      let inter = 0, union = 0;
      for (let y = -50; y < 110; y++) {
        for (let x = -50; x < 110; x++) {
          const ia = x >= a[0] && x < a[2] && y >= a[1] && y < a[3];
          const ib = x >= b[0] && x < b[2] && y >= b[1] && y < b[3];
          if (ia && ib) inter++;
          if (ia || ib) union++;
        }
      }
      assert.ok(Math.abs(v - inter / union) < 1e-12);
    }),
    { numRuns: 60 },
  );
  assert.throws(
    () => boxIou([0, 0, 0, 1], [0, 0, 1, 1]),
    /boxIou: a must be a box \[x1, y1, x2, y2\]/,
  );
  assert.throws(() => boxIou([0, 0, 1, 1], [0, 0, NaN, 1]), /boxIou: b must be a box/);
});

Deno.test("parseBox: the usual spellings of four numbers", () => {
  for (
    const s of [
      "1,2,3,4",
      " 1, 2, 3, 4 ",
      "[1, 2, 3, 4]",
      "(1,2,3,4)",
      "(1,2),(3,4)",
      "(1, 2) (3, 4)",
      "1 2 3 4",
      "<|box_start|>(1,2),(3,4)<|box_end|>",
      "1.0,2,3.00,4.",
      "+1,2,3,4",
    ]
  ) assert.deepEqual(parseBox(s), [1, 2, 3, 4], s);
  assert.deepEqual(parseBox("0.5,.5,10.25,20"), [0.5, 0.5, 10.25, 20]);
});

Deno.test("parseBox: everything else is null, fast, never a throw", () => {
  for (
    const s of [
      "",
      "1,2,3",
      "1,2,3,4,5",
      "3,4,1,2",
      "1,2,1,4",
      "1e999,2,3,4",
      "NaN,2,3,4",
      "Infinity,0,1,1",
      "0x1,2,3,4",
      "1;2;3;4",
      "x1=1, y1=2, x2=3, y2=4",
      "12345678,0,99999999,1",
      "1,2,3,4".repeat(1000),
      "[".repeat(100_000),
      "1,".repeat(100_000),
      "--1,2,3,4",
      "1..2,2,3,4",
    ]
  ) {
    const t0 = performance.now();
    assert.equal(parseBox(s), null, s.slice(0, 40));
    assert.ok(performance.now() - t0 < 50);
  }
  assert.equal(parseBox(5 as unknown as string), null);
});
