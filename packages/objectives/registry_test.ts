import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import {
  computePolicyLoss,
  getPolicyLoss,
  policyLossNames,
  registerPolicyLoss,
} from "./registry.ts";
import { definePolicyLoss } from "./policy_loss.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { f64, inputsOf, mapMat, randomCase, t } from "./_test_utils.ts";

const BUILT_IN = [
  "vanilla",
  "decoupled_ppo",
  "gspo",
  "gspo_token",
  "gspo_seq",
  "cispo",
  "gppo",
  "gmpo",
  "geo_mean",
  "sapo",
  "sapo_agg",
  "clip_cov",
  "kl_cov",
  "reinforce",
  "gpg",
  "nsr",
  "psr",
  "w_reinforce",
  "dppo_tv",
  "dppo_kl",
  "dro",
  "bypass_mode",
];

const COMMON_METRICS = [
  "pg_loss",
  "pg_clipfrac",
  "clipfrac_low",
  "clipfrac_high",
  "clipfrac_dual",
  "ppo_kl",
  "ratio_mean",
  "ratio_min",
  "ratio_max",
  "masked_frac",
];

Deno.test("registry: built-in keys, aliases, unknown keys list the valid ones", () => {
  for (const key of BUILT_IN) assert.ok(policyLossNames().includes(key), key);
  // veRL's geo_mean (mean over all rows) is not our gmpo (aggregation-driven)
  assert.notEqual(getPolicyLoss("geo_mean"), getPolicyLoss("gmpo"));
  assert.equal(getPolicyLoss("gpg"), getPolicyLoss("reinforce"));
  assert.throws(
    () => getPolicyLoss("ppo"),
    new RegExp(`unknown policy loss "ppo"; valid keys: ${BUILT_IN.join(", ")}`),
  );
  assert.throws(
    () => registerPolicyLoss("vanilla", getPolicyLoss("gspo")),
    /"vanilla" is already registered/,
  );
  assert.throws(
    () => registerPolicyLoss("", getPolicyLoss("gspo")),
    /^TypeError: invalid policy loss key "": a lowercase letter/,
  );
  const custom = definePolicyLoss("test_zero", (ctx) => ({ perToken: ctx.logProbs.mul(0) }));
  registerPolicyLoss("test_zero", custom);
  registerPolicyLoss("test_zero", custom, { override: true });
  assert.ok(policyLossNames().includes("test_zero"));
});

Deno.test("registry: every loss returns a scalar loss, the common metrics, and leaks nothing", async () => {
  const c = randomCase(21, 4, 6, { spread: 0.3 });
  for (const key of BUILT_IN) {
    const inputs = inputsOf(c, {
      rolloutLogProbs: t(c.rollout),
      refLogProbs: t(c.ref),
      entropy: t(mapMat(c.adv, (i, j) => Math.abs(c.adv[i]![j]!))),
    });
    const before = f64.memory().liveBuffers;
    const { loss, metrics } = computePolicyLoss(key, inputs, {
      seed: 1,
      klCoef: 0.01,
      droBeta: 0.1,
    });
    assert.deepEqual(loss.shape, [], key);
    for (const m of [...COMMON_METRICS, "entropy", "kl", "kl_loss"]) {
      assert.ok(m in metrics, `${key}: metric ${m}`);
      assert.deepEqual(metrics[m]!.shape, [], `${key}: ${m} is a scalar`);
      assert.equal(metrics[m]!.requiresGrad, false, `${key}: ${m} has no gradient`);
    }
    loss.backward();
    loss.dispose();
    const values = await readMetrics(metrics, { dispose: true });
    for (const [k, v] of Object.entries(values)) {
      assert.ok(Number.isFinite(v), `${key}: ${k} = ${v}`);
    }
    inputs.logProbs.grad?.dispose();
    inputs.logProbs.grad = null;
    assert.equal(f64.memory().liveBuffers, before, `${key} leaked tensors`);
  }
});

Deno.test("registry: gradcheck of every loss w.r.t. logProbs (on-policy neighbourhood, sequence advantages)", async () => {
  // Small log-ratios and a wide clip keep every token away from the clip boundaries; with
  // per-sequence advantages the stop-gradient forms (gspo_token) have the gradient of their
  // value. CISPO's and DPPO's stop-gradient weights are checked against their own surrogates in
  // cispo_test.ts and verl_parity_test.ts.
  const c = randomCase(22, 2, 3, { spread: 0.02, seqAdv: true });
  const stopGradient = ["cispo", "dppo_tv", "dppo_kl"];
  for (const key of BUILT_IN.filter((k) => !stopGradient.includes(k))) {
    const rest = inputsOf(c, { rolloutLogProbs: t(c.rollout) });
    await gradcheck(
      (x) => {
        const { loss, metrics } = computePolicyLoss(key, { ...rest, logProbs: x }, {
          clipRatio: 0.5,
          seed: 2,
          droBeta: 0.1,
        });
        disposeMetrics(metrics);
        return loss;
      },
      [t(c.logp, true)],
      { msg: key },
    );
  }
});
