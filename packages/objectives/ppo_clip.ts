/**
 * PPO's clipped surrogate (Schulman et al., arXiv 1707.06347) with clip-higher (DAPO, arXiv
 * 2503.14476: separate `ε_low`, `ε_high`) and dual-clip (Ye et al., arXiv 1912.09729: for A < 0
 * the loss is capped at `−c·A`), and its decoupled variant (AReaL). With
 * `r_t = exp(clamp(log π_θ − log π_old, −20, 20))`:
 *
 * `ℓ_t = max(−A·r, −A·clip(r, 1 − ε_low, 1 + ε_high))`, then for `A < 0`: `ℓ_t = min(ℓ_t, −c·A)`.
 *
 * This is veRL `compute_policy_loss_vanilla` (`loss_mode: vanilla`, `clip_ratio`,
 * `clip_ratio_low`, `clip_ratio_high`, `clip_ratio_c`, and the ±20 clamp before the
 * exponential), and TRL's GRPO loss `−min(r·A, clip(r)·A)` (`epsilon`, `epsilon_high`) when the
 * dual clip is off (`clipRatioC: Infinity`) or inactive.
 *
 * Gradients (PyTorch subgradients of `@rlvr/tensor`): where the clipped branch is strictly
 * active, or the dual clip caps the loss, the token has zero gradient; inside the range, or on a
 * tie of the two branches, the gradient is `−A·∇r`.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { clippedSurrogate } from "./_clip.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

function vanillaCore(ctx: PolicyLossContext): PolicyLossTerms {
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const logRatio = ctx.logProbs.sub(ctx.oldLogProbs!).clamp(-20, 20);
  const ratio = logRatio.exp();
  const terms = clippedSurrogate(ctx, ratio, ratio.clamp(1 - low, 1 + high));
  terms.logRatio = logRatio;
  return terms;
}

/**
 * `vanilla`: PPO clip with clip-higher and dual-clip (module doc formula; arXiv 1707.06347,
 * 2503.14476, 1912.09729; veRL `compute_policy_loss_vanilla`). Defaults: `clipRatio` 0.2,
 * `clipRatioC` 3, `token-mean`.
 *
 * @example Usage
 * ```ts
 * import { readMetrics, vanillaLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const logProbs = tensor([[Math.log(1.5), 0]], { requiresGrad: true });
 * const { loss, metrics } = vanillaLoss({
 *   logProbs,
 *   oldLogProbs: tensor([[0, 0]]),
 *   advantages: tensor([[1, -1]]),
 *   responseMask: tensor([[1, 1]]),
 * }, { clipRatioLow: 0.2, clipRatioHigh: 0.28 });
 * // token 0: r = 1.5 > 1.28 with A = 1 → −1.28; token 1: r = 1, A = −1 → +1
 * assert.ok(Math.abs(await loss.item() - (-1.28 + 1) / 2) < 1e-6);
 * const m = await readMetrics(metrics);
 * assert.equal(m.clipfrac_high, 0.5);
 * loss.backward();
 * const [g0, g1] = (await logProbs.grad!.toArray() as number[][])[0]!;
 * assert.equal(g0, 0); // clipped: no gradient
 * assert.ok(Math.abs(g1! - 0.5) < 1e-6); // −A·r / 2 tokens
 * ```
 */
export const vanillaLoss: PolicyLossFn = definePolicyLoss("vanilla", vanillaCore);

/**
 * `decoupled_ppo`: PPO clip against the proximal policy `oldLogProbs`, weighted per token by the
 * behaviour importance weight `π_prox/π_behav = exp(old − rollout)` from `rolloutLogProbs`
 * (zeroed above `offPolicy.decoupled.cap`): Hilton et al. arXiv 2110.00641, AReaL arXiv
 * 2505.24298 (`use_decoupled_loss`, `behav_imp_weight_cap`). Same as
 * `vanillaLoss(inputs, { offPolicy: { decoupled: {} } })`.
 *
 * @example Usage
 * ```ts
 * import { decoupledPpoLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = decoupledPpoLoss({
 *   logProbs: tensor([[0]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[0]]),                  // π_prox
 *   rolloutLogProbs: tensor([[Math.log(0.5)]]),  // π_behav: weight π_prox/π_behav = 2
 *   advantages: tensor([[1]]),
 *   responseMask: tensor([[1]]),
 * });
 * assert.ok(Math.abs(await loss.item() - -2) < 1e-6);
 * ```
 */
export const decoupledPpoLoss: PolicyLossFn = definePolicyLoss("decoupled_ppo", vanillaCore, {
  defaults: { offPolicy: { decoupled: {} } },
});

POLICY_LOSSES.register("vanilla", vanillaLoss);
POLICY_LOSSES.register("decoupled_ppo", decoupledPpoLoss);
