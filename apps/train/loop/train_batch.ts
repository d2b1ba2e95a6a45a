/**
 * A rollout batch laid out for the learner: the `[B, Tc]` response mask, the sampler's log-probs
 * as a matrix, and the helpers that cut rows out of `[B, Tc]` host matrices for a micro-batch.
 *
 * Design decisions:
 * - **One layout for every step of the update.** Scoring, advantages and the mini-batch updates
 *   all read `[B, Tc]` row-major host matrices (`Tc` the longest completion), so a mini-batch is
 *   a list of row indices into them, whatever order the rows were shuffled in.
 * - **Multi-turn episodes carry a loss mask**: the environment's tokens are in the completion (the
 *   policy read them) but out of the loss, the advantages and every token count; single-turn
 *   completions count every token.
 *
 * @module
 */

import type { ScoreItem } from "@rlvr/policy";
import { type Tensor, tensor } from "@rlvr/tensor";
import type { RolloutItem } from "./rollout.ts";

/** A rollout batch in the learner's `[B, Tc]` layout. */
export interface TrainBatch {
  /** The responses, in rollout order. */
  items: readonly RolloutItem[];
  /** Responses. */
  B: number;
  /** Columns: the longest completion. */
  Tc: number;
  /** 1 where a token is in the loss (a policy token of a completion), else 0; `[B, Tc]`. */
  mask: Float64Array;
  /** Whether any response carries a loss mask (episodes). */
  masked: boolean;
  /** Prompt and completion ids per response, for `scoreCompletions`. */
  scoreItems: ScoreItem[];
  /** The sampler's log-probs (the behaviour policy), `[B, Tc]`, 0 past a completion. */
  sampled: Float32Array;
  /** Tokens in the loss over the whole batch. */
  tokens: number;
}

/**
 * Lays out a rollout batch (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { tokensOf, trainBatch } from "./train_batch.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * const item = (completionIds: number[]) => ({
 *   row, group: 0, promptIds: [1, 2], completionIds,
 *   samplerLogprobs: completionIds.map(() => -0.5), text: "", prompt: row.prompt, reward: 1,
 *   correct: 1, format: null,
 * });
 * const b = trainBatch([item([5, 6, 7]), item([5])]);
 * assert.equal(b.Tc, 3);
 * assert.deepEqual([...b.mask], [1, 1, 1, 1, 0, 0]);
 * assert.equal(tokensOf(b, [1]), 1);
 * ```
 */
export function trainBatch(items: readonly RolloutItem[]): TrainBatch {
  const B = items.length;
  const Tc = B === 0 ? 0 : items.reduce((m, it) => Math.max(m, it.completionIds.length), 0);
  const masked = items.some((it) => it.lossMask !== undefined);
  const mask = new Float64Array(B * Tc);
  const sampled = new Float32Array(B * Tc);
  items.forEach((it, b) => {
    if (it.lossMask === undefined) mask.fill(1, b * Tc, b * Tc + it.completionIds.length);
    else it.lossMask.forEach((m, t) => mask[b * Tc + t] = m);
    it.samplerLogprobs.forEach((lp, t) => sampled[b * Tc + t] = lp);
  });
  let tokens = 0;
  for (const m of mask) tokens += m;
  return {
    items,
    B,
    Tc,
    mask,
    masked,
    scoreItems: items.map((it) => ({ promptIds: it.promptIds, completionIds: it.completionIds })),
    sampled,
    tokens,
  };
}

/**
 * Tokens in the loss over the given rows.
 *
 * @example Usage
 * ```ts
 * import { tokensOf, trainBatch } from "./train_batch.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * const it = { row, group: 0, promptIds: [1], completionIds: [2, 3],
 *   samplerLogprobs: [0, 0], text: "", prompt: "", reward: 0, correct: 0, format: null };
 * assert.equal(tokensOf(trainBatch([it, it]), [0, 1]), 4);
 * ```
 */
export function tokensOf(batch: TrainBatch, rows: readonly number[]): number {
  let n = 0;
  for (const b of rows) {
    for (let t = 0; t < batch.Tc; t++) n += batch.mask[b * batch.Tc + t]!;
  }
  return n;
}

/**
 * The given rows of a `[B, Tc]` host matrix as a tensor `[rows.length, cols]` (the first `cols`
 * columns; a micro-batch is scored at its own longest completion, `cols <= Tc`).
 *
 * @example Usage
 * ```ts
 * import { gatherRows } from "./train_batch.ts";
 * import assert from "node:assert/strict";
 * const m = [1, 2, 3, 4, 5, 6]; // [2, 3]
 * const t = gatherRows(m, 3, [1, 0], 2);
 * assert.deepEqual([...(await t.data())], [4, 5, 1, 2]);
 * t.dispose();
 * ```
 */
export function gatherRows(
  data: ArrayLike<number>,
  Tc: number,
  rows: readonly number[],
  cols: number,
): Tensor {
  const out = new Float32Array(rows.length * cols);
  rows.forEach((b, r) => {
    for (let t = 0; t < cols; t++) out[r * cols + t] = data[b * Tc + t]!;
  });
  return tensor(out, { shape: [rows.length, cols] });
}
