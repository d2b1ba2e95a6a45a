/**
 * Supervised (negative log-likelihood) auxiliary loss on given tokens: `ℓ_t = −log π_θ(y_t)`,
 * aggregated over the mask. Used to mix SFT into RL (e.g. LUFFY, SRFT, ReLIFT in the survey's
 * mixed-policy section) or as a pure SFT step; veRL's SFT trainer and `crossEntropy` compute the
 * same with `token-mean`.
 *
 * @module
 */

import { noGrad, type Tensor, tidy } from "@rlvr/tensor";
import { getAggregation } from "./aggregate.ts";
import { check2d, checkFloat, checkSameShape, maskedMean, validOf, zeroMasked } from "./_util.ts";
import type { AggregationOptions, LossOutput } from "./types.ts";

/**
 * NLL loss `agg(−log π_θ(y_t))` over the valid tokens (default `token-mean`). Metrics: `nll`
 * (token-mean NLL) and `ppl` (`exp(nll)`).
 *
 * @example Usage
 * ```ts
 * import { readMetrics, sftLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss, metrics } = sftLoss({
 *   logProbs: tensor([[-1, -3], [-2, -9]], { requiresGrad: true }),
 *   responseMask: tensor([[1, 1], [1, 0]]),
 * });
 * assert.equal(await loss.item(), 2);
 * assert.ok(Math.abs((await readMetrics(metrics)).ppl! - Math.exp(2)) < 1e-4);
 * ```
 */
export function sftLoss(
  inputs: { logProbs: Tensor; responseMask: Tensor },
  options: AggregationOptions & { aggregation?: string } = {},
): LossOutput {
  check2d("sftLoss", "logProbs", inputs.logProbs);
  checkFloat("sftLoss", "logProbs", inputs.logProbs);
  checkSameShape("sftLoss", "responseMask", inputs.responseMask, inputs.logProbs, "logProbs");
  const { aggregation, ...aggOptions } = options;
  const aggregateFn = getAggregation(aggregation ?? "token-mean");
  return tidy(() => {
    const valid = validOf(inputs.responseMask);
    const mask = valid.cast("f32");
    const nll = zeroMasked(inputs.logProbs, valid).neg();
    const loss = aggregateFn(nll, mask, aggOptions);
    const metrics = noGrad(() => {
      const mean = maskedMean(nll.detach(), mask);
      return { nll: mean, ppl: mean.exp() };
    });
    return { loss, metrics };
  });
}
