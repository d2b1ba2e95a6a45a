import assert from "node:assert/strict";
import fc from "fast-check";
import { topKMask } from "./_select.ts";
import { mat, t } from "./_test_utils.ts";

/** Reference: the k largest valid values by sorting; ties at the k-th value are all kept. */
function topKRef(values: number[], valid: boolean[], k: number): number[] {
  const vs = values.filter((_, i) => valid[i]).sort((a, b) => b - a);
  if (k < 1 || vs.length === 0) return values.map(() => 0);
  const threshold = vs[Math.min(k, vs.length) - 1]!;
  return values.map((v, i) => (valid[i] && v >= threshold ? 1 : 0));
}

Deno.test("topKMask: equals a sort-based top-k on random data (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      // Values on a grid of 2⁻²⁰ in ±2¹⁰ (with many ties): gaps are far above the bisection's
      // resolution of 2⁻⁶⁴ of the value range (see the next test for its limit).
      fc.array(
        fc.tuple(
          fc.integer({ min: -(2 ** 30), max: 2 ** 30 }).map((v) => v / 2 ** 20),
          fc.boolean(),
        ),
        {
          minLength: 1,
          maxLength: 24,
        },
      ),
      fc.integer({ min: -1, max: 30 }),
      async (pairs, k) => {
        const values = pairs.map(([v]) => v);
        const valid = pairs.map(([, m]) => m);
        const got = (await mat(topKMask(t([values]), t([valid.map(Number)]).gt(0), t(k))))[0]!;
        assert.deepEqual(got, topKRef(values, valid, k));
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("topKMask: ties, tiny gaps and the edges of k", async () => {
  const valid = t([[1, 1, 1, 1, 1]]).gt(0);
  // ties at the threshold are kept
  assert.deepEqual(await mat(topKMask(t([[3, 1, 3, 2, 3]]), valid, t(1))), [[1, 0, 1, 0, 1]]);
  // values 1e-12 apart on a range of 2e6 are still separated (resolution 2e6·2⁻⁶⁴ ≈ 1e-13)
  const close = [[0, 1e6, 0.5, 0.5 + 1e-12, -1e6]];
  assert.deepEqual(await mat(topKMask(t(close), valid, t(2))), [[0, 1, 0, 1, 0]]);
  assert.deepEqual(await mat(topKMask(t(close), valid, t(3))), [[0, 1, 1, 1, 0]]);
  // the documented limit: values closer than range·2⁻⁶⁴ count as ties and are all kept
  const subnormal = [[0, -5e-324, 1.8e-304, 1, 1]];
  assert.deepEqual(await mat(topKMask(t(subnormal), valid, t(4))), [[1, 1, 1, 1, 1]]);
  // k < 1 selects nothing; k above the count selects every valid position
  assert.deepEqual(await mat(topKMask(t([[1, 2, 3, 4, 5]]), valid, t(0))), [[0, 0, 0, 0, 0]]);
  const some = t([[1, 0, 1, 0, 1]]).gt(0);
  assert.deepEqual(await mat(topKMask(t([[1, 2, 3, 4, 5]]), some, t(10))), [[1, 0, 1, 0, 1]]);
  // no valid position at all
  const none = t([[0, 0]]).gt(0);
  assert.deepEqual(await mat(topKMask(t([[1, 2]]), none, t(1))), [[0, 0]]);
});
