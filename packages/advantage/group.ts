/**
 * Grouping responses by prompt and the per-group statistics the group-relative estimators use.
 *
 * Design: groups come from an `index` of ids, one per response (veRL's `uid`), so groups may be
 * ragged and interleaved, as after dynamic sampling or filtering. Fixed-size contiguous groups
 * (TRL's `num_generations`) are one special case, built by {@link fixedGroupIndex}, which is
 * where "the group size must divide the batch" is checked. Statistics are float64 two-pass
 * (a mean shifted by the group's first reward, then the centred sum of squares); the standard deviation is the **unbiased** sample std,
 * as `torch.std` in veRL and TRL. A singleton group has std 0 here (`torch.std` would give NaN);
 * each estimator then applies its reference's singleton rule.
 *
 * @module
 */

import { checkIndex, checkSequence } from "./_validate.ts";
import { fixedIndex, groupsOf, statsOf } from "./_group.ts";
import type { GroupIndex } from "./types.ts";

/** One group: its id and the batch positions of its responses, in batch order. */
export interface Group {
  /** The group id shared by its members. */
  key: string | number;
  /** Batch positions of the members, ascending. */
  members: number[];
}

/** A {@link Group} with the statistics of its members' rewards. */
export interface GroupStats extends Group {
  /** Number of members. */
  count: number;
  /** Mean reward of the members. */
  mean: number;
  /** Unbiased (Bessel-corrected) standard deviation; 0 for a singleton. */
  std: number;
}

/**
 * Splits the batch into groups by id, in order of first appearance.
 *
 * @example Usage
 * ```ts
 * import { groupMembers } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.deepEqual(groupMembers(["a", "b", "a"]), [
 *   { key: "a", members: [0, 2] },
 *   { key: "b", members: [1] },
 * ]);
 * ```
 */
export function groupMembers(index: GroupIndex): Group[] {
  checkIndex("groupMembers", "index", index, Array.isArray(index) ? index.length : 0);
  return groupsOf(index);
}

/**
 * Per-group count, mean and unbiased standard deviation of `rewards`:
 * `μ_g = (1/n) Σ_{i∈g} R_i`, `σ_g = sqrt(Σ_{i∈g} (R_i − μ_g)² / (n − 1))` (0 when `n = 1`).
 *
 * @example Usage
 * ```ts
 * import { groupStatistics } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const [g] = groupStatistics([1, 0, 1], [7, 7, 7]);
 * // mean 2/3; squared deviations 1/9 + 4/9 + 1/9 = 2/3; over n − 1 = 2 gives 1/3
 * assert.ok(Math.abs(g!.mean - 2 / 3) < 1e-15 && Math.abs(g!.std - Math.sqrt(1 / 3)) < 1e-15);
 * ```
 */
export function groupStatistics(rewards: ArrayLike<number>, index: GroupIndex): GroupStats[] {
  const batch = Array.isArray(index) ? index.length : 0;
  checkIndex("groupStatistics", "index", index, batch);
  checkSequence("groupStatistics", "rewards", rewards, batch, "index");
  return statsOf(rewards, index);
}

/**
 * The index of fixed-size contiguous groups, `[0,…,0, 1,…,1, …]` with `groupSize` copies each
 * (TRL's `num_generations` layout). Throws when `groupSize` does not divide `batch`.
 *
 * @example Usage
 * ```ts
 * import { fixedGroupIndex } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.deepEqual(fixedGroupIndex(6, 3), [0, 0, 0, 1, 1, 1]);
 * assert.throws(() => fixedGroupIndex(10, 4), /batch 10 is not divisible by groupSize 4/);
 * ```
 */
export function fixedGroupIndex(batch: number, groupSize: number): number[] {
  return fixedIndex("fixedGroupIndex", batch, groupSize);
}
