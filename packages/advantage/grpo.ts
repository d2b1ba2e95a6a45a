/**
 * Group-relative outcome advantages: GRPO (Shao et al., arXiv 2402.03300), Dr. GRPO (Liu et
 * al., arXiv 2503.20783: no std division) and LitePPO's group-mean / batch-std normalisation
 * (Liu et al., "Tricks or Traps", arXiv 2508.08221).
 *
 * Design: each response's scalar advantage is broadcast over its valid tokens, and `returns`
 * equals `advantages`, both as in veRL. `grpo` and `drGrpo` follow veRL
 * `compute_grpo_outcome_advantage` exactly: `(R − μ)/(σ + ε)` with ε added to the **unbiased**
 * std (not inside a square root), ε = 1e-6, and a singleton group gets μ = 0, σ = 1 (so its
 * advantage is its raw reward, over 1 + ε). TRL's `GRPOTrainer` differs only in ε = 1e-4
 * (`scale_rewards="group"`); pass `epsilon: 1e-4` to reproduce it. veRL has no batch-std
 * variant; `grpoBatchStd` follows TRL `scale_rewards="batch"`: the std is the unbiased std of
 * all rewards in the batch, ε = 1e-4, and a singleton group's mean is its own reward (TRL's
 * `view(-1, G).mean(1)`), so it gets advantage 0.
 *
 * The group mean is computed shifted by the group's first reward, so a group of identical
 * rewards gets advantages of exactly 0 (never NaN, even with ε = 0).
 *
 * @module
 */

import { ESTIMATORS, outcomeOf, pick } from "./_estimators.ts";
import { checkBoolean, checkNumber, checkOutcome } from "./_validate.ts";
import { statsOf } from "./_group.ts";
import { grpoScalars, safeDiv } from "./_grpo_scalars.ts";
import { broadcast } from "./_layout.ts";
import type { AdvantageOutput, GroupIndex, TokenMatrix } from "./types.ts";

/** The input shared by the group-relative outcome estimators. */
export interface GroupOutcomeInput {
  /** Sequence-level rewards `R_i`, one per response. */
  rewards: ArrayLike<number>;
  /** Response mask `[batch, length]`; the advantage is broadcast over its 1s. */
  responseMask: TokenMatrix;
  /** Group id per response (veRL `uid`); groups may be ragged. */
  index: GroupIndex;
}

/** Input of {@link grpo}. */
export interface GrpoInput extends GroupOutcomeInput {
  /** Added to the std in the denominator (default 1e-6, veRL; TRL uses 1e-4). */
  epsilon?: number;
  /** Divide by the group std (default true; false is Dr. GRPO, veRL `norm_adv_by_std_in_grpo`). */
  normByStd?: boolean;
}

/** Input of {@link drGrpo}. */
export type DrGrpoInput = GroupOutcomeInput;

/** Input of {@link grpoBatchStd}. */
export interface GrpoBatchStdInput extends GroupOutcomeInput {
  /** Added to the batch std in the denominator (default 1e-4, TRL). */
  epsilon?: number;
}

function outcome(scalars: Float64Array, mask: TokenMatrix): AdvantageOutput {
  const advantages = broadcast(scalars, mask);
  return { advantages, returns: advantages.slice() };
}

/**
 * GRPO advantages, one scalar per response broadcast over its valid tokens:
 *
 * ```
 * A_i = (R_i − μ_g) / (σ_g + ε)     (normByStd, default)
 * A_i = R_i − μ_g                    (normByStd: false, Dr. GRPO)
 * ```
 *
 * with `μ_g`, `σ_g` the mean and **unbiased** std of the rewards of the group of `i`, and
 * `μ = 0, σ = 1` for a singleton group. Matches veRL `compute_grpo_outcome_advantage`
 * (`algorithm.adv_estimator=grpo`, `epsilon=1e-6`, `norm_adv_by_std_in_grpo`) and, with
 * `epsilon: 1e-4`, TRL `GRPOTrainer` (`scale_rewards="group"`). Paper: arXiv 2402.03300.
 *
 * @example Usage
 * ```ts
 * import { fromRows, grpo } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = grpo({
 *   rewards: [1, 0, 1],
 *   responseMask: fromRows([[1, 1], [1, 0], [1, 1]]),
 *   index: ["q", "q", "q"],
 * });
 * // group [1, 0, 1]: mean 2/3, unbiased std sqrt(1/3); A = (1 − 2/3)/sqrt(1/3) ≈ 0.57735
 * assert.ok(Math.abs(advantages[0]! - 0.57735) < 1e-5);
 * assert.ok(Math.abs(advantages[2]! + 1.1547) < 1e-4); // (0 − 2/3)/sqrt(1/3)
 * assert.equal(advantages[3], 0); // masked
 * ```
 */
export function grpo(input: GrpoInput): AdvantageOutput {
  const owner = "grpo";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const epsilon = checkNumber(owner, "epsilon", input.epsilon ?? 1e-6, { min: 0 });
  const normByStd = checkBoolean(owner, "normByStd", input.normByStd ?? true);
  return outcome(grpoScalars(rewards, index, epsilon, normByStd), mask);
}

/**
 * Dr. GRPO advantages ("GRPO done right", arXiv 2503.20783): the group-mean baseline without
 * the std division, `A_i = R_i − μ_g` (singleton: `μ = 0`), broadcast over valid tokens.
 * Identical to `grpo({ ..., normByStd: false })`, i.e. veRL `compute_grpo_outcome_advantage` with
 * `norm_adv_by_std_in_grpo=False`, and TRL `scale_rewards="none"`. The paper's other fix (a
 * constant loss normaliser instead of `1/|y_i|`) belongs to the loss aggregation
 * (`seq-mean-token-sum-norm`), not here.
 *
 * @example Usage
 * ```ts
 * import { drGrpo, fromRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = drGrpo({
 *   rewards: [1, 0, 0, 0],
 *   responseMask: fromRows([[1], [1], [1], [1]]),
 *   index: [0, 0, 0, 0],
 * });
 * assert.deepEqual([...advantages], [0.75, -0.25, -0.25, -0.25]); // mean 1/4
 * ```
 */
export function drGrpo(input: DrGrpoInput): AdvantageOutput {
  const owner = "drGrpo";
  const { rewards, mask, index } = checkOutcome(owner, input);
  return outcome(grpoScalars(rewards, index, 0, false), mask);
}

/**
 * LitePPO's normalisation ("group-level mean, batch-level std", arXiv 2508.08221):
 *
 * ```
 * A_i = (R_i − μ_g) / (σ_batch + ε)
 * ```
 *
 * with `μ_g` the mean reward of the group of `i` (a singleton's own reward) and `σ_batch` the
 * unbiased std of all rewards in the batch (0 for a batch of one). Matches TRL `GRPOTrainer`
 * with `scale_rewards="batch"` (ε = 1e-4); veRL has no such estimator.
 *
 * @example Usage
 * ```ts
 * import { fromRows, grpoBatchStd } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = grpoBatchStd({
 *   rewards: [1, 0, 1, 1],
 *   responseMask: fromRows([[1], [1], [1], [1]]),
 *   index: ["a", "a", "b", "b"],
 *   epsilon: 0,
 * });
 * // group means 0.5 and 1; batch mean 0.75, unbiased batch std sqrt(0.75/3) = 0.5
 * assert.deepEqual([...advantages], [1, -1, 0, 0]);
 * ```
 */
export function grpoBatchStd(input: GrpoBatchStdInput): AdvantageOutput {
  const owner = "grpoBatchStd";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const epsilon = checkNumber(owner, "epsilon", input.epsilon ?? 1e-4, { min: 0 });
  const n = rewards.length;
  const [batchStats] = statsOf(rewards, Array.from({ length: n }, () => 0));
  const std = batchStats?.std ?? 0;
  const out = new Float64Array(n);
  for (const g of statsOf(rewards, index)) {
    for (const i of g.members) out[i] = safeDiv(rewards[i]! - g.mean, std + epsilon);
  }
  return outcome(out, mask);
}

ESTIMATORS.register(
  "grpo",
  (x) => grpo({ ...outcomeOf("grpo", x), ...pick(x, ["epsilon", "normByStd"] as const) }),
);
ESTIMATORS.register("dr_grpo", (x) => drGrpo(outcomeOf("dr_grpo", x)));
ESTIMATORS.register(
  "grpo_batch_std",
  (x) => grpoBatchStd({ ...outcomeOf("grpo_batch_std", x), ...pick(x, ["epsilon"] as const) }),
);
