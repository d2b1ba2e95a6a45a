/**
 * `@rlvr/common/fs`: the file-system half of `@rlvr/common` (needs Deno and its `--allow-read` /
 * `--allow-write` permissions; the main entry `@rlvr/common` runs anywhere).
 *
 * - **JSON Lines files** (`jsonl_fs.ts`): {@link JsonlWriter} and {@link AppendFile} (one `write`
 *   per record on an O_APPEND file, a torn last line refused or cut), {@link readJsonl}
 *   (complete lines only; corruption before the last line is an error), {@link truncateJsonl}
 *   (atomic, for resume) and the streaming {@link readLines}; under {@link AppendFile},
 *   {@link SerialFileWriter} (ordered whole writes to an open file, for other record formats).
 * - **Atomic writes** (`atomic.ts`): {@link writeFileAtomic}, {@link atomicTemporaryTarget} (to
 *   find the temporaries a killed writer left) and {@link readTextOrNull}.
 *
 * @example Usage
 * ```ts
 * import { JsonlWriter, readJsonl } from "@rlvr/common/fs";
 * import { Xoshiro128ss } from "@rlvr/common";
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
export * from "./jsonl_fs.ts";
