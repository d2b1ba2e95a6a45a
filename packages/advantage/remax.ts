/**
 * ReMax (Li et al., arXiv 2310.10505): REINFORCE with the reward of the policy's own greedy
 * decode as the baseline, one extra greedy generation per prompt and no critic.
 *
 * Design: as veRL `compute_remax_outcome_advantage`, the return is the undiscounted
 * reward-to-go over valid tokens (`(r·m).flip.cumsum.flip`, i.e. {@link discountedReturns} with
 * γ = 1 and `maskMode: "skip"`) and the advantage subtracts the greedy baseline `b_i` on every
 * valid token. `baselineRewards` holds `b_i = R(x_i, ŷ_i)` per response; when several sampled
 * responses share a prompt, each carries that prompt's greedy reward.
 *
 * @module
 */

import { ESTIMATORS } from "./_estimators.ts";
import { checkMask, checkObject, checkSequence, checkTokens, missing } from "./_validate.ts";
import { returnsOf } from "./_returns.ts";
import type { AdvantageOutput, TokenMatrix } from "./types.ts";

/** Input of {@link remax}. */
export interface RemaxInput {
  /** Token rewards `[batch, length]` of the sampled responses. */
  tokenRewards: TokenMatrix;
  /** Response mask `[batch, length]`. */
  responseMask: TokenMatrix;
  /** Reward of the greedy response to the same prompt, one per sampled response (veRL `reward_baselines`). */
  baselineRewards: ArrayLike<number>;
}

/**
 * ReMax advantages:
 *
 * ```
 * G_{i,t} = Σ_{s≥t} m_{i,s} r_{i,s}        (returns)
 * A_{i,t} = G_{i,t} − b_i                  (valid tokens)
 * ```
 *
 * With an outcome reward on the last token this is `A_i = R(x, y_i) − R(x, ŷ_i)` on every token.
 * Matches veRL `compute_remax_outcome_advantage` (`algorithm.adv_estimator=remax`) on valid
 * tokens. Paper: arXiv 2310.10505.
 *
 * @example Usage
 * ```ts
 * import { fromRows, remax, toRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const out = remax({
 *   tokenRewards: fromRows([[0, 1, 0], [0, 0, 0]]),
 *   responseMask: fromRows([[1, 1, 0], [1, 1, 1]]),
 *   baselineRewards: [0.25, 0.25], // the greedy answer scored 0.25
 * });
 * assert.deepEqual(toRows(out.advantages, 3), [[0.75, 0.75, 0], [-0.25, -0.25, -0.25]]);
 * assert.deepEqual(toRows(out.returns, 3), [[1, 1, 0], [0, 0, 0]]);
 * ```
 */
export function remax(input: RemaxInput): AdvantageOutput {
  const owner = "remax";
  checkObject(owner, input, "{tokenRewards, responseMask, baselineRewards}");
  const mask = checkMask(owner, "responseMask", input.responseMask);
  const rewards = checkTokens(owner, "tokenRewards", input.tokenRewards, mask);
  const baselines = checkSequence(owner, "baselineRewards", input.baselineRewards, mask.batch);
  const returns = returnsOf(rewards, mask, 1, "skip");
  const advantages = new Float64Array(returns.length);
  const { length } = mask;
  for (let k = 0; k < returns.length; k++) {
    if (mask.data[k] === 1) advantages[k] = returns[k]! - baselines[Math.floor(k / length)]!;
  }
  return { advantages, returns };
}

ESTIMATORS.register("remax", (x) =>
  remax({
    tokenRewards: x.tokenRewards,
    responseMask: x.responseMask,
    baselineRewards: x.baselineRewards ??
      missing("remax", "baselineRewards", "the greedy response's reward per response"),
  }));
