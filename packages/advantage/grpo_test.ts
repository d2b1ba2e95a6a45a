import assert from "node:assert/strict";
import fc from "fast-check";
import { arbBatch, assertClose, randomBatch } from "./_test_utils.ts";
import { drGrpo, grpo, grpoBatchStd } from "./grpo.ts";
import { fromRows } from "./layout.ts";

const ones = (n: number) => fromRows(Array.from({ length: n }, () => [1]));

Deno.test("grpo golden: group [1,0,1] and a singleton, broadcast over valid tokens", () => {
  const out = grpo({
    rewards: [1, 0, 1, 0.5],
    responseMask: fromRows([[1, 1], [1, 0], [1, 1], [1, 0]]),
    index: ["q", "q", "q", "s"],
  });
  // group q = [1, 0, 1]: mean 2/3; squared deviations 1/9 + 4/9 + 1/9 = 6/9;
  // unbiased variance (6/9)/2 = 1/3, std sqrt(1/3) = 0.5773502691896257.
  // A(1) = (1/3)/(sqrt(1/3) + 1e-6), A(0) = (−2/3)/(sqrt(1/3) + 1e-6).
  const s = Math.sqrt(1 / 3) + 1e-6;
  // singleton s: veRL uses mean 0, std 1 → A = 0.5/(1 + 1e-6).
  const expected = [1 / 3 / s, 1 / 3 / s, -2 / 3 / s, 0, 1 / 3 / s, 1 / 3 / s, 0.5 / (1 + 1e-6), 0];
  assertClose(out.advantages, expected, { rtol: 1e-14 });
  assert.deepEqual(out.returns, out.advantages);
  // numerically: 0.5773493... for the correct answers
  assert.ok(Math.abs(out.advantages[0]! - 0.5773492691) < 1e-9);
});

Deno.test("grpo golden: TRL's epsilon 1e-4 on group [0, 0, 1, 1]", () => {
  // mean 0.5, deviations ±0.5, sum of squares 1, unbiased var 1/3, std 0.5773502691896258
  const out = grpo({
    rewards: [0, 0, 1, 1],
    responseMask: ones(4),
    index: [0, 0, 0, 0],
    epsilon: 1e-4,
  });
  const a = 0.5 / (Math.sqrt(1 / 3) + 1e-4);
  assertClose(out.advantages, [-a, -a, a, a], { rtol: 1e-14 });
});

Deno.test("drGrpo golden and equals grpo without the std division", () => {
  // group [3, 1]: mean 2 → [1, −1]; singleton 5: mean 0 → 5
  const out = drGrpo({ rewards: [3, 1, 5], responseMask: ones(3), index: ["a", "a", "b"] });
  assert.deepEqual([...out.advantages], [1, -1, 5]);
  fc.assert(
    fc.property(arbBatch(), ({ mask, rewards, index }) => {
      const a = drGrpo({ rewards, responseMask: mask, index });
      const b = grpo({ rewards, responseMask: mask, index, normByStd: false });
      assert.deepEqual(a.advantages, b.advantages);
    }),
  );
});

Deno.test("grpoBatchStd golden: group means, batch std (TRL scale_rewards='batch')", () => {
  // rewards [2, 0, 1, 1]: group means a = 1, b = 1; batch mean 1, deviations [1, −1, 0, 0],
  // unbiased batch var 2/3, std sqrt(2/3) = 0.816496580927726; A = (R − 1)/(std + 1e-4)
  const out = grpoBatchStd({
    rewards: [2, 0, 1, 1],
    responseMask: ones(4),
    index: ["a", "a", "b", "b"],
  });
  const d = Math.sqrt(2 / 3) + 1e-4;
  assertClose(out.advantages, [1 / d, -1 / d, 0, 0], { rtol: 1e-14 });
  // a singleton group's mean is its own reward (TRL num_generations=1): advantage 0
  const single = grpoBatchStd({ rewards: [3, 1, 2], responseMask: ones(3), index: [0, 0, 1] });
  assert.equal(single.advantages[2], 0);
});

Deno.test("grpo property: zero mean and unit unbiased std per group (std scaling on, ε = 0)", () => {
  fc.assert(
    fc.property(arbBatch(), ({ mask, rewards, index }) => {
      const { advantages } = grpo({ rewards, responseMask: mask, index, epsilon: 0 });
      const scalar = (i: number) => advantages[i * mask.length]!; // token 0 is always valid
      const groups = new Map<number, number[]>();
      index.forEach((g, i) => groups.set(g, [...(groups.get(g) ?? []), i]));
      for (const members of groups.values()) {
        const r = members.map((i) => rewards[i]!);
        const spread = Math.max(...r) - Math.min(...r);
        const a = members.map(scalar);
        if (members.length < 2) continue;
        if (spread === 0) {
          assert.ok(a.every((x) => x === 0), "identical rewards must give exactly 0");
        } else if (spread > 1e-6 * Math.max(1, ...r.map(Math.abs))) {
          // (near-identical rewards amplify rounding by 1/spread, so they are left out)
          const mean = a.reduce((x, y) => x + y, 0) / a.length;
          assert.ok(Math.abs(mean) < 1e-9, `group mean ${mean}`);
          const v = a.reduce((s, x) => s + (x - mean) ** 2, 0) / (a.length - 1);
          assert.ok(Math.abs(Math.sqrt(v) - 1) < 1e-9, `group std ${Math.sqrt(v)}`);
        }
      }
    }),
  );
});

Deno.test("grpo: identical rewards give 0, not NaN, for any ε including 0", () => {
  for (const epsilon of [0, 1e-6, 1e-4]) {
    const { advantages } = grpo({
      rewards: [0.1, 0.1, 0.1, 0.7, 0.7],
      responseMask: ones(5),
      index: [1, 1, 1, 2, 2],
      epsilon,
    });
    assert.deepEqual([...advantages], [0, 0, 0, 0, 0]);
  }
});

Deno.test("grpo: masked positions are 0 and never read (NaN there is fine)", () => {
  const mask = fromRows([[1, 0], [1, 1]]);
  const { advantages } = grpo({ rewards: [1, 0], responseMask: mask, index: [0, 0] });
  assert.equal(advantages[1], 0);
  assert.ok(advantages.every(Number.isFinite));
});

/** Independent float64 reference: explicit loops per group, veRL's formula term by term. */
function referenceGrpo(
  rewards: number[],
  index: string[],
  mask: ArrayLike<number>,
  length: number,
  eps: number,
  norm: boolean,
): number[] {
  const out: number[] = [];
  for (let i = 0; i < rewards.length; i++) {
    const peers: number[] = [];
    for (let j = 0; j < rewards.length; j++) if (index[j] === index[i]) peers.push(rewards[j]!);
    let mean = 0;
    let std = 1;
    if (peers.length > 1) {
      mean = peers.reduce((a, b) => a + b) / peers.length;
      std = Math.sqrt(peers.reduce((a, b) => a + (b - mean) ** 2, 0) / (peers.length - 1));
    }
    const a = norm ? (rewards[i]! - mean) / (std + eps) : rewards[i]! - mean;
    for (let t = 0; t < length; t++) out.push(mask[i * length + t] === 1 ? a : 0);
  }
  return out;
}

Deno.test("grpo, drGrpo, grpoBatchStd: larger random batch vs an independent loop implementation", () => {
  const b = randomBatch(1, 300, 17);
  const ref = referenceGrpo(b.rewards, b.index, b.mask.data, 17, 1e-6, true);
  assertClose(grpo({ rewards: b.rewards, responseMask: b.mask, index: b.index }).advantages, ref, {
    rtol: 1e-10,
    atol: 1e-12,
  });
  const refDr = referenceGrpo(b.rewards, b.index, b.mask.data, 17, 0, false);
  assertClose(
    drGrpo({ rewards: b.rewards, responseMask: b.mask, index: b.index }).advantages,
    refDr,
    {
      atol: 1e-12,
    },
  );
  // batch std: TRL-style, a singleton's mean is its own reward
  const all = b.rewards;
  const bm = all.reduce((x, y) => x + y) / all.length;
  const bs = Math.sqrt(all.reduce((x, y) => x + (y - bm) ** 2, 0) / (all.length - 1));
  const refBatch: number[] = [];
  b.rewards.forEach((r, i) => {
    const peers = b.rewards.filter((_, j) => b.index[j] === b.index[i]);
    const gm = peers.reduce((x, y) => x + y) / peers.length;
    for (let t = 0; t < 17; t++) {
      refBatch.push(b.mask.data[i * 17 + t] === 1 ? (r - gm) / (bs + 1e-4) : 0);
    }
  });
  assertClose(
    grpoBatchStd({ rewards: b.rewards, responseMask: b.mask, index: b.index }).advantages,
    refBatch,
    { rtol: 1e-10, atol: 1e-12 },
  );
});

Deno.test("grpo: invalid inputs name the argument and the value", () => {
  const mask = ones(3);
  assert.throws(
    () => grpo({ rewards: [1, NaN, 0], responseMask: mask, index: [0, 0, 0] }),
    /grpo: rewards\[1\] is NaN; rewards must be finite numbers/,
  );
  assert.throws(
    () => grpo({ rewards: [1, Infinity, 0], responseMask: mask, index: [0, 0, 0] }),
    /grpo: rewards\[1\] is Infinity/,
  );
  assert.throws(
    () => grpo({ rewards: [1, 0], responseMask: mask, index: [0, 0, 0] }),
    /grpo: rewards has 2 entries but responseMask has batch 3/,
  );
  assert.throws(
    () => grpo({ rewards: [1, 0, 1], responseMask: mask, index: [0, 0] }),
    /grpo: index has 2 entries but the batch is 3/,
  );
  assert.throws(
    () => grpo({ rewards: [1, 0, 1], responseMask: mask, index: [0, null as never, 0] }),
    /grpo: index\[1\] is null; group ids must be strings or finite numbers/,
  );
  assert.throws(
    () => grpo({ rewards: [1, 0, 1], responseMask: fromRows([[1], [0.5], [1]]), index: [0, 0, 0] }),
    /grpo: responseMask\[1, 0\] is 0.5; a mask must hold only 0 and 1/,
  );
  assert.throws(
    () => grpo({ rewards: [1, 0, 1], responseMask: mask, index: [0, 0, 0], epsilon: -1 }),
    /grpo: epsilon must be a finite number >= 0, got -1/,
  );
  assert.throws(
    () =>
      grpoBatchStd({
        rewards: [1, 0, 1],
        responseMask: { data: [1, 1], batch: 3, length: 1 },
        index: [0, 0, 0],
      }),
    /grpoBatchStd: responseMask.data has 2 entries but batch·length = 3·1 = 3/,
  );
});
