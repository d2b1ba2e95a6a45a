/**
 * `@rlvr/rewards/core`: the reward contract ({@link Reward}: a name and a `score` or
 * `scoreBatch` function), {@link defineReward} and {@link defineBatchReward} to build one, the
 * runner {@link scoreRewards} (time budgets, fallbacks, metrics), composition (weighted sums,
 * gates, clipping, per-reward normalisation) and the answer extractors. All a custom reward
 * needs, without the verifiers, the tasks or the sandboxes.
 *
 * @example Usage
 * ```ts
 * import { defineReward, scoreRewards, weightedSum } from "@rlvr/rewards/core";
 * import assert from "node:assert/strict";
 * const short = defineReward("short", ({ completion }) => completion.length <= 5 ? 1 : 0);
 * const total = weightedSum([{ reward: short, weight: 2 }], { name: "brief" });
 * const r = await scoreRewards([total], [
 *   { prompt: "", completion: "12", row: {} },
 *   { prompt: "", completion: "a long answer", row: {} },
 * ]);
 * assert.deepEqual(r.totals, [2, 0]);
 * ```
 *
 * @module
 */

export type {
  CompositeReward,
  Reward,
  RewardContext,
  RewardInput,
  RewardOutcome,
  RewardStatus,
  RewardValue,
  Row,
  ScoreBatchFn,
  ScoreFn,
} from "./types.ts";
export { defineBatchReward, defineReward, type DefineRewardOptions } from "./define.ts";
export {
  flattenMetrics,
  type RewardFailure,
  type RewardMetrics,
  type ScoreOptions,
  type ScoreResult,
  scoreRewards,
  summarize,
} from "./runner.ts";
export {
  clip,
  type ClipOptions,
  gated,
  type GatedOptions,
  type NameOption,
  type NormalizeMethod,
  type NormalizeOptions,
  normalizeThenSum,
  scale,
  type ScaleOptions,
  weightedSum,
  type WeightedTerm,
} from "./compose.ts";
export type { Correctness } from "./_correct.ts";
export { extractBoxed, extractFinalAnswer, extractTag } from "./extract.ts";
