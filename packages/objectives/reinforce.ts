/**
 * Plain policy gradient (REINFORCE, Williams 1992) and its sign-split variants from "The
 * Surprising Effectiveness of Negative Reinforcement in LLM Reasoning" (Zhu et al., arXiv
 * 2506.01347):
 *
 * `ℓ_t = −w_t·A_t·log π_θ(y_t)`, `w_t = positiveWeight if A_t > 0, negativeWeight if A_t < 0`.
 *
 * - `reinforce` (alias `gpg`): `w = 1`; veRL `compute_policy_loss_gpg` (`loss_mode: gpg`,
 *   `−log_prob·A`).
 * - `nsr`: negative samples only (`positiveWeight = 0`); with rewards ±1 as advantages this is
 *   the paper's `L_NSR = E_{y: r=−1}[log π_θ(y)]` (push incorrect samples down).
 * - `psr`: positive samples only (`negativeWeight = 0`).
 * - `w_reinforce`: weighted REINFORCE `λ·L_PSR + L_NSR` with `λ = 0.1` (the paper's value).
 *
 * `oldLogProbs` is optional; when given, the ratio metrics describe how far the policy moved.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { checkNumber } from "./_util.ts";
import { definePolicyLoss, type PolicyLossContext, type PolicyLossTerms } from "./policy_loss.ts";
import type { PolicyLossFn, PolicyLossOptions } from "./types.ts";

function reinforceCore(ctx: PolicyLossContext): PolicyLossTerms {
  const a = ctx.advantages;
  const pos = ctx.options.positiveWeight ?? 1;
  const neg = ctx.options.negativeWeight ?? 1;
  let perToken = a.mul(ctx.logProbs).neg();
  if (pos !== 1 || neg !== 1) {
    const weight = a.gt(0).cast("f32").mul(pos - 1).add(a.lt(0).cast("f32").mul(neg - 1)).add(1);
    perToken = perToken.mul(weight);
  }
  return { perToken };
}

function define(name: string, defaults: PolicyLossOptions): PolicyLossFn {
  return definePolicyLoss(name, reinforceCore, {
    defaults,
    requiresOld: false,
    validate: (o) => {
      checkNumber(name, "positiveWeight", o.positiveWeight ?? 1, { min: 0 });
      checkNumber(name, "negativeWeight", o.negativeWeight ?? 1, { min: 0 });
    },
  });
}

/**
 * `reinforce` (alias `gpg`): `−A·log π` (veRL `compute_policy_loss_gpg`). Options
 * `positiveWeight`, `negativeWeight` (default 1).
 *
 * @example Usage
 * ```ts
 * import { reinforceLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = reinforceLoss({
 *   logProbs: tensor([[-1, -2]], { requiresGrad: true }),
 *   advantages: tensor([[1, -1]]),
 *   responseMask: tensor([[1, 1]]),
 * });
 * assert.equal(await loss.item(), (1 - 2) / 2);
 * ```
 */
export const reinforceLoss: PolicyLossFn = define("reinforce", {});

/**
 * `nsr`: negative-sample reinforcement only (arXiv 2506.01347): `−A·log π` on tokens with
 * `A < 0`, 0 elsewhere.
 *
 * @example Usage
 * ```ts
 * import { nsrLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = nsrLoss({
 *   logProbs: tensor([[-1, -2]], { requiresGrad: true }),
 *   advantages: tensor([[1, -1]]),
 *   responseMask: tensor([[1, 1]]),
 * });
 * assert.equal(await loss.item(), -2 / 2); // only the negative token: +log π
 * ```
 */
export const nsrLoss: PolicyLossFn = define("nsr", { positiveWeight: 0 });

/**
 * `psr`: positive-sample reinforcement only (arXiv 2506.01347): `−A·log π` on tokens with
 * `A > 0`.
 *
 * @example Usage
 * ```ts
 * import { psrLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = psrLoss({
 *   logProbs: tensor([[-1, -2]], { requiresGrad: true }),
 *   advantages: tensor([[1, -1]]),
 *   responseMask: tensor([[1, 1]]),
 * });
 * assert.equal(await loss.item(), 1 / 2);
 * ```
 */
export const psrLoss: PolicyLossFn = define("psr", { negativeWeight: 0 });

/**
 * `w_reinforce`: `0.1·L_PSR + L_NSR` (Weighted-REINFORCE, arXiv 2506.01347).
 *
 * @example Usage
 * ```ts
 * import { wReinforceLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = wReinforceLoss({
 *   logProbs: tensor([[-1, -2]], { requiresGrad: true }),
 *   advantages: tensor([[1, -1]]),
 *   responseMask: tensor([[1, 1]]),
 * });
 * assert.ok(Math.abs(await loss.item() - (0.1 * 1 - 2) / 2) < 1e-6);
 * ```
 */
export const wReinforceLoss: PolicyLossFn = define("w_reinforce", { positiveWeight: 0.1 });

POLICY_LOSSES.register("reinforce", reinforceLoss);
POLICY_LOSSES.register("gpg", reinforceLoss);
POLICY_LOSSES.register("nsr", nsrLoss);
POLICY_LOSSES.register("psr", psrLoss);
POLICY_LOSSES.register("w_reinforce", wReinforceLoss);
