import { fromRows, getEstimator } from "@rlvr/advantage";
import { computePolicyLoss, disposeMetrics } from "@rlvr/objectives";
import { resolveSamplingParams } from "@rlvr/sampling";
import { tensor } from "@rlvr/tensor";
import assert from "node:assert/strict";
import { loadConfig } from "./load.ts";
import { estimatorSettings, policyLossOptions, samplingParams } from "./mapping.ts";

Deno.test("policyLossOptions: clip, dual clip, KL placement, entropy, Dr. GRPO's constant divisor", async () => {
  const grpo = policyLossOptions((await loadConfig({ config: "grpo" })).config);
  assert.deepEqual(grpo, {
    aggregation: "seq-mean-token-mean",
    clipRatioLow: 0.2,
    clipRatioHigh: 0.2,
    clipRatioC: Infinity, // dual: null
    klCoef: 0, // grpo here trains without a KL term
    klType: "low_var_kl",
    entropyCoef: 0,
  });
  const withKl = (await loadConfig({ set: ["algorithm.kl.beta=0.04"] })).config;
  assert.equal(policyLossOptions(withKl).klCoef, 0.04);
  const dr = (await loadConfig({ config: "dr_grpo", set: ["rollout.maxNewTokens=48"] })).config;
  assert.equal(policyLossOptions(dr).lossScaleFactor, 48);
  const drFixed = (await loadConfig({
    config: "dr_grpo",
    set: ["algorithm.lossOptions.lossScaleFactor=100"],
  })).config;
  assert.equal(policyLossOptions(drFixed).lossScaleFactor, 100);
  const rloo = policyLossOptions((await loadConfig({ config: "rloo" })).config);
  assert.equal(rloo.klCoef, 0, "KL is in the reward, not the loss");
  const dual = (await loadConfig({ set: ["algorithm.clip.dual=3"] })).config;
  assert.equal(policyLossOptions(dual).clipRatioC, 3);
});

Deno.test("policyLossOptions: the real loss accepts the options of every recipe", async () => {
  for (const recipe of ["grpo", "dr_grpo", "dapo", "gspo", "cispo", "nsr"]) {
    const config = (await loadConfig({ config: recipe })).config;
    const { loss, metrics } = computePolicyLoss(config.algorithm.loss, {
      logProbs: tensor([[-1, -2]], { requiresGrad: true }),
      oldLogProbs: tensor([[-1, -2]]),
      advantages: tensor([[-1, -1]]),
      responseMask: tensor([[1, 1]]),
      refLogProbs: tensor([[-1, -2]]),
    }, policyLossOptions(config));
    assert.ok(Number.isFinite(await loss.item()), recipe);
    loss.dispose();
    disposeMetrics(metrics);
  }
});

Deno.test("estimatorSettings: gae gets gamma/lam from algorithm.gae; KL-in-reward settings", async () => {
  const ppo = estimatorSettings((await loadConfig({ config: "ppo" })).config);
  assert.deepEqual(ppo, {
    key: "gae",
    options: { gamma: 1, lam: 0.95 },
    klInReward: { coef: 0.01, penalty: "k1" },
  });
  const grpo = estimatorSettings((await loadConfig({ config: "grpo" })).config);
  assert.deepEqual(grpo, { key: "grpo", options: {}, klInReward: null });
  // The settings feed the real estimator.
  const nsr = estimatorSettings((await loadConfig({ config: "nsr" })).config);
  const out = getEstimator(nsr.key)({
    ...nsr.options,
    rewards: [1, 0],
    responseMask: fromRows([[1], [1]]),
  });
  assert.deepEqual([...out.advantages], [1, -1]);
});

Deno.test("samplingParams: the sampler's own validation accepts them", async () => {
  const p = samplingParams((await loadConfig({ set: ["rollout.sampler.topP=0.9"] })).config);
  assert.deepEqual(p, { temperature: 1, topP: 0.9, topK: 0, minP: 0 });
  assert.equal(resolveSamplingParams(p).topP, 0.9);
});
