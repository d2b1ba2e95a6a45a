/**
 * DRO, Direct Reward Optimization (Richemond et al., arXiv 2405.19107) in veRL's per-token form:
 * an advantage-weighted log-likelihood with a quadratic penalty on the log-ratio to the old
 * policy, `ℓ_t = −(A_t·log π_θ(y_t) − ½·β·(log π_θ(y_t) − log π_old(y_t))²)`.
 *
 * Matches veRL `compute_policy_loss_dro` (`loss_mode: dro`, `policy_loss.dro_beta`, required and
 * > 0; the log-ratio is not clamped), aggregated with `aggregation` as veRL's `loss_agg_mode`.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { checkNumber } from "./_util.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

function droCore(ctx: PolicyLossContext): PolicyLossTerms {
  const beta = ctx.options.droBeta!;
  const logp = ctx.logProbs;
  const logRatio = logp.sub(ctx.oldLogProbs!);
  const perToken = logp.mul(ctx.advantages).sub(logRatio.square().mul(0.5 * beta)).neg();
  return { perToken, logRatio };
}

/**
 * `dro`: `−(A·log π_θ − ½β(log π_θ − log π_old)²)` per token (veRL `compute_policy_loss_dro`).
 * Option `droBeta` (β > 0) is required.
 *
 * @example Usage
 * ```ts
 * import { droLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = droLoss({
 *   logProbs: tensor([[-1]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1.5]]),
 *   advantages: tensor([[2]]),
 *   responseMask: tensor([[1]]),
 * }, { droBeta: 0.1 });
 * // −(2·(−1) − ½·0.1·0.25)
 * assert.ok(Math.abs(await loss.item() - 2.0125) < 1e-6);
 * assert.throws(() => droLoss({
 *   logProbs: tensor([[-1]]), oldLogProbs: tensor([[-1]]),
 *   advantages: tensor([[1]]), responseMask: tensor([[1]]),
 * }), /droBeta must be a finite number > 0/);
 * ```
 */
export const droLoss: PolicyLossFn = definePolicyLoss("dro", droCore, {
  validate: (o) => {
    checkNumber("dro", "droBeta", o.droBeta, { min: 0, minExclusive: true });
  },
});

POLICY_LOSSES.register("dro", droLoss);
