import assert from "node:assert/strict";
import { assertClose, randomBatch } from "./_test_utils.ts";
import { fromRows } from "./layout.ts";
import { prime } from "./prime.ts";
import { rloo } from "./rloo.ts";

const process = fromRows([[0.3, 0.6, 0.9], [0.2, 0.4, NaN], [0, 0, 0]]);
const mask = fromRows([[1, 1, 1], [1, 1, 0], [1, 1, 1]]);
const rewards = [1, 0, 1];
const index = ["q", "q", "q"];

Deno.test("prime golden: veRL recipe form, γ = 1, no whitening", () => {
  const out = prime({ processRewards: process, rewards, responseMask: mask, index, whiten: false });
  // K = 3; mean process rewards r̄ = [0.6, 0.3, 0]; Σ r̄ = 0.9
  // veRL: p = (3r − 0.9)/2 → row 0 [0, 0.45, 0.9], row 1 [−0.15, 0.15], row 2 [−0.45, −0.45, −0.45]
  // outcome RLOO: [1 − 0.5, 0 − 1, 1 − 0.5] = [0.5, −1, 0.5]
  // returns = reverse cumsum of p + outcome:
  //   row 0 [1.35, 1.35, 0.9] + 0.5 = [1.85, 1.85, 1.4]
  //   row 1 [0, 0.15] − 1 = [−1, −0.85]
  //   row 2 [−1.35, −0.9, −0.45] + 0.5 = [−0.85, −0.4, 0.05]
  const expected = [1.85, 1.85, 1.4, -1, -0.85, 0, -0.85, -0.4, 0.05];
  assertClose(out.returns, expected, { atol: 1e-14 });
  assertClose(out.advantages, expected, { atol: 1e-14 });
});

Deno.test("prime golden: paper form, γ = 0.5, coefficients, whitening", () => {
  const out = prime({
    processRewards: process,
    rewards,
    responseMask: mask,
    index,
    baseline: "paper",
    gamma: 0.5,
    processCoef: 2,
    outcomeCoef: 3,
  });
  // paper: p_{i,t} = r_{i,t} − Σ_{j≠i} r̄_j / 2: row 0 minus 0.15, row 1 minus 0.3, row 2 minus 0.45
  //   row 0 [0.15, 0.45, 0.75], row 1 [−0.1, 0.1], row 2 [−0.45, −0.45, −0.45]; ×2 (processCoef)
  //   → [0.3, 0.9, 1.5], [−0.2, 0.2], [−0.9, −0.9, −0.9]
  // γ = 0.5 returns of the process term: row 0: t2 1.5, t1 0.9 + 0.75 = 1.65, t0 0.3 + 0.825 = 1.125
  //   row 1: t1 0.2, t0 −0.2 + 0.1 = −0.1; row 2: t2 −0.9, t1 −1.35, t0 −1.575
  // outcome ×3: [1.5, −3, 1.5] added undiscounted
  const ret = [2.625, 3.15, 3, -3.1, -2.8, 0, -0.075, 0.15, 0.6];
  assertClose(out.returns, ret, { atol: 1e-13 });
  const valid = ret.filter((_, k) => k !== 5);
  const mu = valid.reduce((a, b) => a + b) / valid.length;
  const sd = Math.sqrt(valid.reduce((a, b) => a + (b - mu) ** 2, 0) / (valid.length - 1) + 1e-8);
  assertClose(out.advantages, ret.map((x, k) => (k === 5 ? 0 : (x - mu) / sd)), { atol: 1e-13 });
});

Deno.test("prime: zero process rewards reduce to RLOO on the outcome; the two forms agree at t = 0 with γ = 1", () => {
  const zero = fromRows([[0, 0, 0], [0, 0, 0], [0, 0, 0]]);
  const out = prime({ processRewards: zero, rewards, responseMask: mask, index, whiten: false });
  assertClose(out.returns, rloo({ rewards, responseMask: mask, index }).advantages, {
    atol: 1e-15,
  });
  const a = prime({ processRewards: process, rewards, responseMask: mask, index, whiten: false });
  const b = prime({
    processRewards: process,
    rewards,
    responseMask: mask,
    index,
    whiten: false,
    baseline: "paper",
  });
  for (const k of [0, 3, 6]) assert.ok(Math.abs(a.returns[k]! - b.returns[k]!) < 1e-14);
});

Deno.test("prime: larger random batch vs an independent per-response reference (both forms)", () => {
  const b = randomBatch(12, 150, 11, { holes: true });
  const L = 11;
  for (const form of ["verl", "paper"] as const) {
    const ref = new Float64Array(150 * L);
    for (let i = 0; i < 150; i++) {
      const peers = b.index.map((x, j) => (x === b.index[i] ? j : -1)).filter((j) => j >= 0);
      const K = peers.length;
      const rbar = (j: number) => {
        let s = 0;
        let n = 0;
        for (let t = 0; t < L; t++) {
          if (b.mask.data[j * L + t]) (s += b.tokenRewards.data[j * L + t]!), n++;
        }
        return s / n;
      };
      const others = peers.filter((j) => j !== i);
      const outcome = K > 1
        ? b.rewards[i]! - others.reduce((s, j) => s + b.rewards[j]!, 0) / (K - 1)
        : b.rewards[i]!;
      const baseOthers = K > 1 ? others.reduce((s, j) => s + rbar(j), 0) : 0;
      for (let t = 0; t < L; t++) {
        if (!b.mask.data[i * L + t]) continue;
        let G = 0;
        let disc = 1;
        for (let u = t; u < L; u++) {
          if (!b.mask.data[i * L + u]) continue;
          const r = b.tokenRewards.data[i * L + u]!;
          const p = K === 1
            ? r
            : form === "verl"
            ? r + (r - rbar(i) - baseOthers) / (K - 1)
            : r - baseOthers / (K - 1);
          G += disc * p;
          disc *= 0.9;
        }
        ref[i * L + t] = G + outcome;
      }
    }
    const out = prime({
      processRewards: b.tokenRewards,
      rewards: b.rewards,
      responseMask: b.mask,
      index: b.index,
      gamma: 0.9,
      baseline: form,
      whiten: false,
    });
    assertClose(out.returns, ref, { rtol: 1e-10, atol: 1e-11, msg: form });
  }
});

Deno.test("prime: invalid inputs name the argument and the value", () => {
  assert.throws(
    () =>
      prime({
        processRewards: fromRows([[NaN]]),
        rewards: [1],
        responseMask: fromRows([[1]]),
        index: [0],
      }),
    /prime: processRewards\[0, 0\] is NaN/,
  );
  assert.throws(
    () =>
      prime({
        processRewards: fromRows([[0]]),
        rewards: [1],
        responseMask: fromRows([[1]]),
        index: [0],
        baseline: "rloo" as never,
      }),
    /prime: baseline must be one of "verl", "paper", got "rloo"/,
  );
});
