/**
 * CISPO, Clipped IS-weight Policy Optimization (MiniMax-M1, arXiv 2506.13585): instead of
 * dropping the gradient of tokens whose ratio leaves the trust region, clip the importance
 * weight itself and stop its gradient, so every token keeps a REINFORCE-style gradient:
 *
 * `ℓ_t = −sg(clip(r_t, 1 − ε_low, 1 + ε_high))·A_t·log π_θ(y_t)`,
 * `r_t = exp(clamp(log π_θ − log π_old, −20, 20))`.
 *
 * Matches veRL `compute_policy_loss_cispo` (`loss_mode: cispo`, `clip_ratio_low/high`) and TRL
 * `loss_type="cispo"` (whose cap `epsilon_high` is the absolute bound `1 + ε_high` here, with no
 * lower bound).
 *
 * Design decisions: the default `clipRatioLow` is 1 (lower bound 0, i.e. none: MiniMax-M1 "did
 * not impose a lower bound", as TRL), while veRL applies its generic `clip_ratio` (0.2) to both
 * sides; `clipRatioHigh` defaults to 0.2. `clipfrac_high`/`clipfrac_low` count weights clipped
 * above/below whatever the advantage's sign (the weight is clipped for every token), and their
 * sum is veRL's `pg_clipfrac` (`ratio ≠ clipped ratio`).
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { noGrad } from "@rlvr/tensor";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

function cispoCore(ctx: PolicyLossContext): PolicyLossTerms {
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const logRatio = ctx.logProbs.sub(ctx.oldLogProbs!).clamp(-20, 20);
  const ratio = logRatio.exp().detach();
  const weight = ratio.clamp(1 - low, 1 + high);
  const perToken = weight.mul(ctx.advantages).mul(ctx.logProbs).neg();
  return noGrad(() => ({
    perToken,
    logRatio,
    clippedLow: ratio.lt(1 - low),
    clippedHigh: ratio.gt(1 + high),
  }));
}

/**
 * `cispo`: clipped, stop-gradient importance weight times `−A·log π` (arXiv 2506.13585; veRL
 * `compute_policy_loss_cispo`). Defaults: `clipRatioLow` 1 (no lower bound), `clipRatioHigh`
 * 0.2, `token-mean`.
 *
 * @example Usage
 * ```ts
 * import { cispoLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const logProbs = tensor([[Math.log(0.6)]], { requiresGrad: true });
 * const { loss } = cispoLoss({
 *   logProbs,
 *   oldLogProbs: tensor([[Math.log(0.3)]]), // r = 2 → weight clipped to 1.2
 *   advantages: tensor([[1]]),
 *   responseMask: tensor([[1]]),
 * });
 * assert.ok(Math.abs(await loss.item() - -1.2 * Math.log(0.6)) < 1e-6);
 * loss.backward(); // the clipped token still has gradient −1.2·A
 * assert.ok(Math.abs((await logProbs.grad!.toArray() as number[][])[0]![0]! + 1.2) < 1e-6);
 * ```
 */
export const cispoLoss: PolicyLossFn = definePolicyLoss("cispo", cispoCore, {
  defaults: { clipRatioLow: 1 },
});

POLICY_LOSSES.register("cispo", cispoLoss);
