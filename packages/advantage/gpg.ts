/**
 * Group Policy Gradient, GPG (Chu et al., arXiv 2504.02546): plain policy gradient with the
 * group-mean baseline, no std division, and a batch-level correction factor α that rescales the
 * gradient to make up for responses that carry no learning signal.
 *
 * Design: follows veRL `compute_gpg_outcome_advantage` (`algorithm.adv_estimator=gpg`): α is
 * recomputed from the batch as `B / max(1, #{i : R_i ≠ 0})` (veRL counts responses with a
 * non-zero *reward*; veRL ignores the `alpha` argument it is passed), the advantage is
 * `α·(R_i − μ_g)/F_norm` with `F_norm = 1` by default, and a singleton group has μ = 0. veRL
 * computes the group std but does not use it; neither do we. The paper describes α as the
 * batch size over the number of *valid* samples; since we could not check the paper's exact
 * definition of "valid" against veRL's count, `alpha` may be given explicitly to override the
 * veRL count. Pair it with a plain policy-gradient loss (veRL `policy_loss.loss_mode=gpg`).
 *
 * @module
 */

import { ESTIMATORS, outcomeOf, pick } from "./_estimators.ts";
import { checkNumber, checkOutcome } from "./_validate.ts";
import { statsOf } from "./_group.ts";
import type { GroupOutcomeInput } from "./grpo.ts";
import { broadcast } from "./_layout.ts";
import type { AdvantageOutput } from "./types.ts";

/** Input of {@link gpg}. */
export interface GpgInput extends GroupOutcomeInput {
  /** Normaliser `F_norm` > 0 (default 1, veRL `f_norm`). */
  fNorm?: number;
  /** A fixed α > 0 instead of veRL's `B / max(1, #{R_i ≠ 0})`. */
  alpha?: number;
}

/**
 * GPG advantages, broadcast over valid tokens:
 *
 * ```
 * α   = B / max(1, #{i : R_i ≠ 0})          (unless given)
 * A_i = α · (R_i − μ_g) / F_norm            (μ = 0 for a singleton group)
 * ```
 *
 * Matches veRL `compute_gpg_outcome_advantage`. Paper: arXiv 2504.02546.
 *
 * @example Usage
 * ```ts
 * import { fromRows, gpg } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = gpg({
 *   rewards: [1, 0, 0, 0],
 *   responseMask: fromRows([[1], [1], [1], [1]]),
 *   index: ["a", "a", "b", "b"],
 * });
 * // one non-zero reward in a batch of 4: α = 4; group a mean 0.5, group b mean 0
 * assert.deepEqual([...advantages], [2, -2, 0, 0]);
 * ```
 */
export function gpg(input: GpgInput): AdvantageOutput {
  const owner = "gpg";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const fNorm = checkNumber(owner, "fNorm", input.fNorm ?? 1, { min: 0, minExclusive: true });
  let alpha: number;
  if (input.alpha === undefined) {
    let nonZero = 0;
    for (let i = 0; i < rewards.length; i++) if (rewards[i] !== 0) nonZero++;
    alpha = rewards.length / Math.max(1, nonZero);
  } else {
    alpha = checkNumber(owner, "alpha", input.alpha, { min: 0, minExclusive: true });
  }
  const scalars = new Float64Array(rewards.length);
  for (const g of statsOf(rewards, index)) {
    const mean = g.count === 1 ? 0 : g.mean;
    for (const i of g.members) scalars[i] = (alpha * (rewards[i]! - mean)) / fNorm;
  }
  const advantages = broadcast(scalars, mask);
  return { advantages, returns: advantages.slice() };
}

ESTIMATORS.register("gpg", (x) =>
  gpg({
    ...outcomeOf("gpg", x),
    ...pick(x, ["fNorm"] as const),
    ...(x.gpgAlpha === undefined ? {} : { alpha: x.gpgAlpha }),
  }));
