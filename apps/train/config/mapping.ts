/**
 * From a validated {@link Config} to the option objects the registries take: policy-loss
 * options for `@rlvr/objectives`, estimator settings for `@rlvr/advantage`, sampler parameters
 * for `@rlvr/sampling`.
 *
 * Design decision: the config has first-class fields for what every recipe tunes (clip range,
 * KL, entropy bonus, aggregation) and free `estimatorOptions`/`lossOptions` records for the
 * rest; this file is the single place where the two are combined, so the validation trial
 * (`checks.ts`) and the training loop pass the registries exactly the same objects.
 *
 * @module
 */

import type { KlPenalty } from "@rlvr/advantage";
import type { KlEstimator, PolicyLossOptions } from "@rlvr/objectives";
import type { SamplingParams } from "@rlvr/sampling";
import type { Config } from "./schema.ts";
import { methodKey } from "./methods.ts";

/**
 * Policy-loss option names that have a first-class config field, and that field. A
 * `lossOptions` entry with one of these names is rejected (it would silently fight the field).
 */
export const LOSS_OPTION_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  aggregation: "algorithm.aggregation",
  clipRatio: "algorithm.clip.low and algorithm.clip.high",
  clipRatioLow: "algorithm.clip.low",
  clipRatioHigh: "algorithm.clip.high",
  clipRatioC: "algorithm.clip.dual",
  klCoef: "algorithm.kl.beta",
  klType: "algorithm.kl.estimator",
  entropyCoef: "algorithm.entropyCoef",
  globalTokens: "nothing: the trainer computes it per micro-batch",
  globalSequences: "nothing: the trainer computes it per micro-batch",
});

/**
 * The options passed to the policy loss (`computePolicyLoss(config.algorithm.loss, inputs,
 * options)`): clip bounds, dual clip (`null` → `Infinity`, off), KL-in-loss when
 * `kl.placement` is `loss` (else `klCoef` 0), entropy bonus, aggregation, and `lossOptions`.
 * With `seq-mean-token-sum-norm` (Dr. GRPO) and no explicit `lossScaleFactor`, the constant
 * divisor is `rollout.maxNewTokens`, as in the Dr. GRPO paper (a constant, not the batch's
 * padded length, which changes from step to step).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { policyLossOptions } from "./mapping.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const options = policyLossOptions(config);
 * assert.equal(options.clipRatioLow, config.algorithm.clip.low);
 * assert.equal(options.aggregation, config.algorithm.aggregation);
 * ```
 */
export function policyLossOptions(config: Config): PolicyLossOptions {
  const a = config.algorithm;
  const options: PolicyLossOptions = {
    aggregation: methodKey(a.aggregation),
    clipRatioLow: a.clip.low,
    clipRatioHigh: a.clip.high,
    clipRatioC: a.clip.dual ?? Infinity,
    klCoef: a.kl.placement === "loss" ? a.kl.beta : 0,
    klType: a.kl.estimator as KlEstimator,
    entropyCoef: a.entropyCoef,
  };
  if (a.aggregation === "seq-mean-token-sum-norm" && a.lossOptions.lossScaleFactor === undefined) {
    options.lossScaleFactor = config.rollout.maxNewTokens;
  }
  return { ...options, ...a.lossOptions } as PolicyLossOptions;
}

/** What {@link estimatorSettings} returns. */
export interface EstimatorSettings {
  /** The registry key (`getEstimator(key)`). */
  key: string;
  /**
   * Settings merged into every estimator input (`estimatorOptions`, plus `gamma`/`lam` from
   * `algorithm.gae` for `gae`); the trainer adds rewards, mask, groups and values.
   */
  options: Record<string, unknown>;
  /**
   * KL-in-reward coefficient and estimator when `kl.placement` is `reward` and `kl.beta > 0`
   * (the trainer adds the log-probs), else null.
   */
  klInReward: { coef: number; penalty: KlPenalty } | null;
}

/**
 * The estimator key and settings of a config.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { estimatorSettings } from "./mapping.ts";
 * import assert from "node:assert/strict";
 * const s = estimatorSettings(await validateConfig(defaultConfig()));
 * assert.equal(s.key, "grpo");
 * assert.equal(s.klInReward, null);
 * ```
 */
export function estimatorSettings(config: Config): EstimatorSettings {
  const a = config.algorithm;
  const options: Record<string, unknown> = { ...a.estimatorOptions };
  if (a.estimator === "gae" && a.gae != null) {
    options.gamma = a.gae.gamma;
    options.lam = a.gae.lambda;
  }
  const klInReward = a.kl.placement === "reward" && a.kl.beta > 0
    ? { coef: a.kl.beta, penalty: a.kl.estimator as KlPenalty }
    : null;
  return { key: methodKey(a.estimator), options, klInReward };
}

/** The per-batch inputs an estimator reads beyond rewards, mask and groups (see {@link estimatorNeeds}). */
export interface EstimatorNeeds {
  /** Critic values (`gae`): the run attaches a value head. */
  values: boolean;
  /** The reward of a greedy response to each prompt (`remax`): the rollout samples one. */
  baseline: boolean;
  /** Implicit process rewards `β·(log π_old − log π_ref)` (`prime`): a reference is held. */
  process: boolean;
  /** Per-token entropies of the sampling policy (`entropy_adv`). */
  entropy: boolean;
  /**
   * The completions' turns (`gigpo`): the rollout turns a stepped reward's steps into turns
   * (`loop/reward_steps.ts`); an episode brings its own.
   */
  turns: boolean;
}

/** PRIME's β of the implicit process reward when `algorithm.prime` is absent (the paper's 0.05). */
export const PRIME_BETA_DEFAULT = 0.05;

/**
 * What the configured estimator reads from each batch besides rewards, the mask and the groups,
 * so that the rollout and the scoring supply exactly that (`entropy_adv` adds to the needs of its
 * `baseEstimator`). An estimator registered by a plugin reads its settings from `extra` and gets
 * none of these.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { estimatorNeeds } from "./mapping.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.deepEqual(estimatorNeeds(config), {
 *   values: false, baseline: false, process: false, entropy: false, turns: false,
 * });
 * config.algorithm.estimator = "remax";
 * assert.equal(estimatorNeeds(config).baseline, true);
 * ```
 */
export function estimatorNeeds(config: Config): EstimatorNeeds {
  const a = config.algorithm;
  const of = (key: string): EstimatorNeeds => ({
    values: key === "gae",
    baseline: key === "remax",
    process: key === "prime",
    entropy: key === "entropy_adv",
    turns: key === "gigpo",
  });
  const needs = of(a.estimator);
  if (a.estimator === "entropy_adv") {
    const base = a.estimatorOptions.baseEstimator;
    const inner = of(typeof base === "string" ? base : "grpo");
    for (const k of Object.keys(needs) as (keyof EstimatorNeeds)[]) needs[k] ||= inner[k];
  }
  return needs;
}

/**
 * Whether a run holds a reference policy: for a KL term (`algorithm.kl.beta > 0`) or for PRIME's
 * implicit process rewards.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { needsReference } from "./mapping.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.equal(needsReference(config), false);
 * config.algorithm.estimator = "prime";
 * assert.equal(needsReference(config), true);
 * ```
 */
export function needsReference(config: Config): boolean {
  return config.algorithm.kl.beta > 0 || estimatorNeeds(config).process;
}

/**
 * The token-sampler parameters of `rollout.sampler`.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { samplingParams } from "./mapping.ts";
 * import assert from "node:assert/strict";
 * const p = samplingParams(await validateConfig(defaultConfig()));
 * assert.equal(p.temperature, 1);
 * ```
 */
export function samplingParams(config: Config): SamplingParams {
  const s = config.rollout.sampler;
  return { temperature: s.temperature, topP: s.topP, topK: s.topK, minP: s.minP };
}

/** The resolved rollout schedule of a config (see {@link rolloutSchedule}). */
export interface RolloutSchedule {
  /** `sync`, `one_step_off` or `async`. */
  mode: "sync" | "one_step_off" | "async";
  /** Rollout workers (0 in sync mode, 1 in one-step-off). */
  workers: number;
  /** η: 0 in sync mode, 1 in one-step-off, `rollout.maxStaleness` in async. */
  maxStaleness: number;
  /** What happens to a batch older than η. */
  stalePolicy: "drop" | "regenerate";
  /** Partial rollouts (`rollout.partial`; always false in sync mode). */
  partial: boolean;
}

/**
 * The rollout schedule of a config: the mode and what it implies (a config written before
 * `rollout.mode` existed is `sync`).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { rolloutSchedule } from "./mapping.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.deepEqual(rolloutSchedule(config), {
 *   mode: "sync", workers: 0, maxStaleness: 0, stalePolicy: "drop", partial: false,
 * });
 * config.rollout.mode = "one_step_off";
 * assert.equal(rolloutSchedule(config).maxStaleness, 1);
 * ```
 */
export function rolloutSchedule(config: Config): RolloutSchedule {
  const r = config.rollout;
  const mode = r.mode ?? "sync";
  const stalePolicy = r.stalePolicy ?? "drop";
  if (mode === "sync") return { mode, workers: 0, maxStaleness: 0, stalePolicy, partial: false };
  const partial = r.partial ?? false;
  if (mode === "one_step_off") return { mode, workers: 1, maxStaleness: 1, stalePolicy, partial };
  return {
    mode,
    workers: r.workers ?? 2,
    maxStaleness: r.maxStaleness ?? 2,
    stalePolicy,
    partial,
  };
}
