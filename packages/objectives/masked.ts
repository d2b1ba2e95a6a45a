/**
 * Masked reductions over `[B, T]` tensors, whole or per row: veRL's `verl_F.masked_sum` and
 * `verl_F.masked_mean` (with `axis`), which its losses, metrics and aggregations are written in.
 *
 * Design decisions: a position counts where the mask is non-zero; values there are multiplied by
 * the mask (so a 0/1 mask selects, a fractional one weighs, as in veRL), and values elsewhere are
 * replaced by 0 first, so NaN or ±inf padding never reaches the result (veRL does the same with
 * `torch.where`). A mean over no valid position is 0 (veRL divides by `Σm + 1e-8`, which also
 * gives 0 there; where `Σm ≥ 1` the two differ by a relative 1e-8 at most). Both keep gradients
 * of `values` and read nothing back to the host.
 *
 * @module
 */

import { type Tensor, tidy, where } from "@rlvr/tensor";
import { check2d, checkSameShape } from "./_util.ts";

/** Options of {@link maskedSum} and {@link maskedMean}. */
export interface MaskedReduceOptions {
  /**
   * Axis to reduce: `1` (or `-1`) per row, giving `[B]`; `0` per column, giving `[T]`; omitted,
   * every position, giving a scalar.
   */
  axis?: 0 | 1 | -1;
}

function prepared(name: string, values: Tensor, mask: Tensor): { v: Tensor; m: Tensor } {
  check2d(name, "values", values);
  checkSameShape(name, "mask", mask, values, "values");
  const m = mask.dtype === "f32" ? mask : mask.cast("f32");
  return { v: where(m.ne(0), values, 0).mul(m), m };
}

function reduce(x: Tensor, axis: 0 | 1 | -1 | undefined): Tensor {
  return axis === undefined ? x.sum() : x.sum(axis);
}

/**
 * `Σ values·mask` over every position, or per row / column with `axis` (veRL
 * `masked_sum(values, mask, axis)`).
 *
 * @example Usage
 * ```ts
 * import { maskedSum } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const x = tensor([[1, 2, NaN], [4, 5, 6]]);
 * const m = tensor([[1, 1, 0], [0, 0, 0]]);
 * assert.equal(await maskedSum(x, m).item(), 3); // the NaN is padding
 * assert.deepEqual(await maskedSum(x, m, { axis: 1 }).toArray(), [3, 0]);
 * ```
 */
export function maskedSum(values: Tensor, mask: Tensor, options: MaskedReduceOptions = {}): Tensor {
  return tidy(() => reduce(prepared("maskedSum", values, mask).v, options.axis));
}

/**
 * `Σ values·mask / Σ mask` over every position, or per row / column with `axis` (veRL
 * `masked_mean(values, mask, axis)`); 0 where the mask selects nothing (a fully masked row).
 *
 * @example Usage
 * ```ts
 * import { maskedMean } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const x = tensor([[1, 2, 9], [4, 5, 6]]);
 * const m = tensor([[1, 1, 0], [0, 0, 0]]);
 * assert.equal(await maskedMean(x, m).item(), 1.5);
 * assert.deepEqual(await maskedMean(x, m, { axis: 1 }).toArray(), [1.5, 0]); // empty row: 0
 * ```
 */
export function maskedMean(
  values: Tensor,
  mask: Tensor,
  options: MaskedReduceOptions = {},
): Tensor {
  return tidy(() => {
    const { v, m } = prepared("maskedMean", values, mask);
    const sum = reduce(v, options.axis);
    const count = reduce(m, options.axis);
    return where(count.ne(0), sum.div(where(count.ne(0), count, 1)), 0);
  });
}
