/**
 * veRL's `grpo_vectorized` estimator (`compute_grpo_vectorized_outcome_advantage`, the
 * scatter-based GRPO of `verl/trainer/ppo/core_algos.py`), registered as `grpo_vectorized`: the
 * group statistics come from veRL `group_mean_std(scores, g, eps=0.0)`, i.e. the mean and the
 * unbiased std `sqrt(max(σ², 0))` (singleton: mean 0, std 1), so
 *
 * ```
 * A_i = (R_i − μ_g) / (σ_g + ε)     (normByStd, default; ε = 1e-6)
 * A_i = R_i − μ_g                   (normByStd: false)
 * ```
 *
 * exactly `grpo`'s numbers (veRL computes them in float32, one pass). `returns` equals
 * `advantages`. Older veRL (before the `eps=0.0` of the pinned commit) floored the variance at
 * ε, which divided a group of nearly equal rewards by `√ε + ε`; that is gone.
 *
 * Design: registry-only (`getEstimator("grpo_vectorized")`), like veRL, where it is a key and not
 * a separate API. float64 two-pass statistics; a group of identical rewards gets exactly 0, also
 * with ε = 0 (veRL: NaN).
 *
 * @example Usage
 * ```ts
 * import { fromRows, getEstimator } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = getEstimator("grpo_vectorized")({
 *   rewards: [0.5, 0.5001, 2],
 *   responseMask: fromRows([[1], [1], [1]]),
 *   index: [0, 0, 1],
 * });
 * // group 0: unbiased std 7.07e-5 (no floor): ±0.00005/(7.07e-5 + 1e-6) ≈ ±0.697
 * assert.ok(Math.abs(advantages[1]! - 0.00005 / (Math.SQRT1_2 * 1e-4 + 1e-6)) < 1e-6);
 * // group 1 is a singleton: mean 0, std 1
 * assert.ok(Math.abs(advantages[2]! - 2 / (1 + 1e-6)) < 1e-12);
 * ```
 *
 * @module
 */

import { ESTIMATORS, outcomeOf, pick } from "./_estimators.ts";
import { grpoScalars } from "./_grpo_scalars.ts";
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
  const scalars = grpoScalars(rewards, index, epsilon, normByStd);
  const advantages = broadcast(scalars, mask);
  return { advantages, returns: advantages.slice() };
}

ESTIMATORS.register("grpo_vectorized", (x) =>
  grpoVectorized({
    ...outcomeOf("grpo_vectorized", x),
    ...pick(x, ["epsilon", "normByStd"] as const),
  }));
