/**
 * veRL's `rloo_vectorized` estimator (`compute_rloo_vectorized_outcome_advantage`), registered
 * as `rloo_vectorized`: RLOO computed with `bincount`,
 *
 * ```
 * A_i = (n·R_i − Σ_{j∈g} R_j) / max(n − 1, 1) · 1[n > 1]     (n = |group of i|)
 * ```
 *
 * which equals `rloo` for every group of two or more, but gives a singleton group advantage 0
 * where `rloo` (veRL `compute_rloo_outcome_advantage`) keeps the raw reward. `returns` equals
 * `advantages`, broadcast over valid tokens.
 *
 * Design: registry-only (`getEstimator("rloo_vectorized")`), like veRL, where it is a key and not
 * a separate API; computed as `n/(n−1)·(R_i − μ_g)` with the shifted group mean, so identical
 * rewards give exactly 0.
 *
 * @example Usage
 * ```ts
 * import { fromRows, getEstimator } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const input = {
 *   rewards: [1, 0, 0.5, 3],
 *   responseMask: fromRows([[1], [1], [1], [1]]),
 *   index: ["a", "a", "a", "s"],
 * };
 * const v = getEstimator("rloo_vectorized")(input);
 * const loop = getEstimator("rloo")(input);
 * // group a: 1 − (0 + 0.5)/2 = 0.75 in both
 * assert.ok(Math.abs(v.advantages[0]! - 0.75) < 1e-12 && Math.abs(loop.advantages[0]! - 0.75) < 1e-12);
 * // the singleton s: 0 here, its raw reward 3 in rloo
 * assert.equal(v.advantages[3], 0);
 * assert.equal(loop.advantages[3], 3);
 * ```
 *
 * @module
 */

import { ESTIMATORS, outcomeOf } from "./_estimators.ts";
import { statsOf } from "./_group.ts";
import { broadcast } from "./_layout.ts";
import { checkOutcome } from "./_validate.ts";
import type { AdvantageOutput, GroupIndex, TokenMatrix } from "./types.ts";

function rlooVectorized(
  input: { rewards: ArrayLike<number>; responseMask: TokenMatrix; index: GroupIndex },
): AdvantageOutput {
  const { rewards, mask, index } = checkOutcome("rloo_vectorized", input);
  const scalars = new Float64Array(rewards.length);
  for (const g of statsOf(rewards, index)) {
    const n = g.count;
    if (n < 2) continue; // 1[n > 1]
    for (const i of g.members) scalars[i] = (n / (n - 1)) * (rewards[i]! - g.mean);
  }
  const advantages = broadcast(scalars, mask);
  return { advantages, returns: advantages.slice() };
}

ESTIMATORS.register(
  "rloo_vectorized",
  (x) => rlooVectorized(outcomeOf("rloo_vectorized", x)),
);
