/**
 * GSPO, Group Sequence Policy Optimization (Zheng et al., arXiv 2507.18071): the importance ratio
 * and its clipping move to the sequence level, with the length-normalised (geometric-mean) ratio
 *
 * `s_i = exp((1/|y_i|) Σ_t (log π_θ(y_{i,t}) − log π_old(y_{i,t})))`,
 * `ℓ_i = max(−A_i·s_i, −A_i·clip(s_i, 1 − ε_low, 1 + ε_high))`.
 *
 * - `gspo` (this file's {@link gspoLoss}): the sequence-level objective as written, with
 *   `A_i` the masked mean of the sequence's advantages; each valid token carries `ℓ_i`, and the
 *   default `seq-mean-token-mean` aggregation gives `mean_i ℓ_i` (the paper's `1/G Σ_i`).
 * - `gspo_token` ({@link gspoTokenLoss}): GSPO-token, `s_{i,t} = sg[s_i]·π_θ(y_{i,t})/sg[π_θ(y_{i,t})]`
 *   with per-token advantages `A_{i,t}`. Its value equals `s_i` and its gradient equals GSPO's
 *   when the advantages are constant over each sequence. This is exactly veRL
 *   `compute_policy_loss_gspo` (veRL's `loss_mode: gspo` is the token form).
 *
 * Design decisions: as veRL, `log s` is clamped to ≤ 10 before the exponential (gradient 0
 * above), the sequence length is clamped to ≥ 1, and the default clip range is the paper's
 * (`ε_low = 3e-4`, `ε_high = 4e-4`, GSPO v2 §5.1; TRL `importance_sampling_level="sequence"`
 * with `epsilon`, `epsilon_high`). veRL always aggregates GSPO with `seq-mean-token-mean`; here
 * that is only the default.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { noGrad } from "@rlvr/tensor";
import { and, rowMean } from "./_util.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn, PolicyLossOptions } from "./types.ts";

const GSPO_DEFAULTS: PolicyLossOptions = {
  clipRatioLow: 3e-4,
  clipRatioHigh: 4e-4,
  aggregation: "seq-mean-token-mean",
};

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
    const nonEmpty = ctx.mask.sum(1).gt(0).cast("f32");
    return {
      perToken,
      logRatio,
      clippedLow: and(and(clipped, adv.lt(0).reshape(b, 1)), ctx.valid),
      clippedHigh: and(and(clipped, adv.gt(0).reshape(b, 1)), ctx.valid),
      metrics: {
        seq_ratio_mean: s.mul(nonEmpty).sum().div(nonEmpty.sum().clamp(1)),
      },
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
    };
  });
}

/**
 * `gspo`: sequence-level GSPO (arXiv 2507.18071), module doc formula. Defaults: `clipRatioLow`
 * 3e-4, `clipRatioHigh` 4e-4, `seq-mean-token-mean`. Extra metric `seq_ratio_mean` (mean of
 * `s_i` over non-empty sequences).
 *
 * @example Usage
 * ```ts
 * import { gspoLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = gspoLoss({
 *   logProbs: tensor([[-1, -2], [-1, -1]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1, -2], [-1, -1]]),
 *   advantages: tensor([[1, 1], [-1, -1]]),
 *   responseMask: tensor([[1, 1], [1, 0]]),
 * });
 * // on-policy: s_i = 1, ℓ_i = −A_i → mean(−1, +1) = 0
 * assert.ok(Math.abs(await loss.item()) < 1e-7);
 * ```
 */
export const gspoLoss: PolicyLossFn = definePolicyLoss("gspo", gspoCore, {
  defaults: GSPO_DEFAULTS,
});

/**
 * `gspo_token`: GSPO-token (arXiv 2507.18071 §4.3), `s_{i,t} = sg[s_i]·π_θ/sg[π_θ]` with
 * per-token advantages (veRL `compute_policy_loss_gspo`). Defaults as {@link gspoLoss}.
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
