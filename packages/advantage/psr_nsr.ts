/**
 * Positive and negative sample reinforcement, PSR / NSR, and their weighted mix W-REINFORCE
 * (Zhu et al., "The Surprising Effectiveness of Negative Reinforcement in LLM Reasoning",
 * arXiv 2506.01347): REINFORCE with reward ±1 split into the part that pushes correct responses
 * up (PSR) and the part that pushes incorrect ones down (NSR), reweighted as
 * `λ·L_PSR + L_NSR`.
 *
 * Design: rewards must be binary, 1 for correct and 0 or −1 for incorrect. The advantage is a
 * scalar per response broadcast over its valid tokens: `+λ_pos` for a correct response and
 * `−λ_neg` for an incorrect one. This is what the authors' veRL fork computes
 * (`compute_psr_nsr_outcome_advantage`: with an outcome reward and γ = 1 its `weighted` mode
 * gives `λ` to correct and `−1` to incorrect responses, `positive` is λ_neg = 0, `negative`
 * is λ_pos = 0). With `positiveWeight = negativeWeight = 1` it is the unweighted ±1 REINFORCE
 * signal. `returns` is the 0/1 correctness broadcast over valid tokens (the fork's returns).
 *
 * @module
 */

import { ESTIMATORS, pick, seqRewards } from "./_estimators.ts";
import { checkMask, checkNumber, checkObject, checkSequence, show } from "./_validate.ts";
import { broadcast } from "./_layout.ts";
import type { AdvantageOutput, TokenMatrix } from "./types.ts";

/** Input of {@link psrNsr}. */
export interface PsrNsrInput {
  /** Binary sequence rewards: 1 = correct, 0 or −1 = incorrect. */
  rewards: ArrayLike<number>;
  /** Response mask `[batch, length]`. */
  responseMask: TokenMatrix;
  /** λ, the weight of positive samples (default 0.1, the paper's W-REINFORCE; 0 = NSR only). */
  positiveWeight?: number;
  /** The weight of negative samples (default 1; 0 = PSR only). */
  negativeWeight?: number;
}

/**
 * W-REINFORCE advantages (arXiv 2506.01347), broadcast over valid tokens:
 *
 * ```
 * A_i = +λ_pos   if response i is correct (R_i = 1)
 * A_i = −λ_neg   otherwise (R_i ∈ {0, −1})
 * ```
 *
 * `λ_pos = 0.1, λ_neg = 1` is the paper's W-REINFORCE; `λ_pos = 0` is NSR, `λ_neg = 0` is PSR,
 * and `λ_pos = λ_neg = 1` is plain REINFORCE with ±1 rewards. Matches the `advantage=weighted`
 * (`positive_advantage_weight` = λ), `positive` and `negative` modes of the authors' veRL fork
 * (TianHongZXY/RLVR-Decomposed); upstream veRL has no such estimator.
 *
 * @example Usage
 * ```ts
 * import { fromRows, psrNsr } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = psrNsr({
 *   rewards: [1, 0],
 *   responseMask: fromRows([[1, 1], [1, 0]]),
 *   positiveWeight: 0.1,
 * });
 * assert.deepEqual([...advantages], [0.1, 0.1, -1, 0]);
 * ```
 */
export function psrNsr(input: PsrNsrInput): AdvantageOutput {
  const owner = "psrNsr";
  checkObject(owner, input, "{rewards, responseMask, positiveWeight?, negativeWeight?}");
  const mask = checkMask(owner, "responseMask", input.responseMask);
  const rewards = checkSequence(owner, "rewards", input.rewards, mask.batch);
  const pos = checkNumber(owner, "positiveWeight", input.positiveWeight ?? 0.1, { min: 0 });
  const neg = checkNumber(owner, "negativeWeight", input.negativeWeight ?? 1, { min: 0 });
  const scalars = new Float64Array(rewards.length);
  const correct = new Float64Array(rewards.length);
  for (let i = 0; i < rewards.length; i++) {
    const r = rewards[i]!;
    if (r !== 1 && r !== 0 && r !== -1) {
      throw new RangeError(
        `${owner}: rewards[${i}] is ${
          show(r)
        }; PSR/NSR needs binary rewards (1 = correct, 0 or -1 = incorrect)`,
      );
    }
    correct[i] = r === 1 ? 1 : 0;
    scalars[i] = r === 1 ? pos : 0 - neg; // 0 − 0 is +0, never −0
  }
  return { advantages: broadcast(scalars, mask), returns: broadcast(correct, mask) };
}

ESTIMATORS.register("psr_nsr", (x) =>
  psrNsr({
    rewards: seqRewards("psr_nsr", x),
    responseMask: x.responseMask,
    ...pick(x, ["positiveWeight", "negativeWeight"] as const),
  }));
