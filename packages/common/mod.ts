/**
 * `@rlvr/common`: the bottom of the workspace's dependency order, shared by every package that
 * reads or writes files of records, draws seeded random numbers or keeps a registry of named
 * functions; it imports nothing. This entry runs anywhere (Deno, browsers, workers); the file
 * system half is `@rlvr/common/fs`.
 *
 * - **JSON Lines text** (`jsonl.ts`): {@link parseJsonl} (complete lines only; corruption before
 *   the last line is an error) and {@link reviveNonFinite}. The files themselves
 *   (`JsonlWriter`, `AppendFile`, `readJsonl`, `truncateJsonl`, `readLines`) and atomic writes
 *   (`writeFileAtomic`, `readTextOrNull`) are in `@rlvr/common/fs`: the run directory of
 *   `@rlvr/train`, the metrics sinks of `@rlvr/infra` and the dataset reader of
 *   `@rlvr/sampling` all use them.
 * - **Seeded generators** (`prng.ts`): {@link Xoshiro128ss}, {@link Sfc32}, {@link mulberry32}
 *   and the seed mixers {@link splitmix32} and {@link fmix32}, behind `@rlvr/tensor`'s `Rng`,
 *   `@rlvr/sampling`'s selection/bandit/dataset generator and `@rlvr/rewards`' task generators
 *   and CAS, each stream unchanged (pinned by tests).
 * - **Registries** (`registry.ts`): {@link Registry}, the one idiom behind `@rlvr/advantage`'s
 *   estimators and `@rlvr/objectives`' policy losses, aggregations and KL estimators: one key
 *   rule, duplicates refused unless `{ override: true }`, registration order, and unknown keys
 *   that list the valid ones with a "did you mean".
 *
 * @example Usage
 * ```ts
 * import { parseJsonl, Xoshiro128ss } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const g = new Xoshiro128ss([1, 2, 3, 4]);
 * const text = [0, 1, 2].map((i) => JSON.stringify({ i, draw: g.next() }) + "\n").join("");
 * assert.equal(parseJsonl(text, "draws.jsonl").records.length, 3);
 * ```
 *
 * @module
 */

export * from "./closest.ts";
export * from "./jsonl.ts";
export * from "./prng.ts";
export * from "./registry.ts";
