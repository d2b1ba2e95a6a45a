/**
 * Atomic file replacement: write a temporary file in the same directory, flush it to disk, then
 * rename it over the target, so a reader (or a resumed run after a crash) sees either the old
 * content or the new one, never a prefix.
 *
 * Design decision: the temporary file lives beside the target (a rename is atomic only within
 * one file system) and is named `.<name>.tmp-<pid>-<random>`, so concurrent writers never share
 * one and leftovers are recognisable. The directory itself is not fsynced (Deno has no portable
 * way to open a directory for syncing); after a power loss the rename may be lost, but the file
 * is never torn.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";

function tempPath(path: string): string {
  const rand = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36);
  return join(dirname(path), `.${basename(path)}.tmp-${Deno.pid}-${rand}`);
}

/** What {@link tempPath} names, so the leftovers can be told apart from other files. */
const TEMPORARY = /^\.(.+)\.tmp-\d+-[0-9a-z]+$/;

/**
 * The name of the file that a temporary of {@link writeFileAtomic} was to replace, or null when
 * `name` is not such a temporary. A writer killed mid-write leaves its temporary behind; the owner
 * of a folder uses this to find and remove the leftovers of its own files.
 *
 * @param name A file's base name (no directory).
 * @returns The target's base name, or null.
 *
 * @example Usage
 * ```ts
 * import { atomicTemporaryTarget } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * assert.equal(atomicTemporaryTarget(".config.json.tmp-4242-1a2b3c"), "config.json");
 * assert.equal(atomicTemporaryTarget("config.json"), null);
 * ```
 */
export function atomicTemporaryTarget(name: string): string | null {
  return TEMPORARY.exec(name)?.[1] ?? null;
}

function bytesOf(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? new TextEncoder().encode(data) : data;
}

/**
 * Writes `data` to `path` atomically (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { writeFileAtomic } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await writeFileAtomic(`${dir}/a.txt`, "one");
 * await writeFileAtomic(`${dir}/a.txt`, "two");
 * assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "two");
 * assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["a.txt"]); // no temp files left
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = tempPath(path);
  const bytes = bytesOf(data);
  try {
    const file = await Deno.open(tmp, { write: true, createNew: true });
    try {
      let written = 0;
      while (written < bytes.length) written += await file.write(bytes.subarray(written));
      await file.syncData();
    } finally {
      file.close();
    }
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

/**
 * The text of `path`, or null when the file does not exist (other errors are thrown): the read of
 * an optional file (a checkpoint's optional state, a run's optional CSV).
 *
 * @example Usage
 * ```ts
 * import { readTextOrNull } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * assert.equal(await readTextOrNull(`${dir}/none.txt`), null);
 * await Deno.writeTextFile(`${dir}/a.txt`, "hi");
 * assert.equal(await readTextOrNull(`${dir}/a.txt`), "hi");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}
