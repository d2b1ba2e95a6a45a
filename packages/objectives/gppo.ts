/**
 * GPPO, Gradient-Preserving clipping Policy Optimization (Klear-Reasoner, Su et al., arXiv
 * 2508.07629): the PPO clip bounds are written as `(1 ∓ ε)·r/sg(r)`, so the forward value is
 * exactly clip-higher PPO's but clipped tokens still back-propagate a bounded gradient
 * `−A·(1 ∓ ε)·∇log π` instead of 0:
 *
 * `ℓ_t = max(−A·r, −A·clip(r, (1 − ε_low)·r/sg(r), (1 + ε_high)·r/sg(r)))`, dual clip for `A < 0`
 * as in PPO, `r = exp(log π_θ − log π_old)`.
 *
 * Matches Klear-Reasoner's `compute_gppo_loss` (its verl fork; veRL itself has no GPPO mode),
 * including the dual clip with `clip_ratio_c` and no ±20 clamp on the log-ratio.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { clippedSurrogate } from "./_clip.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

function gppoCore(ctx: PolicyLossContext): PolicyLossTerms {
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const logRatio = ctx.logProbs.sub(ctx.oldLogProbs!);
  const ratio = logRatio.exp();
  const unit = ratio.div(ratio.detach()); // value 1, gradient ∇log π
  const clipped = ratio.clamp(unit.mul(1 - low), unit.mul(1 + high));
  const terms = clippedSurrogate(ctx, ratio, clipped);
  terms.logRatio = logRatio;
  return terms;
}

/**
 * `gppo`: gradient-preserving clipped PPO (arXiv 2508.07629), module doc formula. Defaults as
 * `vanilla` (`clipRatio` 0.2, `clipRatioC` 3, `token-mean`).
 *
 * @example Usage
 * ```ts
 * import { gppoLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const logProbs = tensor([[Math.log(1.5)]], { requiresGrad: true });
 * const { loss } = gppoLoss({
 *   logProbs,
 *   oldLogProbs: tensor([[0]]),
 *   advantages: tensor([[1]]),
 *   responseMask: tensor([[1]]),
 * });
 * assert.ok(Math.abs(await loss.item() - -1.2) < 1e-6); // same value as PPO clip
 * loss.backward(); // but gradient −A·(1 + ε_high) instead of 0
 * assert.ok(Math.abs((await logProbs.grad!.toArray() as number[][])[0]![0]! + 1.2) < 1e-6);
 * ```
 */
export const gppoLoss: PolicyLossFn = definePolicyLoss("gppo", gppoCore);

POLICY_LOSSES.register("gppo", gppoLoss);
