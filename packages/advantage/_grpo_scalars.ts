/**
 * The GRPO scalars of already-checked inputs, shared by `grpo.ts` and `reinforce_pp.ts`.
 *
 * @module
 */

import { statsOf } from "./_group.ts";
import type { GroupIndex } from "./types.ts";

/** `n / d`, or 0 when `d` is 0 (only possible with ε = 0, where `n` is then 0 too). */
export function safeDiv(n: number, d: number): number {
  return d === 0 ? 0 : n / d;
}

/** GRPO scalars of already-checked inputs. */
export function grpoScalars(
  rewards: ArrayLike<number>,
  index: GroupIndex,
  epsilon: number,
  normByStd: boolean,
): Float64Array {
  const out = new Float64Array(rewards.length);
  for (const g of statsOf(rewards, index)) {
    const single = g.count === 1;
    const mean = single ? 0 : g.mean;
    const std = single ? 1 : g.std;
    for (const i of g.members) {
      const centred = rewards[i]! - mean;
      out[i] = normByStd ? safeDiv(centred, std + epsilon) : centred;
    }
  }
  return out;
}
