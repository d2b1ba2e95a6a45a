/**
 * `@rlvr/tensor/fs`: safetensors files on disk (needs Deno and `--allow-read` / `--allow-write`;
 * the main entry `@rlvr/tensor` runs anywhere and parses and serializes the same format from
 * bytes: `parseSafetensors`, `serializeSafetensors`, `parseSafetensorsIndex`).
 *
 * - {@link readSafetensorsFile} and {@link loadSafetensors}: one file (or its bytes) to tensors.
 * - {@link saveSafetensors}: an atomic save (temporary file, fsync, rename).
 * - {@link readSafetensorsIndex} and {@link loadShardedSafetensors}: sharded checkpoints
 *   (`model.safetensors.index.json`).
 *
 * @example Usage
 * ```ts
 * import { loadSafetensors, saveSafetensors } from "@rlvr/tensor/fs";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await saveSafetensors(`${dir}/w.safetensors`, { w: tensor([1, 2]) }, { dtype: "bf16" });
 * const weights = await loadSafetensors(`${dir}/w.safetensors`);
 * assert.deepEqual(await weights.get("w")!.toArray(), [1, 2]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

export {
  type LoadOptions,
  loadSafetensors,
  loadShardedSafetensors,
  readSafetensorsFile,
  readSafetensorsIndex,
  type SafetensorsIndex,
  saveSafetensors,
} from "./io/safetensors_fs.ts";
