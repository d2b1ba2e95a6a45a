/**
 * Clip-Cov and KL-Cov ("The Entropy Mechanism of Reinforcement Learning for Reasoning Language
 * Models", Cui et al., arXiv 2505.22617). Policy entropy falls in proportion to the covariance
 * between a token's log-probability and its advantage, so both losses act on the few tokens with
 * the largest centred covariance
 *
 * `cov_t = (A_t − mean(A))·(log π_θ(y_t) − mean(log π_θ))` (means over valid tokens, no gradient).
 *
 * - `clip_cov`: PPO clip (no dual clip), and the gradient of a random `covRatio` fraction of the
 *   valid tokens whose covariance lies in `(covLowerBound, covUpperBound)` (and which the PPO clip
 *   did not already clip) is detached: `ℓ_t = max(−A·r, −A·clip(r))·(1 − sel_t)`. veRL
 *   `compute_policy_loss_clip_cov` (`clip_cov_ratio` 2e-4, `clip_cov_lb` 1, `clip_cov_ub` 5).
 * - `kl_cov`: `ℓ_t = −A·r` plus, on the `max(1, ⌊covRatio·N⌋)` tokens of largest covariance,
 *   `klCovCoef·|log r|`. veRL `compute_policy_loss_kl_cov` (`kl_cov_ratio` 2e-4,
 *   `ppo_kl_coef` 1).
 *
 * `r = exp(log π_θ − log π_old)` without the ±20 clamp, as in veRL.
 *
 * Design decisions: selection runs on the device by bisection (see `_select.ts`), so ties at the
 * k-th covariance are all selected where `torch.topk` keeps exactly k. Clip-Cov's random choice
 * takes the k candidates with the largest seeded uniform keys (`seed` option) instead of
 * `torch.randperm`: the same distribution (a uniform k-subset), a different stream. To reproduce
 * one veRL draw exactly, pass the permutation `torch.randperm(n)` returned as `covPermutation`
 * (`n` = the number of candidates; the candidates are ordered row-major, as `torch.nonzero`). Extra
 * metrics: `cov_selected_frac` (veRL's Clip-Cov `pg_clipfrac`) and, for KL-Cov, `ppo_kl_abs`
 * (veRL's KL-Cov `ppo_kl`, the masked mean of `|log r|`).
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { noGrad, rand, type RandomOptions, type Tensor, tensor, where } from "@rlvr/tensor";
import { topKMask } from "./_select.ts";
import { and, checkNumber, maskedMean } from "./_util.ts";
import {
  definePolicyLoss,
  type PolicyLossContext,
  type PolicyLossTerms,
  type ResolvedPolicyLossOptions,
} from "./policy_loss.ts";
import type { PolicyLossFn } from "./types.ts";

/** Centred covariance `(A − Ā)(log π − mean log π)` over valid tokens, no gradient. */
function covariance(ctx: PolicyLossContext): Tensor {
  return noGrad(() => {
    const logp = ctx.logProbs.detach();
    const a = ctx.advantages;
    return a.sub(maskedMean(a, ctx.mask)).mul(logp.sub(maskedMean(logp, ctx.mask)));
  });
}

function floorOf(x: Tensor): Tensor {
  return x.cast("i32").cast("f32");
}

function clipCovCore(ctx: PolicyLossContext): PolicyLossTerms {
  const o = ctx.options;
  const { clipRatioLow: low, clipRatioHigh: high } = o;
  const a = ctx.advantages;
  const logRatio = ctx.logProbs.sub(ctx.oldLogProbs!);
  const ratio = logRatio.exp();
  const pg1 = a.neg().mul(ratio);
  const pg2 = a.neg().mul(ratio.clamp(1 - low, 1 + high));
  const selected = noGrad(() => {
    const byClip = and(pg2.gt(pg1), ctx.valid);
    const cov = covariance(ctx);
    const candidates = and(
      and(ctx.valid, byClip.cast("f32").lt(0.5)),
      and(cov.gt(o.covLowerBound ?? 1), cov.lt(o.covUpperBound ?? 5)),
    );
    const n = ctx.mask.sum();
    const clipNum = floorOf(n.mul(o.covRatio ?? 2e-4)).clamp(1);
    const k = clipNum.minimum(candidates.cast("f32").sum());
    if (o.covPermutation !== undefined) return permutationMask(candidates, k, o.covPermutation);
    const randomOptions: RandomOptions = { backend: ctx.logProbs.backend };
    if (o.seed !== undefined) randomOptions.seed = o.seed;
    const keys = rand([...ctx.logProbs.shape], randomOptions);
    return topKMask(keys, candidates, k);
  });
  const perToken = pg1.maximum(pg2).mul(selected.neg().add(1));
  return noGrad(() => {
    const clipped = pg2.gt(pg1);
    return {
      perToken,
      logRatio,
      clippedLow: and(clipped, a.lt(0)),
      clippedHigh: and(clipped, a.gt(0)),
      metrics: { cov_selected_frac: maskedMean(selected, ctx.mask) },
    };
  });
}

/**
 * veRL's choice with a given `torch.randperm` result `perm` over the candidates in row-major
 * order: the candidate of rank r is selected iff r is among `perm[0..k−1]`. On the device: the
 * rank comes from a cumulative sum, its position in `perm` from the inverse permutation.
 */
function permutationMask(candidates: Tensor, k: Tensor, perm: ArrayLike<number>): Tensor {
  const shape = [...candidates.shape];
  const flat = candidates.cast("f32").reshape(shape[0]! * shape[1]!);
  const n = perm.length;
  if (n === 0) return flat.mul(0).reshape(...shape);
  const inverse = new Array<number>(n);
  for (let j = 0; j < n; j++) inverse[perm[j]!] = j;
  const inv = tensor(inverse, { backend: candidates.backend });
  const rank = flat.cumsum(0).sub(1);
  const position = inv.indexSelect(0, rank.clamp(0, n - 1).cast("i32"));
  const chosen = and(and(flat.gt(0), rank.lt(n)), position.lt(k));
  return chosen.cast("f32").reshape(...shape);
}

function klCovCore(ctx: PolicyLossContext): PolicyLossTerms {
  const o = ctx.options;
  const a = ctx.advantages;
  const logRatio = ctx.logProbs.sub(ctx.oldLogProbs!);
  const absKl = logRatio.abs();
  const pg = a.neg().mul(logRatio.exp());
  const selected = noGrad(() => {
    const k = floorOf(ctx.mask.sum().mul(o.covRatio ?? 2e-4)).clamp(1);
    return topKMask(covariance(ctx), ctx.valid, k);
  });
  const perToken = where(selected.gt(0), pg.add(absKl.mul(o.klCovCoef ?? 1)), pg);
  return noGrad(() => ({
    perToken,
    logRatio,
    metrics: {
      cov_selected_frac: maskedMean(selected, ctx.mask),
      ppo_kl_abs: maskedMean(absKl, ctx.mask),
    },
  }));
}

function checkCov(name: string, o: ResolvedPolicyLossOptions, bounds: boolean): void {
  checkNumber(name, "covRatio", o.covRatio ?? 2e-4, { min: 0, minExclusive: true, max: 1 });
  if (bounds) {
    const lb = checkNumber(name, "covLowerBound", o.covLowerBound ?? 1);
    const ub = checkNumber(name, "covUpperBound", o.covUpperBound ?? 5);
    if (!(lb < ub)) {
      throw new RangeError(
        `${name}: covLowerBound (${lb}) must be below covUpperBound (${ub})`,
      );
    }
    if (o.seed !== undefined) checkNumber(name, "seed", o.seed);
    if (o.covPermutation !== undefined) checkPermutation(name, o.covPermutation);
  } else {
    checkNumber(name, "klCovCoef", o.klCovCoef ?? 1, { min: 0 });
  }
}

function checkPermutation(name: string, perm: unknown): void {
  const p = perm as ArrayLike<number>;
  if (typeof perm !== "object" || perm === null || typeof p.length !== "number") {
    throw new TypeError(`${name}: covPermutation must be an array of integers, got ${perm}`);
  }
  const seen = new Uint8Array(p.length);
  for (let j = 0; j < p.length; j++) {
    const v = p[j]!;
    if (!Number.isInteger(v) || v < 0 || v >= p.length || seen[v]) {
      throw new RangeError(
        `${name}: covPermutation must be a permutation of 0..${
          p.length - 1
        }, got ${v} at position ${j}`,
      );
    }
    seen[v] = 1;
  }
}

/**
 * `clip_cov`: PPO clip with covariance-selected tokens detached (arXiv 2505.22617; veRL
 * `compute_policy_loss_clip_cov`). Options: `clipRatio*` (0.2), `covRatio` (2e-4),
 * `covLowerBound` (1), `covUpperBound` (5), `seed` or `covPermutation`.
 *
 * @example Usage
 * ```ts
 * import { clipCovLoss, readMetrics } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { metrics } = clipCovLoss({
 *   logProbs: tensor([[-0.1, -3, -0.2, -2.9]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-0.1, -3, -0.2, -2.9]]),
 *   advantages: tensor([[2, -2, 2, -2]]),
 *   responseMask: tensor([[1, 1, 1, 1]]),
 * }, { covRatio: 0.25, covLowerBound: 0.5, seed: 1 });
 * // cov = (A − 0)(log π + 1.55): [2.9, 2.9, 2.7, 2.7], all in (0.5, 5); k = ⌊0.25·4⌋ = 1
 * assert.equal((await readMetrics(metrics)).cov_selected_frac, 0.25);
 * ```
 */
export const clipCovLoss: PolicyLossFn = definePolicyLoss("clip_cov", clipCovCore, {
  validate: (o) => checkCov("clip_cov", o, true),
});

/**
 * `kl_cov`: `−A·r` plus `klCovCoef·|log r|` on the top-covariance tokens (arXiv 2505.22617;
 * veRL `compute_policy_loss_kl_cov`). Options: `covRatio` (2e-4), `klCovCoef` (1).
 *
 * @example Usage
 * ```ts
 * import { klCovLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = klCovLoss({
 *   logProbs: tensor([[-0.5, -2]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1, -2]]),
 *   advantages: tensor([[1, -1]]),
 *   responseMask: tensor([[1, 1]]),
 * }, { covRatio: 0.5 });
 * // cov = (A − 0)(log π + 1.25) = [0.75, 0.75]: a tie, both selected (k = 1)
 * // ℓ = [−e^{0.5} + 0.5, 1 + 0] → mean
 * assert.ok(Math.abs(await loss.item() - (-Math.exp(0.5) + 0.5 + 1) / 2) < 1e-6);
 * ```
 */
export const klCovLoss: PolicyLossFn = definePolicyLoss("kl_cov", klCovCore, {
  validate: (o) => checkCov("kl_cov", o, false),
});

POLICY_LOSSES.register("clip_cov", clipCovLoss);
POLICY_LOSSES.register("kl_cov", klCovLoss);
