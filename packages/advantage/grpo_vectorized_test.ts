import assert from "node:assert/strict";
import fc from "fast-check";
import { arbBatch, assertClose, randomBatch } from "./_test_utils.ts";
import { drGrpo, grpo } from "./grpo.ts";
import { fromRows } from "./layout.ts";
import { estimatorNames, getEstimator } from "./registry.ts";

const vectorized = getEstimator("grpo_vectorized");

/**
 * veRL's group_mean_std(eps=0.0) + compute_grpo_vectorized_outcome_advantage at commit
 * 1dda039b9c6311889a9c9a26040677e1254814f9, written out naively (`floor` is the eps passed to
 * group_mean_std: 0 there; older veRL passed ε).
 */
function reference(
  rewards: readonly number[],
  index: readonly (string | number)[],
  epsilon: number,
  normByStd: boolean,
  floor = 0,
): number[] {
  const count = new Map<string | number, number>();
  const s1 = new Map<string | number, number>();
  const s2 = new Map<string | number, number>();
  rewards.forEach((r, i) => {
    const g = index[i]!;
    count.set(g, (count.get(g) ?? 0) + 1);
    s1.set(g, (s1.get(g) ?? 0) + r);
    s2.set(g, (s2.get(g) ?? 0) + r * r);
  });
  return rewards.map((r, i) => {
    const g = index[i]!;
    const n = count.get(g)!;
    let mean = s1.get(g)! / n;
    const variance = (s2.get(g)! - s1.get(g)! ** 2 / n) / Math.max(n - 1, 1);
    let std = Math.sqrt(Math.max(variance, floor));
    if (n <= 1) [mean, std] = [0, 1];
    return normByStd ? (r - mean) / (std + epsilon) : r - mean;
  });
}

Deno.test("grpo_vectorized: registered under veRL's key", () => {
  assert.ok(estimatorNames().includes("grpo_vectorized"));
});

Deno.test("grpo_vectorized golden: group [1, 0, 1], a singleton, and a nearly constant group (no variance floor)", () => {
  const out = vectorized({
    rewards: [1, 0, 1, 0.5, 0.5, 0.5001],
    responseMask: fromRows([[1, 1], [1, 0], [1, 1], [1, 0], [1, 1], [1, 1]]),
    index: ["q", "q", "q", "s", "n", "n"],
  });
  // q: mean 2/3, unbiased variance 1/3 >= ε, so std sqrt(1/3) as in grpo.
  const s = Math.sqrt(1 / 3) + 1e-6;
  // s: singleton, mean 0 and std 1: 0.5/(1 + ε).
  // n: mean 0.50005, variance (1e-4)²/2 = 5e-9: std 7.07e-5, not floored (veRL passes eps=0.0).
  const f = Math.SQRT1_2 * 1e-4 + 1e-6;
  const d = 0.00005;
  const expected = [
    [1 / 3 / s, 1 / 3 / s],
    [-2 / 3 / s, 0],
    [1 / 3 / s, 1 / 3 / s],
    [0.5 / (1 + 1e-6), 0],
    [-d / f, -d / f],
    [d / f, d / f],
  ].flat();
  assertClose(out.advantages, expected, { atol: 1e-12, rtol: 1e-9 });
  assert.deepEqual(out.returns, out.advantages);
  // the older floored form would give 0.05 there; this gives grpo's ≈ 0.697
  assert.ok(Math.abs(out.advantages[10]! - 0.697) < 1e-3);
  const old = reference([0.5, 0.5001], [0, 0], 1e-6, true, 1e-6);
  assert.ok(Math.abs(old[1]! - 0.05) < 1e-3);
});

Deno.test("grpo_vectorized property: veRL's formula on random batches equals grpo", () => {
  // rewards on a grid of 1/8 (or 1/128: small spreads, where the floor bites), so the
  // reference's one-pass sums are exact and cannot cancel
  const batches = arbBatch().chain((b) =>
    fc.tuple(
      fc.array(fc.integer({ min: -40, max: 40 }), {
        minLength: b.rewards.length,
        maxLength: b.rewards.length,
      }),
      fc.constantFrom(1 / 8, 1 / 128),
    ).map(([ints, step]) => ({ ...b, rewards: ints.map((n) => n * step) }))
  );
  fc.assert(
    fc.property(
      batches,
      fc.constantFrom(0, 1e-6, 1e-4, 0.5, 4),
      fc.boolean(),
      ({ mask, rewards, index }, epsilon, normByStd) => {
        const got = vectorized({ rewards, responseMask: mask, index, epsilon, normByStd });
        const ref = reference(rewards, index, epsilon, normByStd);
        const want = new Float64Array(mask.data.length);
        for (let k = 0; k < want.length; k++) {
          // with ε = 0 a constant group is 0/0 in veRL; here it is exactly 0
          const r = ref[Math.floor(k / mask.length)]!;
          if (mask.data[k] === 1) want[k] = Number.isNaN(r) ? 0 : r;
        }
        assertClose(got.advantages, want, { atol: 1e-9, rtol: 1e-9 });
        assert.deepEqual(got.returns, got.advantages);
        const g = grpo({ rewards, responseMask: mask, index, epsilon, normByStd });
        assertClose(got.advantages, g.advantages, { atol: 0, rtol: 0 });
        if (!normByStd) {
          const d = drGrpo({ rewards, responseMask: mask, index });
          assertClose(got.advantages, d.advantages, { atol: 0, rtol: 0 });
        }
      },
    ),
  );
});

Deno.test("grpo_vectorized: larger random batch vs the reference; token rewards are summed over every position", () => {
  const b = randomBatch(31, 80, 7, { binary: true, minGroup: 2 });
  // veRL sums token_level_rewards over all positions: a reward under a 0 of the mask counts
  const tok = Float64Array.from(
    b.tokenRewards.data,
    (v, k) => (b.mask.data[k] === 1 ? v : k % 3 === 0 ? 0.25 : 0),
  );
  const tokenRewards = { ...b.tokenRewards, data: tok };
  const out = vectorized({ tokenRewards, responseMask: b.mask, index: b.index });
  const sums = Array.from({ length: 80 }, (_, i) => {
    let s = 0;
    for (let t = 0; t < 7; t++) s += tok[i * 7 + t]!;
    return s;
  });
  const ref = reference(sums, b.index, 1e-6, true);
  for (let k = 0; k < out.advantages.length; k++) {
    const want = b.mask.data[k] === 1 ? ref[Math.floor(k / 7)]! : 0;
    assert.ok(Math.abs(out.advantages[k]! - want) < 1e-6, `${k}: ${out.advantages[k]} vs ${want}`);
  }
});

Deno.test("grpo_vectorized: a constant group is exactly 0; invalid inputs name the field", () => {
  const mask = fromRows([[1], [1], [1]]);
  const zero = vectorized({
    rewards: [0.3, 0.3, 0.3],
    responseMask: mask,
    index: [0, 0, 0],
    epsilon: 0,
  });
  assert.deepEqual([...zero.advantages], [0, 0, 0]);
  assert.throws(
    () => vectorized({ rewards: [1, 0, 1], responseMask: mask }),
    /grpo_vectorized: index is required/,
  );
  assert.throws(
    () => vectorized({ rewards: [1, 0, 1], responseMask: mask, groupSize: 3, epsilon: -1 }),
    /grpo_vectorized: epsilon must be a finite number >= 0, got -1/,
  );
  assert.throws(
    () =>
      vectorized({ rewards: [1, 0, 1], responseMask: mask, groupSize: 3, normByStd: 1 as never }),
    /grpo_vectorized: normByStd must be true or false, got 1/,
  );
});
