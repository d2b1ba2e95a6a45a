/**
 * `@rlvr/common`: the bottom of the workspace's dependency order, shared by every package that
 * reads or writes files of records, draws seeded random numbers or keeps a registry of named
 * functions; it imports nothing.
 *
 * - **JSON Lines** (`jsonl.ts`): {@link JsonlWriter} and {@link AppendFile} (one `write` per
 *   record on an O_APPEND file, a torn last line refused or cut), {@link readJsonl} /
 *   {@link parseJsonl} (complete lines only; corruption before the last line is an error),
 *   {@link truncateJsonl} (atomic, for resume) and the streaming {@link readLines}: the run
 *   directory of `@rlvr/train`, the metrics sinks of `@rlvr/infra` and the dataset reader of
 *   `@rlvr/sampling` all use them.
 * - **Atomic writes** (`atomic.ts`): {@link writeFileAtomic}.
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
 * import { JsonlWriter, readJsonl, Xoshiro128ss } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const g = new Xoshiro128ss([1, 2, 3, 4]);
 * const w = await JsonlWriter.open(`${dir}/draws.jsonl`);
 * for (let i = 0; i < 3; i++) await w.append({ i, draw: g.next() });
 * await w.close();
 * assert.equal((await readJsonl(`${dir}/draws.jsonl`)).records.length, 3);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

export * from "./atomic.ts";
export * from "./closest.ts";
export * from "./jsonl.ts";
export * from "./prng.ts";
export * from "./registry.ts";
