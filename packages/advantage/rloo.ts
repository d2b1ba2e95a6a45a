/**
 * REINFORCE Leave-One-Out (Ahmadian et al., "Back to Basics", arXiv 2402.14740; the baseline
 * goes back to Kool et al. 2019): each response's baseline is the mean reward of the *other*
 * responses to the same prompt, which keeps the policy-gradient estimate unbiased.
 *
 * Design: veRL `compute_rloo_outcome_advantage` writes it as `R_i·n/(n−1) − μ·n/(n−1)`; we use
 * the equal form `n/(n−1)·(R_i − μ)` with the shifted group mean (identical rewards give exactly
 * 0). A singleton group has no other response: as in veRL its advantage is its raw reward
 * (baseline 0). `returns` equals `advantages`, and the scalar is broadcast over valid tokens.
 *
 * @module
 */

import { ESTIMATORS, outcomeOf } from "./_estimators.ts";
import { checkOutcome } from "./_validate.ts";
import { statsOf } from "./_group.ts";
import type { GroupOutcomeInput } from "./grpo.ts";
import { broadcast } from "./_layout.ts";
import type { AdvantageOutput, GroupIndex } from "./types.ts";

/** Input of {@link rloo}. */
export type RlooInput = GroupOutcomeInput;

/**
 * RLOO advantages, broadcast over valid tokens:
 *
 * ```
 * A_i = R_i − (1/(n−1)) Σ_{j≠i} R_j  =  n/(n−1) · (R_i − μ_g)     (n = |group of i| > 1)
 * A_i = R_i                                                       (n = 1)
 * ```
 *
 * Matches veRL `compute_rloo_outcome_advantage` (`algorithm.adv_estimator=rloo`). Paper:
 * arXiv 2402.14740.
 *
 * @example Usage
 * ```ts
 * import { fromRows, rloo } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = rloo({
 *   rewards: [1, 0, 0.5],
 *   responseMask: fromRows([[1], [1], [1]]),
 *   index: [0, 0, 0],
 * });
 * // baseline of 0 is mean(0, 0.5) = 0.25, so A_0 = 0.75; A_1 = 0 − 0.75; A_2 = 0.5 − 0.5
 * assert.deepEqual([...advantages], [0.75, -0.75, 0]);
 * ```
 */
export function rloo(input: RlooInput): AdvantageOutput {
  const { rewards, mask, index } = checkOutcome("rloo", input);
  const advantages = broadcast(rlooScalars(rewards, index), mask);
  return { advantages, returns: advantages.slice() };
}

/** RLOO scalars of already-checked inputs. */
function rlooScalars(rewards: ArrayLike<number>, index: GroupIndex): Float64Array {
  const out = new Float64Array(rewards.length);
  for (const g of statsOf(rewards, index)) {
    const n = g.count;
    for (const i of g.members) {
      out[i] = n > 1 ? (n / (n - 1)) * (rewards[i]! - g.mean) : rewards[i]!;
    }
  }
  return out;
}

ESTIMATORS.register("rloo", (x) => rloo(outcomeOf("rloo", x)));
