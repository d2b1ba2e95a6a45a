/**
 * The defaults every recipe is merged onto: a complete, valid config (GRPO with PPO-clip on a
 * small arithmetic task and the built-in tiny model), so a recipe states only what it changes.
 *
 * Design decision: defaults are plain data, not zod `.default()`s, so `config.yaml` of a run is
 * this object with the recipe and overrides applied, and `validateConfig(defaultConfig())` is
 * tested like any recipe. The algorithm values are GRPO's as DeepSeekMath trains it (clip 0.2,
 * KL β 0.04 with the k3 estimator in the loss, per-sequence token mean); the sizes are small
 * so a run finishes on a CPU.
 *
 * @module
 */

import type { Config } from "./schema.ts";

const DEFAULTS = {
  model: { checkpoint: "builtin:tiny", valueHead: false },
  task: {
    name: "arithmetic",
    options: { digits: 2, operators: ["+"], chainLength: 1 },
    formatWeight: 0,
  },
  rollout: {
    batchSize: 64,
    groupSize: 8,
    maxNewTokens: 8,
    sampler: { temperature: 1, topP: 1, topK: 0, minP: 0 },
    dynamicSampling: { enabled: false, maxRetries: 4 },
    mode: "sync",
    workers: 2,
    maxStaleness: 2,
    stalePolicy: "drop",
    partial: false,
    nats: null,
    natsAuth: null,
  },
  algorithm: {
    estimator: "grpo",
    estimatorOptions: {},
    loss: "vanilla",
    lossOptions: {},
    aggregation: "seq-mean-token-mean",
    clip: { low: 0.2, high: 0.2, dual: null },
    kl: { beta: 0, estimator: "low_var_kl", placement: "loss", target: null, horizon: 10000 },
    entropyCoef: 0,
    ppoEpochs: 1,
    ppoMiniBatchSize: null,
    shuffleMiniBatches: true,
    oldLogProbs: "recompute",
    microBatchSize: 64,
    overlong: { enabled: false, buffer: 8, penalty: 1 },
    prime: { beta: 0.05 },
  },
  sampling: {
    pool: null,
    selection: "stream",
    priority: { epsilon: 0.05, unseenRate: 0 },
    passRateDecay: 0.5,
    mastery: null,
    greso: null,
    curriculum: null,
    replay: null,
    budget: null,
  },
  optimizer: {
    lr: 5e-4,
    betas: [0.9, 0.999],
    weightDecay: 0.01,
    warmupSteps: 0,
    schedule: "cosine",
    gradClip: 1,
  },
  trainer: {
    steps: 600,
    seed: 0,
    device: "auto",
    blas: "auto",
    activationCheckpointing: false,
    evalEvery: 50,
    evalProblems: 64,
    evalSamples: 8,
    evalK: 8,
    saveEvery: 100,
    samplesEvery: 50,
    samplesCount: 4,
  },
  output: { dir: "runs", tensorboard: false, sinks: ["jsonl"] },
} satisfies Config;

/**
 * A fresh copy of the defaults (callers may mutate it).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const a = defaultConfig();
 * a.trainer.steps = 1;
 * assert.notEqual(defaultConfig().trainer.steps, 1);
 * assert.equal(defaultConfig().algorithm.estimator, "grpo");
 * ```
 */
export function defaultConfig(): Config {
  return structuredClone(DEFAULTS) as Config;
}
