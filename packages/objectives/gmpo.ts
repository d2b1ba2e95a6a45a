/**
 * GMPO, Geometric-Mean Policy Optimization (Zhao et al., arXiv 2507.20673): the sequence
 * objective uses the geometric mean of the token ratios, clipped per token in log space (in the
 * direction of the advantage's sign), which is robust to outlier token ratios:
 *
 * `δ_t = log π_θ − log π_old`, `δ̃_t = sgn(A)·min(sgn(A)·δ_t, sgn(A)·clamp(δ_t, −ε_low, ε_high))`,
 * `ρ_i = exp(Σ_t δ̃_t m_t / (Σ_t m_t + 1e-8))`, `Ā_i = Σ_t A_t m_t / (Σ_t m_t + 1e-8)`,
 * `ℓ_i = −Ā_i·ρ_i`.
 *
 * Matches veRL `compute_policy_loss_geo_mean` (`loss_mode: geo_mean`), including its clip
 * fractions (`clipfrac_high`: `δ_t` outside the range with A > 0; `clipfrac_low`: with A < 0).
 *
 * Design decisions: each valid token carries `ℓ_i` and the default `seq-mean-token-mean`
 * aggregation gives `mean_i ℓ_i` over non-empty sequences (veRL takes `mean` over all B rows,
 * counting fully masked rows as 0). The default clip range is the paper's `(e^{−0.4}, e^{0.4})`,
 * i.e. `ε = 0.4` in log space (veRL uses its generic `clip_ratio`, 0.2).
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { noGrad, sign } from "@rlvr/tensor";
import { and } from "./_util.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

function gmpoCore(ctx: PolicyLossContext): PolicyLossTerms {
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
  const seqLoss = adv.mul(rho).neg();
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
 * `gmpo` (alias `geo_mean`): geometric-mean policy optimisation (arXiv 2507.20673; veRL
 * `compute_policy_loss_geo_mean`). Defaults: `clipRatio` 0.4 (log space),
 * `seq-mean-token-mean`.
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

POLICY_LOSSES.register("gmpo", gmpoLoss);
POLICY_LOSSES.register("geo_mean", gmpoLoss);
