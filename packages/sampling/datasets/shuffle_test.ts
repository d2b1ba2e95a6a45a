import assert from "node:assert/strict";
import fc from "fast-check";
import { epochPermutation, shuffled } from "./shuffle.ts";

Deno.test("epochPermutation: a permutation, a pure function of (n, seed, epoch) (property)", () => {
  fc.assert(
    fc.property(
      fc.nat(200),
      fc.nat({ max: Number.MAX_SAFE_INTEGER }),
      fc.nat(1000),
      (n, seed, epoch) => {
        const p = epochPermutation(n, seed, epoch);
        assert.deepEqual([...p].sort((a, b) => a - b), [...Array(n).keys()]);
        assert.deepEqual(epochPermutation(n, seed, epoch), p);
      },
    ),
  );
});

Deno.test("epochPermutation: positions are uniform over seeds (chi-square on item 0's position, α = 0.001)", () => {
  const n = 6;
  const counts = new Array(n).fill(0);
  const N = 12000;
  for (let s = 0; s < N; s++) counts[epochPermutation(n, s, 0).indexOf(0)]++;
  const e = N / n;
  const chi2 = counts.reduce((a, c) => a + (c - e) ** 2 / e, 0);
  assert.ok(chi2 < 20.515, `chi2 ${chi2} (df 5), counts ${counts}`);
  assert.deepEqual(shuffled([], 1), []);
  assert.throws(
    () => epochPermutation(3, 1.5, 0),
    /seed must be an integer in \[0, 2\^53\), got 1.5/,
  );
  assert.throws(() => epochPermutation(3, 1, -1), /epoch must be an integer/);
});
