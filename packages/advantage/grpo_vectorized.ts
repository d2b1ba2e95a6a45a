/**
 * veRL's `grpo_vectorized` estimator (`compute_grpo_vectorized_outcome_advantage`, the
 * scatter-based GRPO of `verl/trainer/ppo/core_algos.py`), registered as `grpo_vectorized`. It
 * is GRPO with one difference in the group statistics (veRL `group_mean_std`): the variance is
 * floored at ε before the square root, so
 *
 * ```
 * A_i = (R_i − μ_g) / (sqrt(max(σ_g², ε)) + ε)     (normByStd, default)
 * A_i = R_i − μ_g                                  (normByStd: false)
 * ```
 *
 * with `μ_g`, `σ_g²` the mean and **unbiased** variance of the group of `i` (ε = 1e-6 both
 * inside the floor and in the denominator, as veRL passes `epsilon` to both), and `μ = 0, σ = 1`
 * for a singleton group. Where every group's variance is at least ε it gives `grpo`'s numbers;
 * a group of nearly equal rewards (σ² < ε) is divided by `√ε + ε` instead of `σ + ε`, which
 * bounds its advantages by `|R_i − μ_g|/√ε`. `returns` equals `advantages`.
 *
 * Design: registry-only (`getEstimator("grpo_vectorized")`), like veRL, where it is a key and not
 * a separate API. float64 two-pass statistics (veRL sums squares in float32); a group of
 * identical rewards gets exactly 0, also with ε = 0 (veRL: NaN).
 *
 * @example Usage
 * ```ts
 * import { fromRows, getEstimator } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = getEstimator("grpo_vectorized")({
 *   rewards: [0.5, 0.5001],
 *   responseMask: fromRows([[1], [1]]),
 *   index: [0, 0],
 * });
 * // unbiased variance 5e-9 < ε = 1e-6, so the std is floored at √ε = 1e-3
 * assert.ok(Math.abs(advantages[1]! - 0.00005 / (1e-3 + 1e-6)) < 1e-9);
 * ```
 *
 * @module
 */

import { ESTIMATORS, outcomeOf, pick } from "./_estimators.ts";
import { statsOf } from "./_group.ts";
import { safeDiv } from "./_grpo_scalars.ts";
import { broadcast } from "./_layout.ts";
import { checkBoolean, checkNumber, checkOutcome } from "./_validate.ts";
import type { AdvantageOutput, GroupIndex, TokenMatrix } from "./types.ts";

function grpoVectorized(input: {
  rewards: ArrayLike<number>;
  responseMask: TokenMatrix;
  index: GroupIndex;
  epsilon?: number;
  normByStd?: boolean;
}): AdvantageOutput {
  const owner = "grpo_vectorized";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const epsilon = checkNumber(owner, "epsilon", input.epsilon ?? 1e-6, { min: 0 });
  const normByStd = checkBoolean(owner, "normByStd", input.normByStd ?? true);
  const scalars = new Float64Array(rewards.length);
  for (const g of statsOf(rewards, index)) {
    const single = g.count === 1;
    const mean = single ? 0 : g.mean;
    // veRL group_mean_std: std = sqrt(max(var, eps)); singleton: mean 0, std 1
    const std = single ? 1 : g.std * g.std < epsilon ? Math.sqrt(epsilon) : g.std;
    for (const i of g.members) {
      const centred = rewards[i]! - mean;
      scalars[i] = normByStd ? safeDiv(centred, std + epsilon) : centred;
    }
  }
  const advantages = broadcast(scalars, mask);
  return { advantages, returns: advantages.slice() };
}

ESTIMATORS.register("grpo_vectorized", (x) =>
  grpoVectorized({
    ...outcomeOf("grpo_vectorized", x),
    ...pick(x, ["epsilon", "normByStd"] as const),
  }));
