/**
 * GMPO, Geometric-Mean Policy Optimization (Zhao et al., arXiv 2507.20673): the sequence
 * objective uses the geometric mean of the token ratios, clipped per token in log space (in the
 * direction of the advantage's sign), which is robust to outlier token ratios:
 *
 * `δ_t = log π_θ − log π_old`, `δ̃_t = sgn(A)·min(sgn(A)·δ_t, sgn(A)·clamp(δ_t, −ε_low, ε_high))`,
 * `ρ_i = exp(Σ_t δ̃_t m_t / (Σ_t m_t + 1e-8))`, `Ā_i = Σ_t A_t m_t / (Σ_t m_t + 1e-8)`,
 * `ℓ_i = −Ā_i·ρ_i`.
 *
 * Both keys compute `ℓ_i` as veRL `compute_policy_loss_geo_mean`, with its clip fractions
 * (`clipfrac_high`: `δ_t` outside the range with A > 0; `clipfrac_low`: with A < 0). They differ
 * in how the sequences are averaged and weighted:
 *
 * - `geo_mean` ({@link geoMeanLoss}) is veRL's `loss_mode: geo_mean`: the loss is the plain mean
 *   `(1/B) Σ_i ℓ_i` over all B rows of the call, fully masked rows included (as 0), whatever
 *   `aggregation`, `globalTokens` or `globalSequences` say; importance weights `w_t` (`isWeights`,
 *   `offPolicy.tis`, `offPolicy.decoupled`) enter as one weight per sequence, their geometric
 *   mean `exp(Σ_t log(w_t + 1e-10)·m_t / (Σ_t m_t + 1e-8))`; default clip veRL's `clip_ratio`
 *   0.2. Counting empty rows in the mean is arguably a bug (a micro-batch with padding rows gets
 *   a smaller loss), kept for parity.
 * - `gmpo` ({@link gmpoLoss}) is ours: each valid token carries `ℓ_i` and the aggregation applies
 *   (default `seq-mean-token-mean`: `mean_i ℓ_i` over non-empty sequences, with the global counts
 *   when given), importance weights multiply token by token, and the default clip range is the
 *   paper's `(e^{−0.4}, e^{0.4})`, i.e. `ε = 0.4` in log space.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { noGrad, sign } from "@rlvr/tensor";
import { and, rowMean } from "./_util.ts";
import type { AggregationFn } from "./aggregate.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

function gmpoCore(ctx: PolicyLossContext): PolicyLossTerms {
  return geoCore(ctx, false);
}

function geoMeanCore(ctx: PolicyLossContext): PolicyLossTerms {
  return geoCore(ctx, true);
}

function geoCore(ctx: PolicyLossContext, sequenceWeights: boolean): PolicyLossTerms {
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const b = ctx.logProbs.shape[0]!;
  const a = ctx.advantages;
  const logRatio = ctx.logProbs.sub(ctx.oldLogProbs!);
  const sgn = sign(a);
  const clamped = logRatio.clamp(-low, high);
  const chosen = sgn.mul(sgn.mul(logRatio).minimum(sgn.mul(clamped)));
  const len = ctx.mask.sum(1).add(1e-8);
  const rho = chosen.mul(ctx.mask).sum(1).div(len).exp();
  const adv = a.mul(ctx.mask).sum(1).div(len);
  let seqLoss = adv.mul(rho).neg();
  if (sequenceWeights && ctx.weights !== null) {
    // veRL: one weight per sequence, the geometric mean of the token weights.
    const logW = ctx.weights.add(1e-10).log().mul(ctx.mask).sum(1).div(len);
    seqLoss = seqLoss.mul(logW.exp());
  }
  const perToken = seqLoss.reshape(b, 1).mul(ctx.mask);
  return noGrad(() => {
    const clipped = logRatio.ne(clamped);
    return {
      perToken,
      logRatio,
      clippedLow: and(clipped, a.lt(0)),
      clippedHigh: and(clipped, a.gt(0)),
      metrics: { seq_ratio_mean: rho.mean() },
    };
  });
}

/**
 * `gmpo`: geometric-mean policy optimisation (arXiv 2507.20673), ours: per-sequence `ℓ_i` as
 * veRL's `geo_mean`, aggregated with `aggregation` and weighted token by token (module doc).
 * Defaults: `clipRatio` 0.4 (log space), `seq-mean-token-mean`.
 *
 * @example Usage
 * ```ts
 * import { gmpoLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = gmpoLoss({
 *   logProbs: tensor([[0.1, -0.1]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[0, 0]]),
 *   advantages: tensor([[1, 1]]),
 *   responseMask: tensor([[1, 1]]),
 * });
 * // geometric mean of ratios e^{0.1}·e^{−0.1} → 1, so ℓ = −A = −1
 * assert.ok(Math.abs(await loss.item() + 1) < 1e-6);
 * ```
 */
export const gmpoLoss: PolicyLossFn = definePolicyLoss("gmpo", gmpoCore, {
  defaults: { clipRatio: 0.4, aggregation: "seq-mean-token-mean" },
});

/** veRL `geo_mean`'s reduction: the mean over all B rows of each row's token mean. */
const meanOverRows: AggregationFn = (loss, mask) => rowMean(loss, mask).mean();

/**
 * `geo_mean`: veRL `compute_policy_loss_geo_mean` (arXiv 2507.20673): `(1/B) Σ_i ℓ_i` over all
 * rows, fully masked ones included, whatever the aggregation and the global counts; importance
 * weights enter per sequence as their geometric mean (module doc). Default clip 0.2.
 *
 * @example Usage
 * ```ts
 * import { geoMeanLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = geoMeanLoss({
 *   logProbs: tensor([[0, 0], [0, 0]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[0, 0], [0, 0]]),
 *   advantages: tensor([[1, 1], [0, 0]]),
 *   responseMask: tensor([[1, 1], [0, 0]]),
 * }, { aggregation: "token-mean" });
 * // ℓ = −1 for the first row; the fully masked second row counts: (−1 + 0)/2
 * assert.ok(Math.abs(await loss.item() + 0.5) < 1e-6);
 * ```
 */
export const geoMeanLoss: PolicyLossFn = definePolicyLoss("geo_mean", geoMeanCore, {
  aggregation: meanOverRows,
  ownsWeights: true,
});

POLICY_LOSSES.register("gmpo", gmpoLoss);
POLICY_LOSSES.register("geo_mean", geoMeanLoss);
