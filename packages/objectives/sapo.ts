/**
 * SAPO, Soft Adaptive Policy Optimization (Gao et al., arXiv 2511.20347): a smooth,
 * temperature-controlled gate replaces the hard clip,
 *
 * `f_τ(r) = σ(τ·(r − 1))·4/τ`, `ℓ_t = −f_{τ_t}(r_t)·A_t`, `τ_t = τ_pos if A_t > 0 else τ_neg`,
 * `r_t = exp(clamp(log π_θ − log π_old, −20, 20))`.
 *
 * At `r = 1` the gate has slope 1 (the on-policy gradient of PPO); away from it the gradient
 * decays smoothly instead of being cut, and `τ_neg > τ_pos` damps negative updates faster.
 * Two keys:
 * - `sapo` ({@link sapoLoss}): veRL `compute_policy_loss_sapo` (`loss_mode: sapo`, `tau_pos`
 *   1.0, `tau_neg` 1.05), aggregated with `seq-mean-token-mean` whatever `aggregation` says, as
 *   veRL does (the global counts still apply);
 * - `sapo_agg` ({@link sapoAggLoss}): ours, the same per-token loss aggregated with
 *   `aggregation` (default `seq-mean-token-mean`), e.g. TRL `loss_type="sapo"`
 *   (`sapo_temperature_pos/neg`) with its token-level normalisation.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { noGrad } from "@rlvr/tensor";
import { checkNumber, maskedMean } from "./_util.ts";
import {
  definePolicyLoss,
  type PolicyLossContext,
  type PolicyLossTerms,
  type ResolvedPolicyLossOptions,
} from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

function sapoCore(ctx: PolicyLossContext): PolicyLossTerms {
  const tauPos = ctx.options.tauPos ?? 1.0;
  const tauNeg = ctx.options.tauNeg ?? 1.05;
  const a = ctx.advantages;
  const logRatio = ctx.logProbs.sub(ctx.oldLogProbs!).clamp(-20, 20);
  const ratio = logRatio.exp();
  const tau = a.gt(0).cast("f32").mul(tauPos - tauNeg).add(tauNeg);
  const gate = ratio.sub(1).mul(tau).sigmoid().mul(4).div(tau);
  const perToken = gate.mul(a).neg();
  return { perToken, logRatio, metrics: noGrad(() => ({ gate_mean: maskedMean(gate, ctx.mask) })) };
}

/**
 * `sapo`: soft-gated policy loss (arXiv 2511.20347; veRL `compute_policy_loss_sapo`). Options
 * `tauPos` (default 1.0) and `tauNeg` (default 1.05), both > 0; always aggregated with
 * `seq-mean-token-mean`. Extra metric `gate_mean`.
 *
 * @example Usage
 * ```ts
 * import { sapoLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const logProbs = tensor([[-1]], { requiresGrad: true });
 * const { loss } = sapoLoss({
 *   logProbs,
 *   oldLogProbs: tensor([[-1]]),
 *   advantages: tensor([[1]]),
 *   responseMask: tensor([[1]]),
 * });
 * // r = 1: gate σ(0)·4/τ = 2 (τ = 1), ℓ = −2; slope 1 → gradient −A·r = −1
 * assert.ok(Math.abs(await loss.item() + 2) < 1e-6);
 * loss.backward();
 * assert.ok(Math.abs((await logProbs.grad!.toArray() as number[][])[0]![0]! + 1) < 1e-6);
 * ```
 */
export const sapoLoss: PolicyLossFn = definePolicyLoss("sapo", sapoCore, {
  aggregation: "seq-mean-token-mean",
  validate: (o) => checkTaus("sapo", o),
});

/**
 * `sapo_agg`: the per-token loss of {@link sapoLoss} aggregated with `aggregation` (default
 * `seq-mean-token-mean`); ours, for aggregations veRL's `sapo` does not allow.
 *
 * @example Usage
 * ```ts
 * import { sapoAggLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = sapoAggLoss({
 *   logProbs: tensor([[-1, -1], [-1, -1]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1, -1], [-1, -1]]),
 *   advantages: tensor([[1, 1], [1, 1]]),
 *   responseMask: tensor([[1, 1], [1, 0]]),
 * }, { aggregation: "token-sum" });
 * // r = 1: ℓ = −2 on each of the 3 valid tokens, summed
 * assert.ok(Math.abs(await loss.item() + 6) < 1e-6);
 * ```
 */
export const sapoAggLoss: PolicyLossFn = definePolicyLoss("sapo_agg", sapoCore, {
  defaults: { aggregation: "seq-mean-token-mean" },
  validate: (o) => checkTaus("sapo_agg", o),
});

function checkTaus(name: string, o: ResolvedPolicyLossOptions): void {
  checkNumber(name, "tauPos", o.tauPos ?? 1, { min: 0, minExclusive: true });
  checkNumber(name, "tauNeg", o.tauNeg ?? 1.05, { min: 0, minExclusive: true });
}

POLICY_LOSSES.register("sapo", sapoLoss);
POLICY_LOSSES.register("sapo_agg", sapoAggLoss);
