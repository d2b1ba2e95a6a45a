/**
 * On-Policy RL with Optimal reward baseline, OPO (Hao et al., arXiv 2505.23585): the
 * variance-minimising baseline `E[‖∇log π‖²·R] / E[‖∇log π‖²]`, with the squared gradient norm
 * approximated by the response length, giving a length-weighted group mean.
 *
 * Design: as veRL `compute_opo_outcome_advantage`, lengths are the valid-token counts
 * (`response_mask.sum(-1)`), a singleton group gets baseline 0 (advantage = raw reward), the
 * scalar is broadcast over valid tokens and `returns` equals `advantages`. A group whose
 * responses all have no valid token (where veRL divides 0 by 0) gets baseline 0; such rows have
 * no valid token to write anyway. The paper's other half, strictly on-policy training (one
 * gradient step per batch), is a trainer setting, not part of the estimator.
 *
 * @module
 */

import { ESTIMATORS, outcomeOf } from "./_estimators.ts";
import { checkOutcome } from "./_validate.ts";
import { groupsOf } from "./_group.ts";
import type { GroupOutcomeInput } from "./grpo.ts";
import { broadcast, lengthsOf } from "./_layout.ts";
import type { AdvantageOutput } from "./types.ts";

/** Input of {@link opo}. */
export type OpoInput = GroupOutcomeInput;

/**
 * OPO advantages, broadcast over valid tokens:
 *
 * ```
 * b_g = Σ_{j∈g} l_j R_j / Σ_{j∈g} l_j      (l_j = number of valid tokens of response j)
 * A_i = R_i − b_g                         (b = 0 for a singleton group)
 * ```
 *
 * Matches veRL `compute_opo_outcome_advantage` (`algorithm.adv_estimator=opo`). Paper:
 * arXiv 2505.23585.
 *
 * @example Usage
 * ```ts
 * import { fromRows, opo } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = opo({
 *   rewards: [1, 0],
 *   responseMask: fromRows([[1, 0, 0, 0], [1, 1, 1, 0]]), // lengths 1 and 3
 *   index: [0, 0],
 * });
 * // b = (1·1 + 3·0) / (1 + 3) = 0.25
 * assert.deepEqual([...advantages], [0.75, 0, 0, 0, -0.25, -0.25, -0.25, 0]);
 * ```
 */
export function opo(input: OpoInput): AdvantageOutput {
  const { rewards, mask, index } = checkOutcome("opo", input);
  const lengths = lengthsOf(mask);
  const scalars = new Float64Array(rewards.length);
  for (const g of groupsOf(index)) {
    let baseline = 0;
    if (g.members.length > 1) {
      let weighted = 0;
      let total = 0;
      for (const j of g.members) {
        weighted += lengths[j]! * rewards[j]!;
        total += lengths[j]!;
      }
      baseline = total > 0 ? weighted / total : 0;
    }
    for (const i of g.members) scalars[i] = rewards[i]! - baseline;
  }
  const advantages = broadcast(scalars, mask);
  return { advantages, returns: advantages.slice() };
}

ESTIMATORS.register("opo", (x) => opo(outcomeOf("opo", x)));
