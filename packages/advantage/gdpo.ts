/**
 * GDPO, Group reward-Decoupled normalization Policy Optimization (arXiv 2601.05242): with
 * several reward components (format, accuracy, …), GRPO on their sum lets a dominant component
 * drown the others; GDPO normalises each component within its group first, then combines and
 * whitens over the batch:
 *
 * ```
 * A_k,i = GRPO(R_k)_i = (R_k,i − μ_g(R_k)) / (σ_g(R_k) + ε)     (per component k; singleton: μ 0, σ 1)
 * S_i,t = Σ_k w_k · A_k,i · m_i,t
 * A     = maskedWhiten(S) · m                                     (over all valid tokens of the batch)
 * ```
 *
 * Matches veRL `compute_gdpo_outcome_advantage` (`algorithm.adv_estimator=gdpo`,
 * `algorithm.gdpo_reward_keys` → `rewardComponents`, `gdpo_reward_weights` → `rewardWeights`;
 * `epsilon`, `norm_adv_by_std_in_grpo` → `normByStd`). Without components veRL falls back to the
 * one reward (`token_level_rewards`): GRPO then batch whitening. `returns` equals `advantages`.
 * The whitening is veRL's `masked_whiten` (unbiased variance, `+1e-8`), so it needs at least two
 * valid tokens in the batch.
 *
 * @module
 */

import { ESTIMATORS, needIndex, pick, seqRewards } from "./_estimators.ts";
import { grpoScalars } from "./_grpo_scalars.ts";
import { broadcast } from "./_layout.ts";
import { checkBoolean, checkNumber, checkOutcome, checkSequence } from "./_validate.ts";
import { whitenChecked } from "./_whiten.ts";
import type { AdvantageOutput, GroupIndex, TokenMatrix } from "./types.ts";

/** Input of {@link gdpo}. */
export interface GdpoInput {
  /** The sequence reward, one per response: the single component when `rewardComponents` is absent. */
  rewards: ArrayLike<number>;
  /** Response mask `[batch, length]`. */
  responseMask: TokenMatrix;
  /** Group id per response (veRL `uid`); groups may be ragged. */
  index: GroupIndex;
  /** The reward components, each one sequence reward per response (veRL `gdpo_reward_keys`); replaces `rewards`. */
  rewardComponents?: readonly ArrayLike<number>[];
  /** One weight per component (default 1 each; veRL `gdpo_reward_weights`). */
  rewardWeights?: ArrayLike<number>;
  /** Added to each component's group std (default 1e-6). */
  epsilon?: number;
  /** Divide each component by its group std (default true). */
  normByStd?: boolean;
}

/**
 * GDPO advantages (module doc formula; veRL `compute_gdpo_outcome_advantage`).
 *
 * @example Usage
 * ```ts
 * import { fromRows, gdpo } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * // format reward is large and constant within group a; accuracy differs
 * const { advantages } = gdpo({
 *   rewards: [11, 10, 1, 0],
 *   rewardComponents: [[10, 10, 0, 0], [1, 0, 1, 0]],
 *   responseMask: fromRows([[1], [1], [1], [1]]),
 *   index: ["a", "a", "b", "b"],
 * });
 * // the constant format component contributes 0; accuracy gives ±1/(√0.5 + ε) per group,
 * // then the batch whitening scales [+, −, +, −] to unit unbiased variance
 * assert.ok(Math.abs(advantages[0]! - Math.sqrt(3) / 2) < 1e-6);
 * assert.ok(Math.abs(advantages[0]! + advantages[1]!) < 1e-12);
 * ```
 */
export function gdpo(input: GdpoInput): AdvantageOutput {
  const owner = "gdpo";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const epsilon = checkNumber(owner, "epsilon", input.epsilon ?? 1e-6, { min: 0 });
  const normByStd = checkBoolean(owner, "normByStd", input.normByStd ?? true);
  const components = input.rewardComponents === undefined
    ? [rewards]
    : checkComponents(owner, input.rewardComponents, mask.batch);
  const weights = input.rewardWeights === undefined ? components.map(() => 1) : Array.from(
    checkSequence(
      owner,
      "rewardWeights",
      input.rewardWeights,
      components.length,
      "rewardComponents",
    ),
  );
  const combined = new Float64Array(mask.batch);
  components.forEach((c, k) => {
    const a = grpoScalars(c, index, epsilon, normByStd);
    for (let i = 0; i < combined.length; i++) combined[i] = combined[i]! + weights[k]! * a[i]!;
  });
  const summed = broadcast(combined, mask);
  const advantages = whitenChecked(
    owner,
    { data: summed, batch: mask.batch, length: mask.length },
    mask,
  );
  return { advantages, returns: advantages.slice() };
}

function checkComponents(
  owner: string,
  components: unknown,
  batch: number,
): ArrayLike<number>[] {
  if (!Array.isArray(components) || components.length === 0) {
    throw new TypeError(
      `${owner}: rewardComponents must be a non-empty array of reward arrays (one per component), got ${
        JSON.stringify(components)
      }`,
    );
  }
  return components.map((c, k) => checkSequence(owner, `rewardComponents[${k}]`, c, batch));
}

ESTIMATORS.register("gdpo", (x) =>
  gdpo({
    rewards: seqRewards("gdpo", x),
    responseMask: x.responseMask,
    index: needIndex("gdpo", x),
    ...pick(x, ["rewardComponents", "rewardWeights", "epsilon", "normByStd"] as const),
  }));
