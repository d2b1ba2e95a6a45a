/**
 * Off-policy corrections for rollouts sampled by a different policy than the one the loss
 * differentiates: a faster sampler (vLLM-style engine, other precision), or stale weights in
 * asynchronous training. All weights and masks are constants (gradients stopped).
 *
 * - **TIS**, truncated importance sampling (Yao et al., "Your efficient RL framework secretly
 *   brings you off-policy RL training", 2025; Ionides 2008): per-token loss ×
 *   `min(π_old/π_rollout, C)`, or per sequence `min(Π_t π_old/π_rollout, C)`. veRL
 *   `compute_rollout_correction_weights` (`rollout_is: token | sequence`,
 *   `rollout_is_threshold`, default 2); TRL `vllm_importance_sampling_correction`/`_cap`.
 * - **Decoupled PPO** (Hilton et al., "Batch size-invariance for policy optimization", arXiv
 *   2110.00641; AReaL, arXiv 2505.24298): the PPO ratio is taken against the proximal policy
 *   (`oldLogProbs`) and the loss is weighted by `π_prox/π_behav = exp(old − rollout)`, zeroed
 *   above `cap` (AReaL `use_decoupled_loss`, `behav_imp_weight_cap`).
 * - **Rejection** (veRL `compute_rollout_rejection_mask`, `rollout_rs: token | sequence |
 *   geometric`, `rollout_rs_threshold[_lower]`): tokens/sequences whose ratio leaves
 *   `[lower, upper]` are removed from the response mask.
 * - **OPSM**, off-policy sequence masking (DeepSeek-V3.2, arXiv 2512.02556; TRL
 *   `off_policy_mask_threshold`): tokens with `A < 0` in sequences whose mean
 *   `log π_rollout − log π_θ` exceeds δ get zero loss.
 *
 * Design decision: log-ratios are clamped to ±20 before the exponential (veRL's `SAFETY_BOUND`);
 * masked positions get weight 0 (veRL) and are excluded from every statistic.
 *
 * @module
 */

import { noGrad, type Tensor, tidy, where } from "@rlvr/tensor";
import {
  and,
  check2d,
  checkNumber,
  checkSameShape,
  maskedFraction,
  maskedMax,
  maskedMean,
  maskedMin,
  rowMean,
  validOf,
  zeroMasked,
} from "./_util.ts";
import type { Metrics, OffPolicyLevel } from "./types.ts";

const SAFETY_BOUND = 20;

/** Checks shapes before any tensor work (so errors leave nothing to dispose). */
function checkPair(op: string, a: [string, Tensor], b: [string, Tensor], mask: Tensor): void {
  check2d(op, a[0], a[1]);
  checkSameShape(op, b[0], b[1], a[1], a[0]);
  checkSameShape(op, "responseMask", mask, a[1], a[0]);
}

/** Valid positions, the f32 mask and `num − den` with masked positions zeroed (no gradient). */
function prepare(
  num: Tensor,
  den: Tensor,
  responseMask: Tensor,
): { valid: Tensor; maskF: Tensor; logRatio: Tensor } {
  const valid = validOf(responseMask);
  const maskF = valid.cast("f32");
  const logRatio = zeroMasked(num.detach(), valid).sub(zeroMasked(den.detach(), valid));
  return { valid, maskF, logRatio };
}

function checkLevel(where: string, level: unknown, allowed: readonly string[]): void {
  if (!allowed.includes(level as string)) {
    throw new RangeError(
      `${where}: level must be one of ${allowed.join(", ")}, got ${JSON.stringify(level)}`,
    );
  }
}

function weightStats(prefix: string, w: Tensor, valid: Tensor, maskF: Tensor): Metrics {
  return {
    [`${prefix}_mean`]: maskedMean(w, maskF),
    [`${prefix}_min`]: maskedMin(w, valid),
    [`${prefix}_max`]: maskedMax(w, valid),
  };
}

/**
 * Truncated importance weights `[B, T]` of the sampler's rollouts (TIS):
 * token level `w_t = min(exp(clamp(log π_old − log π_rollout, ±20)), cap)`;
 * sequence level `w_i = min(exp(clamp(Σ_t (log π_old − log π_rollout), ±20)), cap)` broadcast
 * over the sequence; 0 on masked positions. Matches veRL `compute_rollout_correction_weights`
 * (`rollout_is`, `rollout_is_threshold`, without batch normalisation). Metrics: `tis_mean`,
 * `tis_min`, `tis_max` (before truncation) and `tis_truncated_frac`.
 *
 * @example Usage
 * ```ts
 * import { truncatedImportanceWeights } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { weights } = truncatedImportanceWeights(
 *   tensor([[0, -1]]), tensor([[Math.log(4), -1]]), tensor([[1, 1]]), { cap: 2 },
 * );
 * // ratios 1/4 and 1; neither is above the cap
 * assert.deepEqual(await weights.toArray(), [[0.25, 1]]);
 * ```
 */
export function truncatedImportanceWeights(
  oldLogProbs: Tensor,
  rolloutLogProbs: Tensor,
  responseMask: Tensor,
  options: { level?: OffPolicyLevel; cap?: number } = {},
): { weights: Tensor; metrics: Metrics } {
  const op = "truncatedImportanceWeights";
  const level = options.level ?? "token";
  checkLevel(op, level, ["token", "sequence"]);
  const cap = checkNumber(op, "cap", options.cap ?? 2, { min: 0, minExclusive: true });
  checkPair(op, ["oldLogProbs", oldLogProbs], ["rolloutLogProbs", rolloutLogProbs], responseMask);
  return noGrad(() =>
    tidy(() => {
      const { valid, maskF, logRatio } = prepare(oldLogProbs, rolloutLogProbs, responseMask);
      const logW = level === "token"
        ? logRatio
        : logRatio.mul(maskF).sum(1, true).expand(...logRatio.shape);
      const raw = logW.clamp(-SAFETY_BOUND, SAFETY_BOUND).exp().mul(maskF);
      const weights = raw.clamp(undefined, cap);
      return {
        weights,
        metrics: {
          ...weightStats("tis", raw, valid, maskF),
          tis_truncated_frac: maskedFraction(raw.gt(cap), maskF),
        },
      };
    })
  );
}

/**
 * Decoupled-PPO behaviour weights `[B, T]` (AReaL, arXiv 2505.24298; Hilton et al. arXiv
 * 2110.00641): `w_t = π_prox/π_behav = exp(log π_prox − log π_behav)`, set to 0 where
 * `w_t > cap` (AReaL `behav_imp_weight_cap`; no cap by default) and on masked positions.
 * Metrics: `behav_weight_mean/min/max` (over valid tokens, before the cap) and
 * `behav_capped_frac`.
 *
 * @example Usage
 * ```ts
 * import { decoupledImportanceWeights } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { weights } = decoupledImportanceWeights(
 *   tensor([[0, Math.log(8)]]), tensor([[0, 0]]), tensor([[1, 1]]), { cap: 5 },
 * );
 * assert.deepEqual(await weights.toArray(), [[1, 0]]); // 8 > cap: dropped
 * ```
 */
export function decoupledImportanceWeights(
  proximalLogProbs: Tensor,
  behaviourLogProbs: Tensor,
  responseMask: Tensor,
  options: { cap?: number } = {},
): { weights: Tensor; metrics: Metrics } {
  const op = "decoupledImportanceWeights";
  const cap = options.cap === undefined
    ? Infinity
    : checkNumber(op, "cap", options.cap, { min: 0, minExclusive: true, allowInfinity: true });
  checkPair(
    op,
    ["proximalLogProbs", proximalLogProbs],
    ["behaviourLogProbs", behaviourLogProbs],
    responseMask,
  );
  return noGrad(() =>
    tidy(() => {
      const { valid, maskF, logRatio } = prepare(proximalLogProbs, behaviourLogProbs, responseMask);
      const raw = logRatio.clamp(-SAFETY_BOUND, SAFETY_BOUND).exp().mul(maskF);
      const capped = raw.gt(cap);
      return {
        weights: where(capped, 0, raw),
        metrics: {
          ...weightStats("behav_weight", raw, valid, maskF),
          behav_capped_frac: maskedFraction(capped, maskF),
        },
      };
    })
  );
}

/**
 * Rejection mask (f32 0/1 `[B, T]`, the response mask with rejected positions removed) for
 * off-policy outliers (veRL `compute_rollout_rejection_mask`, `rollout_rs`): with
 * `ρ = exp(clamp(·, ±20))` of the token log-ratio `log π_old − log π_rollout` (`token`), of its
 * sum over the sequence (`sequence`) or of its mean (`geometric`), keep positions with
 * `lower ≤ ρ ≤ upper` (`lower` defaults to `1/upper`). Metrics: `rejected_frac` (valid tokens
 * removed) and `rejected_seq_frac` (sequences with any token removed, over all B).
 *
 * @example Usage
 * ```ts
 * import { rejectionMask } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { mask } = rejectionMask(
 *   tensor([[0, 0], [0, 0]]), tensor([[0, -3], [0, 0]]), tensor([[1, 1], [1, 1]]),
 *   { level: "sequence", upper: 2 },
 * );
 * assert.deepEqual(await mask.toArray(), [[0, 0], [1, 1]]); // e^3 > 2 rejects sequence 0
 * ```
 */
export function rejectionMask(
  oldLogProbs: Tensor,
  rolloutLogProbs: Tensor,
  responseMask: Tensor,
  options: { level?: OffPolicyLevel | "geometric"; upper: number; lower?: number },
): { mask: Tensor; metrics: Metrics } {
  const op = "rejectionMask";
  const level = options?.level ?? "token";
  checkLevel(op, level, ["token", "sequence", "geometric"]);
  const upper = checkNumber(op, "upper", options?.upper, { min: 0, minExclusive: true });
  const lower = checkNumber(op, "lower", options.lower ?? 1 / upper, {
    min: 0,
    max: upper,
  });
  checkPair(op, ["oldLogProbs", oldLogProbs], ["rolloutLogProbs", rolloutLogProbs], responseMask);
  return noGrad(() =>
    tidy(() => {
      const { valid, maskF, logRatio } = prepare(oldLogProbs, rolloutLogProbs, responseMask);
      const agg = level === "token"
        ? logRatio
        : (level === "sequence" ? logRatio.mul(maskF).sum(1, true) : rowMean(logRatio, maskF)
          .reshape(-1, 1)).expand(...logRatio.shape);
      const rho = agg.clamp(-SAFETY_BOUND, SAFETY_BOUND).exp();
      const keep = and(valid, and(rho.ge(lower), rho.le(upper)));
      const keepF = keep.cast("f32");
      const removed = maskF.sub(keepF);
      return {
        mask: keepF,
        metrics: {
          rejected_frac: maskedMean(removed, maskF),
          rejected_seq_frac: removed.sum(1).gt(0).cast("f32").mean(),
        },
      };
    })
  );
}

/**
 * Off-policy sequence mask (OPSM, DeepSeek-V3.2 arXiv 2512.02556; TRL
 * `get_off_policy_mask` / `off_policy_mask_threshold`), f32 0/1 `[B, T]`: 0 where `A_t < 0` and
 * the sequence's mean `log π_rollout − log π_θ` over valid tokens exceeds `threshold`, else 1.
 * Multiply it into the per-token loss (the denominators keep the tokens, as in TRL). Metric:
 * `opsm_masked_frac` (valid tokens zeroed).
 *
 * @example Usage
 * ```ts
 * import { offPolicySequenceMask } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { mask } = offPolicySequenceMask(
 *   tensor([[-2, -2], [-2, -2]]), // log π_θ
 *   tensor([[-1, -1], [-1, -1]]), // log π_rollout: mean gap 1 nat
 *   tensor([[-1, -1], [1, 1]]),   // A < 0 only in sequence 0
 *   tensor([[1, 1], [1, 1]]),
 *   { threshold: 0.5 },
 * );
 * assert.deepEqual(await mask.toArray(), [[0, 0], [1, 1]]);
 * ```
 */
export function offPolicySequenceMask(
  logProbs: Tensor,
  rolloutLogProbs: Tensor,
  advantages: Tensor,
  responseMask: Tensor,
  options: { threshold: number },
): { mask: Tensor; metrics: Metrics } {
  const op = "offPolicySequenceMask";
  checkPair(op, ["logProbs", logProbs], ["rolloutLogProbs", rolloutLogProbs], responseMask);
  checkSameShape(op, "advantages", advantages, logProbs, "logProbs");
  const threshold = checkNumber(op, "threshold", options?.threshold);
  return noGrad(() =>
    tidy(() => {
      const { valid, maskF, logRatio } = prepare(rolloutLogProbs, logProbs, responseMask);
      const seqKl = rowMean(logRatio, maskF).reshape(-1, 1);
      const drop = and(zeroMasked(advantages.detach(), valid).lt(0), seqKl.gt(threshold));
      const mask = drop.cast("f32").neg().add(1);
      return { mask, metrics: { opsm_masked_frac: maskedFraction(drop, maskF) } };
    })
  );
}
