/**
 * The unchecked cores of `whiten.ts` (inputs already validated), shared by the estimators that
 * whiten (GAE, REINFORCE++, PRIME).
 *
 * @module
 */

import type { TokenMatrix } from "./types.ts";

/** Masked mean of already-checked inputs; `owner` names the caller in the error. */
export function meanOf(owner: string, values: TokenMatrix, mask: TokenMatrix): number {
  let sum = 0;
  let n = 0;
  const md = mask.data;
  const vd = values.data;
  for (let k = 0; k < md.length; k++) {
    if (md[k] === 1) {
      sum += vd[k]!;
      n++;
    }
  }
  if (n === 0) {
    throw new RangeError(
      `${owner}: the response mask selects no token; masked statistics need at least one`,
    );
  }
  return sum / n;
}

/** Masked variance of already-checked inputs around `mean`. */
export function varOf(
  owner: string,
  values: TokenMatrix,
  mask: TokenMatrix,
  mean: number,
  unbiased: boolean,
): number {
  let ss = 0;
  let n = 0;
  const md = mask.data;
  const vd = values.data;
  for (let k = 0; k < md.length; k++) {
    if (md[k] === 1) {
      const d = vd[k]! - mean;
      ss += d * d;
      n++;
    }
  }
  if (n === 0 || (unbiased && n === 1)) {
    throw new RangeError(
      `${owner}: the response mask selects ${n} token${
        n === 1 ? "" : "s"
      }; the unbiased masked variance (veRL masked_var) needs at least 2`,
    );
  }
  const v = ss / n;
  return unbiased ? v * (n / (n - 1)) : v;
}

/** `maskedWhiten` on already-checked inputs. */
export function whitenChecked(
  owner: string,
  values: TokenMatrix,
  mask: TokenMatrix,
  shiftMean = true,
  eps = 1e-8,
  unbiased = true,
): Float64Array {
  const mean = meanOf(owner, values, mask);
  const variance = varOf(owner, values, mask, mean, unbiased);
  const denom = Math.sqrt(variance + eps);
  // Only reachable with eps = 0 on a constant batch: every centred value is 0, so is the output.
  const scale = denom > 0 ? 1 / denom : 0;
  const out = new Float64Array(values.data.length);
  const md = mask.data;
  const vd = values.data;
  for (let k = 0; k < md.length; k++) {
    if (md[k] === 1) out[k] = (vd[k]! - mean) * scale + (shiftMean ? 0 : mean);
  }
  return out;
}
