/**
 * The unchecked core of `returns.ts` (inputs already validated), shared by the estimators.
 *
 * @module
 */

import type { MaskMode } from "./returns.ts";
import type { TokenMatrix } from "./types.ts";

/** `discountedReturns` on already-checked inputs. */
export function returnsOf(
  tokenRewards: TokenMatrix,
  mask: TokenMatrix,
  gamma: number,
  mode: MaskMode,
): Float64Array {
  const { batch, length } = mask;
  const out = new Float64Array(batch * length);
  const md = mask.data;
  const rd = tokenRewards.data;
  for (let i = 0; i < batch; i++) {
    let running = 0;
    for (let t = length - 1; t >= 0; t--) {
      const k = i * length + t;
      if (md[k] === 1) {
        running = rd[k]! + gamma * running;
        out[k] = running;
      } else if (mode === "reset") {
        running = 0;
      }
    }
  }
  return out;
}
