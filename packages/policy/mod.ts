/**
 * @module
 *
 * `@rlvr/policy`: decoder-only transformer (Llama/Qwen2 family), Hugging Face checkpoint and
 * tokenizer loading, KV-cache generation and token log-probs, built on `@rlvr/tensor`.
 *
 * @example Usage
 * ```ts
 * import { modelConfig, parameterCount } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const c = modelConfig({
 *   modelType: "qwen2", vocabSize: 64, hiddenSize: 32, intermediateSize: 64,
 *   numLayers: 2, numHeads: 4, numKvHeads: 2,
 * });
 * assert.ok(parameterCount(c) > 0);
 * ```
 */

export {
  configFromHf,
  configToHf,
  type Llama3RopeScaling,
  MODEL_TYPES,
  type ModelConfig,
  modelConfig,
  type ModelConfigInit,
  type ModelType,
  parameterCount,
  parameterShapes,
} from "./config.ts";
