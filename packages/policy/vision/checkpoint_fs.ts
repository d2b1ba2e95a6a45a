/**
 * Qwen2-VL and Qwen2.5-VL checkpoint folders on disk (`@rlvr/policy/fs`, needs Deno): the folder counterparts
 * of `loadVisionLanguageModelFromFiles` / `loadVisionLanguageModelFromUrl`, on the same loader,
 * and the saver. Loading and saving go through `loadCheckpoint` / `saveCheckpoint`, so shards,
 * an index, bf16 storage and the one-error report of every mismatched tensor work as they do
 * for text models.
 *
 * @module
 */

import type { Backend } from "@rlvr/tensor";
import type { SaveCheckpointOptions } from "../checkpoint.ts";
import { loadCheckpoint, saveCheckpoint } from "../checkpoint_fs.ts";
import { dirSource } from "../file_source.ts";
import { loadVisionLanguageModelFrom } from "./checkpoint.ts";
import { vlConfigToHf } from "./config.ts";
import type { VisionLanguageModel } from "./model.ts";

/**
 * Loads a Qwen2-VL or Qwen2.5-VL checkpoint folder into a {@link VisionLanguageModel}. Needs `--allow-read`.
 *
 * @example Usage
 * ```ts
 * import { loadVisionLanguageModel, saveVisionLanguageModel } from "@rlvr/policy/fs";
 * import {
 *   modelConfig, VisionLanguageModel, visionConfig, visionLanguageConfig,
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
 * const dir = await Deno.makeTempDir();
 * await saveVisionLanguageModel(dir, model);
 * const loaded = await loadVisionLanguageModel(dir);
 * assert.deepEqual(loaded.config, config);
 * model.dispose();
 * loaded.dispose();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadVisionLanguageModel(
  dir: string,
  options: { backend?: Backend } = {},
): Promise<VisionLanguageModel> {
  return await loadVisionLanguageModelFrom(
    dirSource(dir),
    "loadVisionLanguageModel",
    (o) => loadCheckpoint(dir, o),
    options,
  );
}

/**
 * Saves a {@link VisionLanguageModel} as a Qwen2-VL or Qwen2.5-VL checkpoint folder (by
 * `config.vision.kind`) in the original layout (what the Qwen/Qwen2-VL-* and Qwen/Qwen2.5-VL-*
 * repositories ship and transformers loads). Needs
 * `--allow-read --allow-write`.
 *
 * @example Usage
 * ```ts
 * import { saveVisionLanguageModel } from "@rlvr/policy/fs";
 * import {
 *   modelConfig, VisionLanguageModel, visionConfig, visionLanguageConfig,
 * } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const model = VisionLanguageModel.random(visionLanguageConfig({
 *   text: modelConfig({
 *     modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
 *     numHeads: 2,
 *   }),
 *   vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32 }),
 *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
 * }));
 * const dir = await Deno.makeTempDir();
 * await saveVisionLanguageModel(dir, model, { dtype: "bf16" });
 * const hf = JSON.parse(await Deno.readTextFile(`${dir}/config.json`));
 * assert.equal(hf.model_type, "qwen2_vl");
 * assert.equal(hf.torch_dtype, "bfloat16");
 * model.dispose();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveVisionLanguageModel(
  dir: string,
  model: VisionLanguageModel,
  options: SaveCheckpointOptions = {},
): Promise<void> {
  await saveCheckpoint(dir, {
    config: model.config.text,
    params: model.lm.params,
    extra: model.tower.params,
    hfConfig: vlConfigToHf(model.config),
  }, options);
}
