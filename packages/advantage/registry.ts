/**
 * The estimator registry: every estimator under a stable string key (veRL's
 * `algorithm.adv_estimator` name where veRL has one), callable through one uniform input object.
 *
 * Design: a key maps to a function `(ResolvedInput) => AdvantageOutput`, held in one
 * `Registry` of `@rlvr/common` (its key rule, its errors, registration order). Each built-in
 * estimator registers itself at the end of its own file, beside its math, and reads the fields
 * it needs from the {@link ResolvedInput}; the list of those files is at the end of this module,
 * so adding an estimator is one new file and one import line there. {@link getEstimator}
 * returns a wrapper that first *resolves* the caller's {@link EstimatorInput} the same way for
 * every estimator, built-in or registered:
 *
 * 1. the response mask is checked;
 * 2. rewards come either token-level (`tokenRewards`, veRL `token_level_rewards`) or
 *    sequence-level (`rewards`, placed on each response's last valid token), never both;
 * 3. `klInReward`, when given, subtracts `β·KL_t` from the token rewards first (veRL
 *    `use_kl_in_reward`), so every estimator sees KL-shaped rewards, as in veRL;
 * 4. groups come from `index` (ragged allowed) or `groupSize` (contiguous fixed-size groups,
 *    which must divide the batch), never both;
 * 5. unknown fields are an error listing the known ones (a misspelt option never silently falls
 *    back to a default); custom estimators read their own settings from `extra`.
 *
 * A caller (the trainer) fills every field it has; each estimator reads the fields it needs and
 * the direct function validates them. Outcome estimators use `rewards` when the caller gave
 * sequence rewards (and no KL shaping), else the row sums of `tokenRewards` over **every**
 * position, masked ones included (veRL's `token_level_rewards.sum(-1)`; a non-finite value on
 * padding is then an error). {@link estimatorNames} lists the keys.
 *
 * @module
 */

import { ESTIMATORS } from "./_estimators.ts";
import { fixedIndex } from "./_group.ts";
import { shapeChecked } from "./_kl_reward.ts";
import { placeOutcome } from "./_layout.ts";
import {
  checkIndex,
  checkMask,
  checkObject,
  checkSequence,
  checkTokens,
  missing,
} from "./_validate.ts";
import type { EpisodeWeighting, GigpoMode, GigpoTurn } from "./gigpo.ts";
import type { KlPenalty } from "./kl_reward.ts";
import type { PrimeBaseline } from "./prime.ts";
import type { AdvantageOutput, GroupIndex, TokenMatrix } from "./types.ts";

/** KL-in-reward settings of {@link EstimatorInput} (veRL `algorithm.use_kl_in_reward`). */
export interface KlInReward {
  /** Log-probs of the sampled tokens under the sampling (old) policy, `[batch, length]`. */
  logProbs: TokenMatrix;
  /** Log-probs of the same tokens under the reference policy, `[batch, length]`. */
  refLogProbs: TokenMatrix;
  /** β >= 0 (veRL `algorithm.kl_ctrl.kl_coef`). */
  coef: number;
  /** KL estimator (default `"k1"`; veRL `algorithm.kl_penalty`). */
  penalty?: KlPenalty;
}

/**
 * The uniform input of every registered estimator. Only `responseMask` and one of
 * `tokenRewards` / `rewards` are always required; each estimator reads the fields listed for
 * it and ignores the rest.
 */
export interface EstimatorInput {
  /** Token rewards `[batch, length]` (veRL `token_level_rewards`). Give this or `rewards`. */
  tokenRewards?: TokenMatrix;
  /** Sequence rewards, one per response, placed on the last valid token. Give this or `tokenRewards`. */
  rewards?: ArrayLike<number>;
  /** Response mask `[batch, length]` of 0s and 1s. */
  responseMask: TokenMatrix;
  /** Group id per response (veRL `uid`); ragged groups allowed. Group-relative estimators need this or `groupSize`. */
  index?: GroupIndex;
  /** Fixed group size of contiguous groups (TRL `num_generations`); must divide the batch. */
  groupSize?: number;
  /** Subtract `β·KL` from the token rewards before estimating (veRL `use_kl_in_reward`). */
  klInReward?: KlInReward;
  /** `gae`: critic values `[batch, length]`. */
  values?: TokenMatrix;
  /** `gae`, `reinforce_plus_plus`, `prime`: discount γ (default 1); `gigpo`: of the turn returns (default 0.95). */
  gamma?: number;
  /** `gae`: actor λ (default 1). */
  lam?: number;
  /** `gae`: critic λ for the returns (default `lam`). */
  criticLam?: number;
  /** `gae`: VAPO length-adaptive actor λ `1 − 1/(α·l)`. */
  lengthAdaptiveAlpha?: number;
  /** `gae`, `prime`: whiten the advantages (default true). */
  whiten?: boolean;
  /**
   * `grpo`, `grpo_vectorized`, `grpo_passk`, `gdpo`, `gigpo` (default 1e-6), `grpo_batch_std`
   * (default 1e-4): added to the std; `optimal_token_baseline`, `tir_optimal_token_baseline`
   * (default 1e-8): added to the baseline's denominator.
   */
  epsilon?: number;
  /** `grpo`, `grpo_vectorized`, `grpo_passk`, `gdpo`: divide by the group std (default true). */
  normByStd?: boolean;
  /** `gdpo`: the reward components, each one sequence reward per response (veRL `gdpo_reward_keys`). */
  rewardComponents?: readonly ArrayLike<number>[];
  /** `gdpo`: one weight per component (default 1 each; veRL `gdpo_reward_weights`). */
  rewardWeights?: ArrayLike<number>;
  /** `optimal_token_baseline`, `tir_optimal_token_baseline`: log π_old of the sampled tokens (veRL `old_log_probs`). */
  oldLogProbs?: TokenMatrix;
  /** `optimal_token_baseline`, `tir_optimal_token_baseline`: Σ_v π(v)² per position (veRL `sum_pi_squared`). */
  sumPiSquared?: TokenMatrix;
  /** `optimal_token_baseline`, `tir_optimal_token_baseline`: rollout IS weights ρ (veRL `rollout_is_weights`). */
  rolloutIsWeights?: TokenMatrix;
  /** `optimal_token_baseline`, `tir_optimal_token_baseline`: veRL `handle_zero_tail` (default true). */
  handleZeroTail?: boolean;
  /** `remax`: the greedy response's reward per response (veRL `reward_baselines`). */
  baselineRewards?: ArrayLike<number>;
  /** `gpg`: `F_norm` (default 1). */
  fNorm?: number;
  /** `gpg`: fixed α instead of veRL's `B / max(1, #{R ≠ 0})`. */
  gpgAlpha?: number;
  /** `passk_analytic`: the k of pass@k. */
  k?: number;
  /** `psr_nsr`: weight λ of positive samples (default 0.1). */
  positiveWeight?: number;
  /** `psr_nsr`: weight of negative samples (default 1). */
  negativeWeight?: number;
  /** `prime`: implicit process rewards `β·log(π_φ/π_ref)` per token. */
  processRewards?: TokenMatrix;
  /** `prime`: weight of the process term (default 1). */
  processCoef?: number;
  /** `prime`: weight of the outcome term (default 1). */
  outcomeCoef?: number;
  /** `prime`: leave-one-out form of the process term (default `"verl"`). */
  primeBaseline?: PrimeBaseline;
  /** `entropy_adv`: per-token entropy of the sampling distribution. */
  entropy?: TokenMatrix;
  /** `entropy_adv`: α of the entropy bonus. */
  entropyAlpha?: number;
  /** `entropy_adv`: κ of the clip `|A|/κ`. */
  entropyKappa?: number;
  /** `entropy_adv`: the key of the estimator whose advantages are shaped (default `"grpo"`). */
  baseEstimator?: string;
  /** `gigpo`: each response's turns in time order: anchor `state` key, optional `reward`, token span `[start, end)`. */
  turns?: readonly (readonly GigpoTurn[])[];
  /** `gigpo`: weight ω of the step-level advantage (default 1, verl-agent `step_advantage_w`). */
  omega?: number;
  /** `gigpo`: `"mean_norm"` (default) or `"mean_std_norm"` (verl-agent `algorithm.gigpo.mode`). */
  gigpoMode?: GigpoMode;
  /** `gigpo`: each turn (default, verl-agent) or each episode (paper Eq. 3) counts once in the episode statistics. */
  episodeWeighting?: EpisodeWeighting;
  /** Settings of custom estimators registered with {@link registerEstimator}. */
  extra?: Readonly<Record<string, unknown>>;
}

/** What a registered estimator receives: {@link EstimatorInput} after resolution. */
export interface ResolvedInput
  extends Omit<EstimatorInput, "tokenRewards" | "rewards" | "groupSize" | "klInReward" | "index"> {
  /** Token rewards, KL-shaped when `klInReward` was given; always present. */
  tokenRewards: TokenMatrix;
  /** The caller's sequence rewards, when given and not KL-shaped. */
  rewards?: ArrayLike<number>;
  /** Group ids, from `index` or built from `groupSize`. */
  index?: GroupIndex;
}

/** A registered estimator. */
export type EstimatorFn = (input: ResolvedInput) => AdvantageOutput;

/** Options of {@link registerEstimator}. */
export interface RegisterOptions {
  /** Replace an existing estimator of the same key (default false: that is an error). */
  override?: boolean;
}

/** The one list of known fields (checked against {@link EstimatorInput} by the compiler). */
const FIELDS: Record<keyof EstimatorInput, true> = {
  tokenRewards: true,
  rewards: true,
  responseMask: true,
  index: true,
  groupSize: true,
  klInReward: true,
  values: true,
  gamma: true,
  lam: true,
  criticLam: true,
  lengthAdaptiveAlpha: true,
  whiten: true,
  epsilon: true,
  normByStd: true,
  rewardComponents: true,
  rewardWeights: true,
  oldLogProbs: true,
  sumPiSquared: true,
  rolloutIsWeights: true,
  handleZeroTail: true,
  baselineRewards: true,
  fNorm: true,
  gpgAlpha: true,
  k: true,
  positiveWeight: true,
  negativeWeight: true,
  processRewards: true,
  processCoef: true,
  outcomeCoef: true,
  primeBaseline: true,
  entropy: true,
  entropyAlpha: true,
  entropyKappa: true,
  baseEstimator: true,
  turns: true,
  omega: true,
  gigpoMode: true,
  episodeWeighting: true,
  extra: true,
};

function resolve(key: string, input: EstimatorInput): ResolvedInput {
  checkObject(key, input, "EstimatorInput {responseMask, tokenRewards | rewards, index?, ...}");
  const unknown = Object.keys(input).filter((f) => !(f in FIELDS));
  if (unknown.length > 0) {
    throw new TypeError(
      `${key}: unknown field ${JSON.stringify(unknown[0])} in the estimator input; known fields: ${
        Object.keys(FIELDS).join(", ")
      } (custom settings go in extra)`,
    );
  }
  const mask = checkMask(key, "responseMask", input.responseMask);
  const {
    tokenRewards: tokenIn,
    rewards: rewardsIn,
    groupSize,
    klInReward,
    index: indexIn,
    ...rest
  } = input;
  if (tokenIn !== undefined && rewardsIn !== undefined) {
    throw new TypeError(
      `${key}: give tokenRewards (token-level) or rewards (sequence-level), not both`,
    );
  }
  let rewards: ArrayLike<number> | undefined;
  let tokenRewards: TokenMatrix;
  if (rewardsIn !== undefined) {
    rewards = checkSequence(key, "rewards", rewardsIn, mask.batch);
    tokenRewards = placeOutcome(rewards, mask);
  } else if (tokenIn !== undefined) {
    tokenRewards = checkTokens(key, "tokenRewards", tokenIn, mask);
  } else {
    return missing(key, "tokenRewards or rewards", "token-level or sequence-level rewards");
  }
  if (klInReward !== undefined) {
    tokenRewards = shapeChecked(key, tokenRewards, klInReward, mask, "klInReward.").tokenRewards;
    rewards = undefined; // the sequence reward now includes the KL penalty
  }
  if (indexIn !== undefined && groupSize !== undefined) {
    throw new TypeError(`${key}: give index (group ids) or groupSize, not both`);
  }
  let index: GroupIndex | undefined;
  if (indexIn !== undefined) index = checkIndex(key, "index", indexIn, mask.batch);
  if (groupSize !== undefined) index = fixedIndex(key, mask.batch, groupSize);
  const resolved: ResolvedInput = { ...rest, responseMask: mask, tokenRewards };
  if (rewards !== undefined) resolved.rewards = rewards;
  if (index !== undefined) resolved.index = index;
  return resolved;
}

/**
 * The estimator registered under `key`, wrapped to accept an {@link EstimatorInput}. An
 * unknown key is a `RangeError` listing the valid keys (in registration order) with a "did you
 * mean" for a likely typo.
 *
 * @example Usage
 * ```ts
 * import { fromRows, getEstimator } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const grpo = getEstimator("grpo");
 * const { advantages } = grpo({
 *   rewards: [1, 0, 1, 1],
 *   responseMask: fromRows([[1, 1], [1, 0], [1, 1], [1, 1]]),
 *   groupSize: 2,
 *   epsilon: 0,
 * });
 * // group [1, 0]: mean 0.5, unbiased std sqrt(0.5); group [1, 1]: all zero
 * assert.ok(Math.abs(advantages[0]! - Math.SQRT1_2) < 1e-12 && advantages[4] === 0);
 * assert.throws(() => getEstimator("grpp"), /unknown estimator "grpp"; valid keys: .*\(did you mean "grpo"\?\)/);
 * ```
 */
export function getEstimator(key: string): (input: EstimatorInput) => AdvantageOutput {
  const fn = ESTIMATORS.get(key);
  return (input) => fn(resolve(key, input));
}

/**
 * Registers `fn` under `key` (the key rule of `@rlvr/common`'s `Registry`: a lowercase letter,
 * then lowercase letters, digits and `_`, words joined by `-`, optionally one final `+`; veRL's
 * names are all of that form). A bad key or a non-function is a `TypeError`; a key that is
 * taken is a `RangeError` unless `{ override: true }`. The function receives the {@link ResolvedInput}; its own
 * settings travel in `extra`.
 *
 * @example Usage
 * ```ts
 * import { broadcastScalars, fromRows, getEstimator, registerEstimator } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * // REINFORCE with a constant baseline b read from extra
 * registerEstimator("const_baseline_example", (x) => {
 *   const b = Number(x.extra?.b ?? 0);
 *   const rewards = Array.from(x.rewards ?? [], (r) => r - b);
 *   const advantages = broadcastScalars(rewards, x.responseMask);
 *   return { advantages, returns: advantages.slice() };
 * });
 * const out = getEstimator("const_baseline_example")({
 *   rewards: [1, 0],
 *   responseMask: fromRows([[1], [1]]),
 *   extra: { b: 0.5 },
 * });
 * assert.deepEqual([...out.advantages], [0.5, -0.5]);
 * ```
 */
export function registerEstimator(
  key: string,
  fn: EstimatorFn,
  options: RegisterOptions = {},
): void {
  ESTIMATORS.register(key, fn, options);
}

/**
 * The registered keys, sorted (the error of {@link getEstimator} lists them in registration
 * order, as every `Registry` does).
 *
 * @example Usage
 * ```ts
 * import { estimatorNames } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.ok(estimatorNames().includes("reinforce_plus_plus_baseline"));
 * ```
 */
export function estimatorNames(): string[] {
  return ESTIMATORS.names().sort();
}

// The built-in estimators: each file registers its keys beside its math. Adding an estimator is
// one new file and one line here.
import "./entropy_adv.ts";
import "./gae.ts";
import "./gdpo.ts";
import "./gigpo.ts";
import "./gpg.ts";
import "./grpo.ts";
import "./grpo_vectorized.ts";
import "./opo.ts";
import "./optimal_token_baseline.ts";
import "./passk.ts";
import "./prime.ts";
import "./psr_nsr.ts";
import "./reinforce_pp.ts";
import "./remax.ts";
import "./rloo.ts";
import "./rloo_vectorized.ts";
