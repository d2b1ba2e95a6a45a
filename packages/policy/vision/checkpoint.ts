/**
 * Qwen2-VL and Qwen2.5-VL checkpoints: `config.json` (`model_type: "qwen2_vl"` or
 * `"qwen2_5_vl"`, `vision_config`, M-RoPE
 * `rope_scaling`) and safetensors holding `visual.*` beside the decoder's `model.*` / `lm_head.*`
 * (or, as newer transformers write them, `model.visual.*` / `model.language_model.*`, renamed on
 * load), read from bytes in memory ({@link loadVisionLanguageModelFromFiles}) or a base URL
 * ({@link loadVisionLanguageModelFromUrl}); a folder is `loadVisionLanguageModel` of
 * `@rlvr/policy/fs` (`checkpoint_fs.ts` here), on the same code. Loading goes through the
 * checkpoint loader of `../checkpoint.ts`, so shards, an index, bf16 storage and the one-error
 * report of every mismatched tensor work as they do for text models.
 *
 * @module
 */

import type { Backend } from "@rlvr/tensor";
import {
  type Checkpoint,
  CONFIG_FILE,
  loadCheckpointFrom,
  type LoadCheckpointOptions,
} from "../checkpoint.ts";
import { type FileContents, type FileSource, filesSource, urlSource } from "../file_source.ts";
import { vlConfigFromHf } from "./config.ts";
import { VisionLanguageModel } from "./model.ts";

/**
 * Loads a Qwen2-VL or Qwen2.5-VL checkpoint from `src` (internal: the folder, files and URL loaders call it):
 * its `config.json` here, its tensors with `load` (the checkpoint loader over the same files).
 *
 * @param src Where the files are.
 * @param fn The caller, for messages.
 * @param load Loads the checkpoint with the options given.
 * @param options The backend.
 * @returns The model.
 *
 * @example Usage
 * ```ts
 * import { loadVisionLanguageModelFrom } from "./checkpoint.ts";
 * import { filesSource } from "../file_source.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   loadVisionLanguageModelFrom(filesSource({}, "mem"), "load", () => Promise.reject()),
 *   /load: could not read mem\/config\.json/,
 * );
 * ```
 */
export async function loadVisionLanguageModelFrom(
  src: FileSource,
  fn: string,
  load: (options: LoadCheckpointOptions) => Promise<Checkpoint>,
  options: { backend?: Backend } = {},
): Promise<VisionLanguageModel> {
  const configPath = src.path(CONFIG_FILE);
  let json: unknown;
  try {
    const bytes = await src.read(CONFIG_FILE);
    if (bytes === null) throw new Error("no such file");
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new Error(
      `${fn}: could not read ${configPath} (a Qwen2-VL or Qwen2.5-VL config.json with ` +
        `model_type "qwen2_vl" or "qwen2_5_vl"): ${(e as Error).message}`,
    );
  }
  const config = vlConfigFromHf(json, configPath);
  const ckpt = await load({
    allowExtra: /^visual\./,
    ...(options.backend === undefined ? {} : { backend: options.backend }),
  });
  return VisionLanguageModel.fromParams(config, new Map([...ckpt.params, ...ckpt.extra]));
}

/**
 * Loads a Qwen2-VL or Qwen2.5-VL checkpoint from its files in memory (by file name, as
 * `loadCheckpointFromFiles` takes them) into a {@link VisionLanguageModel}. Runs anywhere,
 * browsers included.
 *
 * @param files The files by name: bytes, or text for the JSON files.
 * @param options The backend, and what messages call the files (default `"<files>"`).
 * @returns The model.
 *
 * @example Usage
 * ```ts
 * import {
 *   checkpointFiles, loadVisionLanguageModelFromFiles, modelConfig, VisionLanguageModel,
 *   visionConfig, visionLanguageConfig, vlConfigToHf,
 * } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const config = visionLanguageConfig({
 *   text: modelConfig({
 *     modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
 *     numHeads: 2,
 *   }),
 *   vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32 }),
 *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
 * });
 * const model = VisionLanguageModel.random(config, { seed: 1 });
 * const files = await checkpointFiles({
 *   config: config.text, params: model.lm.params, extra: model.tower.params,
 *   hfConfig: vlConfigToHf(config),
 * });
 * const loaded = await loadVisionLanguageModelFromFiles(files);
 * assert.deepEqual(loaded.config, config);
 * model.dispose();
 * loaded.dispose();
 * ```
 */
export function loadVisionLanguageModelFromFiles(
  files: FileContents,
  options: { backend?: Backend; name?: string } = {},
): Promise<VisionLanguageModel> {
  return Promise.resolve().then(() => {
    const fn = "loadVisionLanguageModelFromFiles";
    const src = filesSource(files, options.name ?? "<files>");
    return loadVisionLanguageModelFrom(
      src,
      fn,
      (o) => loadCheckpointFrom(src, { fn, arg: "files" }, o),
      options,
    );
  });
}

/**
 * Loads a Qwen2-VL or Qwen2.5-VL checkpoint from the files under a base URL (fetched one at a time, as
 * `loadCheckpointFromUrl` does) into a {@link VisionLanguageModel}. Runs anywhere `fetch` does.
 *
 * @param baseUrl The folder's URL (a trailing `/` is added when missing).
 * @param options The backend and the fetch to use (default: the global `fetch`).
 * @returns The model.
 *
 * @example Usage
 * ```ts
 * import { loadVisionLanguageModelFromUrl } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const notFound = () => Promise.resolve(new Response("", { status: 404 }));
 * await assert.rejects(
 *   loadVisionLanguageModelFromUrl("https://x.test/vl", { fetch: notFound }),
 *   /could not read https:\/\/x\.test\/vl\/config\.json/,
 * );
 * ```
 */
export function loadVisionLanguageModelFromUrl(
  baseUrl: string | URL,
  options: { backend?: Backend; fetch?: typeof fetch } = {},
): Promise<VisionLanguageModel> {
  return Promise.resolve().then(() => {
    const fn = "loadVisionLanguageModelFromUrl";
    const src = urlSource(baseUrl, options.fetch);
    return loadVisionLanguageModelFrom(
      src,
      fn,
      (o) => loadCheckpointFrom(src, { fn, arg: "url" }, o),
      options,
    );
  });
}
