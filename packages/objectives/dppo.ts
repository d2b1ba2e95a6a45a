/**
 * DPPO, Divergence PPO ("Rethinking the Trust Region in LLM Reinforcement Learning", arXiv
 * 2602.04879): instead of clipping the ratio, a token's policy gradient is dropped when the
 * divergence between `π_θ` and `π_old` on that token (a binary total-variation or binary KL
 * estimate, from the sampled token's probability alone) leaves the trust region in the direction
 * the advantage pushes; kept tokens get a REINFORCE gradient weighted by the truncated ratio:
 *
 * `ℓ_t = −A_t·sg(min(r_t, C))·log π_θ(y_t)·keep_t`, `r_t = exp(clamp(log π_θ − log π_old, ±20))`,
 *
 * with `p = π_θ(y_t)`, `q = π_old(y_t)` and the thresholds `δ_low`, `δ_high` (veRL's
 * `clip_ratio_low`/`clip_ratio_high`, read as divergences):
 *
 * - `dppo_tv`: `keep = p − q ≤ δ_high` where `A > 0`, else `p − q ≥ −δ_low`;
 * - `dppo_kl`: with `D = q·(log q − log p) + (1 − q)·log((1 − q + 1e-8)/(1 − p + 1e-8))`,
 *   `keep = D ≤ δ_high or p ≤ q` where `A > 0`, else `D ≤ δ_low or p ≥ q`.
 *
 * Matches veRL `compute_policy_loss_dppo_tv` / `compute_policy_loss_dppo_kl`. `C` is
 * `clipRatioC` (veRL reads `clip_ratio_c`: 3 from veRL's actor config, 20 when the config has no
 * such key; the paper recommends a large value, §5.4); `Infinity` disables the truncation.
 * Metrics as veRL: `pg_clipfrac` is the fraction of valid tokens dropped (`clipfrac_high` where
 * `A > 0`, `clipfrac_low` elsewhere) and `clipfrac_dual` (veRL `pg_clipfrac_lower`) the fraction
 * kept with `r > C`.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { logicalNot, logicalOr, noGrad, type Tensor, where } from "@rlvr/tensor";
import { and } from "./_util.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

type Keep = (ctx: PolicyLossContext, p: Tensor, q: Tensor) => Tensor;

const keepTv: Keep = (ctx, p, q) => {
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const diff = p.sub(q);
  return where(ctx.advantages.gt(0), diff.le(high), diff.ge(-low));
};

const keepKl: Keep = (ctx, p, q) => {
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const logQ = ctx.oldLogProbs!;
  const logP = ctx.logProbs.detach();
  const rest = q.neg().add(1 + 1e-8).div(p.neg().add(1 + 1e-8)).log();
  const d = q.mul(logQ.sub(logP)).add(q.neg().add(1).mul(rest));
  const positive = logicalOr(d.le(high), p.le(q));
  const negative = logicalOr(d.le(low), p.ge(q));
  return where(ctx.advantages.gt(0), positive, negative);
};

function dppoCore(keepOf: Keep): (ctx: PolicyLossContext) => PolicyLossTerms {
  return (ctx) => {
    const a = ctx.advantages;
    const logp = ctx.logProbs;
    const logRatio = logp.sub(ctx.oldLogProbs!).clamp(-20, 20);
    const c = ctx.options.clipRatioC;
    const { keep, truncated, ratio } = noGrad(() => {
      const ratio = logRatio.detach().exp();
      const keep = keepOf(ctx, logp.detach().exp(), ctx.oldLogProbs!.exp());
      return { keep, truncated: ratio.clamp(undefined, c), ratio };
    });
    const perToken = a.neg().mul(truncated).mul(logp).mul(keep.cast("f32"));
    return noGrad(() => {
      const dropped = and(logicalNot(keep), ctx.valid);
      return {
        perToken,
        logRatio,
        clippedHigh: and(dropped, a.gt(0)),
        clippedLow: and(dropped, a.le(0)),
        clippedDual: and(ratio.gt(c), keep),
      };
    });
  };
}

/**
 * `dppo_tv`: DPPO with the binary total-variation trust region (arXiv 2602.04879; veRL
 * `compute_policy_loss_dppo_tv`). `clipRatioLow`/`clipRatioHigh` are the TV thresholds (default
 * 0.2), `clipRatioC` the ratio truncation (default 3).
 *
 * @example Usage
 * ```ts
 * import { dppoTvLoss, readMetrics } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss, metrics } = dppoTvLoss({
 *   logProbs: tensor([[Math.log(0.9), Math.log(0.5)]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[Math.log(0.5), Math.log(0.5)]]),
 *   advantages: tensor([[1, 1]]),
 *   responseMask: tensor([[1, 1]]),
 * }, { clipRatio: 0.2 });
 * // token 0: p − q = 0.4 > 0.2 with A > 0 → dropped; token 1 kept: −1·1·log 0.5
 * assert.ok(Math.abs(await loss.item() - Math.log(2) / 2) < 1e-6);
 * assert.equal((await readMetrics(metrics)).pg_clipfrac, 0.5);
 * ```
 */
export const dppoTvLoss: PolicyLossFn = definePolicyLoss("dppo_tv", dppoCore(keepTv));

/**
 * `dppo_kl`: DPPO with the binary KL trust region (arXiv 2602.04879; veRL
 * `compute_policy_loss_dppo_kl`). `clipRatioLow`/`clipRatioHigh` are the KL thresholds (default
 * 0.2), `clipRatioC` the ratio truncation (default 3).
 *
 * @example Usage
 * ```ts
 * import { dppoKlLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = dppoKlLoss({
 *   logProbs: tensor([[Math.log(0.5)]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[Math.log(0.5)]]),
 *   advantages: tensor([[-1]]),
 *   responseMask: tensor([[1]]),
 * });
 * // on-policy: D = 0, kept, ℓ = −A·1·log 0.5
 * assert.ok(Math.abs(await loss.item() - Math.log(0.5)) < 1e-6);
 * ```
 */
export const dppoKlLoss: PolicyLossFn = definePolicyLoss("dppo_kl", dppoCore(keepKl));

POLICY_LOSSES.register("dppo_tv", dppoTvLoss);
POLICY_LOSSES.register("dppo_kl", dppoKlLoss);
