/**
 * Entropy terms: the aggregated token entropy (the entropy bonus `− α·agg(H)` of veRL
 * `entropy_coeff`) and the high-entropy token mask of "Beyond the 80/20 Rule: High-Entropy
 * Minority Tokens Drive Effective RL for LLM Reasoning" (Wang et al., arXiv 2506.01939), which
 * keeps the policy gradient only on the top fraction (20% in the paper) of tokens by entropy.
 *
 * Design decision: the mask reproduces TRL's `get_high_entropy_mask(entropies, mask, 1 − q)`
 * (`top_entropy_quantile = q`): keep valid tokens with `H ≥ quantile_{1−q}(H_valid)`, the
 * quantile linearly interpolated as `torch.quantile` does. That set is exactly the tokens whose
 * entropy is at least the `m`-th smallest valid entropy, `m = ⌈(1−q)(n−1)⌉` (0-based), so it is
 * found on the device by bisection (no sort kernel, no host read); ties at the threshold are kept.
 *
 * @module
 */

import { entropyFromLogits, noGrad, type Tensor, tidy } from "@rlvr/tensor";
import { aggregate } from "./aggregate.ts";
import { topKMask } from "./_select.ts";
import { check2d, checkNumber, checkSameShape, validOf, zeroMasked } from "./_util.ts";
import type { AggregationOptions } from "./types.ts";

/**
 * Per-token entropy `[B, T]` from logits `[B, T, V]`: `H = logsumexp(z) − Σ softmax(z)·z`
 * (veRL `entropy_from_logits`). Differentiable.
 *
 * @example Usage
 * ```ts
 * import { tokenEntropy } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const h = await tokenEntropy(tensor([[[0, 0], [0, 0]]])).toArray() as number[][];
 * assert.ok(Math.abs(h[0]![0]! - Math.log(2)) < 1e-6);
 * ```
 */
export function tokenEntropy(logits: Tensor): Tensor {
  if (logits.ndim !== 3) {
    throw new RangeError(
      `tokenEntropy: logits must be [B, T, V], got shape [${logits.shape.join(", ")}]`,
    );
  }
  return entropyFromLogits(logits);
}

/**
 * The aggregated entropy `agg(H)` over valid tokens (veRL `compute_entropy_loss` /
 * `agg_loss(entropy, response_mask, loss_agg_mode)`). A policy loss with an entropy bonus
 * subtracts `α·entropyLoss(...)` (veRL: `policy_loss = pg_loss − entropy_coeff·entropy`).
 *
 * @example Usage
 * ```ts
 * import { entropyLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const h = tensor([[1, 3], [2, 0]]);
 * const mask = tensor([[1, 1], [1, 0]]);
 * assert.equal(await entropyLoss(h, mask).item(), 2);
 * ```
 */
export function entropyLoss(
  entropy: Tensor,
  responseMask: Tensor,
  aggregation = "token-mean",
  options: AggregationOptions = {},
): Tensor {
  check2d("entropyLoss", "entropy", entropy);
  checkSameShape("entropyLoss", "responseMask", responseMask, entropy, "entropy");
  return tidy(() => {
    const valid = validOf(responseMask);
    return aggregate(zeroMasked(entropy, valid), valid.cast("f32"), aggregation, options);
  });
}

/**
 * f32 0/1 mask `[B, T]` of the valid tokens in the top `topFraction` of entropy among valid
 * tokens (arXiv 2506.01939; TRL `top_entropy_quantile`): `H ≥ quantile_{1−topFraction}(H_valid)`
 * with linear interpolation, computed as described in the module doc. `topFraction = 1` keeps
 * every valid token. Not differentiable.
 *
 * @example Usage
 * ```ts
 * import { highEntropyMask } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const h = tensor([[0.1, 2.0, 0.5, 3.0, 1.0]]);
 * const mask = tensor([[1, 1, 1, 1, 1]]);
 * // quantile_0.6 of [0.1, 0.5, 1, 2, 3]: position 0.6·4 = 2.4 → 1 + 0.4·(2 − 1) = 1.4
 * assert.deepEqual(await highEntropyMask(h, mask, { topFraction: 0.4 }).toArray(), [[0, 1, 0, 1, 0]]);
 * ```
 */
export function highEntropyMask(
  entropy: Tensor,
  responseMask: Tensor,
  options: { topFraction: number },
): Tensor {
  check2d("highEntropyMask", "entropy", entropy);
  checkSameShape("highEntropyMask", "responseMask", responseMask, entropy, "entropy");
  const q = checkNumber("highEntropyMask", "topFraction", options?.topFraction, {
    min: 0,
    minExclusive: true,
    max: 1,
  });
  return noGrad(() =>
    tidy(() => {
      const valid = validOf(responseMask);
      const n = valid.cast("f32").sum();
      // pos = (1 − q)(n − 1); m = ceil(pos) via truncation (pos ≥ 0); keep the k = n − m largest.
      const pos = n.sub(1).clamp(0).mul(1 - q);
      const floor = pos.cast("i32").cast("f32");
      const ceil = floor.add(pos.gt(floor).cast("f32"));
      const k = n.sub(ceil);
      return topKMask(zeroMasked(entropy.detach(), valid), valid, k);
    })
  );
}
