/**
 * The unchecked cores of `layout.ts` (inputs already validated), shared by the estimators.
 *
 * @module
 */

import type { TokenMatrix } from "./types.ts";

/** Valid-token counts of an already-checked mask. */
export function lengthsOf(mask: TokenMatrix): Float64Array {
  const out = new Float64Array(mask.batch);
  const { data, length } = mask;
  for (let i = 0; i < mask.batch; i++) {
    let n = 0;
    for (let t = 0; t < length; t++) n += data[i * length + t]!;
    out[i] = n;
  }
  return out;
}

/** Masked row sums of already-checked inputs. */
export function rowSums(values: TokenMatrix, mask: TokenMatrix): Float64Array {
  const out = new Float64Array(mask.batch);
  const { length } = mask;
  for (let i = 0; i < mask.batch; i++) {
    let s = 0;
    for (let t = 0; t < length; t++) {
      const k = i * length + t;
      if (mask.data[k] === 1) s += values.data[k]!;
    }
    out[i] = s;
  }
  return out;
}

/** Index of the last valid token of row `i`, or -1 when the row has none. */
export function lastValid(mask: TokenMatrix, i: number): number {
  const { data, length } = mask;
  for (let t = length - 1; t >= 0; t--) if (data[i * length + t] === 1) return t;
  return -1;
}

/** `outcomeTokenRewards` on already-checked inputs. */
export function placeOutcome(rewards: ArrayLike<number>, mask: TokenMatrix): TokenMatrix {
  const data = new Float64Array(mask.batch * mask.length);
  for (let i = 0; i < mask.batch; i++) {
    const t = lastValid(mask, i);
    if (t >= 0) data[i * mask.length + t] = rewards[i]!;
  }
  return { data, batch: mask.batch, length: mask.length };
}

/** `broadcastScalars` on already-checked inputs. */
export function broadcast(scalars: ArrayLike<number>, mask: TokenMatrix): Float64Array {
  const out = new Float64Array(mask.batch * mask.length);
  const { length } = mask;
  for (let i = 0; i < mask.batch; i++) {
    const s = scalars[i]!;
    for (let t = 0; t < length; t++) {
      const k = i * length + t;
      if (mask.data[k] === 1) out[k] = s;
    }
  }
  return out;
}
