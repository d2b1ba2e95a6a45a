/**
 * GSPO, Group Sequence Policy Optimization (Zheng et al., arXiv 2507.18071): the importance ratio
 * and its clipping move to the sequence level, with the length-normalised (geometric-mean) ratio
 * `s_i = exp((1/|y_i|) Σ_t (log π_θ(y_{i,t}) − log π_old(y_{i,t})))`,
 * `ℓ_i = max(−A_i·s_i, −A_i·clip(s_i, 1 − ε_low, 1 + ε_high))`. Three keys:
 *
 * - `gspo` ({@link gspoLoss}): veRL `compute_policy_loss_gspo` exactly: the token form
 *   `s_{i,t} = sg[s_i]·π_θ(y_{i,t})/sg[π_θ(y_{i,t})]` with per-token advantages `A_{i,t}`,
 *   aggregated with `seq-mean-token-mean` whatever `aggregation` says (veRL ignores
 *   `loss_agg_mode` here; the global counts still apply), veRL's clip defaults (`clip_ratio`
 *   0.2) and no dual clip.
 * - `gspo_token` ({@link gspoTokenLoss}): the same token form, ours: aggregated with
 *   `aggregation` (default `seq-mean-token-mean`) and the paper's clip range by default.
 * - `gspo_seq` ({@link gspoSeqLoss}): the sequence-level objective as the paper writes it, with
 *   `A_i` the masked mean of the sequence's advantages; each valid token carries `ℓ_i`, and the
 *   default `seq-mean-token-mean` aggregation gives `mean_i ℓ_i` (the paper's `1/G Σ_i`).
 *
 * The token form's value equals `s_i` and its gradient equals the sequence form's when the
 * advantages are constant over each sequence (GRPO-style advantages), so the three agree there
 * with the same clip range and aggregation.
 *
 * Design decisions: as veRL, `log s` is clamped to ≤ 10 before the exponential (gradient 0
 * above) and the sequence length is clamped to ≥ 1. `gspo_token` and `gspo_seq` default to the
 * paper's clip range (`ε_low = 3e-4`, `ε_high = 4e-4`, GSPO v2 §5.1; TRL
 * `importance_sampling_level="sequence"` with `epsilon`, `epsilon_high`); `gspo` to veRL's
 * generic 0.2 (veRL's GSPO recipe sets 3e-4/4e-4 in its config). Extra metric `seq_ratio_mean`
 * (mean of `s_i` over non-empty sequences).
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { noGrad, type Tensor } from "@rlvr/tensor";
import { and, rowMean } from "./_util.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn, PolicyLossOptions } from "./types.ts";

const GSPO_DEFAULTS: PolicyLossOptions = {
  clipRatioLow: 3e-4,
  clipRatioHigh: 4e-4,
  aggregation: "seq-mean-token-mean",
};

/** Mean of `s_i = exp(min(rowMean(logRatio), 10))` over non-empty rows, no gradient. */
function seqRatioMean(ctx: PolicyLossContext, logRatio: Tensor): Tensor {
  return noGrad(() => {
    const s = rowMean(logRatio.detach(), ctx.mask).clamp(undefined, 10).exp();
    const nonEmpty = ctx.mask.sum(1).gt(0).cast("f32");
    return s.mul(nonEmpty).sum().div(nonEmpty.sum().clamp(1));
  });
}

function gspoCore(ctx: PolicyLossContext): PolicyLossTerms {
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const b = ctx.logProbs.shape[0]!;
  const logRatio = ctx.logProbs.sub(ctx.oldLogProbs!);
  const logS = rowMean(logRatio, ctx.mask).clamp(undefined, 10);
  const s = logS.exp();
  const adv = rowMean(ctx.advantages, ctx.mask);
  const pg1 = adv.neg().mul(s);
  const pg2 = adv.neg().mul(s.clamp(1 - low, 1 + high));
  const seqLoss = pg1.maximum(pg2);
  const perToken = seqLoss.reshape(b, 1).mul(ctx.mask);
  return noGrad(() => {
    const clipped = pg2.gt(pg1).reshape(b, 1);
    return {
      perToken,
      logRatio,
      clippedLow: and(and(clipped, adv.lt(0).reshape(b, 1)), ctx.valid),
      clippedHigh: and(and(clipped, adv.gt(0).reshape(b, 1)), ctx.valid),
      metrics: { seq_ratio_mean: seqRatioMean(ctx, logRatio) },
    };
  });
}

function gspoTokenCore(ctx: PolicyLossContext): PolicyLossTerms {
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const b = ctx.logProbs.shape[0]!;
  const logp = ctx.logProbs;
  const logRatio = logp.sub(ctx.oldLogProbs!);
  const seq = rowMean(logRatio.detach(), ctx.mask).reshape(b, 1);
  const logS = logp.sub(logp.detach()).add(seq).clamp(undefined, 10);
  const s = logS.exp();
  const a = ctx.advantages;
  const pg1 = a.neg().mul(s);
  const pg2 = a.neg().mul(s.clamp(1 - low, 1 + high));
  const perToken = pg1.maximum(pg2);
  return noGrad(() => {
    const clipped = pg2.gt(pg1);
    return {
      perToken,
      logRatio,
      clippedLow: and(clipped, a.lt(0)),
      clippedHigh: and(clipped, a.gt(0)),
      metrics: { seq_ratio_mean: seqRatioMean(ctx, logRatio) },
    };
  });
}

/**
 * `gspo`: veRL `compute_policy_loss_gspo` (GSPO-token, arXiv 2507.18071 §4.3): the token ratio
 * `s_{i,t} = sg[s_i]·π_θ/sg[π_θ]`, aggregated with `seq-mean-token-mean` whatever
 * `aggregation` says (the global counts still apply). Defaults: veRL's (`clipRatio` 0.2).
 *
 * @example Usage
 * ```ts
 * import { gspoLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const logProbs = tensor([[-1, -2], [-1, -1]], { requiresGrad: true });
 * const inputs = {
 *   logProbs,
 *   oldLogProbs: tensor([[-1, -2], [-1, -1]]),
 *   advantages: tensor([[1, 1], [-1, -1]]),
 *   responseMask: tensor([[1, 1], [1, 0]]),
 * };
 * // on-policy: s_i = 1, ℓ = −A per token; seq-mean-token-mean of (−1, +1) = 0, even when
 * // token-mean is asked for (it would give (−1 − 1 + 1)/3)
 * const { loss } = gspoLoss(inputs, { aggregation: "token-mean" });
 * assert.ok(Math.abs(await loss.item()) < 1e-7);
 * ```
 */
export const gspoLoss: PolicyLossFn = definePolicyLoss("gspo", gspoTokenCore, {
  aggregation: "seq-mean-token-mean",
});

/**
 * `gspo_seq`: sequence-level GSPO (arXiv 2507.18071), module doc formula; ours (veRL's `gspo`
 * is the token form, {@link gspoLoss}). Defaults: `clipRatioLow`
 * 3e-4, `clipRatioHigh` 4e-4, `seq-mean-token-mean`. Extra metric `seq_ratio_mean` (mean of
 * `s_i` over non-empty sequences).
 *
 * @example Usage
 * ```ts
 * import { gspoSeqLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = gspoSeqLoss({
 *   logProbs: tensor([[-1, -2], [-1, -1]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1, -2], [-1, -1]]),
 *   advantages: tensor([[1, 1], [-1, -1]]),
 *   responseMask: tensor([[1, 1], [1, 0]]),
 * });
 * // on-policy: s_i = 1, ℓ_i = −A_i → mean(−1, +1) = 0
 * assert.ok(Math.abs(await loss.item()) < 1e-7);
 * ```
 */
export const gspoSeqLoss: PolicyLossFn = definePolicyLoss("gspo_seq", gspoCore, {
  defaults: GSPO_DEFAULTS,
});

/**
 * `gspo_token`: GSPO-token (arXiv 2507.18071 §4.3), `s_{i,t} = sg[s_i]·π_θ/sg[π_θ]` with
 * per-token advantages, as veRL's `gspo` ({@link gspoLoss}) but aggregated with `aggregation`
 * and with the paper's defaults (as {@link gspoSeqLoss}).
 *
 * @example Usage
 * ```ts
 * import { gspoTokenLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const logProbs = tensor([[-1, -2]], { requiresGrad: true });
 * const { loss } = gspoTokenLoss({
 *   logProbs,
 *   oldLogProbs: tensor([[-1, -2]]),
 *   advantages: tensor([[2, 2]]),
 *   responseMask: tensor([[1, 1]]),
 * });
 * loss.backward(); // ∂/∂logp_t of −A·s_{i,t} / 2 tokens = −A·s/2 = −1
 * assert.deepEqual(await logProbs.grad!.toArray(), [[-1, -1]]);
 * ```
 */
export const gspoTokenLoss: PolicyLossFn = definePolicyLoss("gspo_token", gspoTokenCore, {
  defaults: GSPO_DEFAULTS,
});

POLICY_LOSSES.register("gspo", gspoLoss);
POLICY_LOSSES.register("gspo_token", gspoTokenLoss);
POLICY_LOSSES.register("gspo_seq", gspoSeqLoss);
