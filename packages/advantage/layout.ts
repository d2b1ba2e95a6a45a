/**
 * Building, reading and converting {@link TokenMatrix} values: construct one from a flat
 * buffer or from rows, read rows back, sum token rewards into sequence rewards, and place
 * sequence rewards on the last valid token (veRL's `token_level_scores` layout).
 *
 * Design: these are the only conversions between sequence-level and token-level data in the
 * package, so "which token carries the outcome reward" is decided in one place: the last
 * position whose mask is 1 (veRL writes it at `valid_response_length - 1`, the same position
 * for a left-aligned response).
 *
 * @module
 */

import { checkMask, checkMatrix, checkNumber, checkSequence, checkTokens } from "./_validate.ts";
import { broadcast, lengthsOf, placeOutcome, rowSums } from "./_layout.ts";
import type { TokenMatrix } from "./types.ts";

/**
 * Wraps a flat row-major buffer as a {@link TokenMatrix}, checking that it holds
 * `batch * length` entries.
 *
 * @example Usage
 * ```ts
 * import { tokenMatrix } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const m = tokenMatrix(new Float64Array([1, 2, 3, 4, 5, 6]), 2, 3);
 * assert.equal(m.data[1 * 3 + 2], 6); // row 1, column 2
 * ```
 */
export function tokenMatrix(data: ArrayLike<number>, batch: number, length: number): TokenMatrix {
  checkNumber("tokenMatrix", "batch", batch, { min: 0, integer: true });
  checkNumber("tokenMatrix", "length", length, { min: 0, integer: true });
  return checkMatrix("tokenMatrix", "data", { data, batch, length });
}

/**
 * Builds a {@link TokenMatrix} (backed by a `Float64Array`) from equal-length rows.
 *
 * @example Usage
 * ```ts
 * import { fromRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const m = fromRows([[1, 1, 0], [1, 0, 0]]);
 * assert.deepEqual([m.batch, m.length], [2, 3]);
 * ```
 */
export function fromRows(rows: readonly (readonly number[])[]): TokenMatrix {
  if (!Array.isArray(rows)) {
    throw new TypeError(`fromRows: rows must be an array of number arrays, got ${typeof rows}`);
  }
  const batch = rows.length;
  const length = batch === 0 ? 0 : (rows[0]?.length ?? 0);
  const data = new Float64Array(batch * length);
  rows.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== length) {
      throw new RangeError(
        `fromRows: rows[${i}] has ${
          Array.isArray(row) ? row.length : "no"
        } entries but rows[0] has ${length}; all rows must have the same length`,
      );
    }
    data.set(row, i * length);
  });
  return { data, batch, length };
}

/**
 * Splits a flat row-major buffer (e.g. an estimator's `advantages`) into rows of `length`.
 *
 * @example Usage
 * ```ts
 * import { toRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.deepEqual(toRows(new Float64Array([1, 2, 3, 4]), 2), [[1, 2], [3, 4]]);
 * ```
 */
export function toRows(data: ArrayLike<number>, length: number): number[][] {
  checkNumber("toRows", "length", length, { min: 1, integer: true });
  if (data.length % length !== 0) {
    throw new RangeError(
      `toRows: data has ${data.length} entries, which is not a multiple of length ${length}`,
    );
  }
  const rows: number[][] = [];
  for (let i = 0; i < data.length; i += length) rows.push(Array.from(data).slice(i, i + length));
  return rows;
}

/**
 * Number of valid tokens per response: `l_i = Σ_t m_{i,t}` (veRL `response_mask.sum(-1)`).
 *
 * @example Usage
 * ```ts
 * import { fromRows, responseLengths } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.deepEqual([...responseLengths(fromRows([[1, 1, 0], [1, 0, 0]]))], [2, 1]);
 * ```
 */
export function responseLengths(responseMask: TokenMatrix): Float64Array {
  const mask = checkMask("responseLengths", "responseMask", responseMask);
  return lengthsOf(mask);
}

/**
 * Sequence-level rewards from token-level ones: `R_i = Σ_t m_{i,t} r_{i,t}`, the sum veRL's
 * outcome estimators take (`token_level_rewards.sum(dim=-1)`), except that masked positions
 * are skipped instead of added (veRL expects zeros there).
 *
 * @example Usage
 * ```ts
 * import { fromRows, sequenceRewards } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const r = sequenceRewards(fromRows([[0, 0, 1], [0, 0.5, 9]]), fromRows([[1, 1, 1], [1, 1, 0]]));
 * assert.deepEqual([...r], [1, 0.5]); // the 9 sits under a 0 in the mask and is ignored
 * ```
 */
export function sequenceRewards(
  tokenRewards: TokenMatrix,
  responseMask: TokenMatrix,
): Float64Array {
  const mask = checkMask("sequenceRewards", "responseMask", responseMask);
  checkTokens("sequenceRewards", "tokenRewards", tokenRewards, mask);
  return rowSums(tokenRewards, mask);
}

/**
 * Token rewards with each sequence reward on its response's last valid token and 0 elsewhere
 * (veRL's `token_level_scores`). A response with no valid token carries no reward.
 *
 * @example Usage
 * ```ts
 * import { fromRows, outcomeTokenRewards, toRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const r = outcomeTokenRewards([1, -1], fromRows([[1, 1, 0], [1, 1, 1]]));
 * assert.deepEqual(toRows(r.data, 3), [[0, 1, 0], [0, 0, -1]]);
 * ```
 */
export function outcomeTokenRewards(
  rewards: ArrayLike<number>,
  responseMask: TokenMatrix,
): TokenMatrix {
  const mask = checkMask("outcomeTokenRewards", "responseMask", responseMask);
  checkSequence("outcomeTokenRewards", "rewards", rewards, mask.batch);
  return placeOutcome(rewards, mask);
}

/**
 * Broadcasts one scalar per response over its valid tokens, 0 elsewhere (veRL's
 * `scores.unsqueeze(-1) * response_mask`): how every outcome estimator fills its output.
 *
 * @example Usage
 * ```ts
 * import { broadcastScalars, fromRows, toRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const a = broadcastScalars([2, -1], fromRows([[1, 1, 0], [1, 0, 0]]));
 * assert.deepEqual(toRows(a, 3), [[2, 2, 0], [-1, 0, 0]]);
 * ```
 */
export function broadcastScalars(
  scalars: ArrayLike<number>,
  responseMask: TokenMatrix,
): Float64Array {
  const mask = checkMask("broadcastScalars", "responseMask", responseMask);
  checkSequence("broadcastScalars", "scalars", scalars, mask.batch);
  return broadcast(scalars, mask);
}
