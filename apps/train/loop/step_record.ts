/**
 * A training step's `metrics.jsonl` record: the batch's rewards and lengths, the update's
 * metrics, the learning rate and the timings, plus what the rollout source adds.
 *
 * Design decision: keys that only some runs have (`format/mean` with a format reward, the
 * `rollout/*` keys of the asynchronous modes, `episode/*` of environments) are written only
 * there, so a run without them keeps its records' bytes.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { Rollout } from "./rollout.ts";
import type { StepBatch } from "./rollout_source.ts";
import type { UpdateMetrics } from "./trainer.ts";

/** Timings of a step. */
export interface StepTimes {
  /** Seconds of the update. */
  trainS: number;
}

/**
 * The metrics record of `step` (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { stepRecord } from "./step_record.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * const it = (reward: number) => ({ row, group: 0, promptIds: [1], completionIds: [2, 3],
 *   samplerLogprobs: [0, 0], text: "", prompt: "", reward, correct: reward, format: null });
 * const rollout = { items: [it(1), it(0)], fracZeroStdGroups: 0, rounds: 1, generatedTokens: 4, seconds: 1 };
 * const u = { entropy: 1, kl: null, clipFracLow: 0, clipFracHigh: 0, ratioMean: 1, ratioMax: 1,
 *   ppoKl: 0, gradNorm: 1, pgLoss: 0, vfLoss: null, samplerLogprobDiff: 0, optimizerSteps: 1, skippedSteps: 0 };
 * const r = stepRecord(config, 3, 1e-3, { rollout, record: {}, waitS: null }, u, { trainS: 1 });
 * assert.equal(r["reward/mean"], 0.5);
 * assert.equal(r.tokens_per_s, 2); // 4 tokens over 1 s of rollout and 1 s of update
 * ```
 */
export function stepRecord(
  config: Config,
  step: number,
  lr: number,
  batch: StepBatch,
  u: UpdateMetrics,
  times: StepTimes,
): Record<string, number | null> {
  const r = batch.rollout;
  const rewards = r.items.map((it) => it.reward);
  const n = Math.max(1, rewards.length);
  const mean = rewards.reduce((x, y) => x + y, 0) / n;
  const some = rewards.length > 0;
  return {
    step,
    "reward/mean": some ? mean : null,
    "reward/std": some ? Math.sqrt(rewards.reduce((x, y) => x + (y - mean) ** 2, 0) / n) : null,
    "accuracy/mean": some ? r.items.reduce((x, it) => x + it.correct, 0) / n : null,
    ...(config.task.formatWeight > 0
      ? { "format/mean": some ? r.items.reduce((x, it) => x + (it.format ?? 0), 0) / n : null }
      : {}),
    frac_zero_std_groups: r.fracZeroStdGroups,
    "response_length/mean": some
      ? r.items.reduce((x, it) => x + it.completionIds.length, 0) / n
      : null,
    ...lengthsByOutcome(r),
    entropy: u.entropy,
    kl: u.kl,
    "clip_frac/low": u.clipFracLow,
    "clip_frac/high": u.clipFracHigh,
    "ratio/mean": u.ratioMean,
    "ratio/max": u.ratioMax,
    ppo_kl: u.ppoKl,
    optimizer_steps: u.optimizerSteps,
    grad_norm: u.gradNorm,
    lr,
    pg_loss: u.pgLoss,
    vf_loss: u.vfLoss,
    sampler_logprob_diff: u.samplerLogprobDiff,
    "batch/responses": r.items.length,
    "rollout/rounds": r.rounds,
    skipped_steps: u.skippedSteps,
    // The trainer's throughput: with rollout workers, a step lasts the wait plus the update.
    tokens_per_s: r.generatedTokens / Math.max(1e-9, (batch.waitS ?? r.seconds) + times.trainS),
    "time/rollout_s": r.seconds,
    "time/train_s": times.trainS,
    ...rewardRecord(r),
    ...batch.record,
  };
}

/**
 * The mean response length of the correct and of the wrong responses (null where there are
 * none): Dr. GRPO's length bias shows in the wrong ones.
 */
function lengthsByOutcome(r: Rollout): Record<string, number | null> {
  const mean = (ok: boolean) => {
    const lens = r.items.filter((it) => (it.correct > 0) === ok).map((it) =>
      it.completionIds.length
    );
    return lens.length > 0 ? lens.reduce((a, b) => a + b, 0) / lens.length : null;
  };
  return { "response_length/correct_mean": mean(true), "response_length/wrong_mean": mean(false) };
}

/**
 * With `rewards:`, each component's mean over the batch (`reward/<name>/mean`, null where it
 * applied to no response), its failed calls (`reward/<name>/errors`) and the responses no
 * component scored (`reward/unscored`); nothing without it.
 */
function rewardRecord(r: Rollout): Record<string, number | null> {
  const stats = r.rewardStats;
  if (stats === undefined) return {};
  const out: Record<string, number | null> = {};
  for (const name of stats.components) {
    let sum = 0;
    let n = 0;
    for (const it of r.items) {
      const v = it.rewardParts?.[name];
      if (v === null || v === undefined) continue;
      sum += v;
      n++;
    }
    out[`reward/${name}/mean`] = n > 0 ? sum / n : null;
    out[`reward/${name}/errors`] = stats.errors[name] ?? 0;
  }
  out["reward/unscored"] = stats.unscored;
  return out;
}
