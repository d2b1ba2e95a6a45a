/**
 * A user policy loss in one file: the policy gradient −A·log π with each token's advantage
 * weight capped by the importance ratio (truncated importance sampling, as CISPO and TIS do),
 * built with `definePolicyLoss`, so masking, aggregation and the standard metrics are shared.
 *
 *   npx -y deno@2.9.6 task train --set algorithm.loss=./examples/methods/clipped_pg.ts#clippedPg --set trainer.steps=20
 *
 * @module
 */

import { definePolicyLoss, type PolicyLossFn } from "@rlvr/objectives";

/** The cap on the detached ratio π/π_old that weights each token. */
const CAP = 2;

/**
 * −min(ratio, 2)·A·log π per token, the ratio detached (no gradient through the weight).
 *
 * @example Usage
 * ```ts
 * import { clippedPg } from "./clipped_pg.ts";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = clippedPg({
 *   logProbs: tensor([[-1, -2]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1, -4]]),
 *   advantages: tensor([[1, 1]]),
 *   responseMask: tensor([[1, 1]]),
 * });
 * // token 1: ratio 1 → 1·1; token 2: ratio e² capped at 2 → 2·2; token mean (1 + 4) / 2
 * assert.ok(Math.abs((await loss.item()) - 2.5) < 1e-6);
 * ```
 */
export const clippedPg: PolicyLossFn = definePolicyLoss("clipped_pg", (ctx) => {
  const weight = ctx.logProbs.sub(ctx.oldLogProbs!).exp().minimum(CAP).detach();
  return { perToken: weight.mul(ctx.advantages).mul(ctx.logProbs).neg() };
}, { requiresOld: true });
