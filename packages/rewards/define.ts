/**
 * Helpers that build {@link Reward} objects from plain functions, checking the name and the
 * time budget once, where the reward is defined, rather than on every call.
 *
 * Design: a reward is plain data (`{name, score | scoreBatch, timeoutMs?}`), so any object of
 * that shape works with the runner; these helpers only validate and freeze it. A scorer never
 * needs to catch its own errors or guard against hanging: the runner turns exceptions, timeouts
 * and non-finite results into a fallback score with a recorded reason.
 *
 * @module
 */

import { checkFunction, checkName, checkNumber, checkOptions } from "./_check.ts";
import type { Reward, Row, ScoreBatchFn, ScoreFn } from "./types.ts";

/** Options of {@link defineReward} and {@link defineBatchReward}. */
export interface DefineRewardOptions {
  /**
   * Time budget per call in milliseconds (> 0, or `Infinity` for none). When omitted the
   * runner's `timeoutMs` applies (default 10 000).
   */
  timeoutMs?: number;
}

function timeoutOf(
  owner: string,
  options: DefineRewardOptions | undefined,
): { timeoutMs?: number } {
  const opts = checkOptions<DefineRewardOptions>(owner, options, "{timeoutMs?}");
  if (opts.timeoutMs === undefined) return {};
  return {
    timeoutMs: checkNumber(owner, "options.timeoutMs", opts.timeoutMs, {
      min: 0,
      minExclusive: true,
      allowInfinity: true,
    }),
  };
}

/**
 * A per-sample reward: `score(input, ctx)` returns a number, `null` (not applicable) or a
 * promise of either. The runner calls it once per sample, up to its concurrency limit.
 *
 * @example Usage
 * ```ts
 * import { defineReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const short = defineReward("short", ({ completion }) => (completion.length < 10 ? 1 : 0));
 * const { totals } = await scoreRewards([short], [
 *   { prompt: "q", completion: "ok", row: {} },
 *   { prompt: "q", completion: "a very long reply", row: {} },
 * ]);
 * assert.deepEqual(totals, [1, 0]);
 * ```
 */
export function defineReward<R extends Row = Row>(
  name: string,
  score: ScoreFn<R>,
  options?: DefineRewardOptions,
): Reward<R> {
  checkName("defineReward", "name", name);
  checkFunction<ScoreFn<R>>(
    "defineReward",
    "score",
    score,
    "a function (input, ctx) => number | null | Promise<number | null>",
  );
  return Object.freeze({ name, score, ...timeoutOf("defineReward", options) });
}

/**
 * A batched reward: `scoreBatch(inputs, ctx)` returns one value per input, in order (for
 * judges, pooled sandboxes and group rewards that compare samples). The runner calls it once
 * with the whole batch under one time budget; if the call fails every sample gets the fallback.
 *
 * @example Usage
 * ```ts
 * import { defineBatchReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * // 1 for the shortest completion of the batch, else 0
 * const shortest = defineBatchReward("shortest", (inputs) => {
 *   const lengths = inputs.map((x) => x.completion.length);
 *   return lengths.map((l) => (l === Math.min(...lengths) ? 1 : 0));
 * });
 * const { totals } = await scoreRewards([shortest], [
 *   { prompt: "q", completion: "abc", row: {} },
 *   { prompt: "q", completion: "a", row: {} },
 * ]);
 * assert.deepEqual(totals, [0, 1]);
 * ```
 */
export function defineBatchReward<R extends Row = Row>(
  name: string,
  scoreBatch: ScoreBatchFn<R>,
  options?: DefineRewardOptions,
): Reward<R> {
  checkName("defineBatchReward", "name", name);
  checkFunction<ScoreBatchFn<R>>(
    "defineBatchReward",
    "scoreBatch",
    scoreBatch,
    "a function (inputs, ctx) => (number | null)[] | Promise<(number | null)[]>",
  );
  return Object.freeze({ name, scoreBatch, ...timeoutOf("defineBatchReward", options) });
}
