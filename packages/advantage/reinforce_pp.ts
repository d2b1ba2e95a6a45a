/**
 * REINFORCE++ (Hu, arXiv 2501.03262): critic-free token advantages whitened over the whole
 * batch ("global advantage normalisation") instead of per prompt group, and its group-baseline
 * variant REINFORCE++-baseline.
 *
 * Design: `reinforcePlusPlus` takes token rewards, usually KL-shaped
 * (`r_t = 1[t = last]·R − β·KL_t`, see {@link klShapedRewards}), computes discounted returns with
 * veRL's scan ({@link discountedReturns}, `maskMode: "skip"`: the running return is carried
 * unchanged across masked positions, e.g. the observation tokens of a multi-turn response, and
 * the returns there are 0) and whitens them over all valid tokens of the batch (veRL
 * `masked_whiten`: unbiased variance, `eps = 1e-8`). `maskMode: "reset"` (key
 * `reinforce_plus_plus_reset`, ours) is older veRL's "reset after EOS": the running return is
 * zeroed at every masked position, so a token inside a multi-turn response does not see the
 * rewards after the next gap. With a mask of 1s then 0s (single-turn) the two are the same.
 * `reinforcePlusPlusBaseline` subtracts the group mean of the sequence rewards (singleton mean
 * 0, as veRL), broadcasts it over the valid tokens and whitens that. Because the whitening is
 * over tokens, longer responses weigh more in the batch statistics, exactly as in veRL and
 * OpenRLHF. Both need at least 2 valid tokens in the batch (unbiased variance).
 *
 * @module
 */

import { ESTIMATORS, outcomeOf, pick } from "./_estimators.ts";
import {
  checkChoice,
  checkMask,
  checkNumber,
  checkObject,
  checkOutcome,
  checkTokens,
} from "./_validate.ts";
import { grpoScalars } from "./_grpo_scalars.ts";
import type { GroupOutcomeInput } from "./grpo.ts";
import { broadcast } from "./_layout.ts";
import { returnsOf } from "./_returns.ts";
import type { MaskMode } from "./returns.ts";
import type { AdvantageOutput, TokenMatrix } from "./types.ts";
import { whitenChecked } from "./_whiten.ts";

/** Input of {@link reinforcePlusPlus}. */
export interface ReinforcePlusPlusInput {
  /** Token rewards `[batch, length]`, e.g. from {@link klShapedRewards}. */
  tokenRewards: TokenMatrix;
  /** Response mask `[batch, length]`. */
  responseMask: TokenMatrix;
  /** Discount γ in [0, 1] (default 1, veRL `algorithm.gamma`). */
  gamma?: number;
  /** Scan over masked positions: `"skip"` (default, veRL) or `"reset"` (older veRL). */
  maskMode?: MaskMode;
}

/** Input of {@link reinforcePlusPlusBaseline}. */
export type ReinforcePlusPlusBaselineInput = GroupOutcomeInput;

/**
 * REINFORCE++ advantages:
 *
 * ```
 * G_t = r_t + γ·G_{t+1}     (over valid tokens; carried across masked positions, 0 there)
 * A   = maskedWhiten(G)     (mean and unbiased variance over all valid tokens of the batch)
 * ```
 *
 * `returns` are the un-whitened `G`. Matches veRL `compute_reinforce_plus_plus_outcome_advantage`
 * (`algorithm.adv_estimator=reinforce_plus_plus`), returns included; `maskMode: "reset"` gives
 * older veRL's reset at masked positions instead. Paper: arXiv 2501.03262.
 *
 * @example Usage
 * ```ts
 * import { fromRows, reinforcePlusPlus, toRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const out = reinforcePlusPlus({
 *   tokenRewards: fromRows([[0, 1], [0, 0]]),
 *   responseMask: fromRows([[1, 1], [1, 1]]),
 * });
 * // returns [1, 1, 0, 0]: mean 0.5, unbiased var 1/3 → A = ±0.5·sqrt(3)
 * assert.deepEqual(toRows(out.returns, 2), [[1, 1], [0, 0]]);
 * assert.ok(Math.abs(out.advantages[0]! - 0.5 * Math.sqrt(3)) < 1e-7);
 * ```
 */
export function reinforcePlusPlus(input: ReinforcePlusPlusInput): AdvantageOutput {
  const owner = "reinforcePlusPlus";
  checkObject(owner, input, "{tokenRewards, responseMask, gamma?}");
  const mask = checkMask(owner, "responseMask", input.responseMask);
  const rewards = checkTokens(owner, "tokenRewards", input.tokenRewards, mask);
  const gamma = checkNumber(owner, "gamma", input.gamma ?? 1, { min: 0, max: 1 });
  const mode = checkChoice(owner, "maskMode", input.maskMode ?? "skip", ["skip", "reset"]);
  const returns = returnsOf(rewards, mask, gamma, mode);
  const advantages = whitenChecked(
    owner,
    { data: returns, batch: mask.batch, length: mask.length },
    mask,
  );
  return { advantages, returns };
}

/**
 * REINFORCE++-baseline advantages:
 *
 * ```
 * a_i = R_i − μ_g            (μ = 0 for a singleton group)
 * A   = maskedWhiten(a broadcast over valid tokens)
 * ```
 *
 * `returns` equals `advantages`, as in veRL
 * `compute_reinforce_plus_plus_baseline_outcome_advantage`
 * (`algorithm.adv_estimator=reinforce_plus_plus_baseline`; OpenRLHF `reinforce_baseline`).
 * Paper: arXiv 2501.03262.
 *
 * @example Usage
 * ```ts
 * import { fromRows, reinforcePlusPlusBaseline } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const { advantages } = reinforcePlusPlusBaseline({
 *   rewards: [1, 0],
 *   responseMask: fromRows([[1, 1], [1, 1]]),
 *   index: ["p", "p"],
 * });
 * // centred [0.5, −0.5] on 2 tokens each: mean 0, unbiased var 1/3 → ±0.5·sqrt(3)
 * assert.ok(Math.abs(advantages[0]! - 0.5 * Math.sqrt(3)) < 1e-7);
 * assert.ok(Math.abs(advantages[3]! + 0.5 * Math.sqrt(3)) < 1e-7);
 * ```
 */
export function reinforcePlusPlusBaseline(input: ReinforcePlusPlusBaselineInput): AdvantageOutput {
  const owner = "reinforcePlusPlusBaseline";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const centred = broadcast(grpoScalars(rewards, index, 0, false), mask);
  const advantages = whitenChecked(
    owner,
    { data: centred, batch: mask.batch, length: mask.length },
    mask,
  );
  return { advantages, returns: advantages.slice() };
}

ESTIMATORS.register("reinforce_plus_plus", (x) =>
  reinforcePlusPlus({
    tokenRewards: x.tokenRewards,
    responseMask: x.responseMask,
    ...pick(x, ["gamma"] as const),
  }));
ESTIMATORS.register("reinforce_plus_plus_reset", (x) =>
  reinforcePlusPlus({
    tokenRewards: x.tokenRewards,
    responseMask: x.responseMask,
    maskMode: "reset",
    ...pick(x, ["gamma"] as const),
  }));
ESTIMATORS.register(
  "reinforce_plus_plus_baseline",
  (x) => reinforcePlusPlusBaseline(outcomeOf("reinforce_plus_plus_baseline", x)),
);
