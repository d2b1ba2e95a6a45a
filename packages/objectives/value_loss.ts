/**
 * The clipped value (critic) loss of PPO (Schulman et al., arXiv 1707.06347), in the form veRL
 * `compute_value_loss` and TRL's PPO trainer use:
 *
 * `v̂ = clip(v, v_old − ε_v, v_old + ε_v)`,
 * `ℓ_t = max((v − R)², (v̂ − R)²)`, `loss = 0.5·agg(ℓ)`.
 *
 * Metric `vf_clipfrac` is the masked fraction where the clipped term is strictly larger (veRL
 * `vf_clipfrac`); `vpred_mean` is the masked mean prediction. `clip(·)` is `max(min(v, hi), lo)`
 * like veRL `clip_by_value`, so ties split the gradient as in PyTorch.
 *
 * @module
 */

import { noGrad, type Tensor, tidy } from "@rlvr/tensor";
import { getAggregation } from "./aggregate.ts";
import {
  check2d,
  checkFloat,
  checkNumber,
  checkSameShape,
  maskedFraction,
  maskedMean,
  validOf,
  zeroMasked,
} from "./_util.ts";
import type { AggregationOptions, LossOutput } from "./types.ts";

/** Inputs of {@link valueLoss}, all `[B, T]`. */
export interface ValueLossInputs {
  /** Predictions v of the value head being trained (gradients flow here). */
  values: Tensor;
  /** Predictions v_old of the value head when the rollouts were scored. */
  oldValues: Tensor;
  /** Targets R (returns). */
  returns: Tensor;
  /** Valid positions. */
  responseMask: Tensor;
}

/** Options of {@link valueLoss}. */
export interface ValueLossOptions extends AggregationOptions {
  /** Clip range ε_v around the old values (veRL `cliprange_value`, default 0.5). */
  clipRange?: number;
  /** Aggregation mode (default `token-mean`). */
  aggregation?: string;
}

/**
 * PPO clipped value loss `0.5·agg(max((v − R)², (clip(v, v_old ± ε_v) − R)²))` (arXiv
 * 1707.06347; veRL `compute_value_loss`, `critic.cliprange_value`).
 *
 * @example Usage
 * ```ts
 * import { readMetrics, valueLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss, metrics } = valueLoss({
 *   values: tensor([[2, 0.5]], { requiresGrad: true }),
 *   oldValues: tensor([[0, 0]]),
 *   returns: tensor([[1, 1]]),
 *   responseMask: tensor([[1, 1]]),
 * }, { clipRange: 0.2 });
 * // token 0: (2−1)² = 1 vs (0.2−1)² = 0.64 → 1; token 1: 0.25 vs 0.64 (clipped wins) → 0.64
 * assert.ok(Math.abs(await loss.item() - 0.5 * (1 + 0.64) / 2) < 1e-6);
 * assert.equal((await readMetrics(metrics)).vf_clipfrac, 0.5);
 * ```
 */
export function valueLoss(inputs: ValueLossInputs, options: ValueLossOptions = {}): LossOutput {
  const name = "valueLoss";
  check2d(name, "values", inputs.values);
  checkFloat(name, "values", inputs.values);
  for (const key of ["oldValues", "returns", "responseMask"] as const) {
    if (inputs[key] === undefined) throw new TypeError(`${name}: ${key} is required`);
    checkSameShape(name, key, inputs[key], inputs.values, "values");
  }
  const eps = checkNumber(name, "clipRange", options.clipRange ?? 0.5, { min: 0 });
  const { clipRange: _c, aggregation, ...aggOptions } = options;
  const aggregateFn = getAggregation(aggregation ?? "token-mean");
  return tidy(() => {
    const valid = validOf(inputs.responseMask);
    const mask = valid.cast("f32");
    const v = zeroMasked(inputs.values, valid);
    const old = zeroMasked(inputs.oldValues.detach(), valid);
    const ret = zeroMasked(inputs.returns.detach(), valid);
    const clipped = v.minimum(old.add(eps)).maximum(old.sub(eps));
    const l1 = v.sub(ret).square();
    const l2 = clipped.sub(ret).square();
    const loss = aggregateFn(l1.maximum(l2), mask, aggOptions).mul(0.5);
    const metrics = noGrad(() => ({
      vf_loss: loss.detach(),
      vf_clipfrac: maskedFraction(l2.gt(l1), mask),
      vpred_mean: maskedMean(v.detach(), mask),
    }));
    return { loss, metrics };
  });
}
