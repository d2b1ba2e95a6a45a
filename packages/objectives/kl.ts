/**
 * KL estimators between the policy and a reference on the sampled tokens (Schulman, "Approximating
 * KL divergence", 2020), usable in the loss (GRPO's `β·KL` term) or in the reward (PPO/RLHF's
 * per-token penalty), with veRL's names.
 *
 * With `d = log π_θ(y_t) − log π_ref(y_t)` and `r = π_ref/π_θ = e^{−d}`:
 *
 * | key                     | value                          | veRL `kl_penalty` |
 * | ----------------------- | ------------------------------ | ----------------- |
 * | `k1`, `kl`              | `d`                            | `kl`, `k1`        |
 * | `abs`                   | `\|d\|`                        | `abs`             |
 * | `k2`, `mse`             | `½ d²`                         | `mse`, `k2`       |
 * | `k3`, `low_var_kl`      | `clamp(r − 1 − log r, −10, 10)`, `log r` clamped to ±20 first | `low_var_kl`, `k3` |
 * | `k1+`, `kl+`, `abs+`, `k2+`, `mse+`, `k3+`, `low_var_kl+` | value of the estimator without `+`, gradient of k2 (straight-through) | the same keys |
 *
 * k3 is unbiased for KL(π_θ‖π_ref) under samples of π_θ, non-negative and low-variance; k1 is
 * unbiased but can be negative; k2 has the gradient of the true KL in expectation, hence the
 * straight-through "+" variants (`k2+`/`mse+` are k2 in value and gradient). Design decision: the clamps of veRL `kl_penalty` (±20 before
 * the exponential, [−10, 10] after) are kept, so the numbers match veRL and TRL (which computes
 * the same k3 without the clamps) wherever the clamps are inactive.
 *
 * @module
 */

import { type Tensor, tidy, where } from "@rlvr/tensor";
import { KL_ESTIMATORS } from "./_kl_estimators.ts";
import type { KlEstimator } from "./types.ts";
import { aggregate } from "./aggregate.ts";
import {
  check2d,
  checkNumber,
  checkSameShape,
  maskedMean,
  rowMean,
  validOf,
  zeroMasked,
} from "./_util.ts";
import type { AggregationOptions, LossOutput } from "./types.ts";

KL_ESTIMATORS.register("k1", (d) => d);
KL_ESTIMATORS.register("kl", KL_ESTIMATORS.get("k1"));
KL_ESTIMATORS.register("abs", (d) => d.abs());
const k2 = (d: Tensor): Tensor => d.square().mul(0.5);
KL_ESTIMATORS.register("k2", k2);
KL_ESTIMATORS.register("mse", k2);

function k3(d: Tensor): Tensor {
  const logR = d.neg().clamp(-20, 20);
  return logR.exp().sub(logR).sub(1).clamp(-10, 10);
}
KL_ESTIMATORS.register("k3", k3);
KL_ESTIMATORS.register("low_var_kl", k3);

/** The straight-through form of `base`: its value, the gradient of k2 (veRL's final `+`). */
function straightThrough(base: (d: Tensor) => Tensor): (d: Tensor) => Tensor {
  return (d) => {
    const sq = k2(d);
    return sq.sub(sq.detach()).add(base(d).detach());
  };
}
// veRL strips the "+" to compute the value and binds the gradient of k2 to it; for "k2+" and
// "mse+" that is k2 itself (value and gradient).
for (const key of ["k1", "kl", "abs", "k2", "mse", "k3", "low_var_kl"] as const) {
  KL_ESTIMATORS.register(`${key}+`, straightThrough(KL_ESTIMATORS.get(key)));
}

/**
 * The KL estimator keys accepted by {@link klPenalty} (veRL's names included).
 *
 * @example Usage
 * ```ts
 * import { klEstimatorNames } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * assert.ok(klEstimatorNames().includes("low_var_kl"));
 * ```
 */
export function klEstimatorNames(): KlEstimator[] {
  return KL_ESTIMATORS.names() as KlEstimator[];
}

/**
 * Per-token KL estimate `[B, T]` between `logProbs` (π_θ) and `refLogProbs` (π_ref), by
 * estimator `kind` (table in the module doc; veRL `kl_penalty(logprob, ref_logprob,
 * kl_penalty)`). Differentiable in both arguments. An unknown kind is a `RangeError` listing the
 * valid ones, with a "did you mean" for a likely typo.
 *
 * @example Usage
 * ```ts
 * import { klPenalty } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const logp = tensor([[-1, -2]]);
 * const ref = tensor([[-1.5, -2]]);
 * // d = 0.5 and 0; k3 = e^{-d} + d - 1
 * const [a, b] = (await klPenalty(logp, ref, "k3").toArray() as number[][])[0]!;
 * assert.ok(Math.abs(a! - (Math.exp(-0.5) + 0.5 - 1)) < 1e-6);
 * assert.equal(b, 0);
 * assert.deepEqual(await klPenalty(logp, ref, "k1").toArray(), [[0.5, 0]]);
 * ```
 */
export function klPenalty(logProbs: Tensor, refLogProbs: Tensor, kind: KlEstimator = "k3"): Tensor {
  const estimate = KL_ESTIMATORS.get(kind);
  checkSameShape("klPenalty", "refLogProbs", refLogProbs, logProbs, "logProbs");
  return tidy(() => estimate(logProbs.sub(refLogProbs)));
}

/**
 * KL-in-loss term: `loss = coef · agg(kl(logProbs, refLogProbs))` with the estimator `kind`
 * (default `low_var_kl` = k3, as GRPO, arXiv 2402.03300) and aggregation `aggregation` (veRL
 * `use_kl_loss`, `kl_loss_type`, `kl_loss_coef`, aggregated with the actor's `loss_agg_mode`; TRL
 * `beta`). Metrics: `kl` (token-mean of the estimate) and `kl_loss`.
 *
 * @example Usage
 * ```ts
 * import { klLoss, readMetrics } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss, metrics } = klLoss({
 *   logProbs: tensor([[-1, -2]], { requiresGrad: true }),
 *   refLogProbs: tensor([[-1, -2]]),
 *   responseMask: tensor([[1, 1]]),
 * }, { coef: 0.1 });
 * assert.equal(await loss.item(), 0);
 * assert.equal((await readMetrics(metrics)).kl, 0);
 * ```
 */
export function klLoss(
  inputs: { logProbs: Tensor; refLogProbs: Tensor; responseMask: Tensor },
  options: AggregationOptions & {
    kind?: KlEstimator;
    coef?: number;
    aggregation?: string;
  } = {},
): LossOutput {
  check2d("klLoss", "logProbs", inputs.logProbs);
  checkSameShape("klLoss", "responseMask", inputs.responseMask, inputs.logProbs, "logProbs");
  const coef = checkNumber("klLoss", "coef", options.coef ?? 1);
  const { kind, coef: _c, aggregation, ...agg } = options;
  return tidy(() => {
    const valid = validOf(inputs.responseMask);
    const maskF = valid.cast("f32");
    const kl = klPenalty(
      zeroMasked(inputs.logProbs, valid),
      zeroMasked(inputs.refLogProbs, valid),
      kind ?? "low_var_kl",
    );
    const term = aggregate(kl, maskF, aggregation ?? "token-mean", agg);
    const loss = term.mul(coef);
    return {
      loss,
      metrics: { kl: maskedMean(kl.detach(), maskF), kl_loss: term.detach() },
    };
  });
}

/**
 * KL-in-reward (PPO/RLHF, Ziegler et al. arXiv 1909.08593; veRL `apply_kl_penalty`): token
 * rewards `r_t − β·kl_t` with `kl_t = klPenalty(oldLogProbs, refLogProbs, kind)` on valid
 * positions (0 elsewhere) (default `k1`, veRL's `kl_penalty: kl`). Also returns `kl`, the batch mean of the
 * per-sequence token-mean KL, which is what veRL feeds to the adaptive controller
 * (`AdaptiveKlController.update(kl, batchSize)`). No gradients.
 *
 * @example Usage
 * ```ts
 * import { applyKlPenalty } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { rewards, kl } = applyKlPenalty({
 *   tokenScores: tensor([[0, 1]]),
 *   oldLogProbs: tensor([[-1, -1]]),
 *   refLogProbs: tensor([[-2, -1]]),
 *   responseMask: tensor([[1, 1]]),
 * }, { coef: 0.5 });
 * // k1 = old − ref = [1, 0]; rewards = scores − 0.5·k1
 * assert.deepEqual(await rewards.toArray(), [[-0.5, 1]]);
 * assert.equal(await kl.item(), 0.5);
 * ```
 */
export function applyKlPenalty(
  inputs: { tokenScores: Tensor; oldLogProbs: Tensor; refLogProbs: Tensor; responseMask: Tensor },
  options: { coef: number; kind?: KlEstimator },
): { rewards: Tensor; kl: Tensor } {
  check2d("applyKlPenalty", "tokenScores", inputs.tokenScores);
  for (const name of ["oldLogProbs", "refLogProbs", "responseMask"] as const) {
    checkSameShape("applyKlPenalty", name, inputs[name], inputs.tokenScores, "tokenScores");
  }
  const coef = checkNumber("applyKlPenalty", "coef", options.coef);
  return tidy(() => {
    const valid = validOf(inputs.responseMask);
    const maskF = valid.cast("f32");
    const kl = where(
      valid,
      klPenalty(
        zeroMasked(inputs.oldLogProbs.detach(), valid),
        zeroMasked(inputs.refLogProbs.detach(), valid),
        options.kind ?? "k1",
      ),
      0,
    );
    const rewards = inputs.tokenScores.detach().sub(kl.mul(coef));
    return { rewards, kl: rowMean(kl, maskF).mean() };
  });
}
