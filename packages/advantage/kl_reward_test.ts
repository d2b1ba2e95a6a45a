import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, randomBatch } from "./_test_utils.ts";
import { klPenalty, klShapedRewards } from "./kl_reward.ts";
import { fromRows } from "./layout.ts";

Deno.test("klPenalty golden: k1, abs, k2, k3 and veRL's k3 clamps", () => {
  const lp = fromRows([[-1, -3, 0, NaN]]);
  const ref = fromRows([[-2, -2, -40, NaN]]);
  const m = fromRows([[1, 1, 1, 0]]);
  // Δ = logp − ref = [1, −1, 40]
  assert.deepEqual([...klPenalty(lp, ref, m, "k1")], [1, -1, 40, 0]);
  assert.deepEqual([...klPenalty(lp, ref, m, "kl")], [1, -1, 40, 0]);
  assert.deepEqual([...klPenalty(lp, ref, m, "abs")], [1, 1, 40, 0]);
  assert.deepEqual([...klPenalty(lp, ref, m, "k2")], [0.5, 0.5, 800, 0]);
  // k3 = e^{−Δ} + Δ − 1: Δ = 1 → e^{−1}; Δ = −1 → e − 2; Δ = 40 → the log-ratio is clamped to −20:
  // e^{−20} + 20 − 1 = 19.000000002, then the result is clamped to 10
  assertClose(klPenalty(lp, ref, m, "k3"), [Math.exp(-1), Math.E - 2, 10, 0], { atol: 1e-15 });
  assertClose(klPenalty(lp, ref, m, "low_var_kl"), [Math.exp(-1), Math.E - 2, 10, 0], {
    atol: 1e-15,
  });
});

Deno.test("klShapedRewards golden: r_t = 1[t = last]·R − β·KL_t (veRL apply_kl_penalty)", () => {
  const out = klShapedRewards({
    rewards: [1, 0],
    logProbs: fromRows([[-1, -1, -1], [-0.5, -2, NaN]]),
    refLogProbs: fromRows([[-1.5, -1, -0.5], [-0.5, -1, NaN]]),
    responseMask: fromRows([[1, 1, 1], [1, 1, 0]]),
    coef: 0.2,
  });
  // k1 row 0 = [0.5, 0, −0.5], row 1 = [0, −1, ·]; reward on the last valid token
  // row 0: [−0.1, 0, 0.1 + 1]; row 1: [0, 0.2 + 0, 0]
  assertClose(out.tokenRewards.data, [-0.1, 0, 1.1, 0, 0.2, 0], { atol: 1e-15 });
  assertClose(out.kl, [0.5, 0, -0.5, 0, -1, 0], { atol: 0 });
  // current_kl: mean over rows of the per-row masked mean: (0 + (−0.5)) / 2 = −0.25
  assert.equal(out.meanKl, -0.25);
});

Deno.test("klShapedRewards property: coef 0 gives the outcome layout; the token sum is R − β·ΣKL", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1000 }),
      fc.double({ min: 0, max: 2, noNaN: true }),
      (seed, beta) => {
        const b = randomBatch(seed, 6, 5);
        const out = klShapedRewards({
          rewards: b.rewards,
          logProbs: b.tokenRewards,
          refLogProbs: b.other,
          responseMask: b.mask,
          coef: beta,
        });
        for (let i = 0; i < 6; i++) {
          let sum = 0;
          let kl = 0;
          for (let t = 0; t < 5; t++) {
            sum += out.tokenRewards.data[i * 5 + t]!;
            kl += out.kl[i * 5 + t]!;
          }
          assert.ok(Math.abs(sum - (b.rewards[i]! - beta * kl)) < 1e-12);
        }
      },
    ),
  );
});

Deno.test("klShapedRewards: larger random batch vs an independent reference for every estimator", () => {
  const b = randomBatch(13, 100, 20, { holes: true });
  for (const penalty of ["k1", "abs", "k2", "k3"] as const) {
    const out = klShapedRewards({
      rewards: b.rewards,
      logProbs: b.tokenRewards,
      refLogProbs: b.other,
      responseMask: b.mask,
      coef: 0.05,
      penalty,
    });
    const ref = new Float64Array(100 * 20);
    for (let i = 0; i < 100; i++) {
      let last = -1;
      for (let t = 0; t < 20; t++) {
        const k = i * 20 + t;
        if (!b.mask.data[k]) continue;
        last = k;
        const d = b.tokenRewards.data[k]! - b.other.data[k]!;
        const kl = penalty === "k1"
          ? d
          : penalty === "abs"
          ? Math.abs(d)
          : penalty === "k2"
          ? d * d / 2
          : (() => {
            const x = Math.max(-20, Math.min(20, -d));
            return Math.max(-10, Math.min(10, Math.expm1(x) - x));
          })();
        ref[k] = -0.05 * kl;
      }
      ref[last] = ref[last]! + b.rewards[i]!;
    }
    assertClose(out.tokenRewards.data, ref, { rtol: 1e-12, atol: 1e-14, msg: penalty });
  }
});

Deno.test("klShapedRewards: invalid inputs name the argument and the value", () => {
  const m = fromRows([[1, 1]]);
  assert.throws(
    () =>
      klShapedRewards({
        rewards: [1],
        logProbs: fromRows([[0, -Infinity]]),
        refLogProbs: fromRows([[0, 0]]),
        responseMask: m,
        coef: 0.1,
      }),
    /klShapedRewards: logProbs\[0, 1\] is -Infinity; logProbs must be finite numbers where responseMask is 1/,
  );
  assert.throws(
    () =>
      klShapedRewards({
        rewards: [1],
        logProbs: fromRows([[0, 0]]),
        refLogProbs: fromRows([[0, 0]]),
        responseMask: m,
        coef: -1,
      }),
    /klShapedRewards: coef must be a finite number >= 0, got -1/,
  );
  assert.throws(
    () => klPenalty(fromRows([[0]]), fromRows([[0]]), fromRows([[1]]), "k4" as never),
    /klPenalty: penalty must be one of "k1", "kl", "abs", "k2", "mse", "k3", "low_var_kl", "k1\+", "kl\+", "abs\+", "k2\+", "mse\+", "k3\+", "low_var_kl\+", got "k4"/,
  );
});
