/**
 * Safetensors on disk: reading files, atomic saving and sharded checkpoints
 * (`model.safetensors.index.json`). The format itself is in `safetensors.ts`.
 *
 * Design decisions:
 * - **Whole-file reads.** Deno has no mmap, so a file is read into memory once with
 *   `Deno.readFile` and tensors are decoded from that buffer. A sharded checkpoint is loaded one
 *   shard at a time, so the peak is one shard's bytes plus the tensors made so far.
 * - **Atomic saves.** {@link saveSafetensors} writes with `writeFileAtomic` of `@rlvr/common/fs`:
 *   a temporary file in the same directory, flushed to disk, then renamed over `<path>`. A rename
 *   within one directory is atomic, so a reader (or a crash) sees either the old file or the
 *   complete new one, never a half-written checkpoint. On failure the temporary file is removed.
 * - **Sharded checkpoints load each shard once**, materialising only the tensors the index maps
 *   to it. Shard names must be relative paths inside the index's directory (no `..`, not
 *   absolute), so an index cannot point the loader at arbitrary files.
 *
 * @module
 */

import { writeFileAtomic } from "@rlvr/common/fs";
import type { Tensor } from "../tensor.ts";
import {
  parseSafetensors,
  SafetensorsError,
  type SafetensorsFile,
  type SerializeOptions,
  serializeTo,
  type TensorCollection,
  type TensorLoadOptions,
} from "./safetensors.ts";
import { parseSafetensorsIndex, type SafetensorsIndex } from "./safetensors_index.ts";

export type { SafetensorsIndex };

/**
 * Options of {@link loadSafetensors} and {@link loadShardedSafetensors}.
 *
 * @example Usage
 * ```ts
 * import { type LoadOptions, loadSafetensors } from "@rlvr/tensor/fs";
 * import { serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const bytes = await serializeSafetensors({ a: tensor([1]), b: tensor([2]) });
 * const opts: LoadOptions = { filter: (name) => name !== "b" };
 * assert.deepEqual([...(await loadSafetensors(bytes, opts)).keys()], ["a"]);
 * ```
 */
export interface LoadOptions extends TensorLoadOptions {
  /** Loads only the tensors for which this returns true (default: all). */
  filter?: (name: string) => boolean;
  /** Name of the bytes' origin for errors when loading from a `Uint8Array`. */
  source?: string;
}

/** Reads a file, turning "not found" into an error that names the path and what it was for. */
async function readBytes(path: string | URL, source: string, what: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new SafetensorsError(source, undefined, `${what} not found at ${String(path)}`);
    }
    throw new SafetensorsError(
      source,
      undefined,
      `cannot read ${what} at ${String(path)}: ${(e as Error).message}`,
    );
  }
}

/**
 * Reads and parses a safetensors file (see `parseSafetensors`); no tensor is allocated yet.
 * Needs `--allow-read`.
 *
 * @param path The file.
 * @returns The parsed file, with the path as its `source`.
 *
 * @example Usage
 * ```ts
 * import { readSafetensorsFile, saveSafetensors } from "@rlvr/tensor/fs";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await saveSafetensors(`${dir}/w.safetensors`, { w: tensor([1, 2]) });
 * const file = await readSafetensorsFile(`${dir}/w.safetensors`);
 * assert.deepEqual(file.entry("w").shape, [2]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readSafetensorsFile(path: string | URL): Promise<SafetensorsFile> {
  const source = String(path);
  return parseSafetensors(await readBytes(path, source, "safetensors file"), { source });
}

/**
 * Loads every tensor (or those passing `filter`) of a safetensors file or buffer as a map from
 * name to tensor, in file order.
 *
 * @param file A path (needs `--allow-read`) or the file contents.
 * @param options Backend, dtype override, filter and source name.
 * @returns Name → tensor.
 *
 * @example Usage
 * ```ts
 * import { loadSafetensors } from "@rlvr/tensor/fs";
 * import { serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const bytes = await serializeSafetensors({ w: tensor([[1, 2]]), mask: tensor([true]) });
 * const loaded = await loadSafetensors(bytes);
 * assert.deepEqual(await loaded.get("w")!.toArray(), [[1, 2]]);
 * assert.equal(loaded.get("mask")!.dtype, "bool");
 * ```
 */
export async function loadSafetensors(
  file: string | URL | Uint8Array,
  options: LoadOptions = {},
): Promise<Map<string, Tensor>> {
  const parsed = file instanceof Uint8Array
    ? parseSafetensors(file, options.source !== undefined ? { source: options.source } : {})
    : await readSafetensorsFile(file);
  return parsed.tensors(options);
}

/**
 * Writes `bytes` to `path` atomically with `writeFileAtomic` (see the module doc); a failure is
 * a {@link SafetensorsError} naming the file. Needs `--allow-write`.
 */
async function writeAtomic(path: string, bytes: Uint8Array): Promise<void> {
  try {
    await writeFileAtomic(path, bytes);
  } catch (e) {
    throw new SafetensorsError(
      path,
      undefined,
      `could not save (the previous file, if any, is unchanged): ${(e as Error).message}`,
    );
  }
}

/**
 * Serializes tensors (see `serializeSafetensors`) and writes them to `path` atomically: the data
 * goes to a temporary file in the same directory (`writeFileAtomic` of `@rlvr/common/fs`), is
 * flushed to disk, and is then renamed over `path`, so a crash never leaves a half-written
 * checkpoint. Needs `--allow-write`.
 *
 * @param path Destination file (overwritten if it exists).
 * @param tensors Name → tensor.
 * @param options Metadata and storage dtypes.
 *
 * @example Usage
 * ```ts
 * import { loadSafetensors, saveSafetensors } from "@rlvr/tensor/fs";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/model.safetensors`;
 * await saveSafetensors(path, { w: tensor([1.5, -2]) }, { metadata: { step: "10" } });
 * await saveSafetensors(path, { w: tensor([3, 4]) }); // overwrite
 * assert.deepEqual(await (await loadSafetensors(path)).get("w")!.toArray(), [3, 4]);
 * assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["model.safetensors"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveSafetensors(
  path: string,
  tensors: TensorCollection,
  options: SerializeOptions = {},
): Promise<void> {
  await writeAtomic(path, await serializeTo(path, tensors, options));
}

/**
 * Reads and validates a sharded-checkpoint index (`{metadata, weight_map: {name: file}}`).
 * Needs `--allow-read`.
 *
 * @param indexPath Path of `model.safetensors.index.json`.
 * @returns The index with its weight map.
 *
 * @example Usage
 * ```ts
 * import { readSafetensorsIndex } from "@rlvr/tensor/fs";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const index = { metadata: { total_size: 8 }, weight_map: { a: "one.safetensors", b: "two.safetensors" } };
 * await Deno.writeTextFile(`${dir}/model.safetensors.index.json`, JSON.stringify(index));
 * const parsed = await readSafetensorsIndex(`${dir}/model.safetensors.index.json`);
 * assert.equal(parsed.weightMap.get("b"), "two.safetensors");
 * assert.deepEqual(parsed.metadata, { total_size: 8 });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readSafetensorsIndex(indexPath: string): Promise<SafetensorsIndex> {
  return parseSafetensorsIndex(await readBytes(indexPath, indexPath, "index file"), indexPath);
}

/**
 * Loads a sharded checkpoint from its `model.safetensors.index.json`: each shard file named in
 * `weight_map` is read once and the tensors the index assigns to it are materialised. Errors name
 * a missing shard file (and a tensor that needs it) or a tensor the shard lacks. If anything fails,
 * tensors already created are disposed. Needs `--allow-read`.
 *
 * @param indexPath Path of the index; shard paths are relative to its directory.
 * @param options Backend, dtype override and filter.
 * @returns Name → tensor for every tensor of the weight map (that passes `filter`).
 *
 * @example Usage
 * ```ts
 * import { loadShardedSafetensors, saveSafetensors } from "@rlvr/tensor/fs";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await saveSafetensors(`${dir}/model-00001-of-00002.safetensors`, { a: tensor([1, 2]) });
 * await saveSafetensors(`${dir}/model-00002-of-00002.safetensors`, { b: tensor([3]) });
 * const weight_map = { a: "model-00001-of-00002.safetensors", b: "model-00002-of-00002.safetensors" };
 * await Deno.writeTextFile(`${dir}/model.safetensors.index.json`, JSON.stringify({ weight_map }));
 * const weights = await loadShardedSafetensors(`${dir}/model.safetensors.index.json`);
 * assert.deepEqual(await weights.get("b")!.toArray(), [3]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadShardedSafetensors(
  indexPath: string,
  options: LoadOptions = {},
): Promise<Map<string, Tensor>> {
  const index = await readSafetensorsIndex(indexPath);
  const byShard = new Map<string, string[]>();
  for (const [name, shard] of index.weightMap) {
    if (options.filter !== undefined && !options.filter(name)) continue;
    const list = byShard.get(shard);
    if (list === undefined) byShard.set(shard, [name]);
    else list.push(name);
  }
  const out = new Map<string, Tensor>();
  try {
    for (const [shard, names] of byShard) {
      const path = index.dir + shard;
      const bytes = await readBytes(
        path,
        indexPath,
        `shard file ${JSON.stringify(shard)} (needed for ${names.length} tensor(s), e.g. ` +
          `${JSON.stringify(names[0])})`,
      );
      const file = parseSafetensors(bytes, { source: path });
      for (const name of names) {
        if (!file.has(name)) {
          throw new SafetensorsError(
            indexPath,
            name,
            `weight_map assigns it to shard ${JSON.stringify(shard)}, but that file has no such ` +
              `tensor; the index and the shards are out of sync`,
          );
        }
        out.set(name, file.tensor(name, options));
      }
    }
  } catch (e) {
    for (const t of out.values()) t.dispose();
    throw e;
  }
  return out;
}
