/**
 * Hugging Face checkpoint folders on disk (`@rlvr/policy/fs`, needs Deno): {@link loadCheckpoint}
 * reads a folder's files and loads them through the one loader of `checkpoint.ts` (the one
 * `loadCheckpointFromFiles` and `loadCheckpointFromUrl` use, so the checks and errors are the
 * same), and {@link saveCheckpoint} writes the files `checkpointFiles` would make.
 *
 * Design decisions:
 * - **Atomic files.** Every file is written to a temporary name in the same directory, flushed,
 *   then renamed, so a crash never leaves a partial file under a final name. A save is not atomic
 *   across files: an interrupted save can mix old and new files (loading then fails validation if
 *   the architecture changed). Save into a fresh directory and rename it for an all-or-nothing
 *   swap. Weight files of an earlier save that the new layout does not use are removed, so that
 *   they cannot be loaded instead of the new ones, and so are temporaries left by a killed save;
 *   other files (tokenizer, README) are left alone. Two saves into one folder at the same time are
 *   not supported.
 * - **One file in memory at a time.** The folder's files are read as the loader asks for them
 *   (a sharded checkpoint one shard after another), and a save serializes one weight file at a
 *   time, so neither holds more than one shard's bytes.
 *
 * @module
 */

import { join } from "node:path";
import { atomicTemporaryTarget, writeFileAtomic } from "@rlvr/common/fs";
import { saveSafetensors } from "@rlvr/tensor/fs";
import {
  type Checkpoint,
  type CheckpointData,
  CONFIG_FILE,
  INDEX_FILE,
  loadCheckpointFrom,
  type LoadCheckpointOptions,
  planCheckpoint,
  type SaveCheckpointOptions,
  WEIGHTS_FILE,
} from "./checkpoint.ts";
import { dirSource } from "./file_source.ts";

const SHARD_NAME = /^model-\d{5}-of-\d{5}\.safetensors$/;
/** The files this module (and `saveSafetensors`) write, whose temporaries it may remove. */
const OWN_FILE =
  /^(config\.json|generation_config\.json|model\.safetensors(\.index\.json)?|model-\d{5}-of-\d{5}\.safetensors)$/;
/**
 * Temporaries named `<file>.tmp-<12 hex digits>`, as saves wrote them before they moved to
 * `writeFileAtomic`: a folder saved into by an older version may still hold some.
 */
const OLD_TEMPORARY = /^(.+)\.tmp-[0-9a-f]{12}$/;

/** Whether `name` is a temporary of one of this module's files (a killed save left it). */
function ownTemporary(name: string): boolean {
  const target = atomicTemporaryTarget(name) ?? OLD_TEMPORARY.exec(name)?.[1] ?? null;
  return target !== null && OWN_FILE.test(target);
}

/**
 * Loads a Hugging Face checkpoint folder: `config.json` (Llama / Qwen2 / Qwen3, see
 * `configFromHf`), the weights from `model.safetensors` or from `model.safetensors.index.json`
 * and its shards (BF16/F16/F64 widened to f32), and `generation_config.json` if present.
 *
 * Every tensor is checked against `parameterShapes(config)`; all missing, unexpected, mis-shaped
 * and non-float tensors are reported together in one `CheckpointError`. In a checkpoint with
 * tied embeddings, an `lm_head.weight` (which transformers sometimes writes) is accepted only if it
 * is bitwise equal to `model.embed_tokens.weight`, and is then dropped. Needs `--allow-read`; the
 * same files in memory or under a URL load with `loadCheckpointFromFiles` / `loadCheckpointFromUrl`
 * of `@rlvr/policy` (which a browser can use).
 *
 * @param dir The checkpoint folder.
 * @param options Allowed extra tensors and the backend.
 * @returns The config, the parameters in `parameterShapes` order, the extras and the generation
 * config.
 * @throws {CheckpointError} when the tensors do not match the config; `Error` naming the path and
 * what is expected there when a file is missing; the config's `RangeError` prefixed with its path.
 *
 * @example Usage
 * ```ts
 * import { loadCheckpoint, saveCheckpoint } from "@rlvr/policy/fs";
 * import { modelConfig, parameterShapes } from "@rlvr/policy";
 * import { zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({
 *   modelType: "qwen2", vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 * });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, zeros(s)]));
 * const dir = await Deno.makeTempDir();
 * await saveCheckpoint(dir, { config, params });
 * const ckpt = await loadCheckpoint(dir);
 * assert.deepEqual(ckpt.config, config);
 * assert.deepEqual([...ckpt.params.keys()], [...params.keys()]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadCheckpoint(
  dir: string,
  options: LoadCheckpointOptions = {},
): Promise<Checkpoint> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(
        `loadCheckpoint: no checkpoint folder at ${dir}; expected a directory with ${CONFIG_FILE} ` +
          `and ${WEIGHTS_FILE} (or ${INDEX_FILE} with its shards)`,
      );
    }
    throw e;
  }
  if (!info.isDirectory) {
    throw new Error(
      `loadCheckpoint: ${dir} is a file; pass the checkpoint folder that holds ${CONFIG_FILE} ` +
        `and the weights`,
    );
  }
  return await loadCheckpointFrom(dirSource(dir), { fn: "loadCheckpoint", arg: "dir" }, options);
}

/** Writes text with `writeFileAtomic`; a failure names the file and the save. */
async function writeTextAtomic(path: string, text: string): Promise<void> {
  try {
    await writeFileAtomic(path, text);
  } catch (e) {
    throw new Error(
      `saveCheckpoint: could not write ${path} (the previous file, if any, is unchanged): ${
        (e as Error).message
      }`,
    );
  }
}

/**
 * Saves a checkpoint as a Hugging Face folder that transformers and {@link loadCheckpoint} read:
 * `config.json`, `model.safetensors` (or `model-0000i-of-0000n.safetensors` shards and
 * `model.safetensors.index.json` when the tensors exceed `maxShardBytes`) and
 * `generation_config.json` when given: the files `checkpointFiles` of `@rlvr/policy` makes. The
 * folder is created if missing. `params` must be exactly `parameterShapes(config)` in f32;
 * everything is checked before the first byte is written. Each file is replaced atomically (see
 * the module doc). Needs `--allow-read --allow-write`.
 *
 * @param dir Destination folder.
 * @param data Config, parameters, extras and generation config.
 * @param options Storage dtype and shard size.
 * @throws {CheckpointError} listing every missing, unexpected or mis-shaped parameter.
 *
 * @example Usage
 * ```ts
 * import { saveCheckpoint } from "@rlvr/policy/fs";
 * import { modelConfig, parameterShapes } from "@rlvr/policy";
 * import { ones } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 2, numHeads: 2 });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, ones(s)]));
 * const dir = await Deno.makeTempDir();
 * await saveCheckpoint(`${dir}/ckpt`, { config, params }, { dtype: "bf16", maxShardBytes: 256 });
 * const index = JSON.parse(await Deno.readTextFile(`${dir}/ckpt/model.safetensors.index.json`));
 * assert.equal(index.weight_map["model.norm.weight"].endsWith(".safetensors"), true);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveCheckpoint(
  dir: string,
  data: CheckpointData,
  options: SaveCheckpointOptions = {},
): Promise<void> {
  const plan = planCheckpoint("saveCheckpoint", dir, data, options);
  await Deno.mkdir(dir, { recursive: true });
  const written = new Set<string>();
  for (const w of plan.weights) {
    await saveSafetensors(join(dir, w.name), w.tensors, w.options);
    written.add(w.name);
  }
  for (const f of plan.json) {
    await writeTextAtomic(join(dir, f.name), f.text);
    written.add(f.name);
  }
  // Weight files of an earlier save in another layout would shadow or confuse the new one, and
  // temporaries of a save that was killed would pile up, each as large as a shard.
  for await (const e of Deno.readDir(dir)) {
    const stale = e.isFile && !written.has(e.name) &&
      (e.name === WEIGHTS_FILE || e.name === INDEX_FILE || SHARD_NAME.test(e.name) ||
        ownTemporary(e.name));
    if (stale) await Deno.remove(join(dir, e.name));
  }
}
