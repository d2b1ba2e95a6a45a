/**
 * One training step's update on a rollout, in named steps a reader can follow and a new method
 * changes one of:
 *
 * 1. **lay out** the batch (`train_batch.ts`: `[B, Tc]` mask and sampler log-probs);
 * 2. **score** it without gradient (`scoring.ts`: old log-probs, reference log-probs, entropies,
 *    critic values — each only when something reads it);
 * 3. **estimate advantages** (`advantages.ts`: the configured estimator with every input it reads);
 * 4. **plan the mini-batches** (`minibatch.ts`: `ppoEpochs` × `ppoMiniBatchSize`, seeded shuffle);
 * 5. **update** (`update.ts`: one AdamW step per mini-batch, gradient accumulation over
 *    micro-batches, clipping);
 * 6. **report** (`UpdateMetrics`).
 *
 * Design decisions:
 * - **Old log-probs are scored once, before the first optimizer step**, so every later mini-batch
 *   and epoch is off-policy by the steps taken since: the importance ratio, its clipping and the
 *   off-policy corrections act. Only a single-step update with nothing reading π_old before the
 *   loss (no KL in the reward, no PRIME, no `entropy_adv`) skips that pass and reads π_old from
 *   its own gradient pass (the same numbers, one forward pass fewer). With
 *   `algorithm.oldLogProbs: rollout` (veRL's bypass mode) π_old is the sampler's log-probs and
 *   that pass is skipped whatever the update (it still runs when entropies or the critic's values
 *   are read): the ratio is then π_θ over the policy that sampled each token, and the sampler
 *   and learner are not compared (`sampler_logprob_diff` null).
 * - **The sampler's log-probs** are compared with the learner's (`sampler_logprob_diff`) and
 *   passed to the loss as `rolloutLogProbs`, the behaviour policy the off-policy corrections of
 *   `algorithm.lossOptions.offPolicy` (TIS, decoupled PPO) weight by; with asynchronous rollouts
 *   the learner's log-probs are the proximal policy's.
 * - **No reference model unless something needs it** (`needsReference`: β > 0 or PRIME); with
 *   LoRA the caller passes `"base"`, the policy with its adapters detached.
 * - Every tensor is created on the default backend, which the run sets to its device, so the
 *   scoring, the loss, the backward pass and AdamW run there.
 *
 * @module
 */

import type { CausalLM } from "@rlvr/policy";
import type { Optimizer } from "@rlvr/tensor";
import type { Config } from "../config/types.ts";
import { estimatorNeeds, estimatorSettings } from "../config/mapping.ts";
import { batchAdvantages } from "./advantages.ts";
import { miniBatchPlan } from "./minibatch.ts";
import type { RolloutItem } from "./rollout.ts";
import { scoreBeforeUpdate, type ScoreNeeds } from "./scoring.ts";
import { trainBatch } from "./train_batch.ts";
import { miniBatchUpdates, type UpdateStats } from "./update.ts";
import type { VisionInputs } from "./vision.ts";

/**
 * The metrics of one update (the trainer's part of a `metrics.jsonl` record): the mini-batch
 * updates' statistics ({@link UpdateStats}) with the KL to the reference and the sampler's
 * log-prob gap.
 */
export interface UpdateMetrics extends Omit<UpdateStats, "old" | "klLoss"> {
  /** KL to the reference (token mean, the configured estimator), or null when β = 0. */
  kl: number | null;
  /**
   * Mean |sampler log-prob − learner log-prob| per token; null with `algorithm.oldLogProbs:
   * rollout`, where the learner does not score the batch before the update.
   */
  samplerLogprobDiff: number | null;
}

/** What {@link trainStep} needs. */
export interface TrainContext {
  /** The resolved config. */
  config: Config;
  /** The policy (with a value head for GAE). */
  model: CausalLM;
  /**
   * The frozen reference, only when `needsReference(config)`: a model, or `"base"` for the
   * policy with its LoRA adapters detached (no second copy of the weights).
   */
  ref: CausalLM | "base" | null;
  /** AdamW over `model.parameters()` (the adapters alone with LoRA). */
  optimizer: Optimizer;
  /** The training step (seeds the mini-batch shuffle; default 0). */
  step?: number;
  /** A vision-language policy's images (scoring and updates run with each row's images). */
  vision?: VisionInputs | null;
}

/**
 * What the scoring pass before the update computes for a config and an update of `steps`
 * optimizer steps (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { scoreNeedsOf } from "./trainer.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.equal(scoreNeedsOf(config, 1, false).old, false); // read from the gradient pass
 * assert.equal(scoreNeedsOf(config, 2, false).old, true);
 * const bypass = await validateConfig({ ...defaultConfig(), algorithm: {
 *   ...defaultConfig().algorithm, oldLogProbs: "rollout" } });
 * assert.equal(scoreNeedsOf(bypass, 2, false).old, false); // the sampler's log-probs
 * ```
 */
export function scoreNeedsOf(config: Config, steps: number, hasRef: boolean): ScoreNeeds {
  const needs = estimatorNeeds(config);
  const klInReward = estimatorSettings(config).klInReward !== null;
  const recompute = config.algorithm.oldLogProbs !== "rollout";
  return {
    old: recompute && (steps !== 1 || klInReward || needs.process || needs.entropy),
    entropy: needs.entropy,
    ref: hasRef && (config.algorithm.kl.beta > 0 || needs.process),
    values: needs.values,
  };
}

/**
 * Runs one update on `items` (see the module doc) and returns its metrics.
 *
 * @example Usage
 * ```ts
 * import { loadConfig } from "@rlvr/train";
 * import { loadPolicy } from "./policy.ts";
 * import { heldOutProblems, TrainStream } from "./problems.ts";
 * import { collectRollout } from "./rollout.ts";
 * import { trainStep } from "./trainer.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import { AdamW } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { config } = await loadConfig({
 *   set: ["algorithm.kl.beta=0", "rollout.batchSize=8", "rollout.groupSize=4",
 *     "algorithm.microBatchSize=8", "algorithm.ppoMiniBatchSize=4"],
 * });
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const stream = new TrainStream(task, 0, heldOutProblems(task, 8));
 * const r = await collectRollout(model, tokenizer, task, stream, {
 *   step: 1, seed: 0, batchSize: 8, groupSize: 4, maxNewTokens: 4,
 *   sampling: { temperature: 1 }, dynamicRetries: null, overlong: null,
 * });
 * const optimizer = new AdamW(model.parameters(), { lr: 1e-3 });
 * const m = await trainStep({ config, model, ref: null, optimizer }, r.items);
 * assert.equal(m.kl, null);
 * assert.equal(m.optimizerSteps + m.skippedSteps, 2); // two mini-batches of 4
 * optimizer.dispose();
 * model.dispose();
 * ```
 */
export async function trainStep(
  ctx: TrainContext,
  items: readonly RolloutItem[],
): Promise<UpdateMetrics> {
  const { config, model, ref, optimizer } = ctx;
  const vision = ctx.vision ?? null;
  const a = config.algorithm;
  if (items.length === 0) {
    return {
      entropy: null,
      kl: null,
      clipFracLow: null,
      clipFracHigh: null,
      ratioMean: null,
      ratioMax: null,
      ppoKl: null,
      gradNorm: null,
      pgLoss: null,
      vfLoss: null,
      samplerLogprobDiff: null,
      optimizerSteps: 0,
      skippedSteps: 0,
    };
  }
  // Rows sampled elsewhere (rollout workers) or long ago (replay) may not be in this thread's
  // image cache; preparing is a lookup for the rest.
  await vision?.prepare(items.map((it) => it.row));
  const batch = trainBatch(items);
  const plan = miniBatchPlan({
    batchSize: batch.B,
    miniBatchSize: a.ppoMiniBatchSize ?? null,
    epochs: a.ppoEpochs,
    shuffle: a.shuffleMiniBatches ?? true,
    seed: config.trainer.seed,
    step: ctx.step ?? 0,
  });
  const steps = plan.reduce((n, e) => n + e.length, 0);
  const bypass = a.oldLogProbs === "rollout";
  const scored = await scoreBeforeUpdate(
    { model, ref, temperature: config.rollout.sampler.temperature, vision },
    batch,
    scoreNeedsOf(config, steps, ref !== null),
  );
  const scores = bypass ? { ...scored, old: batch.sampled } : scored;
  const { advantages, returns } = batchAdvantages(config, batch, scores);
  const u = await miniBatchUpdates({ config, model, optimizer, vision }, batch, plan, {
    advantages,
    returns,
    scores,
  });
  const { mask, B, Tc } = batch;
  let diff = 0;
  for (let i = 0; i < B * Tc; i++) if (mask[i]) diff += Math.abs(batch.sampled[i]! - u.old[i]!);
  let kl: number | null = null;
  if (a.kl.beta > 0 && scores.ref !== null) {
    kl = u.klLoss;
    if (kl === null) {
      // KL in the reward: the token-mean k1 estimate log π_old − log π_ref.
      let s = 0;
      for (let i = 0; i < B * Tc; i++) if (mask[i]) s += u.old[i]! - scores.ref[i]!;
      kl = s / batch.tokens;
    }
  }
  const { old: _old, klLoss: _klLoss, ...stats } = u;
  return { ...stats, kl, samplerLogprobDiff: bypass ? null : diff / batch.tokens };
}
