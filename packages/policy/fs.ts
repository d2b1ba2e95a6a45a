/**
 * `@rlvr/policy/fs`: Hugging Face checkpoint and tokenizer folders on disk (needs Deno and
 * `--allow-read` / `--allow-write`). The main entry `@rlvr/policy` runs anywhere and loads the same
 * files from memory or a URL (`loadCheckpointFromFiles`, `loadCheckpointFromUrl`,
 * `loadTokenizerFromFiles`, ...); the loaders here read a folder's files and hand them to the
 * same code, so the checks and errors are the same.
 *
 * - {@link loadCheckpoint} / {@link saveCheckpoint}: `config.json`, `model.safetensors` (or
 *   shards and an index), `generation_config.json`; saves are atomic per file.
 * - {@link loadTokenizer}: a `CharTokenizer` or an `HfTokenizer`, by the folder's marker.
 * - {@link loadVisionLanguageModel} / {@link saveVisionLanguageModel}: Qwen2-VL and Qwen2.5-VL folders.
 *
 * @example Usage
 * ```ts
 * import { loadCheckpoint, loadTokenizer, saveCheckpoint } from "@rlvr/policy/fs";
 * import { CharTokenizer, modelConfig, parameterShapes } from "@rlvr/policy";
 * import { zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const tok = CharTokenizer.fromCorpus(["0123456789+="]);
 * const config = modelConfig({
 *   vocabSize: tok.vocabSize, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 * });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, zeros(s)]));
 * const dir = await Deno.makeTempDir();
 * await saveCheckpoint(dir, { config, params });
 * await tok.save(dir);
 * assert.deepEqual((await loadCheckpoint(dir)).config, config);
 * assert.ok((await loadTokenizer(dir)) instanceof CharTokenizer);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

export { loadCheckpoint, saveCheckpoint } from "./checkpoint_fs.ts";
export { loadTokenizer } from "./tokenizer/load_fs.ts";
export { loadVisionLanguageModel, saveVisionLanguageModel } from "./vision/checkpoint_fs.ts";
