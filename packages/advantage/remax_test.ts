import assert from "node:assert/strict";
import { assertClose, randomBatch } from "./_test_utils.ts";
import { fromRows } from "./layout.ts";
import { remax } from "./remax.ts";

Deno.test("remax golden: reward-to-go minus the greedy baseline on valid tokens", () => {
  const out = remax({
    tokenRewards: fromRows([[0.5, 0, 1, NaN], [0, 0, 0, 0]]),
    responseMask: fromRows([[1, 1, 1, 0], [1, 1, 1, 1]]),
    baselineRewards: [0.75, 0.5],
  });
  // row 0: reward-to-go [1.5, 1, 1]; minus 0.75 → [0.75, 0.25, 0.25]
  // row 1: reward-to-go 0 everywhere; minus 0.5 → −0.5
  assert.deepEqual([...out.returns], [1.5, 1, 1, 0, 0, 0, 0, 0]);
  assert.deepEqual([...out.advantages], [0.75, 0.25, 0.25, 0, -0.5, -0.5, -0.5, -0.5]);
});

Deno.test("remax: larger random batch vs a reverse cumulative-sum reference", () => {
  const b = randomBatch(8, 90, 21, { holes: true });
  const base = b.rewards;
  const ref: number[] = [];
  for (let i = 0; i < 90; i++) {
    for (let t = 0; t < 21; t++) {
      if (!b.mask.data[i * 21 + t]) {
        ref.push(0);
        continue;
      }
      let s = 0;
      for (let u = t; u < 21; u++) {
        if (b.mask.data[i * 21 + u]) s += b.tokenRewards.data[i * 21 + u]!;
      }
      ref.push(s - base[i]!);
    }
  }
  const out = remax({ tokenRewards: b.tokenRewards, responseMask: b.mask, baselineRewards: base });
  assertClose(out.advantages, ref, { rtol: 1e-12, atol: 1e-12 });
});

Deno.test("remax: invalid inputs name the argument and the value", () => {
  assert.throws(
    () =>
      remax({
        tokenRewards: fromRows([[1]]),
        responseMask: fromRows([[1]]),
        baselineRewards: [NaN],
      }),
    /remax: baselineRewards\[0\] is NaN; baselineRewards must be finite numbers/,
  );
  assert.throws(
    () =>
      remax({
        tokenRewards: fromRows([[1]]),
        responseMask: fromRows([[1]]),
        baselineRewards: [1, 2],
      }),
    /remax: baselineRewards has 2 entries but responseMask has batch 1/,
  );
});
