/**
 * @module
 *
 * `@rlvr/policy`: decoder-only transformer (Llama/Qwen2 family), Hugging Face checkpoint and
 * tokenizer loading, KV-cache generation and token log-probs, built on `@rlvr/tensor`.
 *
 * This entry runs on the web platform too: checkpoints and tokenizers load from bytes in memory
 * (`loadCheckpointFromFiles`, `loadTokenizerFromFiles`, `loadVisionLanguageModelFromFiles`) or a
 * base URL (`...FromUrl`), and `checkpointFiles` / `toFiles()` give a save's bytes. Folders on
 * disk (`loadCheckpoint`, `saveCheckpoint`, `loadTokenizer`, `loadVisionLanguageModel`,
 * `saveVisionLanguageModel`) are in `@rlvr/policy/fs`, which needs Deno, and go through the same
 * loaders. The tokenizers' `load(dir)` / `save(dir)` methods need Deno too and say so elsewhere.
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
  type DeviceChunk,
  deviceDecodeProblem,
  DeviceDecoder,
  type DeviceDecoderOptions,
  type DeviceFilters,
} from "./device_decode/decoder.ts";
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
  checkpointFiles,
  type CheckpointProblem,
  loadCheckpointFromFiles,
  type LoadCheckpointFromFilesOptions,
  loadCheckpointFromUrl,
  type LoadCheckpointFromUrlOptions,
  type LoadCheckpointOptions,
  type SaveCheckpointOptions,
} from "./checkpoint.ts";
export type { FileContents } from "./file_source.ts";
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
  loadTokenizerFromFiles,
  loadTokenizerFromUrl,
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
  VISION_LANGUAGE_MODEL_TYPES,
  type VisionActivation,
  type VisionConfig,
  visionConfig,
  type VisionConfigInit,
  type VisionKind,
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
  visionWindowIndex,
  type VisionWindows,
  type VisionWindowSizes,
  visionWindowTokens,
} from "./vision/window.ts";
export {
  type ImageInputs,
  VISION_EXTENSION,
  type VisionForwardOptions,
  type VisionForwardResult,
  VisionLanguageModel,
} from "./vision/model.ts";
export {
  loadVisionLanguageModelFromFiles,
  loadVisionLanguageModelFromUrl,
} from "./vision/checkpoint.ts";
export {
  concatPixels,
  expandImageTokens,
  imageInputs,
  type ProcessedPixels,
} from "./vision/inputs.ts";
