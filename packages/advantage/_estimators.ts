/**
 * The estimator registry itself and the helpers the built-in estimators use to read a
 * {@link ResolvedInput} when they register. The public functions over it
 * (`registerEstimator`, `getEstimator`, `estimatorNames`) and the list of built-in files are in
 * `registry.ts`; this module imports no estimator, so each estimator's file can register itself
 * without an import cycle.
 *
 * @module
 */

import { Registry } from "@rlvr/common";
import { missing } from "./_validate.ts";
import type { EstimatorFn, ResolvedInput } from "./registry.ts";
import type { GroupIndex, TokenMatrix } from "./types.ts";

/** Every estimator, by key (built-in ones register at the end of their files). */
export const ESTIMATORS: Registry<EstimatorFn> = new Registry<EstimatorFn>("estimator");

/** Copies the defined fields of `from` named in `keys` (exactOptionalPropertyTypes-safe). */
export function pick<T extends object, K extends keyof T>(
  from: T,
  keys: readonly K[],
): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

/** The group ids, or the "is required" error naming `key`. */
export function needIndex(key: string, input: ResolvedInput): GroupIndex {
  return input.index ??
    missing(key, "index", "group ids per response, or groupSize for fixed-size groups");
}

/**
 * The sequence rewards: the caller's, or the row sums of the token rewards over **every**
 * position, masked ones included (veRL's `token_level_rewards.sum(dim=-1)`; a reward placed
 * under a 0 of the mask counts). A non-finite value anywhere in a row is an error naming it
 * (veRL would return NaN advantages).
 */
export function seqRewards(key: string, input: ResolvedInput): ArrayLike<number> {
  if (input.rewards !== undefined) return input.rewards;
  const { data, batch, length } = input.tokenRewards;
  const out = new Float64Array(batch);
  for (let i = 0; i < batch; i++) {
    let s = 0;
    for (let t = 0; t < length; t++) {
      const v = data[i * length + t]!;
      if (!Number.isFinite(v)) {
        throw new RangeError(
          `${key}: tokenRewards[${i}, ${t}] is ${v}; veRL's outcome estimators sum the token rewards over every ` +
            `position (masked ones included), so they must all be finite (put 0 on padding, or pass rewards)`,
        );
      }
      s += v;
    }
    out[i] = s;
  }
  return out;
}

/** The `{ rewards, responseMask, index }` every group-relative outcome estimator takes. */
export function outcomeOf(
  key: string,
  input: ResolvedInput,
): { rewards: ArrayLike<number>; responseMask: TokenMatrix; index: GroupIndex } {
  return {
    rewards: seqRewards(key, input),
    responseMask: input.responseMask,
    index: needIndex(key, input),
  };
}
