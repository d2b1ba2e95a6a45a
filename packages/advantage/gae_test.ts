import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, randomBatch, rowsOf } from "./_test_utils.ts";
import { gae, vapoLambda } from "./gae.ts";
import { fromRows } from "./layout.ts";
import type { TokenMatrix } from "./types.ts";

// Row 0 has a hole at t=2 (an observation token) and padding at t=4; NaN there is never read.
const rewards = fromRows([[0, 0.5, NaN, 1, NaN], [0, 0, 0, 2, 0]]);
const values = fromRows([[1, 2, NaN, 0.5, NaN], [0, 1, 1, 1, 1]]);
const mask = fromRows([[1, 1, 0, 1, 0], [1, 1, 1, 1, 1]]);

Deno.test("gae golden: γ=0.9, λ=0.8, masked positions skipped (veRL nextvalues carry)", () => {
  const out = gae({
    tokenRewards: rewards,
    values,
    responseMask: mask,
    gamma: 0.9,
    lam: 0.8,
    whiten: false,
  });
  // Row 0, valid tokens t = 0, 1, 3 (γλ = 0.72):
  // t=3: V_next = 0 (past the last valid token): δ = 1 + 0 − 0.5 = 0.5; Â = 0.5
  // t=1: V_next = V_3 = 0.5 (t=2 skipped): δ = 0.5 + 0.9·0.5 − 2 = −1.05; Â = −1.05 + 0.72·0.5 = −0.69
  // t=0: δ = 0 + 0.9·2 − 1 = 0.8; Â = 0.8 + 0.72·(−0.69) = 0.3032
  // Row 1 (all valid): t=4: δ = 0 − 1 = −1, Â = −1; t=3: δ = 2 + 0.9 − 1 = 1.9, Â = 1.9 − 0.72 = 1.18
  // t=2: δ = 0 + 0.9 − 1 = −0.1, Â = −0.1 + 0.72·1.18 = 0.7496; t=1: δ = −0.1, Â = −0.1 + 0.72·0.7496 = 0.439712
  // t=0: δ = 0 + 0.9·1 − 0 = 0.9, Â = 0.9 + 0.72·0.439712 = 1.21659264
  assertClose(out.advantages, [0.3032, -0.69, 0, 0.5, 0, 1.21659264, 0.439712, 0.7496, 1.18, -1], {
    atol: 1e-14,
  });
  // returns = Â + V on valid tokens
  assertClose(out.returns, [1.3032, 1.31, 0, 1, 0, 1.21659264, 1.439712, 1.7496, 2.18, 0], {
    atol: 1e-14,
  });
});

Deno.test("gae golden: whitening over valid tokens (veRL masked_whiten, unbiased)", () => {
  const out = gae({ tokenRewards: rewards, values, responseMask: mask, gamma: 0.9, lam: 0.8 });
  const raw = [0.3032, -0.69, 0.5, 1.21659264, 0.439712, 0.7496, 1.18, -1];
  const mean = raw.reduce((a, b) => a + b) / raw.length;
  const v = raw.reduce((a, b) => a + (b - mean) ** 2, 0) / (raw.length - 1);
  const w = raw.map((x) => (x - mean) / Math.sqrt(v + 1e-8));
  assertClose(out.advantages, [w[0]!, w[1]!, 0, w[2]!, 0, ...w.slice(3)], { atol: 1e-13 });
});

Deno.test("gae golden: decoupled λ (VC-PPO/VAPO) and VAPO length-adaptive λ", () => {
  const out = gae({
    tokenRewards: rewards,
    values,
    responseMask: mask,
    gamma: 0.9,
    lam: 0.8,
    criticLam: 1,
    whiten: false,
  });
  // actor unchanged (λ = 0.8); critic λ = 1, row 0: t=3 Â = 0.5; t=1 Â = −1.05 + 0.9·0.5 = −0.6;
  // t=0 Â = 0.8 + 0.9·(−0.6) = 0.26 → returns 1.26, 1.4, ., 1.0
  assertClose(out.advantages.subarray(0, 5), [0.3032, -0.69, 0, 0.5, 0], { atol: 1e-14 });
  assertClose(out.returns.subarray(0, 5), [1.26, 1.4, 0, 1, 0], { atol: 1e-14 });
  // VAPO: α = 0.5; row 0 has l = 3 valid tokens → λ = 1 − 1/1.5 = 1/3, row 1 l = 5 → λ = 0.6
  const vapo = gae({
    tokenRewards: rewards,
    values,
    responseMask: mask,
    gamma: 1,
    lengthAdaptiveAlpha: 0.5,
    criticLam: 1,
    whiten: false,
  });
  // row 0, γ = 1, λ = 1/3: t=3 δ = 0.5, Â = 0.5; t=1 δ = 0.5 + 0.5 − 2 = −1, Â = −1 + 0.5/3
  // t=0 δ = 0 + 2 − 1 = 1, Â = 1 + (−1 + 0.5/3)/3
  const a1 = -1 + 0.5 / 3;
  assertClose(vapo.advantages.subarray(0, 5), [1 + a1 / 3, a1, 0, 0.5, 0], { atol: 1e-14 });
  // critic λ = 1, γ = 1: returns are the reward-to-go: [1.5, 1.5, ., 1]
  assertClose(vapo.returns.subarray(0, 5), [1.5, 1.5, 0, 1, 0], { atol: 1e-14 });
  assert.equal(vapoLambda(3, 0.5), 1 - 1 / 1.5);
});

Deno.test("gae property: γ = λ = 1 gives advantages = returns − values (reward-to-go)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 8 }).chain((length) =>
        fc.tuple(
          fc.constant(length),
          fc.array(
            fc.tuple(
              fc.array(fc.double({ min: -3, max: 3, noNaN: true }), {
                minLength: length,
                maxLength: length,
              }),
              fc.array(fc.double({ min: -3, max: 3, noNaN: true }), {
                minLength: length,
                maxLength: length,
              }),
              fc.array(fc.constantFrom(0, 1), { minLength: length, maxLength: length }),
            ),
            { minLength: 1, maxLength: 5 },
          ),
        )
      ),
      ([length, rows]) => {
        const r = fromRows(rows.map((x) => x[0]));
        const v = fromRows(rows.map((x) => x[1]));
        const m = fromRows(rows.map((x) => x[2]));
        const out = gae({ tokenRewards: r, values: v, responseMask: m, whiten: false });
        rows.forEach(([rr, vv, mm], i) => {
          for (let t = 0; t < length; t++) {
            const k = i * length + t;
            if (!mm[t]) {
              assert.equal(out.advantages[k], 0);
              assert.equal(out.returns[k], 0);
              continue;
            }
            let togo = 0;
            for (let s = t; s < length; s++) if (mm[s]) togo += rr[s]!;
            assert.ok(Math.abs(out.returns[k]! - togo) < 1e-9);
            assert.ok(Math.abs(out.advantages[k]! - (togo - vv[t]!)) < 1e-9);
          }
        });
      },
    ),
  );
});

/** veRL's loop transcribed as math: full-length scan, carried nextvalues/lastgaelam via the mask. */
function referenceGae(r: TokenMatrix, v: TokenMatrix, m: TokenMatrix, gamma: number, lam: number) {
  const { batch, length } = m;
  const adv = new Float64Array(batch * length);
  const ret = new Float64Array(batch * length);
  for (let i = 0; i < batch; i++) {
    let next = 0;
    let last = 0;
    for (let t = length - 1; t >= 0; t--) {
      const k = i * length + t;
      const mk = m.data[k]!;
      const rk = mk ? r.data[k]! : 0; // veRL expects zeros where masked; ours holds NaN there
      const vk = mk ? v.data[k]! : 0;
      const delta = rk + gamma * next - vk;
      const cand = delta + gamma * lam * last;
      next = vk * mk + (1 - mk) * next;
      last = cand * mk + (1 - mk) * last;
      adv[k] = last * mk;
      ret[k] = (last + vk) * mk;
    }
  }
  // whiten: masked mean, Bessel-corrected variance, rsqrt(var + 1e-8)
  const vals: number[] = [];
  for (let k = 0; k < adv.length; k++) if (m.data[k]) vals.push(adv[k]!);
  const mu = vals.reduce((a, b) => a + b) / vals.length;
  const varU = vals.reduce((a, b) => a + (b - mu) ** 2, 0) / (vals.length - 1);
  const white = adv.map((a, k) => (m.data[k] ? (a - mu) / Math.sqrt(varU + 1e-8) : 0));
  return { white, ret };
}

Deno.test("gae: larger random batch with holes vs veRL's carry-through-the-mask loop", () => {
  const b = randomBatch(5, 64, 40, { holes: true });
  const out = gae({
    tokenRewards: b.tokenRewards,
    values: b.other,
    responseMask: b.mask,
    gamma: 0.97,
    lam: 0.9,
  });
  const ref = referenceGae(b.tokenRewards, b.other, b.mask, 0.97, 0.9);
  assertClose(out.advantages, ref.white, { rtol: 1e-10, atol: 1e-11 });
  assertClose(out.returns, ref.ret, { rtol: 1e-10, atol: 1e-11 });
  assert.equal(rowsOf(out.advantages, 40).length, 64);
});

Deno.test("gae: invalid inputs name the argument and the value", () => {
  assert.throws(
    () =>
      gae({
        tokenRewards: fromRows([[NaN, 0]]),
        values: fromRows([[0, 0]]),
        responseMask: fromRows([[1, 1]]),
      }),
    /gae: tokenRewards\[0, 0\] is NaN; tokenRewards must be finite numbers where responseMask is 1/,
  );
  assert.throws(
    () =>
      gae({
        tokenRewards: fromRows([[0, 0]]),
        values: fromRows([[0]]),
        responseMask: fromRows([[1, 1]]),
      }),
    /gae: values is \[1, 1\] but responseMask is \[1, 2\]; they must have the same shape/,
  );
  assert.throws(
    () =>
      gae({
        tokenRewards: fromRows([[0, 0]]),
        values: fromRows([[0, 0]]),
        responseMask: fromRows([[1, 1]]),
        lam: 1.5,
      }),
    /gae: lam must be a finite number in \[0, 1\], got 1.5/,
  );
  assert.throws(
    () =>
      gae({
        tokenRewards: fromRows([[1, 0]]),
        values: fromRows([[0, 0]]),
        responseMask: fromRows([[1, 0]]),
      }),
    /gae: the response mask selects 1 token; the unbiased masked variance \(veRL masked_var\) needs at least 2/,
  );
  assert.throws(() => vapoLambda(10, 0), /vapoLambda: alpha must be a finite number > 0, got 0/);
});
