/**
 * Discounted token returns `R_t = r_t + γ·R_{t+1}`, computed by one reverse scan per response.
 *
 * Design: the two ways veRL treats a masked position inside a response are both offered,
 * because its estimators differ and we match each of them:
 *
 * - `maskMode: "reset"` (default; older veRL `compute_reinforce_plus_plus_outcome_advantage`):
 *   the running return is zeroed at every masked position ("reset after EOS"), so a token only
 *   sees rewards up to the next masked position. With a mask that is 1s then 0s (single-turn
 *   RLVR) this is the plain discounted return of the response.
 * - `maskMode: "skip"` (current veRL `compute_reinforce_plus_plus_outcome_advantage`,
 *   `compute_remax_outcome_advantage`, PRIME's reverse cumsum and the GAE scan): masked positions
 *   are transparent; a valid token sees the return of the next valid token, and γ applies once
 *   per valid token.
 *
 * Rewards under a 0 in the mask are never read (veRL expects zeros there), and the output is 0
 * at masked positions.
 *
 * @module
 */

import { checkChoice, checkMask, checkNumber, checkTokens } from "./_validate.ts";
import { returnsOf } from "./_returns.ts";
import type { TokenMatrix } from "./types.ts";

/** How a masked position inside a response affects the reverse scan. */
export type MaskMode = "reset" | "skip";

/** Options of {@link discountedReturns}. */
export interface DiscountOptions {
  /** Discount factor γ in [0, 1] (default 1). */
  gamma?: number;
  /** `"reset"` (default, older veRL REINFORCE++) or `"skip"` (veRL REINFORCE++, ReMax, PRIME); see the module doc. */
  maskMode?: MaskMode;
}

/**
 * Discounted returns of token rewards: `R_{i,t} = r_{i,t} + γ·R_{i,t+1}` over valid tokens,
 * `R = 0` past the last one and at masked positions. Returns a new `Float64Array`.
 *
 * @example Usage
 * ```ts
 * import { discountedReturns, fromRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * // rewards [1, 0, 2], γ = 0.5: R_2 = 2, R_1 = 0 + 0.5·2 = 1, R_0 = 1 + 0.5·1 = 1.5
 * const r = discountedReturns(fromRows([[1, 0, 2, 0]]), fromRows([[1, 1, 1, 0]]), { gamma: 0.5 });
 * assert.deepEqual([...r], [1.5, 1, 2, 0]);
 * ```
 */
export function discountedReturns(
  tokenRewards: TokenMatrix,
  responseMask: TokenMatrix,
  options: DiscountOptions = {},
): Float64Array {
  const owner = "discountedReturns";
  const mask = checkMask(owner, "responseMask", responseMask);
  checkTokens(owner, "tokenRewards", tokenRewards, mask);
  const gamma = checkNumber(owner, "gamma", options.gamma ?? 1, { min: 0, max: 1 });
  const mode = checkChoice(owner, "maskMode", options.maskMode ?? "reset", ["reset", "skip"]);
  return returnsOf(tokenRewards, mask, gamma, mode);
}
