import assert from "node:assert/strict";
import fc from "fast-check";
import { Histogram } from "./histogram.ts";

Deno.test("Histogram: bins are [lo, hi), under/overflow counted, count = values added", () => {
  const h = new Histogram([0, 1, 2, 4]);
  for (const v of [-1, 0, 0.999, 1, 3.5, 4, 100]) h.add(v);
  assert.deepEqual(h.counts, [2, 1, 1]);
  assert.equal(h.underflow, 1);
  assert.equal(h.overflow, 2);
  assert.equal(h.count, 7);
  assert.ok(Math.abs(h.mean - (-1 + 0 + 0.999 + 1 + 3.5 + 4 + 100) / 7) < 1e-12);
  assert.deepEqual(h.labels(), ["<0", "[0,1)", "[1,2)", "[2,4)", ">=4"]);
});

Deno.test("Histogram: matches a linear scan on random values (property)", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: -50, max: 50 }), { minLength: 2, maxLength: 8 }),
      fc.array(fc.double({ min: -60, max: 60, noNaN: true }), { maxLength: 50 }),
      (rawEdges, values) => {
        const edges = [...rawEdges].sort((a, b) => a - b);
        const h = new Histogram(edges);
        for (const v of values) h.add(v);
        const expected = edges.slice(0, -1).map((lo, i) =>
          values.filter((v) => v >= lo && v < edges[i + 1]!).length
        );
        assert.deepEqual(h.counts, expected);
        assert.equal(h.underflow, values.filter((v) => v < edges[0]!).length);
        assert.equal(h.overflow, values.filter((v) => v >= edges[edges.length - 1]!).length);
        assert.equal(h.count, values.length);
      },
    ),
  );
});

Deno.test("Histogram.integers: the staleness layout, fixed keys whatever was added", () => {
  const h = Histogram.integers(2);
  const empty = Object.keys(h.toRecord("staleness"));
  for (const s of [0, 1, 1, 2, 7]) h.add(s);
  assert.deepEqual(Object.keys(h.toRecord("staleness")), empty);
  assert.deepEqual(h.toRecord("staleness"), {
    "staleness/<0": 0,
    "staleness/0": 1,
    "staleness/1": 2,
    "staleness/2": 1,
    "staleness/>=3": 1,
    "staleness/count": 5,
    "staleness/mean": 11 / 5,
  });
  h.add(1, 3);
  assert.equal(h.counts[1], 5);
});

Deno.test("Histogram: merge, reset and JSON round trip", () => {
  const a = Histogram.integers(3);
  const b = Histogram.integers(3);
  a.add(0);
  b.add(3);
  b.add(9);
  a.merge(b);
  assert.deepEqual(a.counts, [1, 0, 0, 1]);
  assert.equal(a.overflow, 1);
  const back = Histogram.fromJSON(JSON.parse(JSON.stringify(a)));
  assert.deepEqual(back.toRecord("s"), a.toRecord("s"));
  assert.throws(() => a.merge(Histogram.integers(2)), /edges differ/);
  a.reset();
  assert.equal(a.count, 0);
  assert.ok(Number.isNaN(a.mean));
  assert.equal(a.toRecord("s")["s/mean"], null);
});

Deno.test("Histogram: invalid edges and values are refused with the reason", () => {
  assert.throws(() => new Histogram([1]), /at least 2 numbers/);
  assert.throws(() => new Histogram([0, 2, 2]), /edges\[2\] = 2 follows 2/);
  assert.throws(() => new Histogram([0, NaN]), /finite and strictly increasing/);
  assert.throws(() => Histogram.integers(-1), /max must be a non-negative integer/);
  const h = Histogram.integers(1);
  assert.throws(() => h.add(NaN), /value must be finite/);
  assert.throws(() => h.add(0, -1), /times must be a non-negative integer/);
  assert.throws(
    () => Histogram.fromJSON({ ...h.toJSON(), counts: [1] }),
    /1 counts for 2 bins/,
  );
});
