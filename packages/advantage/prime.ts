/**
 * PRIME token advantages (Cui et al., "Process Reinforcement through Implicit Rewards",
 * arXiv 2502.01456): dense implicit process rewards `r_φ(y_t) = β·log(π_φ(y_t|y_<t) /
 * π_ref(y_t|y_<t))` from an implicit PRM, and the sparse verifier outcome reward, each given a
 * leave-one-out (RLOO) baseline within the prompt's group, returned separately and summed.
 *
 * Design: the caller computes the process rewards (they need the PRM's and the reference's
 * log-probs, which live in `@rlvr/policy`); this file only turns them into advantages. Two
 * leave-one-out forms of the process term are offered:
 *
 * - `baseline: "verl"` (default) — veRL's PRIME recipe (`recipe/prime/prime_core_algos.py`,
 *   `compute_rloo_advantage_return`, written by the PRIME authors): every valid token becomes
 *   `(K·r_{i,t} − Σ_j r̄_j)/(K−1)`, with `r̄_j` the mean process reward over response j's valid
 *   tokens.
 * - `baseline: "paper"` — the paper's formula: `r_{i,t} − (1/(K−1)) Σ_{j≠i} r̄_j`. It differs from
 *   the recipe by `(r_{i,t} − r̄_i)/(K−1)` per token; the two agree on the first token's return
 *   when γ = 1 (those differences sum to 0 over a response).
 *
 * The outcome term is RLOO on the outcome rewards in both. Returns are the γ-discounted sums of
 * the process term over later valid tokens plus the (undiscounted) outcome term, as the paper
 * writes it; with γ = 1 (the recipe's only choice) this is veRL's reverse cumsum with the outcome
 * on the last valid token. Advantages are the returns whitened over the batch's valid tokens
 * (veRL `masked_whiten`) unless `whiten: false`. Coefficients default to 1; the recipe's 5 and 5
 * (`reward_dpo_coef`, `reward_gt_coef`) scale both terms equally, which whitening undoes. A
 * singleton group has no other response and keeps its raw rewards (the recipe would divide by
 * zero). Groups come from `index`, not from the recipe's contiguous `n_samples` blocks.
 *
 * @module
 */

import { ESTIMATORS, outcomeOf, pick } from "./_estimators.ts";
import {
  checkBoolean,
  checkChoice,
  checkNumber,
  checkOutcome,
  checkTokens,
  missing,
} from "./_validate.ts";
import { groupsOf } from "./_group.ts";
import type { GroupOutcomeInput } from "./grpo.ts";
import { lengthsOf, rowSums } from "./_layout.ts";
import { returnsOf } from "./_returns.ts";
import type { AdvantageOutput, TokenMatrix } from "./types.ts";
import { whitenChecked } from "./_whiten.ts";

/** Which leave-one-out form the process rewards get; see the module doc. */
export type PrimeBaseline = "verl" | "paper";

/** Input of {@link prime}. */
export interface PrimeInput extends GroupOutcomeInput {
  /** Implicit process rewards `β·log(π_φ/π_ref)` per token, `[batch, length]`. */
  processRewards: TokenMatrix;
  /** Discount γ in [0, 1] for the process term (default 1). */
  gamma?: number;
  /** Weight of the process term (default 1; the veRL recipe's `reward_dpo_coef` is 5). */
  processCoef?: number;
  /** Weight of the outcome term (default 1; the veRL recipe's `reward_gt_coef` is 5). */
  outcomeCoef?: number;
  /** Leave-one-out form of the process term (default `"verl"`). */
  baseline?: PrimeBaseline;
  /** Whiten the returns over the batch's valid tokens into the advantages (default true). */
  whiten?: boolean;
}

/**
 * PRIME advantages. For response i in a group of K (`r̄_j` = mean process reward of response j
 * over its valid tokens, `o_j` = outcome reward):
 *
 * ```
 * p_{i,t} = (K·r_{i,t} − Σ_j r̄_j)/(K−1)        (baseline "verl")
 * p_{i,t} = r_{i,t} − Σ_{j≠i} r̄_j/(K−1)        (baseline "paper")
 * o_i     = o_i − Σ_{j≠i} o_j/(K−1)             (RLOO)
 * G_{i,t} = c_p·Σ_{s≥t} γ^{s−t} p_{i,s} + c_o·o_i   (returns; s over valid tokens)
 * A       = maskedWhiten(G)                     (unless whiten: false)
 * ```
 *
 * Matches veRL's PRIME recipe `compute_rloo_advantage_return` (`algorithm.adv_estimator=rloo` in
 * `recipe/prime`) with the default `"verl"` baseline and γ = 1. Paper: arXiv 2502.01456.
 *
 * @example Usage
 * ```ts
 * import { fromRows, prime, toRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const out = prime({
 *   processRewards: fromRows([[0.2, 0.4], [0, 0]]),
 *   rewards: [1, 0],
 *   responseMask: fromRows([[1, 1], [1, 1]]),
 *   index: ["q", "q"],
 *   whiten: false,
 * });
 * // r̄ = [0.3, 0]; K = 2: p_0 = 2·[0.2, 0.4] − 0.3 = [0.1, 0.5], p_1 = [−0.3, −0.3]
 * // RLOO outcome: o = [1 − 0, 0 − 1] = [1, −1]
 * // returns: row 0 = [0.6 + 1, 0.5 + 1], row 1 = [−0.6 − 1, −0.3 − 1]
 * const r = toRows(out.returns, 2);
 * assert.ok(Math.abs(r[0]![0]! - 1.6) < 1e-12 && Math.abs(r[1]![1]! + 1.3) < 1e-12);
 * ```
 */
export function prime(input: PrimeInput): AdvantageOutput {
  const owner = "prime";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const process = checkTokens(owner, "processRewards", input.processRewards, mask);
  const gamma = checkNumber(owner, "gamma", input.gamma ?? 1, { min: 0, max: 1 });
  const cp = checkNumber(owner, "processCoef", input.processCoef ?? 1);
  const co = checkNumber(owner, "outcomeCoef", input.outcomeCoef ?? 1);
  const form = checkChoice(owner, "baseline", input.baseline ?? "verl", ["verl", "paper"]);
  const whiten = checkBoolean(owner, "whiten", input.whiten ?? true);

  const { batch, length } = mask;
  const lengths = lengthsOf(mask);
  const sums = rowSums(process, mask);
  const means = sums.map((s, i) => (lengths[i]! > 0 ? s / lengths[i]! : 0));
  const shaped = new Float64Array(batch * length);
  const outcome = new Float64Array(batch);
  for (const g of groupsOf(index)) {
    const K = g.members.length;
    let meanSum = 0;
    let outcomeSum = 0;
    for (const j of g.members) {
      meanSum += means[j]!;
      outcomeSum += rewards[j]!;
    }
    for (const i of g.members) {
      outcome[i] = K > 1 ? rewards[i]! - (outcomeSum - rewards[i]!) / (K - 1) : rewards[i]!;
      for (let t = 0; t < length; t++) {
        const k = i * length + t;
        if (mask.data[k] !== 1) continue;
        const r = process.data[k]!;
        let p = r;
        if (K > 1) {
          p = form === "verl" ? (K * r - meanSum) / (K - 1) : r - (meanSum - means[i]!) / (K - 1);
        }
        shaped[k] = cp * p;
      }
    }
  }
  const returns = returnsOf({ data: shaped, batch, length }, mask, gamma, "skip");
  for (let k = 0; k < returns.length; k++) {
    if (mask.data[k] === 1) returns[k] = returns[k]! + co * outcome[Math.floor(k / length)]!;
  }
  const advantages = whiten
    ? whitenChecked(owner, { data: returns, batch, length }, mask)
    : returns.slice();
  return { advantages, returns };
}

ESTIMATORS.register("prime", (x) =>
  prime({
    ...outcomeOf("prime", x),
    processRewards: x.processRewards ??
      missing("prime", "processRewards", "implicit process rewards [batch, length]"),
    ...pick(x, ["gamma", "processCoef", "outcomeCoef", "whiten"] as const),
    ...(x.primeBaseline === undefined ? {} : { baseline: x.primeBaseline }),
  }));
