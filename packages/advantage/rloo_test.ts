import assert from "node:assert/strict";
import fc from "fast-check";
import { arbBatch, assertClose, randomBatch } from "./_test_utils.ts";
import { fromRows } from "./layout.ts";
import { rloo } from "./rloo.ts";

Deno.test("rloo golden: baselines are the means of the others; singleton keeps its reward", () => {
  const out = rloo({
    rewards: [1, 0, 1, 0.25],
    responseMask: fromRows([[1, 1], [1, 0], [1, 1], [1, 0]]),
    index: ["q", "q", "q", "s"],
  });
  // group [1, 0, 1]: baseline of #0 = mean(0, 1) = 0.5 → 0.5; of #1 = mean(1, 1) = 1 → −1;
  // of #2 = mean(1, 0) = 0.5 → 0.5. Same as n/(n−1)·(R − 2/3) = 1.5·(1/3) = 0.5, 1.5·(−2/3) = −1.
  // singleton: veRL leaves the raw reward (0.25).
  assertClose(out.advantages, [0.5, 0.5, -1, 0, 0.5, 0.5, 0.25, 0], { atol: 1e-15 });
  assert.deepEqual(out.returns, out.advantages);
});

Deno.test("rloo property: the baseline of sample i is the mean of the others in its group", () => {
  fc.assert(
    fc.property(arbBatch(), ({ mask, rewards, index }) => {
      const { advantages } = rloo({ rewards, responseMask: mask, index });
      rewards.forEach((r, i) => {
        const others = rewards.filter((_, j) => j !== i && index[j] === index[i]);
        const baseline = others.length ? others.reduce((a, b) => a + b) / others.length : 0;
        const a = advantages[i * mask.length]!;
        assert.ok(Math.abs(r - a - baseline) <= 1e-9 * (1 + Math.abs(baseline)), `i=${i}`);
      });
    }),
  );
});

Deno.test("rloo: larger random batch vs a leave-one-out sum reference", () => {
  const b = randomBatch(2, 257, 9);
  const ref: number[] = [];
  b.rewards.forEach((r, i) => {
    let sum = 0;
    let n = 0;
    for (let j = 0; j < b.rewards.length; j++) {
      if (j !== i && b.index[j] === b.index[i]) {
        sum += b.rewards[j]!;
        n++;
      }
    }
    const a = n > 0 ? r - sum / n : r;
    for (let t = 0; t < 9; t++) ref.push(b.mask.data[i * 9 + t] === 1 ? a : 0);
  });
  assertClose(rloo({ rewards: b.rewards, responseMask: b.mask, index: b.index }).advantages, ref, {
    rtol: 1e-10,
    atol: 1e-12,
  });
});

Deno.test("rloo: invalid inputs name the argument and the value", () => {
  const mask = fromRows([[1], [1]]);
  assert.throws(
    () => rloo({ rewards: [1, -Infinity], responseMask: mask, index: [0, 0] }),
    /rloo: rewards\[1\] is -Infinity; rewards must be finite numbers/,
  );
  assert.throws(
    () => rloo({ rewards: [1, 0], responseMask: mask, index: "ab" as never }),
    /rloo: index must be an array of 2 group ids/,
  );
});
