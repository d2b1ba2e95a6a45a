import assert from "node:assert/strict";
import fc from "fast-check";
import { gradcheck } from "@rlvr/tensor/testing";
import { applyKlPenalty, klEstimatorNames, klLoss, klPenalty } from "./kl.ts";
import { readMetrics } from "./metrics.ts";
import { f64, mapMat, mat, near, randomCase, t } from "./_test_utils.ts";
import type { KlEstimator } from "./types.ts";

/** Independent per-token reference of veRL `kl_penalty` (Schulman's estimators), in plain JS. */
function klRef(logp: number, ref: number, kind: string): number {
  const d = logp - ref;
  switch (kind) {
    case "k1":
    case "kl":
      return d;
    case "abs":
      return Math.abs(d);
    case "k2":
    case "mse":
      return (d * d) / 2;
    default: {
      // k3: r = π_ref/π_θ, k3 = r − log r − 1, with log r clamped to ±20 and k3 to [−10, 10]
      const logR = Math.min(Math.max(ref - logp, -20), 20);
      return Math.min(Math.max(Math.exp(logR) - logR - 1, -10), 10);
    }
  }
}

Deno.test("klPenalty: golden values by hand", async () => {
  const logp = t([[-1, -2, -0.5]]);
  const ref = t([[-1.5, -2, -0.25]]);
  // d = logp − ref = [0.5, 0, −0.25]
  assert.deepEqual(await mat(klPenalty(logp, ref, "k1")), [[0.5, 0, -0.25]]);
  assert.deepEqual(await mat(klPenalty(logp, ref, "abs")), [[0.5, 0, 0.25]]);
  // k2 = d²/2 = [0.125, 0, 0.03125]
  assert.deepEqual(await mat(klPenalty(logp, ref, "mse")), [[0.125, 0, 0.03125]]);
  // k3 = e^{−d} + d − 1: e^{−0.5} − 0.5 = 0.1065306597…, 0, e^{0.25} − 1.25 = 0.0340254166…
  const k3 = (await mat(klPenalty(logp, ref, "low_var_kl")))[0]!;
  near(k3[0]!, 0.10653065971263342);
  assert.equal(k3[1], 0);
  near(k3[2]!, 0.03402541668774148);
  // clamps: d = −30 → log r = 30 clamped to 20 → e^20 − 21 clamped to 10
  assert.deepEqual(await mat(klPenalty(t([[-31]]), t([[-1]]), "k3")), [[10]]);
});

Deno.test("klPenalty: k1/k2/k3/abs agree with their closed forms on random inputs", async () => {
  const c = randomCase(3, 5, 7);
  for (const kind of klEstimatorNames()) {
    const got = await mat(klPenalty(t(c.logp), t(c.ref), kind));
    const base = kind.replace("+", "") as string;
    const want = mapMat(c.logp, (i, j) => klRef(c.logp[i]![j]!, c.ref[i]![j]!, base));
    got.forEach((row, i) =>
      row.forEach((v, j) => near(v, want[i]![j]!, 1e-12, `${kind} [${i},${j}]`))
    );
  }
});

Deno.test("klPenalty: k3 ≥ 0 and = 0 when the policies match; k1 can be negative (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.double({ min: -30, max: 0, noNaN: true }), { minLength: 1, maxLength: 8 }),
      fc.array(fc.double({ min: -30, max: 0, noNaN: true }), { minLength: 8, maxLength: 8 }),
      async (logp, refAll) => {
        const ref = refAll.slice(0, logp.length);
        const k3 = (await mat(klPenalty(t([logp]), t([ref]), "k3")))[0]!;
        // k3 = (r − 1) − log r ≥ 0 mathematically; rounding may leave −1 ulp of 1.
        k3.forEach((v) => assert.ok(v >= -2e-16, `k3 = ${v} < 0`));
        const same = (await mat(klPenalty(t([logp]), t([logp]), "k3")))[0]!;
        same.forEach((v) => assert.equal(v, 0));
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("klPenalty: gradients (gradcheck), and k3+ has k3's value with k2's gradient", async () => {
  const c = randomCase(11, 2, 3);
  for (const kind of ["k1", "abs", "k2", "k3", "k3+"] as KlEstimator[]) {
    const ref = t(c.ref);
    if (kind === "k3+") continue;
    await gradcheck((x) => klPenalty(x, ref, kind), [t(c.logp, true)], { msg: kind });
  }
  const a = t(c.logp, true);
  const b = t(c.logp, true);
  const plus = klPenalty(a, t(c.ref), "k3+");
  const k3 = klPenalty(t(c.logp), t(c.ref), "k3");
  const k2 = klPenalty(b, t(c.ref), "k2");
  assert.deepEqual(await mat(plus), await mat(k3));
  plus.sum().backward();
  k2.sum().backward();
  assert.deepEqual(await mat(a.grad!), await mat(b.grad!));
});

Deno.test("klLoss and applyKlPenalty: golden values and the veRL current_kl", async () => {
  const logp = t([[-1, -2], [-1, -9]], true);
  const ref = t([[-1.5, -2], [-0.5, -9]]);
  const mask = t([[1, 1], [1, 0]]);
  // k1 per valid token: 0.5, 0, −0.5 → token-mean 0
  const { loss, metrics } = klLoss({ logProbs: logp, refLogProbs: ref, responseMask: mask }, {
    kind: "k1",
    coef: 2,
  });
  near(await loss.item(), 0);
  const m = await readMetrics(metrics);
  near(m.kl!, 0);
  // k2 with seq-mean-token-mean: rows (0.125 + 0)/2 and 0.125 → mean 0.09375, coef 2 → 0.1875
  const k2 = klLoss({ logProbs: logp, refLogProbs: ref, responseMask: mask }, {
    kind: "k2",
    coef: 2,
    aggregation: "seq-mean-token-mean",
  });
  near(await k2.loss.item(), 0.1875);
  k2.loss.backward();
  // ∂/∂logp of 2·½·Σ_i (1/n_i) Σ_t d²/2 = d/n_i: row 0 (n = 2) → [0.25, 0]; row 1 (n = 1) → [−0.5, 0]
  assert.deepEqual(await mat(logp.grad!), [[0.25, 0], [-0.5, 0]]);

  const scores = t([[0, 0], [0, 1]]);
  const { rewards, kl } = applyKlPenalty({
    tokenScores: scores,
    oldLogProbs: t([[-1, -2], [-1, -9]]),
    refLogProbs: ref,
    responseMask: mask,
  }, { coef: 0.1 });
  // k1 = [0.5, 0], [−0.5, (masked → 0)]; rewards = scores − 0.1·k1
  assert.deepEqual(await mat(rewards), [[-0.05, 0], [0.05, 1]]);
  // veRL current_kl: mean over rows of the masked row means: (0.25 + (−0.5)) / 2
  near(await kl.item(), -0.125);
});

Deno.test("klPenalty: unknown estimators and bad arguments throw with the valid names", () => {
  assert.throws(
    () => klPenalty(t([[0]]), t([[0]]), "k4" as KlEstimator),
    /^RangeError: unknown KL estimator "k4"; valid keys: k1, kl, abs, k2, mse, k3, low_var_kl, k1\+, kl\+, abs\+, k2\+, mse\+, k3\+, low_var_kl\+ \(did you mean "k1"\?\)$/,
  );
  assert.throws(
    () => klPenalty(t([[0, 0]]), t([[0]])),
    /refLogProbs shape \[1,1\] must equal logProbs shape \[1,2\]/,
  );
  assert.throws(
    () =>
      applyKlPenalty({
        tokenScores: t([[0]]),
        oldLogProbs: t([[0]]),
        refLogProbs: t([[0]]),
        responseMask: t([[1]]),
      }, { coef: NaN }),
    /coef must be a finite number, got NaN/,
  );
  assert.ok(f64.name === "cpu-f64");
});
