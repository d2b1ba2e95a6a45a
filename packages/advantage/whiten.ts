/**
 * Masked statistics over the valid tokens of a batch: sum, mean (whole batch or per row),
 * variance and whitening, as veRL's `verl.utils.torch_functional.masked_sum`, `masked_mean`,
 * `masked_var` and `masked_whiten`.
 *
 * Design: the variance is **unbiased** by default (Bessel's `N/(N−1)` with `N = Σ m`), exactly
 * as veRL's `masked_var(unbiased=True)`, which `masked_whiten` uses; fewer than two valid
 * tokens is an error there and here. Whitening divides by `sqrt(var + eps)` with veRL's
 * `eps = 1e-8`, so a constant batch whitens to zeros instead of NaN. Differences from veRL, all
 * on purpose: the mean is `Σ m·v / Σ m` (recent veRL adds 1e-8 to the denominator, a relative
 * change below 1e-8/N), and positions under a 0 in the mask are written as 0 instead of being
 * whitened too.
 *
 * @module
 */

import { checkBoolean, checkMask, checkNumber, checkTokens } from "./_validate.ts";
import { meanOf, varOf, whitenChecked } from "./_whiten.ts";
import type { TokenMatrix } from "./types.ts";

/** Options of {@link maskedWhiten}. */
export interface WhitenOptions {
  /**
   * `true` (default): output has masked mean 0. `false`: the mean is added back after scaling
   * (veRL `shift_mean=False`), so only the spread is normalised.
   */
  shiftMean?: boolean;
  /** Added to the variance before the square root (default 1e-8, veRL's constant). */
  eps?: number;
  /** Bessel-corrected variance (default true, as veRL's `masked_whiten`). */
  unbiased?: boolean;
}

/**
 * Masked mean `μ = Σ m·v / Σ m` over all valid tokens of the batch (veRL `masked_mean` with no
 * axis). Throws when the mask selects nothing.
 *
 * @example Usage
 * ```ts
 * import { fromRows, maskedMean } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.equal(maskedMean(fromRows([[1, 3, 100]]), fromRows([[1, 1, 0]])), 2);
 * ```
 */
export function maskedMean(values: TokenMatrix, mask: TokenMatrix): number {
  const m = checkMask("maskedMean", "mask", mask);
  checkTokens("maskedMean", "values", values, m, "mask");
  return meanOf("maskedMean", values, m);
}

/**
 * Masked sum `Σ m·v` over all valid tokens of the batch (veRL `masked_sum` with no axis);
 * values under a 0 of the mask are never read. 0 when the mask selects nothing.
 *
 * @example Usage
 * ```ts
 * import { fromRows, maskedSum } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.equal(maskedSum(fromRows([[1, 3, NaN], [2, 0, 0]]), fromRows([[1, 1, 0], [1, 0, 0]])), 6);
 * ```
 */
export function maskedSum(values: TokenMatrix, mask: TokenMatrix): number {
  const m = checkMask("maskedSum", "mask", mask);
  checkTokens("maskedSum", "values", values, m, "mask");
  let s = 0;
  for (let k = 0; k < m.data.length; k++) if (m.data[k] === 1) s += values.data[k]!;
  return s;
}

/**
 * Per-row masked means `Σ_t m·v / Σ_t m`, one per row (veRL `masked_mean(values, mask, axis=-1)`);
 * 0 for a row the mask leaves empty (veRL: `0 / (0 + 1e-8)`, also 0).
 *
 * @example Usage
 * ```ts
 * import { fromRows, maskedRowMeans } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const v = fromRows([[1, 3, 100], [5, 5, 5]]);
 * assert.deepEqual([...maskedRowMeans(v, fromRows([[1, 1, 0], [0, 0, 0]]))], [2, 0]);
 * ```
 */
export function maskedRowMeans(values: TokenMatrix, mask: TokenMatrix): Float64Array {
  const m = checkMask("maskedRowMeans", "mask", mask);
  checkTokens("maskedRowMeans", "values", values, m, "mask");
  const out = new Float64Array(m.batch);
  for (let i = 0; i < m.batch; i++) {
    let s = 0;
    let n = 0;
    for (let t = 0; t < m.length; t++) {
      const k = i * m.length + t;
      if (m.data[k] === 1) {
        s += values.data[k]!;
        n++;
      }
    }
    out[i] = n > 0 ? s / n : 0;
  }
  return out;
}

/**
 * Masked variance `Σ m·(v − μ)² / Σ m`, times `N/(N−1)` when `unbiased` (default, veRL
 * `masked_var(unbiased=True)`), with `N = Σ m`. Throws when `N` is 0, or 1 with `unbiased`.
 *
 * @example Usage
 * ```ts
 * import { fromRows, maskedVar } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const v = fromRows([[1, 3, 100]]);
 * const m = fromRows([[1, 1, 0]]);
 * assert.equal(maskedVar(v, m), 2); // ((1−2)² + (3−2)²) / (2 − 1)
 * assert.equal(maskedVar(v, m, false), 1); // population variance
 * ```
 */
export function maskedVar(values: TokenMatrix, mask: TokenMatrix, unbiased = true): number {
  const m = checkMask("maskedVar", "mask", mask);
  checkTokens("maskedVar", "values", values, m, "mask");
  checkBoolean("maskedVar", "unbiased", unbiased);
  return varOf("maskedVar", values, m, meanOf("maskedVar", values, m), unbiased);
}

/**
 * Whitens over the valid tokens of the whole batch (veRL `masked_whiten`):
 *
 * ```
 * μ = Σ m·v / Σ m,   σ² = N/(N−1) · Σ m·(v − μ)² / Σ m,   N = Σ m
 * w = (v − μ) / sqrt(σ² + eps)        (+ μ when shiftMean is false)
 * ```
 *
 * Returns a new `Float64Array` with 0 at masked positions.
 *
 * @example Usage
 * ```ts
 * import { fromRows, maskedWhiten } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * // valid values 1, 2, 3: mean 2, unbiased variance 1
 * const w = maskedWhiten(fromRows([[1, 2], [3, 7]]), fromRows([[1, 1], [1, 0]]));
 * assert.ok(Math.abs(w[0]! + 1) < 1e-7 && w[1] === 0 && Math.abs(w[2]! - 1) < 1e-7);
 * assert.equal(w[3], 0); // masked
 * ```
 */
export function maskedWhiten(
  values: TokenMatrix,
  mask: TokenMatrix,
  options: WhitenOptions = {},
): Float64Array {
  const m = checkMask("maskedWhiten", "mask", mask);
  checkTokens("maskedWhiten", "values", values, m, "mask");
  const shiftMean = checkBoolean("maskedWhiten", "shiftMean", options.shiftMean ?? true);
  const eps = checkNumber("maskedWhiten", "eps", options.eps ?? 1e-8, { min: 0 });
  const unbiased = checkBoolean("maskedWhiten", "unbiased", options.unbiased ?? true);
  return whitenChecked("maskedWhiten", values, m, shiftMean, eps, unbiased);
}
