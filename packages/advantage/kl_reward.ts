/**
 * KL in the reward (Ziegler et al., arXiv 1909.08593; InstructGPT; REINFORCE++ arXiv
 * 2501.03262): each valid token's reward is penalised by `β·KL_t` between the sampling policy
 * and the reference, and the sequence's scalar reward sits on its last valid token. The
 * result feeds any token-level estimator ({@link gae}, {@link reinforcePlusPlus}, ...), and the
 * registry applies it before any estimator when given `klInReward` (veRL
 * `algorithm.use_kl_in_reward`).
 *
 * Design: per-token KL estimates follow veRL `core_algos.kl_penalty` on log-probs of the sampled
 * tokens, `Δ = log π_old − log π_ref`: `"k1"` (alias `"kl"`) `Δ`; `"abs"` `|Δ|`; `"k2"` (alias
 * `"mse"`) `½Δ²`; `"k3"` (alias `"low_var_kl"`) `e^{−Δ} + Δ − 1` with veRL's clamps (the
 * log-ratio to [−20, 20], the result to [−10, 10]). The shaping itself is veRL
 * `ray_trainer.apply_kl_penalty`: `r_t = score_t − β·KL_t·m_t`. The adaptive β controller is a
 * trainer concern and is not here; `meanKl` (veRL's `current_kl`, the batch mean of per-sequence
 * masked means) is returned for it.
 *
 * @module
 */

import { klOf, PENALTIES, shapeChecked } from "./_kl_reward.ts";
import { placeOutcome } from "./_layout.ts";
import { checkChoice, checkMask, checkObject, checkSequence, checkTokens } from "./_validate.ts";
import type { TokenMatrix } from "./types.ts";

/**
 * Per-token KL estimators, with veRL's `kl_penalty` names as aliases. A final `+` (veRL's
 * straight-through form) has the value of the estimator without it: in the reward there is no
 * gradient for it to change.
 */
export type KlPenalty =
  | "k1"
  | "kl"
  | "abs"
  | "k2"
  | "mse"
  | "k3"
  | "low_var_kl"
  | "k1+"
  | "kl+"
  | "abs+"
  | "k2+"
  | "mse+"
  | "k3+"
  | "low_var_kl+";

/** Input of {@link klShapedRewards}. */
export interface KlShapedRewardsInput {
  /** Sequence rewards, placed on each response's last valid token. */
  rewards: ArrayLike<number>;
  /** Log-probs of the sampled tokens under the sampling (old) policy, `[batch, length]`. */
  logProbs: TokenMatrix;
  /** Log-probs of the same tokens under the reference policy, `[batch, length]`. */
  refLogProbs: TokenMatrix;
  /** Response mask `[batch, length]`. */
  responseMask: TokenMatrix;
  /** KL coefficient β >= 0 (veRL `algorithm.kl_ctrl.kl_coef`). */
  coef: number;
  /** KL estimator (default `"k1"`, veRL's default `kl_penalty="kl"`). */
  penalty?: KlPenalty;
}

/** Output of {@link klShapedRewards}. */
export interface KlShapedRewards {
  /** `r_t = 1[t = last valid]·R − β·KL_t` on valid tokens, 0 elsewhere. */
  tokenRewards: TokenMatrix;
  /** The per-token KL estimate, 0 at masked positions. */
  kl: Float64Array;
  /** Batch mean of the per-response masked mean KL (veRL `current_kl`), 0 for an empty batch. */
  meanKl: number;
}

/**
 * Per-token KL estimates between the sampling and the reference policy on the sampled tokens
 * (veRL `core_algos.kl_penalty`), 0 at masked positions. With `Δ = logProbs − refLogProbs`:
 * `k1 = Δ`, `abs = |Δ|`, `k2 = ½Δ²`, `k3 = e^{−Δ} + Δ − 1` (clamped as veRL).
 *
 * @example Usage
 * ```ts
 * import { fromRows, klPenalty } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const lp = fromRows([[-1, -2]]);
 * const ref = fromRows([[-1.5, -2]]);
 * const mask = fromRows([[1, 1]]);
 * assert.deepEqual([...klPenalty(lp, ref, mask, "k1")], [0.5, 0]);
 * assert.deepEqual([...klPenalty(lp, ref, mask, "k2")], [0.125, 0]);
 * assert.ok(Math.abs(klPenalty(lp, ref, mask, "k3")[0]! - (Math.exp(-0.5) - 0.5)) < 1e-15);
 * ```
 */
export function klPenalty(
  logProbs: TokenMatrix,
  refLogProbs: TokenMatrix,
  responseMask: TokenMatrix,
  penalty: KlPenalty = "k1",
): Float64Array {
  const owner = "klPenalty";
  const mask = checkMask(owner, "responseMask", responseMask);
  const lp = checkTokens(owner, "logProbs", logProbs, mask);
  const ref = checkTokens(owner, "refLogProbs", refLogProbs, mask);
  const kind = checkChoice(owner, "penalty", penalty, PENALTIES);
  return klOf(lp, ref, mask, kind);
}

/**
 * KL-shaped token rewards (KL in the reward):
 *
 * ```
 * r_{i,t} = 1[t = last valid token of i]·R_i − β·KL_{i,t}    (valid tokens; 0 elsewhere)
 * ```
 *
 * Matches veRL `apply_kl_penalty` (`algorithm.use_kl_in_reward=True`, `kl_penalty`,
 * `kl_ctrl.kl_coef`) on valid tokens. Feed `tokenRewards` to a token-level estimator, e.g.
 * {@link reinforcePlusPlus} (the REINFORCE++ recipe) or {@link gae} (PPO/RLHF).
 *
 * @example Usage
 * ```ts
 * import { fromRows, klShapedRewards, toRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const out = klShapedRewards({
 *   rewards: [1],
 *   logProbs: fromRows([[-1, -1, 0]]),
 *   refLogProbs: fromRows([[-2, -1, 0]]),
 *   responseMask: fromRows([[1, 1, 0]]),
 *   coef: 0.1,
 * });
 * // k1 = [1, 0]; the reward 1 sits on token 1, the last valid one
 * assert.deepEqual(toRows(out.tokenRewards.data, 3), [[-0.1, 1, 0]]);
 * assert.equal(out.meanKl, 0.5); // mean of [1, 0]
 * ```
 */
export function klShapedRewards(input: KlShapedRewardsInput): KlShapedRewards {
  const owner = "klShapedRewards";
  checkObject(owner, input, "{rewards, logProbs, refLogProbs, responseMask, coef, penalty?}");
  const mask = checkMask(owner, "responseMask", input.responseMask);
  const rewards = checkSequence(owner, "rewards", input.rewards, mask.batch);
  return shapeChecked(owner, placeOutcome(rewards, mask), input, mask);
}
