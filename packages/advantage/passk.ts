/**
 * Pass@k: the unbiased estimator (Chen et al., "Evaluating Large Language Models Trained on
 * Code", arXiv 2107.03374) and two advantage estimators that train for pass@k instead of
 * pass@1: veRL's `grpo_passk` (only the best response of a group is credited, with the margin
 * over the runner-up; veRL cites arXiv 2503.19595) and the analytic Pass@k-Training advantages
 * (Chen et al., arXiv 2508.10751).
 *
 * Design: binomial ratios are never formed from binomials. `C(a, k)/C(b, k)` (a ≤ b) is a product
 * of factors in [0, 1], `Π_{i=a+1}^{b} (1 − k/i)` or `Π_{j<k} (a−j)/(b−j)`, whichever has fewer
 * factors, so nothing overflows for any n and the result is accurate to a few ulps. The analytic
 * advantage of a negative response is written as `−(c/n)·q/σ` (an exact rewrite of the paper's
 * `(1 − ρ − q)/σ`), which avoids the cancellation in `1 − ρ − q`.
 *
 * @module
 */

import { ESTIMATORS, outcomeOf, pick } from "./_estimators.ts";
import { checkBoolean, checkNumber, checkOutcome, missing, show } from "./_validate.ts";
import { groupsOf, statsOf } from "./_group.ts";
import type { GroupOutcomeInput } from "./grpo.ts";
import { broadcast } from "./_layout.ts";
import type { AdvantageOutput } from "./types.ts";

/** `C(a, k) / C(b, k)` for integers `0 ≤ a ≤ b`, `k ≥ 0`, as a product of factors in [0, 1]. */
function binomialRatio(a: number, b: number, k: number): number {
  if (k > a) return 0;
  let r = 1;
  if (b - a <= k) {
    for (let i = a + 1; i <= b; i++) r *= 1 - k / i;
  } else {
    for (let j = 0; j < k; j++) r *= (a - j) / (b - j);
  }
  return r;
}

function checkCounts(owner: string, n: number, c: number, k: number): void {
  checkNumber(owner, "n", n, { min: 1, integer: true });
  checkNumber(owner, "c", c, { min: 0, max: n, integer: true });
  checkNumber(owner, "k", k, { min: 1, max: n, integer: true });
}

/**
 * The unbiased pass@k estimator from `n` samples of which `c` are correct:
 * `pass@k = 1 − C(n−c, k) / C(n, k)`, computed stably as `1 − Π_{i=n−c+1}^{n} (1 − k/i)`
 * (exactly 1 when `n − c < k`, 0 when `c = 0`).
 *
 * @example Usage
 * ```ts
 * import { passAtK } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.equal(passAtK(5, 2, 3), 0.9); // 1 − C(3,3)/C(5,3) = 1 − 1/10
 * assert.equal(passAtK(10, 0, 5), 0);
 * assert.equal(passAtK(10, 10, 5), 1);
 * assert.ok(Math.abs(passAtK(4, 1, 1) - 0.25) < 1e-15); // pass@1 = c/n
 * ```
 */
export function passAtK(n: number, c: number, k: number): number {
  checkCounts("passAtK", n, c, k);
  return 1 - binomialRatio(n - c, n, k);
}

/** Input of {@link grpoPassk}. */
export interface GrpoPasskInput extends GroupOutcomeInput {
  /** Added to the group std (default 1e-6, veRL). */
  epsilon?: number;
  /** Divide the margin by the group's unbiased std (default true, veRL `norm_adv_by_std_in_grpo`). */
  normByStd?: boolean;
}

/**
 * veRL's pass@k GRPO variant: in each group only the best response gets a non-zero advantage,
 * its margin over the second best:
 *
 * ```
 * A_{argmax} = (r_max − r_2nd) / (σ_g + ε)    (or r_max − r_2nd without normByStd)
 * A_i        = 0                              for every other response
 * ```
 *
 * with `σ_g` the unbiased std of the group's rewards. Every group needs at least 2 responses (an
 * error otherwise, as in veRL). When the maximum is shared, the margin is 0 and so is every
 * advantage, so the choice among tied maxima never matters. Matches veRL
 * `compute_grpo_passk_outcome_advantage` (`algorithm.adv_estimator=grpo_passk`, which cites
 * arXiv 2503.19595).
 *
 * @example Usage
 * ```ts
 * import { fromRows, grpoPassk } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = grpoPassk({
 *   rewards: [0.2, 0.9, 0.5],
 *   responseMask: fromRows([[1], [1], [1]]),
 *   index: [0, 0, 0],
 *   normByStd: false,
 * });
 * assert.ok(Math.abs(advantages[1]! - 0.4) < 1e-15); // 0.9 − 0.5
 * assert.equal(advantages[0], 0);
 * assert.equal(advantages[2], 0);
 * ```
 */
export function grpoPassk(input: GrpoPasskInput): AdvantageOutput {
  const owner = "grpoPassk";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const epsilon = checkNumber(owner, "epsilon", input.epsilon ?? 1e-6, { min: 0 });
  const normByStd = checkBoolean(owner, "normByStd", input.normByStd ?? true);
  const scalars = new Float64Array(rewards.length);
  for (const g of statsOf(rewards, index)) {
    if (g.count < 2) {
      throw new RangeError(
        `${owner}: group ${
          show(g.key)
        } has ${g.count} response; pass@k advantages need at least 2 per group`,
      );
    }
    let best = g.members[0]!;
    for (const i of g.members) if (rewards[i]! > rewards[best]!) best = i;
    let second = -Infinity;
    for (const i of g.members) if (i !== best && rewards[i]! > second) second = rewards[i]!;
    const margin = rewards[best]! - second;
    const denom = g.std + epsilon;
    scalars[best] = normByStd ? (denom === 0 ? 0 : margin / denom) : margin;
  }
  const advantages = broadcast(scalars, mask);
  return { advantages, returns: advantages.slice() };
}

/** Input of {@link passkAnalytic}. */
export interface PasskAnalyticInput extends GroupOutcomeInput {
  /** The k of pass@k, an integer in [1, smallest group size]. */
  k: number;
}

/**
 * Analytic Pass@k-Training advantages (Chen et al., arXiv 2508.10751) for binary rewards.
 * For a group of `n` responses with `c` correct, averaging the group-normalised pass@k reward
 * over all `C(n, k)` size-k subsets gives, per response:
 *
 * ```
 * ρ     = 1 − C(n−c, k)/C(n, k)                 (mean subset reward = pass@k)
 * σ     = sqrt(ρ·(1 − ρ))                       (its population std)
 * A_pos = (1 − ρ) / σ                           (correct response)
 * A_neg = (1 − ρ − C(n−c−1, k−1)/C(n−1, k−1)) / σ   (incorrect response)
 * ```
 *
 * and 0 for the whole group when σ = 0 (all correct, none correct, or `n − c < k`). With k = 1
 * this is GRPO with the population std and ε = 0. Rewards must be 0 or 1. No veRL option
 * (veRL's `grpo_passk` is {@link grpoPassk}).
 *
 * @example Usage
 * ```ts
 * import { fromRows, passkAnalytic } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = passkAnalytic({
 *   rewards: [1, 0, 0, 0],
 *   responseMask: fromRows([[1], [1], [1], [1]]),
 *   index: [0, 0, 0, 0],
 *   k: 2,
 * });
 * // n=4, c=1: ρ = 1 − C(3,2)/C(4,2) = 1/2, σ = 1/2; A_pos = (1/2)/(1/2) = 1
 * // q = C(2,1)/C(3,1) = 2/3, A_neg = (1/2 − 2/3)/(1/2) = −1/3
 * assert.ok(Math.abs(advantages[0]! - 1) < 1e-15);
 * assert.ok(Math.abs(advantages[1]! + 1 / 3) < 1e-15);
 * ```
 */
export function passkAnalytic(input: PasskAnalyticInput): AdvantageOutput {
  const owner = "passkAnalytic";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const k = checkNumber(owner, "k", input.k, { min: 1, integer: true });
  for (let i = 0; i < rewards.length; i++) {
    if (rewards[i] !== 0 && rewards[i] !== 1) {
      throw new RangeError(
        `${owner}: rewards[${i}] is ${
          show(rewards[i])
        }; pass@k advantages need binary rewards (1 = correct, 0 = incorrect)`,
      );
    }
  }
  const scalars = new Float64Array(rewards.length);
  for (const g of groupsOf(index)) {
    const n = g.members.length;
    if (k > n) {
      throw new RangeError(
        `${owner}: k = ${k} exceeds the size ${n} of group ${
          show(g.key)
        }; k must be at most every group's size`,
      );
    }
    let c = 0;
    for (const i of g.members) c += rewards[i]!;
    const miss = binomialRatio(n - c, n, k); // 1 − ρ
    const rho = 1 - miss;
    const sigma = Math.sqrt(rho * miss);
    if (sigma === 0) continue;
    const q = binomialRatio(n - c - 1, n - 1, k - 1);
    const pos = miss / sigma;
    const neg = -((c / n) * q) / sigma;
    for (const i of g.members) scalars[i] = rewards[i] === 1 ? pos : neg;
  }
  const advantages = broadcast(scalars, mask);
  return { advantages, returns: advantages.slice() };
}

ESTIMATORS.register(
  "grpo_passk",
  (x) =>
    grpoPassk({ ...outcomeOf("grpo_passk", x), ...pick(x, ["epsilon", "normByStd"] as const) }),
);
ESTIMATORS.register("passk_analytic", (x) =>
  passkAnalytic({
    ...outcomeOf("passk_analytic", x),
    k: x.k ?? missing("passk_analytic", "k", "the k of pass@k"),
  }));
