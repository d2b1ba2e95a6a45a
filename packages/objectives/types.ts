/**
 * Shared types of `@rlvr/objectives`: the inputs every policy loss takes, its flat options bag
 * (veRL's actor config in camelCase), and the `{ loss, metrics }` pair every loss returns.
 *
 * Design decision: one flat options type instead of one type per loss. A training config selects
 * a loss by key (`getPolicyLoss("gspo")`) and passes the same options object whatever the key,
 * as veRL's `actor.policy_loss` config does; each loss reads the fields it knows and
 * {@link PolicyLossOptions} documents which loss reads which field. Unknown option names are
 * rejected, so a typo (`clipratio`) fails loudly instead of silently using a default.
 *
 * @module
 */

import type { Tensor } from "@rlvr/tensor";

/**
 * Per-token inputs of a policy loss. Every tensor is `[B, T]` (B sequences of T response
 * positions, padded); `responseMask` marks the valid positions. Values at masked positions are
 * ignored (they are replaced by 0 before any arithmetic, so NaN padding cannot leak into the
 * loss or its gradient).
 *
 * @example Usage
 * ```ts
 * import type { PolicyLossInputs } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const inputs: PolicyLossInputs = {
 *   logProbs: tensor([[-1, -2]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1, -2]]),
 *   advantages: tensor([[1, 1]]),
 *   responseMask: tensor([[true, false]]),
 * };
 * assert.deepEqual(inputs.logProbs.shape, [1, 2]);
 * ```
 */
export interface PolicyLossInputs {
  /** log π_θ(y_t) of the current policy; the tensor gradients flow to. */
  logProbs: Tensor;
  /**
   * log π_old(y_t): the policy the ratio is taken against (veRL `old_log_prob`, the proximal
   * policy of decoupled PPO). Required by every ratio-based loss; `reinforce` works without it.
   */
  oldLogProbs?: Tensor;
  /** Advantages Â_t (sequence-level advantages broadcast over the tokens). */
  advantages: Tensor;
  /** Valid positions: bool, or f32 with values 0/1. */
  responseMask: Tensor;
  /** log π_ref(y_t) of the reference policy, for the KL term (`klCoef > 0`). */
  refLogProbs?: Tensor;
  /**
   * log π_rollout(y_t) from the sampler (vLLM-style engine; the behaviour policy of decoupled
   * PPO), for the off-policy corrections in {@link PolicyLossOptions.offPolicy}.
   */
  rolloutLogProbs?: Tensor;
  /** Per-token entropy H_t `[B, T]`, for the entropy metric, bonus and top-entropy mask. */
  entropy?: Tensor;
  /** Logits `[B, T, V]`; their entropy is used when `entropy` is not given. */
  logits?: Tensor;
  /**
   * Precomputed per-token importance weights `[B, T]` (veRL `rollout_is_weights`), multiplied
   * into the per-token loss with gradients stopped.
   */
  isWeights?: Tensor;
}

/**
 * Loss aggregation modes built in (see `aggregate.ts`); custom modes can be registered by name.
 */
export type AggregationMode =
  | "token-mean"
  | "token-sum"
  | "seq-mean-token-sum"
  | "seq-mean-token-mean"
  | "seq-mean-token-sum-norm";

/**
 * Normalisation shared by all aggregation modes. Give the global counts when one batch is split
 * into micro-batches (gradient accumulation): each micro-batch's loss is then its share of the
 * full-batch loss, and the micro-batch losses sum to it (veRL `agg_loss` with
 * `batch_num_tokens`/`global_batch_size`; TRL `loss_type="dapo"` with `num_items_in_batch`).
 */
export interface AggregationOptions {
  /** Valid tokens in the whole batch (`token-mean` denominator); default: this batch's count. */
  globalTokens?: number | Tensor;
  /**
   * Non-empty sequences in the whole batch (`seq-mean-*` denominator); default: this batch's
   * count of sequences with at least one valid token.
   */
  globalSequences?: number | Tensor;
  /**
   * Constant divisor of `seq-mean-token-sum-norm` (veRL `loss_scale_factor`, Dr. GRPO's
   * MAX_TOKENS, TRL `max_completion_length`); default: T, the padded length of the batch.
   */
  lossScaleFactor?: number;
}

/**
 * KL estimator keys, with veRL's names as aliases (see `kl.ts`); a final `+` keeps the value of
 * the estimator and takes the gradient of k2 (straight-through).
 */
export type KlEstimator =
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

/**
 * Settings of veRL's `bypass_mode` loss (veRL `policy_loss.rollout_correction`): `oldLogProbs`
 * hold the rollout policy's log-probs, importance weights `π_θ/π_rollout` and the rejection mask
 * are computed inside the loss (see `bypass.ts`).
 */
export interface BypassOptions {
  /** `"ppo_clip"` (default: `vanilla` on π_θ/π_rollout, no IS weight) or `"reinforce"` (`−w·A·log π_θ`). */
  lossType?: "ppo_clip" | "reinforce";
  /** IS weight level, `"token"` or `"sequence"` (default, veRL `rollout_is`), or null for none. */
  is?: OffPolicyLevel | null;
  /** `rollout_is_threshold`: a number or `"upper"` (truncate), or `"lower_upper"` (IcePop: zero outside); default 2. */
  isThreshold?: number | string;
  /** Normalise the IS weights to mean 1 over the batch (veRL `rollout_is_batch_normalize`, default false). */
  isBatchNormalize?: boolean;
  /** Rejection criteria, comma-separated (veRL `rollout_rs`: `token_k1`, `seq_mean_k3`, …); default none. */
  rs?: string | null;
  /** Their thresholds (veRL `rollout_rs_threshold`): one number or string per criterion, comma-separated. */
  rsThreshold?: number | string;
}

/** Granularity of an importance weight or a rejection test over tokens. */
export type OffPolicyLevel = "token" | "sequence";

/**
 * Off-policy corrections against the sampler's log-probs (`rolloutLogProbs`), see
 * `off_policy.ts`. `tis` and `decoupled` both produce importance weights and cannot be combined.
 */
export interface OffPolicyOptions {
  /**
   * Truncated importance sampling (TIS): weights `min(π_old/π_rollout, cap)` per token, or per
   * sequence with the product of the token ratios; gradients stopped. veRL `rollout_is` /
   * `rollout_is_threshold`; TRL `vllm_importance_sampling_correction` / `_cap`.
   */
  tis?: { level?: OffPolicyLevel; cap?: number };
  /**
   * Decoupled PPO (AReaL): weights `π_prox/π_behav = exp(old − rollout)`, zeroed where they
   * exceed `cap` (AReaL `behav_imp_weight_cap`; default: no cap).
   */
  decoupled?: { cap?: number };
  /**
   * Rejection of off-policy tokens or sequences (veRL `rollout_rs`): positions whose ratio
   * `π_old/π_rollout` (token), product of ratios (`sequence`) or geometric mean (`geometric`)
   * falls outside `[lower, upper]` are removed from the response mask (and from the loss
   * denominators). `lower` defaults to `1/upper`.
   */
  rejection?: { level?: OffPolicyLevel | "geometric"; upper: number; lower?: number };
  /**
   * Off-policy sequence masking (OPSM, DeepSeek-V3.2; TRL `off_policy_mask_threshold`): zero the
   * loss of tokens with negative advantage whose sequence has mean `log π_rollout − log π_θ`
   * above this threshold. The denominators keep those tokens, as in TRL.
   */
  sequenceMaskThreshold?: number;
}

/**
 * Options of every policy loss; each loss reads the fields it knows (listed per field) and
 * rejects names that no loss knows. Defaults are veRL's unless a loss's documentation says
 * otherwise.
 */
export interface PolicyLossOptions extends AggregationOptions {
  /**
   * Aggregation mode key (default `token-mean`; `gspo_seq`, `gspo_token`, `gmpo` and `sapo_agg`
   * default to `seq-mean-token-mean`; veRL's `gspo` and `sapo` always use `seq-mean-token-mean`
   * and `geo_mean` a plain mean over the rows for the policy-gradient term, whatever this says).
   */
  aggregation?: AggregationMode | string;
  /** Symmetric clip ε (veRL `clip_ratio`, default 0.2): both bounds unless overridden. */
  clipRatio?: number;
  /** Lower clip ε_low: ratio bound `1 − ε_low` (veRL `clip_ratio_low`; must be in [0, 1]). */
  clipRatioLow?: number;
  /** Upper clip ε_high: ratio bound `1 + ε_high` (veRL `clip_ratio_high`; DAPO uses 0.28). */
  clipRatioHigh?: number;
  /** Dual-clip constant c > 1 for A < 0 (veRL `clip_ratio_c`, default 3; `Infinity` disables). */
  clipRatioC?: number;
  /** SAPO gate temperature for A > 0 (veRL `tau_pos`, default 1.0). */
  tauPos?: number;
  /** SAPO gate temperature for A ≤ 0 (veRL `tau_neg`, default 1.05). */
  tauNeg?: number;
  /** Clip-Cov / KL-Cov: fraction of valid tokens selected (veRL `clip_cov_ratio`/`kl_cov_ratio`, 2e-4). */
  covRatio?: number;
  /** Clip-Cov: lower covariance bound (veRL `clip_cov_lb`, default 1). */
  covLowerBound?: number;
  /** Clip-Cov: upper covariance bound (veRL `clip_cov_ub`, default 5). */
  covUpperBound?: number;
  /** KL-Cov: coefficient of |log ratio| on the selected tokens (veRL `ppo_kl_coef`, default 1). */
  klCovCoef?: number;
  /** Clip-Cov: seed of the random token selection (default: the global generator advances). */
  seed?: number;
  /**
   * Clip-Cov: the permutation veRL draws with `torch.randperm(n)` over the `n` candidate tokens
   * (in row-major order); the candidates at its first `k` entries are detached. Must be a
   * permutation of `0..n−1` with `n` the number of candidates; overrides `seed`.
   */
  covPermutation?: ArrayLike<number>;
  /** DRO: coefficient β > 0 of the quadratic log-ratio penalty (veRL `dro_beta`, required by `dro`). */
  droBeta?: number;
  /** `bypass_mode`: veRL's `rollout_correction` settings. */
  bypass?: BypassOptions;
  /** REINFORCE family: weight of tokens with A > 0 (default 1; `nsr` 0, `w_reinforce` 0.1). */
  positiveWeight?: number;
  /** REINFORCE family: weight of tokens with A < 0 (default 1; `psr` 0). */
  negativeWeight?: number;
  /** KL-in-loss coefficient β (veRL `kl_loss_coef`; needs `refLogProbs`; default 0 = off). */
  klCoef?: number;
  /** KL estimator of the KL-in-loss term (veRL `kl_loss_type`, default `low_var_kl` = k3). */
  klType?: KlEstimator;
  /** Entropy bonus coefficient α: the loss gets `− α·agg(H)` (veRL `entropy_coeff`, default 0). */
  entropyCoef?: number;
  /**
   * Keep the policy-gradient loss only on the top fraction of tokens by entropy among valid
   * tokens ("Beyond the 80/20 rule", arXiv 2506.01939; TRL `top_entropy_quantile`; 0.2 in the
   * paper; default 1 = all tokens).
   */
  topEntropyFraction?: number;
  /** Off-policy corrections against `rolloutLogProbs`. */
  offPolicy?: OffPolicyOptions;
}

/** Scalar metric tensors, keyed by name; read them with `readMetrics`. */
export type Metrics = Record<string, Tensor>;

/**
 * What every loss returns: the scalar loss (differentiable) and scalar metric tensors (no
 * gradient). Both are owned by the caller: dispose them (or read the metrics with
 * `readMetrics(metrics, { dispose: true })`) when done.
 */
export interface LossOutput {
  /** The scalar loss to back-propagate. */
  loss: Tensor;
  /** Scalar metrics, detached from the graph. */
  metrics: Metrics;
}

/** A policy loss: maps inputs and options to `{ loss, metrics }`. */
export type PolicyLossFn = (inputs: PolicyLossInputs, options?: PolicyLossOptions) => LossOutput;
