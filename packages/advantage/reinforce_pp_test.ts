import assert from "node:assert/strict";
import fc from "fast-check";
import { arbBatch, assertClose, randomBatch } from "./_test_utils.ts";
import { fromRows } from "./layout.ts";
import { reinforcePlusPlus, reinforcePlusPlusBaseline } from "./reinforce_pp.ts";

Deno.test("reinforcePlusPlus golden: discounted returns then masked batch whitening", () => {
  const out = reinforcePlusPlus({
    tokenRewards: fromRows([[0, 0, 1], [0, -1, NaN]]),
    responseMask: fromRows([[1, 1, 1], [1, 1, 0]]),
    gamma: 0.5,
  });
  // row 0: G = [0.25, 0.5, 1]; row 1: G = [−0.5, −1, ·]
  assert.deepEqual([...out.returns], [0.25, 0.5, 1, -0.5, -1, 0]);
  // valid G: 0.25, 0.5, 1, −0.5, −1; mean 0.25/5 = 0.05
  // deviations 0.2, 0.45, 0.95, −0.55, −1.05; squares sum 0.04 + 0.2025 + 0.9025 + 0.3025 + 1.1025 = 2.55
  // unbiased var 2.55/4 = 0.6375
  const s = Math.sqrt(0.6375 + 1e-8);
  assertClose(out.advantages, [0.2 / s, 0.45 / s, 0.95 / s, -0.55 / s, -1.05 / s, 0], {
    atol: 1e-14,
  });
});

Deno.test("reinforcePlusPlusBaseline golden: group mean then token-level batch whitening", () => {
  const out = reinforcePlusPlusBaseline({
    rewards: [1, 0, 2],
    responseMask: fromRows([[1, 1], [1, 0], [1, 1]]),
    index: ["a", "a", "b"],
  });
  // group a mean 0.5 → [0.5, −0.5]; singleton b: mean 0 → 2
  // tokens: 0.5, 0.5, −0.5, 2, 2 → mean 4.5/5 = 0.9
  // deviations −0.4, −0.4, −1.4, 1.1, 1.1 → squares 0.16 + 0.16 + 1.96 + 1.21 + 1.21 = 4.7; var 4.7/4 = 1.175
  const s = Math.sqrt(1.175 + 1e-8);
  assertClose(out.advantages, [-0.4 / s, -0.4 / s, -1.4 / s, 0, 1.1 / s, 1.1 / s], { atol: 1e-14 });
  assert.deepEqual(out.returns, out.advantages);
});

Deno.test("reinforce++ property: advantages have masked mean 0 over the batch", () => {
  fc.assert(
    fc.property(arbBatch(), ({ mask, rewards, index }) => {
      let n = 0;
      for (let k = 0; k < mask.data.length; k++) n += mask.data[k]!;
      fc.pre(n >= 2 && new Set(rewards).size > 1);
      const { advantages } = reinforcePlusPlusBaseline({ rewards, responseMask: mask, index });
      const s = [...advantages].reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(s / n) < 1e-7);
    }),
  );
});

Deno.test("reinforce++ (maskMode reset, older veRL): larger random batch vs an independent reference", () => {
  const b = randomBatch(7, 120, 25, { holes: true });
  const L = 25;
  // returns with older veRL's reset: scan forward-computed per row by explicit segments
  // (the default, current veRL's carry across gaps, is checked in verl_parity_test.ts)
  const G = new Float64Array(120 * L);
  for (let i = 0; i < 120; i++) {
    for (let t = 0; t < L; t++) {
      if (!b.mask.data[i * L + t]) continue;
      let s = 0;
      for (let u = t; u < L && b.mask.data[i * L + u]; u++) {
        s += 0.99 ** (u - t) * b.tokenRewards.data[i * L + u]!;
      }
      G[i * L + t] = s;
    }
  }
  const vals = [...G].filter((_, k) => b.mask.data[k]);
  const mu = vals.reduce((a, c) => a + c) / vals.length;
  const sd = Math.sqrt(vals.reduce((a, c) => a + (c - mu) ** 2, 0) / (vals.length - 1) + 1e-8);
  const out = reinforcePlusPlus({
    tokenRewards: b.tokenRewards,
    responseMask: b.mask,
    gamma: 0.99,
    maskMode: "reset",
  });
  assertClose(out.returns, G, { rtol: 1e-11, atol: 1e-12 });
  assertClose(out.advantages, [...G].map((g, k) => (b.mask.data[k] ? (g - mu) / sd : 0)), {
    rtol: 1e-10,
    atol: 1e-11,
  });

  // baseline variant
  const centred = b.rewards.map((r, i) => {
    const peers = b.rewards.filter((_, j) => b.index[j] === b.index[i]);
    return peers.length > 1 ? r - peers.reduce((x, y) => x + y) / peers.length : r;
  });
  const tok = Array.from(b.mask.data, (mk, k) => (mk ? centred[Math.floor(k / L)]! : 0));
  const tv = tok.filter((_, k) => b.mask.data[k]);
  const m2 = tv.reduce((a, c) => a + c) / tv.length;
  const s2 = Math.sqrt(tv.reduce((a, c) => a + (c - m2) ** 2, 0) / (tv.length - 1) + 1e-8);
  const base = reinforcePlusPlusBaseline({
    rewards: b.rewards,
    responseMask: b.mask,
    index: b.index,
  });
  assertClose(base.advantages, tok.map((x, k) => (b.mask.data[k] ? (x - m2) / s2 : 0)), {
    rtol: 1e-10,
    atol: 1e-11,
  });
});

Deno.test("reinforce++: invalid inputs name the argument and the value", () => {
  assert.throws(
    () =>
      reinforcePlusPlus({ tokenRewards: fromRows([[1, NaN]]), responseMask: fromRows([[1, 1]]) }),
    /reinforcePlusPlus: tokenRewards\[0, 1\] is NaN/,
  );
  assert.throws(
    () =>
      reinforcePlusPlus({
        tokenRewards: fromRows([[1, 0]]),
        responseMask: fromRows([[1, 1]]),
        gamma: -0.1,
      }),
    /reinforcePlusPlus: gamma must be a finite number in \[0, 1\], got -0.1/,
  );
  assert.throws(
    () =>
      reinforcePlusPlusBaseline({
        rewards: [1, 2],
        responseMask: fromRows([[1], [1]]),
        index: [0],
      }),
    /reinforcePlusPlusBaseline: index has 1 entries but the batch is 2/,
  );
});
