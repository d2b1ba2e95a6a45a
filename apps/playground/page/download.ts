/**
 * What the playground offers for download: the trained policy as a Hugging Face checkpoint
 * folder in a `.zip` ({@link modelFiles}, {@link zipFiles}), and the records as JSONL
 * ({@link jsonl}), the lines of a run directory's `metrics.jsonl` and `eval.jsonl`.
 *
 * Design decisions:
 * - **The files `deno task train` writes**: `checkpointFiles` of `@rlvr/policy` lays out the
 *   weights, `config.json` and `generation_config.json` as `saveCheckpoint` does in a
 *   checkpoint folder (a value head as its `v_head.*` tensors), and the tokenizer files are the
 *   ones the policy was loaded from (training does not change a tokenizer); so the folder
 *   unzipped loads with `loadPolicy`, `deno task eval` and `transformers`.
 * - **A zip built in the page** with fflate (pinned in `deno.json`): one download instead of
 *   five, no server involved; stored without compression (`level: 0`), since f32 weights hardly
 *   compress and the zip is ready at once.
 *
 * @module
 */

import { checkpointFiles, type FileContents, LoraAdapters, ValueHead } from "@rlvr/policy";
import type { Tensor } from "@rlvr/tensor";
import { zipSync } from "fflate";
import type { Learner } from "../../train/loop/learner.ts";

/** The tokenizer files copied into a downloaded checkpoint when the source has them. */
export const TOKENIZER_FILES: readonly string[] = Object.freeze([
  "tokenizer.json",
  "tokenizer_config.json",
  "chat_template.jinja",
]);

function fileBytes(files: FileContents, name: string): Uint8Array | null {
  const v = files instanceof Map
    ? (files as ReadonlyMap<string, Uint8Array | ArrayBuffer | string>).get(name)
    : (files as Readonly<Record<string, Uint8Array | ArrayBuffer | string>>)[name];
  if (v === undefined) return null;
  if (typeof v === "string") return new TextEncoder().encode(v);
  return v instanceof ArrayBuffer ? new Uint8Array(v) : v;
}

/**
 * The trained policy's checkpoint folder as files: the weights (and a value head), `config.json`,
 * `generation_config.json` when the policy had one, and the tokenizer files of `source`.
 * Read it between steps: it reads the live tensors.
 *
 * @param learner The run's learner.
 * @param source The files the policy was loaded from (for the tokenizer files).
 * @returns File name → bytes.
 * @throws Error for a LoRA learner (its checkpoint is the adapters, not a full model).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { loadCheckpointFromFiles } from "@rlvr/policy";
 * import { loadLearner } from "../../train/loop/learner.ts";
 * import { modelFiles } from "./download.ts";
 * import assert from "node:assert/strict";
 * const learner = await loadLearner(await validateConfig(defaultConfig()), null);
 * const files = await modelFiles(learner, { "tokenizer.json": "{}" });
 * assert.deepEqual(Object.keys(files).sort(), [
 *   "config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
 * ]);
 * const back = await loadCheckpointFromFiles(files);
 * assert.deepEqual(back.config, learner.model.config);
 * learner.dispose();
 * ```
 */
export async function modelFiles(
  learner: Learner,
  source: FileContents,
): Promise<Record<string, Uint8Array>> {
  const model = learner.model;
  if (model.extension("lora") instanceof LoraAdapters) {
    throw new Error(
      "modelFiles: the policy trains LoRA adapters; download a full fine-tuned model " +
        "(a recipe without model.lora)",
    );
  }
  const extra = new Map<string, Tensor>();
  const head = model.extension("valueHead");
  if (head instanceof ValueHead) { for (const [n, t] of head.namedParameters()) extra.set(n, t); }
  const generationConfig = learner.init.generationConfig;
  const files = await checkpointFiles({
    config: model.config,
    params: model.params,
    extra,
    ...(generationConfig !== null ? { generationConfig } : {}),
  });
  for (const name of TOKENIZER_FILES) {
    const bytes = fileBytes(source, name);
    if (bytes !== null) files[name] = bytes;
  }
  return files;
}

/**
 * A zip of `files` in one folder (`<folder>/<name>`), stored (not compressed).
 *
 * @param files File name → bytes.
 * @param folder The folder inside the zip (default: none, files at the top).
 * @returns The zip's bytes.
 *
 * @example Usage
 * ```ts
 * import { zipFiles } from "./download.ts";
 * import { unzipSync } from "fflate";
 * import assert from "node:assert/strict";
 * const zip = zipFiles({ "config.json": new TextEncoder().encode("{}") }, "tiny-grpo");
 * assert.deepEqual(Object.keys(unzipSync(zip)), ["tiny-grpo/config.json"]);
 * ```
 */
export function zipFiles(files: Readonly<Record<string, Uint8Array>>, folder = ""): Uint8Array {
  const prefix = folder === "" ? "" : `${folder.replace(/\/+$/, "")}/`;
  const entries: Record<string, Uint8Array> = {};
  for (const [name, bytes] of Object.entries(files)) entries[`${prefix}${name}`] = bytes;
  // A fixed time: the same files give the same zip.
  return zipSync(entries, { level: 0, mtime: new Date(Date.UTC(2025, 0, 1)) });
}
