/**
 * Grouping responses by prompt and the per-group statistics the group-relative estimators use.
 *
 * Design: groups come from an `index` of ids, one per response (veRL's `uid`), so groups may be
 * ragged and interleaved, as after dynamic sampling or filtering. Fixed-size contiguous groups
 * (TRL's `num_generations`) are one special case, built by {@link fixedGroupIndex}, which is
 * where "the group size must divide the batch" is checked. Statistics are float64 two-pass
 * (a mean shifted by the group's first reward, then the centred sum of squares); the standard deviation is the **unbiased** sample std,
 * as `torch.std` in veRL and TRL. A singleton group has mean = its reward and std 0 here by
 * default (`torch.std` would give NaN), or veRL's convention `{ singletons: "verl" }`: mean 0 and
 * std 1, what veRL's `grpo`, `grpo_vectorized` (`group_mean_std`), `gpg`, `gdpo` use, so that a
 * singleton's GRPO advantage is its raw reward over `1 + ε`. Each estimator applies its
 * reference's singleton rule (veRL's `rloo` keeps the raw reward, `rloo_vectorized` gives 0,
 * `opo` and `reinforce_plus_plus_baseline` subtract a baseline of 0, `grpo_passk` rejects them).
 *
 * @module
 */

import { checkChoice, checkIndex, checkSequence } from "./_validate.ts";
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
  /** Unbiased (Bessel-corrected) standard deviation; 0 for a singleton (1 with `singletons: "verl"`). */
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

/** Options of {@link groupStatistics}. */
export interface GroupStatisticsOptions {
  /**
   * Statistics of a one-member group: `"own"` (default) its reward as mean and std 0; `"verl"`
   * mean 0 and std 1 (veRL `compute_grpo_outcome_advantage`, `group_mean_std`).
   */
  singletons?: "own" | "verl";
}

/**
 * Per-group count, mean and unbiased standard deviation of `rewards`:
 * `μ_g = (1/n) Σ_{i∈g} R_i`, `σ_g = sqrt(Σ_{i∈g} (R_i − μ_g)² / (n − 1))` (for `n = 1`: mean
 * `R_i` and std 0, or with `singletons: "verl"` mean 0 and std 1).
 *
 * @example Usage
 * ```ts
 * import { groupStatistics } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const [g] = groupStatistics([1, 0, 1], [7, 7, 7]);
 * // mean 2/3; squared deviations 1/9 + 4/9 + 1/9 = 2/3; over n − 1 = 2 gives 1/3
 * assert.ok(Math.abs(g!.mean - 2 / 3) < 1e-15 && Math.abs(g!.std - Math.sqrt(1 / 3)) < 1e-15);
 * const [s] = groupStatistics([5], ["x"]);
 * assert.deepEqual([s!.mean, s!.std], [5, 0]);
 * const [v] = groupStatistics([5], ["x"], { singletons: "verl" });
 * assert.deepEqual([v!.mean, v!.std], [0, 1]);
 * ```
 */
export function groupStatistics(
  rewards: ArrayLike<number>,
  index: GroupIndex,
  options: GroupStatisticsOptions = {},
): GroupStats[] {
  const batch = Array.isArray(index) ? index.length : 0;
  checkIndex("groupStatistics", "index", index, batch);
  checkSequence("groupStatistics", "rewards", rewards, batch, "index");
  const singletons = checkChoice(
    "groupStatistics",
    "singletons",
    options.singletons ?? "own",
    ["own", "verl"],
  );
  const stats = statsOf(rewards, index);
  if (singletons === "own") return stats;
  return stats.map((g) => (g.count === 1 ? { ...g, mean: 0, std: 1 } : g));
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
