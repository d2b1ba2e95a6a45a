/**
 * DPO, Direct Preference Optimization (Rafailov et al., arXiv 2305.18290), sigmoid loss with
 * optional label smoothing (conservative DPO, Mitchell 2023), as TRL `DPOTrainer`
 * (`loss_type="sigmoid"`, `beta`, `label_smoothing`):
 *
 * `h = (log π_θ(y_w) − log π_ref(y_w)) − (log π_θ(y_l) − log π_ref(y_l))`,
 * `ℓ = −(1 − ε)·log σ(β·h) − ε·log σ(−β·h)`, averaged over pairs.
 *
 * Inputs are per-sequence log-probabilities `[B]` (sums over the response tokens; see
 * {@link sequenceLogProbs}). `log σ(x)` is computed stably as `min(x, 0) − log(1 + e^{−|x|})`.
 * Metrics (TRL's names): `rewards_chosen`, `rewards_rejected` (means of `β·(log π_θ − log
 * π_ref)`), `rewards_accuracy` (chosen reward > rejected), `rewards_margin`.
 *
 * @module
 */

import { fmtShape, noGrad, type Tensor, tidy } from "@rlvr/tensor";
import { check2d, checkNumber, checkSameShape, validOf, zeroMasked } from "./_util.ts";
import type { LossOutput } from "./types.ts";

/** Inputs of {@link dpoLoss}: per-sequence log-probabilities `[B]`. */
export interface DpoInputs {
  /** Σ_t log π_θ over the chosen responses (gradients flow here). */
  chosenLogProbs: Tensor;
  /** Σ_t log π_θ over the rejected responses (gradients flow here). */
  rejectedLogProbs: Tensor;
  /** Σ_t log π_ref over the chosen responses. */
  refChosenLogProbs: Tensor;
  /** Σ_t log π_ref over the rejected responses. */
  refRejectedLogProbs: Tensor;
}

/**
 * Per-sequence log-probability `Σ_t log π(y_t)·m_t` `[B]` from token log-probs `[B, T]`.
 *
 * @example Usage
 * ```ts
 * import { sequenceLogProbs } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const s = sequenceLogProbs(tensor([[-1, -2], [-3, -4]]), tensor([[1, 1], [1, 0]]));
 * assert.deepEqual(await s.toArray(), [-3, -3]);
 * ```
 */
export function sequenceLogProbs(logProbs: Tensor, responseMask: Tensor): Tensor {
  check2d("sequenceLogProbs", "logProbs", logProbs);
  checkSameShape("sequenceLogProbs", "responseMask", responseMask, logProbs, "logProbs");
  return tidy(() => zeroMasked(logProbs, validOf(responseMask)).sum(1));
}

function logSigmoid(x: Tensor): Tensor {
  return x.minimum(0).sub(x.abs().neg().exp().add(1).log());
}

/**
 * DPO sigmoid loss with label smoothing (arXiv 2305.18290; TRL `DPOTrainer`, `loss_type`
 * `sigmoid`, `beta` default 0.1, `label_smoothing` default 0 and < 0.5).
 *
 * @example Usage
 * ```ts
 * import { dpoLoss, readMetrics } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss, metrics } = dpoLoss({
 *   chosenLogProbs: tensor([-10], { requiresGrad: true }),
 *   rejectedLogProbs: tensor([-12], { requiresGrad: true }),
 *   refChosenLogProbs: tensor([-11]),
 *   refRejectedLogProbs: tensor([-11]),
 * }, { beta: 0.5 });
 * // h = (−10 + 11) − (−12 + 11) = 2; ℓ = −log σ(1)
 * assert.ok(Math.abs(await loss.item() - Math.log(1 + Math.exp(-1))) < 1e-6);
 * assert.equal((await readMetrics(metrics)).rewards_accuracy, 1);
 * ```
 */
export function dpoLoss(
  inputs: DpoInputs,
  options: { beta?: number; labelSmoothing?: number } = {},
): LossOutput {
  const name = "dpoLoss";
  const beta = checkNumber(name, "beta", options.beta ?? 0.1, { min: 0, minExclusive: true });
  const eps = checkNumber(name, "labelSmoothing", options.labelSmoothing ?? 0, {
    min: 0,
    max: 0.5,
  });
  const c = inputs.chosenLogProbs;
  if (c === undefined || c.ndim !== 1) {
    throw new RangeError(
      `${name}: chosenLogProbs must be a 1-D [B] tensor, got ${
        c === undefined ? "undefined" : `shape ${fmtShape(c.shape)}`
      }`,
    );
  }
  for (const key of ["rejectedLogProbs", "refChosenLogProbs", "refRejectedLogProbs"] as const) {
    if (inputs[key] === undefined) throw new TypeError(`${name}: ${key} is required`);
    checkSameShape(name, key, inputs[key], c, "chosenLogProbs");
  }
  return tidy(() => {
    const chosen = c.sub(inputs.refChosenLogProbs.detach());
    const rejected = inputs.rejectedLogProbs.sub(inputs.refRejectedLogProbs.detach());
    const logits = chosen.sub(rejected).mul(beta);
    let perPair = logSigmoid(logits).mul(-(1 - eps));
    if (eps > 0) perPair = perPair.sub(logSigmoid(logits.neg()).mul(eps));
    const loss = perPair.mean();
    const metrics = noGrad(() => {
      const rc = chosen.detach().mul(beta);
      const rr = rejected.detach().mul(beta);
      return {
        rewards_chosen: rc.mean(),
        rewards_rejected: rr.mean(),
        rewards_accuracy: rc.gt(rr).cast("f32").mean(),
        rewards_margin: rc.sub(rr).mean(),
      };
    });
    return { loss, metrics };
  });
}
