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

// `Tensor` (and the types its public methods mention) come from `@rlvr/tensor`; they are
// re-exported as types so that this package's API documentation is complete on its own.
export type * from "@rlvr/tensor/types";
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
export {
  CausalLM,
  type ForwardCall,
  type ForwardHook,
  type ForwardOptions,
  type ModelExtension,
} from "./model.ts";
export { KVCache, type LayerKV } from "./kv_cache.ts";
export {
  attachLora,
  LORA_TARGETS,
  LoraAdapters,
  type LoraOptions,
  type LoraTarget,
} from "./lora.ts";
export { attachValueHead, ValueHead, type ValueHeadOptions, values } from "./value_head.ts";
export {
  type Checkpoint,
  type CheckpointData,
  CheckpointError,
  type CheckpointProblem,
  loadCheckpoint,
  type LoadCheckpointOptions,
  saveCheckpoint,
  type SaveCheckpointOptions,
} from "./checkpoint.ts";
export {
  type ApplyChatTemplateOptions,
  CHAR_CHAT_TEMPLATE,
  CHAR_SPECIAL_TOKENS,
  CharTokenizer,
  type CharTokenizerOptions,
  type ChatContentPart,
  type ChatMessage,
  type DecodeOptions,
  type EncodeOptions,
  HfTokenizer,
  type HfTokenizerOptions,
  loadTokenizer,
  type Tokenizer,
} from "./tokenizer/mod.ts";
export {
  type FinishReason,
  generate,
  type GeneratedSequence,
  type GenerateOptions,
  type GenerateResult,
  type GenerateStep,
  type GenerationTiming,
  type SamplerConfig,
  type SamplingOrder,
  type SamplingParams,
} from "./generate.ts";
export {
  type CompletionScores,
  scoreCompletions,
  type ScoreItem,
  type ScoreOptions,
} from "./score.ts";
export {
  originalVlName,
  type VisionConfig,
  visionConfig,
  type VisionConfigInit,
  type VisionLanguageConfig,
  visionLanguageConfig,
  visionParameterShapes,
  vlConfigFromHf,
  vlConfigToHf,
} from "./vision/config.ts";
export {
  type GridThw,
  type MropePositions,
  mropePositions,
  mropeTables,
  type MropeTokens,
  visionPatchPositions,
  visionRopeTables,
} from "./vision/rope.ts";
export { VisionTower } from "./vision/tower.ts";
export {
  type ImageInputs,
  VISION_EXTENSION,
  type VisionForwardOptions,
  type VisionForwardResult,
  VisionLanguageModel,
} from "./vision/model.ts";
export { loadVisionLanguageModel, saveVisionLanguageModel } from "./vision/checkpoint.ts";
export {
  concatPixels,
  expandImageTokens,
  imageInputs,
  type ProcessedPixels,
} from "./vision/inputs.ts";
