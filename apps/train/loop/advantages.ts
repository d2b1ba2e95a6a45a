/**
 * The advantages of a batch: the configured estimator of `@rlvr/advantage` called with one
 * `EstimatorInput` holding everything the batch has: rewards, mask, groups and turn spans always,
 * plus the per-token inputs the run scores for its estimator (`estimatorNeeds`: critic values,
 * the greedy baseline's rewards, implicit process rewards, per-token entropies) and the
 * KL-shaped rewards of `kl.placement: reward`. No estimator is named here: each reads the fields
 * it needs and ignores the rest.
 *
 * Design decisions:
 * - **PRIME's implicit PRM is the policy itself**: the process reward of a token is
 *   `β·(log π_old − log π_ref)` with `β = algorithm.prime.beta` (PRIME's 0.05 by default), the
 *   implicit reward of the DPO parameterisation with the policy before this update as π_φ. The
 *   paper trains a separate PRM online with a cross-entropy loss on the outcome labels; here no
 *   second trained copy is held, so the process term starts at 0 and grows as the policy leaves
 *   the reference.
 * - **Turn spans**: an episode brings its own (GiGPO's anchor states); a single-turn completion is
 *   one turn spanning it, with which `gigpo` reduces to GRPO.
 *
 * @module
 */

import { type AdvantageOutput, type EstimatorInput, getEstimator } from "@rlvr/advantage";
import type { Config } from "../config/types.ts";
import { estimatorNeeds, estimatorSettings, PRIME_BETA_DEFAULT } from "../config/mapping.ts";
import type { PreScores } from "./scoring.ts";
import type { TrainBatch } from "./train_batch.ts";

function matrix(batch: TrainBatch, data: ArrayLike<number>) {
  return { data, batch: batch.B, length: batch.Tc };
}

function required<T>(value: T | null, what: string): T {
  if (value === null) throw new Error(`batchAdvantages: ${what} were not scored`);
  return value;
}

/**
 * The estimator input of a batch (see the module doc); `scores` must hold what
 * `estimatorNeeds(config)` and the KL placement read.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { estimatorInput } from "./advantages.ts";
 * import { trainBatch } from "./train_batch.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * const it = (reward: number, group: number) => ({ row, group, promptIds: [1], completionIds: [2, 3],
 *   samplerLogprobs: [0, 0], text: "", prompt: "", reward, correct: reward, format: null });
 * const input = estimatorInput(config, trainBatch([it(1, 0), it(0, 0)]),
 *   { old: null, ref: null, entropy: null, values: null });
 * assert.deepEqual(input.rewards, [1, 0]);
 * assert.deepEqual(input.index, [0, 0]);
 * ```
 */
export function estimatorInput(
  config: Config,
  batch: TrainBatch,
  scores: PreScores,
): EstimatorInput {
  const { items, B, Tc } = batch;
  const settings = estimatorSettings(config);
  const needs = estimatorNeeds(config);
  const input: EstimatorInput = {
    ...(settings.options as Partial<EstimatorInput>),
    rewards: items.map((it) => it.reward),
    responseMask: matrix(batch, batch.mask),
    index: items.map((it) => it.group),
  };
  if (needs.values) input.values = matrix(batch, required(scores.values, "critic values"));
  if (needs.baseline) {
    input.baselineRewards = items.map((it, i) => {
      if (it.baselineReward === undefined) {
        throw new Error(
          `batchAdvantages: response ${i} has no greedy baseline reward (estimator ${config.algorithm.estimator} needs one per prompt: the rollout samples it when rolloutOptionsOf(config) asks)`,
        );
      }
      return it.baselineReward;
    });
  }
  if (needs.process) {
    const old = required(scores.old, "old log-probs");
    const ref = required(scores.ref, "reference log-probs");
    const beta = config.algorithm.prime?.beta ?? PRIME_BETA_DEFAULT;
    const process = new Float64Array(B * Tc);
    for (let i = 0; i < B * Tc; i++) {
      if (batch.mask[i]) process[i] = beta * (old[i]! - ref[i]!);
    }
    input.processRewards = matrix(batch, process);
  }
  if (needs.entropy) input.entropy = matrix(batch, required(scores.entropy, "entropies"));
  // An episode brings its turn spans, a stepped reward its steps (`reward_steps.ts`); any other
  // completion is one turn spanning it.
  input.turns = items.map((it) =>
    it.turnSpans ?? [{ state: "", start: 0, end: it.completionIds.length }]
  );
  if (settings.klInReward !== null) {
    input.klInReward = {
      logProbs: matrix(batch, required(scores.old, "old log-probs")),
      refLogProbs: matrix(batch, required(scores.ref, "reference log-probs")),
      coef: settings.klInReward.coef,
      penalty: settings.klInReward.penalty,
    };
  }
  return input;
}

/**
 * Advantages and returns of a batch under the configured estimator, `[B, Tc]` each.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { batchAdvantages } from "./advantages.ts";
 * import { trainBatch } from "./train_batch.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig()); // grpo
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * const it = (reward: number) => ({ row, group: 0, promptIds: [1], completionIds: [2],
 *   samplerLogprobs: [0], text: "", prompt: "", reward, correct: reward, format: null });
 * const { advantages } = batchAdvantages(config, trainBatch([it(1), it(0)]),
 *   { old: null, ref: null, entropy: null, values: null });
 * assert.ok(advantages[0]! > 0 && advantages[1]! < 0);
 * ```
 */
export function batchAdvantages(
  config: Config,
  batch: TrainBatch,
  scores: PreScores,
): AdvantageOutput {
  return getEstimator(estimatorSettings(config).key)(estimatorInput(config, batch, scores));
}
