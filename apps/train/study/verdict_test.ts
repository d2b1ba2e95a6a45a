import assert from "node:assert/strict";
import fc from "fast-check";
import { bootstrapMean, judgeComparison, verdictOf } from "./verdict.ts";

const finite = fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true });

Deno.test("bootstrapMean: the interval contains the mean and lies within the values' range", () => {
  fc.assert(
    fc.property(fc.array(finite, { minLength: 1, maxLength: 12 }), fc.nat(1000), (values, seed) => {
      const ci = bootstrapMean(values, { seed, resamples: 500 });
      const lo = Math.min(...values), hi = Math.max(...values);
      assert.ok(ci.low <= ci.mean && ci.mean <= ci.high, JSON.stringify(ci));
      const eps = 1e-9 * Math.max(1, Math.abs(lo), Math.abs(hi));
      assert.ok(ci.low >= lo - eps && ci.high <= hi + eps, JSON.stringify({ ci, lo, hi }));
    }),
  );
  assert.throws(() => bootstrapMean([]), /at least one/);
  assert.throws(() => bootstrapMean([1, NaN]), /finite/);
});

Deno.test("judgeComparison: a shift larger than the spread holds in its direction and is refuted in the other", () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 8 }),
      fc.double({ min: 1.5, max: 10, noNaN: true }),
      (a, shift) => {
        const b = a.map((x, i) => x + shift + (i % 2) * 0.25);
        const up = judgeComparison({ metric: "m", a: "A", b: "B", claim: ">" }, a, b);
        assert.equal(up.outcome, "holds");
        assert.equal(
          judgeComparison({ metric: "m", a: "A", b: "B", claim: "<" }, a, b).outcome,
          "refuted",
        );
        assert.equal(
          judgeComparison({ metric: "m", a: "B", b: "A", claim: ">=", margin: 0.1 }, b, a).outcome,
          "refuted",
        );
        assert.equal(
          judgeComparison({ metric: "m", a: "B", b: "A", claim: ">=", margin: shift + 1 }, b, a)
            .outcome,
          "holds",
        );
      },
    ),
  );
});

Deno.test("judgeComparison: an interval across the line is undecided; a missing number decides nothing", () => {
  const j = judgeComparison({ metric: "m", a: "A", b: "B", claim: ">" }, [0, 0, 0], [1, -1, 0.5]);
  assert.equal(j.outcome, "undecided");
  assert.deepEqual(j.differences, [1, -1, 0.5]);
  const n = judgeComparison({ metric: "m", a: "A", b: "B", claim: ">" }, [0, 0], [1, NaN]);
  assert.equal(n.outcome, "undecided");
  assert.throws(
    () => judgeComparison({ metric: "m", a: "A", b: "B", claim: ">" }, [0], [1, 2]),
    /need the same seeds, got 1 and 2/,
  );
  assert.equal(verdictOf([]), "inconclusive");
});
