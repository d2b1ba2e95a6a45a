/**
 * `@rlvr/common`: the bottom of the workspace's dependency order, shared by every package that
 * reads or writes files of records or draws seeded random numbers; it imports nothing.
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

export { readTextOrNull, writeFileAtomic } from "./atomic.ts";
export {
  AppendFile,
  type AppendFileOptions,
  type JsonlContent,
  JsonlWriter,
  type JsonlWriterOptions,
  parseJsonl,
  readJsonl,
  readLines,
  reviveNonFinite,
  truncateJsonl,
} from "./jsonl.ts";
export { fmix32, mulberry32, Sfc32, splitmix32, type Words4, Xoshiro128ss } from "./prng.ts";
