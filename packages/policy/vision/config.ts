/**
 * Configuration of a Qwen2-VL or Qwen2.5-VL vision-language model: the vision tower's sizes
 * (`vision_config` of a Hugging Face `config.json`), the decoder's (a Qwen2 {@link ModelConfig}),
 * the special token ids that mark images in the text, and the multimodal RoPE sections. The two
 * differ in the tower only ({@link VisionKind}); the decoder, the image tokens and M-RoPE are
 * the same.
 *
 * Both `config.json` layouts are read: the original one (decoder keys at the top level, as the
 * Qwen/Qwen2-VL-* and Qwen/Qwen2.5-VL-* checkpoints ship it) and the newer one with a `text_config` object.
 *
 * @module
 */

import { fail, int } from "../_check.ts";
import { configFromHf, configToHf, type ModelConfig } from "../config.ts";

/**
 * Which vision tower: Qwen2-VL's (`"qwen2_vl"`, `Qwen2VisionTransformerPretrainedModel`:
 * LayerNorm, a two-layer MLP, full attention inside each image in every block) or Qwen2.5-VL's
 * (`"qwen2_5_vl"`, `Qwen2_5_VisionTransformerPretrainedModel`: RMSNorm, a gated (SwiGLU-style)
 * MLP, window attention except in `fullattBlockIndexes`). The `model_type` of its `config.json`.
 */
export type VisionKind = "qwen2_vl" | "qwen2_5_vl";

/** The `model_type`s of `config.json` that are vision-language models, one per {@link VisionKind}. */
export const VISION_LANGUAGE_MODEL_TYPES: readonly VisionKind[] = Object.freeze([
  "qwen2_vl",
  "qwen2_5_vl",
]);

/** The MLP activation of the vision tower (`hidden_act`). */
export type VisionActivation = "quick_gelu" | "gelu" | "silu";

/** The vision tower of Qwen2-VL or Qwen2.5-VL (see {@link VisionKind}). */
export interface VisionConfig {
  /** Which tower (the `model_type` of the checkpoint). */
  readonly kind: VisionKind;
  /** `depth`: number of ViT blocks. */
  readonly depth: number;
  /**
   * Width of the ViT: `embed_dim` of a Qwen2-VL `vision_config`, `hidden_size` of a Qwen2.5-VL
   * one.
   */
  readonly embedDim: number;
  /** `num_heads` (the head size `embedDim / numHeads` must be a multiple of 4: 2-D RoPE). */
  readonly numHeads: number;
  /**
   * `mlp_ratio` of Qwen2-VL: the MLP is `int(embedDim · mlpRatio)` wide. For Qwen2.5-VL,
   * `intermediateSize / embedDim` (informational: its MLP is sized by `intermediateSize`).
   */
  readonly mlpRatio: number;
  /**
   * Width of the MLP: `int(embedDim · mlpRatio)` for Qwen2-VL, `intermediate_size` for
   * Qwen2.5-VL (3420 in its released checkpoints).
   */
  readonly intermediateSize: number;
  /**
   * `hidden_act` of the MLP: `"quick_gelu"` (Qwen2-VL's default), `"gelu"` (exact, erf) or
   * `"silu"` (Qwen2.5-VL's default, applied to its gate projection).
   */
  readonly hiddenAct: VisionActivation;
  /** `in_chans` / `in_channels` (3). */
  readonly inChannels: number;
  /** `patch_size` (14). */
  readonly patchSize: number;
  /** `temporal_patch_size` (2: an image is repeated twice along time). */
  readonly temporalPatchSize: number;
  /** `spatial_merge_size` (2: 2×2 patches become one token). */
  readonly spatialMergeSize: number;
  /**
   * The merger's output, the decoder's width: `hidden_size` of a Qwen2-VL `vision_config`,
   * `out_hidden_size` of a Qwen2.5-VL one.
   */
  readonly outHiddenSize: number;
  /**
   * `window_size` of Qwen2.5-VL in pixels (112): blocks outside {@link fullattBlockIndexes}
   * attend inside windows of `windowSize // spatialMergeSize // patchSize` merged tokens
   * squared. 0 for Qwen2-VL, which has no window attention.
   */
  readonly windowSize: number;
  /**
   * `fullatt_block_indexes` of Qwen2.5-VL (`[7, 15, 23, 31]`): the blocks that attend over the
   * whole image, ascending. Every block for Qwen2-VL.
   */
  readonly fullattBlockIndexes: readonly number[];
}

/** A vision-language model's configuration. */
export interface VisionLanguageConfig {
  /** The decoder (a Qwen2 config; `rope_scaling` is M-RoPE, kept in `mropeSection`). */
  readonly text: ModelConfig;
  /** The vision tower. */
  readonly vision: VisionConfig;
  /** `image_token_id` (`<|image_pad|>`): one per merged patch in the prompt. */
  readonly imageTokenId: number;
  /** `vision_start_token_id` (`<|vision_start|>`). */
  readonly visionStartTokenId: number;
  /** `vision_end_token_id` (`<|vision_end|>`). */
  readonly visionEndTokenId: number;
  /**
   * `rope_scaling.mrope_section`: how many of the `headDim / 2` rotary frequencies follow the
   * temporal, height and width positions; sums to `text.headDim / 2`.
   */
  readonly mropeSection: readonly [number, number, number];
}

/**
 * Fields of {@link visionConfig}: the sizes, the rest defaulting to Qwen2-VL's or, with
 * `kind: "qwen2_5_vl"`, to Qwen2.5-VL's.
 */
export type VisionConfigInit =
  & Pick<VisionConfig, "depth" | "embedDim" | "numHeads" | "outHiddenSize">
  & Partial<VisionConfig>;

/** Qwen2.5-VL's `fullatt_block_indexes` when its `config.json` does not list them. */
const QWEN25_FULLATT = [7, 15, 23, 31];

/**
 * A validated vision tower config. Defaults are Qwen2-VL's (`mlpRatio` 4, `quick_gelu`, 3
 * channels, 14-pixel patches, temporal patch 2, 2×2 merge) or, with `kind: "qwen2_5_vl"`,
 * Qwen2.5-VL's (`silu`, `windowSize` 112, `fullattBlockIndexes` those of `[7, 15, 23, 31]` below
 * `depth`, as transformers' default; the MLP `int(embedDim · mlpRatio)` wide unless
 * `intermediateSize` is given).
 *
 * @example Usage
 * ```ts
 * import { visionConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const v = visionConfig({ depth: 2, embedDim: 32, numHeads: 2, outHiddenSize: 48 });
 * assert.equal(v.patchSize, 14);
 * assert.throws(() => visionConfig({ depth: 2, embedDim: 30, numHeads: 5, outHiddenSize: 48 }));
 * const q = visionConfig({
 *   kind: "qwen2_5_vl", depth: 4, embedDim: 32, numHeads: 2, intermediateSize: 40,
 *   outHiddenSize: 48, fullattBlockIndexes: [1, 3],
 * });
 * assert.equal(q.hiddenAct, "silu");
 * assert.equal(q.windowSize, 112);
 * assert.throws(
 *   () => visionConfig({ depth: 2, embedDim: 32, numHeads: 2, outHiddenSize: 48, windowSize: 112 }),
 *   /windowSize must be 0/,
 * );
 * ```
 */
export function visionConfig(init: VisionConfigInit, source = "visionConfig"): VisionConfig {
  if (typeof init !== "object" || init === null) fail(source, "(root)", init, "an object");
  const kind = init.kind ?? "qwen2_vl";
  if (!VISION_LANGUAGE_MODEL_TYPES.includes(kind)) {
    fail(source, "kind", kind, `"qwen2_vl" (Qwen2-VL) or "qwen2_5_vl" (Qwen2.5-VL)`);
  }
  const qwen25 = kind === "qwen2_5_vl";
  const embedDim = int(source, "embedDim", init.embedDim, 1);
  const numHeads = int(source, "numHeads", init.numHeads, 1);
  const headDim = embedDim / numHeads;
  if (!Number.isInteger(headDim) || headDim % 4 !== 0) {
    fail(
      source,
      "numHeads",
      numHeads,
      `a divisor of embedDim (${embedDim}) leaving a head size that is a multiple of 4 (2-D RoPE)`,
    );
  }
  const ratioGiven = init.mlpRatio !== undefined;
  const mlpRatioIn = init.mlpRatio ?? 4;
  if (typeof mlpRatioIn !== "number" || !(mlpRatioIn > 0) || !Number.isFinite(mlpRatioIn)) {
    fail(source, "mlpRatio", mlpRatioIn, "a finite number > 0");
  }
  let mlpRatio = mlpRatioIn;
  let intermediateSize: number;
  if (!qwen25 || init.intermediateSize === undefined) {
    if (Math.trunc(embedDim * mlpRatio) < 1) {
      fail(source, "mlpRatio", mlpRatio, `large enough that int(embedDim · mlpRatio) >= 1`);
    }
    intermediateSize = Math.trunc(embedDim * mlpRatio);
    if (init.intermediateSize !== undefined && init.intermediateSize !== intermediateSize) {
      fail(
        source,
        "intermediateSize",
        init.intermediateSize,
        `int(embedDim · mlpRatio) = ${intermediateSize} or omitted (a qwen2_vl tower sizes its ` +
          `MLP by mlpRatio: set mlpRatio instead, or kind: "qwen2_5_vl")`,
      );
    }
    if (qwen25) mlpRatio = intermediateSize / embedDim;
  } else {
    intermediateSize = int(source, "intermediateSize", init.intermediateSize, 1);
    mlpRatio = intermediateSize / embedDim;
    if (ratioGiven && mlpRatioIn !== mlpRatio) {
      fail(
        source,
        "mlpRatio",
        mlpRatioIn,
        `intermediateSize / embedDim = ${mlpRatio} or omitted (a qwen2_5_vl tower sizes its MLP ` +
          `by intermediateSize)`,
      );
    }
  }
  const hiddenAct = init.hiddenAct ?? (qwen25 ? "silu" : "quick_gelu");
  if (hiddenAct !== "quick_gelu" && hiddenAct !== "gelu" && hiddenAct !== "silu") {
    fail(source, "hiddenAct", hiddenAct, `"quick_gelu", "gelu" or "silu"`);
  }
  const depth = int(source, "depth", init.depth, 1);
  const inChannels = int(source, "inChannels", init.inChannels ?? 3, 1);
  const patchSize = int(source, "patchSize", init.patchSize ?? 14, 1);
  const temporalPatchSize = int(source, "temporalPatchSize", init.temporalPatchSize ?? 2, 1);
  const spatialMergeSize = int(source, "spatialMergeSize", init.spatialMergeSize ?? 2, 1);
  const outHiddenSize = int(source, "outHiddenSize", init.outHiddenSize, 1);
  let windowSize: number;
  let fullatt: number[];
  const allBlocks = Array.from({ length: depth }, (_, i) => i);
  if (!qwen25) {
    windowSize = init.windowSize ?? 0;
    if (windowSize !== 0) {
      fail(
        source,
        "windowSize",
        windowSize,
        `0 or omitted for a qwen2_vl tower (no window attention); set kind: "qwen2_5_vl" for ` +
          `Qwen2.5-VL's windows`,
      );
    }
    const f = init.fullattBlockIndexes;
    if (f !== undefined && (!Array.isArray(f) || f.join() !== allBlocks.join())) {
      fail(
        source,
        "fullattBlockIndexes",
        f,
        `every block [0 … ${depth - 1}] or omitted for a qwen2_vl tower (it attends over the ` +
          `whole image in every block); set kind: "qwen2_5_vl" for window attention`,
      );
    }
    fullatt = allBlocks;
  } else {
    windowSize = int(source, "windowSize", init.windowSize ?? 112, 1);
    if (Math.floor(Math.floor(windowSize / spatialMergeSize) / patchSize) < 1) {
      fail(
        source,
        "windowSize",
        windowSize,
        `at least patchSize · spatialMergeSize = ${patchSize * spatialMergeSize} pixels (one ` +
          `merged token; Qwen2.5-VL: 112)`,
      );
    }
    const f = init.fullattBlockIndexes ?? QWEN25_FULLATT.filter((i) => i < depth);
    if (
      !Array.isArray(f) || !f.every((i) => Number.isInteger(i) && i >= 0 && i < depth) ||
      new Set(f).size !== f.length
    ) {
      fail(
        source,
        "fullattBlockIndexes",
        f,
        `a list of distinct block indexes in [0, ${depth}) (the blocks with full attention; ` +
          `Qwen2.5-VL: [7, 15, 23, 31] of 32)`,
      );
    }
    fullatt = [...f].sort((a, b) => a - b);
  }
  return Object.freeze({
    kind,
    depth,
    embedDim,
    numHeads,
    mlpRatio,
    intermediateSize,
    hiddenAct,
    inChannels,
    patchSize,
    temporalPatchSize,
    spatialMergeSize,
    outHiddenSize,
    windowSize,
    fullattBlockIndexes: Object.freeze(fullatt),
  });
}

/**
 * A validated vision-language config from its parts. The decoder must be a Qwen2 config whose
 * width is the tower's `outHiddenSize`; the M-RoPE sections must sum to `text.headDim / 2`; the
 * special token ids must lie in the vocabulary and differ.
 *
 * @example Usage
 * ```ts
 * import { modelConfig, visionConfig, visionLanguageConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const text = modelConfig({
 *   modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
 *   numHeads: 2,
 * });
 * const c = visionLanguageConfig({
 *   text,
 *   vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32 }),
 *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
 * });
 * assert.equal(c.mropeSection.reduce((a, b) => a + b), text.headDim / 2);
 * ```
 */
export function visionLanguageConfig(
  init: VisionLanguageConfig,
  source = "visionLanguageConfig",
): VisionLanguageConfig {
  const { text } = init;
  const vision = visionConfig(init.vision, `${source}: vision`);
  if (text.modelType !== "qwen2") {
    fail(source, "text.modelType", text.modelType, `"qwen2" (Qwen2-VL's decoder)`);
  }
  if (vision.outHiddenSize !== text.hiddenSize) {
    fail(
      source,
      "vision.outHiddenSize",
      vision.outHiddenSize,
      `the decoder's hiddenSize (${text.hiddenSize}): the merger writes into its embeddings`,
    );
  }
  const ids: [string, number][] = [];
  for (const key of ["imageTokenId", "visionStartTokenId", "visionEndTokenId"] as const) {
    const v = init[key];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= text.vocabSize) {
      fail(source, key, v, `a token id in [0, ${text.vocabSize})`);
    }
    if (ids.some(([, w]) => w === v)) fail(source, key, v, "different from the other marker ids");
    ids.push([key, v]);
  }
  const sec = init.mropeSection;
  const half = text.headDim / 2;
  if (
    !Array.isArray(sec) || sec.length !== 3 ||
    !sec.every((v) => Number.isInteger(v) && v >= 0) || sec[0] + sec[1] + sec[2] !== half
  ) {
    fail(
      source,
      "mropeSection",
      sec,
      `3 integers >= 0 summing to text.headDim / 2 = ${half} (Qwen2-VL-7B: [16, 24, 24])`,
    );
  }
  return Object.freeze({
    text,
    vision,
    imageTokenId: init.imageTokenId,
    visionStartTokenId: init.visionStartTokenId,
    visionEndTokenId: init.visionEndTokenId,
    mropeSection: Object.freeze([sec[0], sec[1], sec[2]]) as readonly [number, number, number],
  });
}

/**
 * Reads a Qwen2-VL (`model_type: "qwen2_vl"`) or Qwen2.5-VL (`"qwen2_5_vl"`) `config.json`
 * object, in the original layout (decoder keys at the top level) or the newer one
 * (`text_config`). Errors name the key.
 *
 * A Qwen2.5-VL `vision_config` names the ViT width `hidden_size` and the merger's output
 * `out_hidden_size`; its `fullatt_block_indexes` at or past `depth` are dropped (transformers
 * never reaches them, and its default `[7, 15, 23, 31]` is written into small test configs too);
 * `tokens_per_second` (videos only) is ignored.
 *
 * @example Usage
 * ```ts
 * import { vlConfigFromHf, vlConfigToHf } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const hf = {
 *   model_type: "qwen2_vl", vocab_size: 40, hidden_size: 32, intermediate_size: 64,
 *   num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1,
 *   image_token_id: 37, vision_start_token_id: 38, vision_end_token_id: 39,
 *   rope_scaling: { type: "mrope", mrope_section: [2, 3, 3] },
 *   vision_config: { depth: 1, embed_dim: 16, num_heads: 2, hidden_size: 32, in_chans: 3 },
 * };
 * const c = vlConfigFromHf(hf);
 * assert.equal(c.vision.embedDim, 16);
 * assert.deepEqual(vlConfigFromHf(vlConfigToHf(c)), c);
 * const c25 = vlConfigFromHf({
 *   ...hf,
 *   model_type: "qwen2_5_vl",
 *   vision_config: {
 *     depth: 2, hidden_size: 16, intermediate_size: 24, num_heads: 2, out_hidden_size: 32,
 *     window_size: 112, fullatt_block_indexes: [1, 7, 15], tokens_per_second: 2,
 *   },
 * });
 * assert.equal(c25.vision.kind, "qwen2_5_vl");
 * assert.deepEqual(c25.vision.fullattBlockIndexes, [1]);
 * assert.deepEqual(vlConfigFromHf(vlConfigToHf(c25)), c25);
 * ```
 */
export function vlConfigFromHf(json: unknown, source = "config.json"): VisionLanguageConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    fail(source, "(root)", json, "a JSON object");
  }
  const o = json as Record<string, unknown>;
  const kind = o.model_type;
  if (kind !== "qwen2_vl" && kind !== "qwen2_5_vl") {
    fail(source, "model_type", kind, `"qwen2_vl" or "qwen2_5_vl"`);
  }
  const qwen25 = kind === "qwen2_5_vl";
  const nested = o.text_config;
  const textJson: Record<string, unknown> = typeof nested === "object" && nested !== null
    ? { ...(nested as Record<string, unknown>) }
    : { ...o };
  const rs = (textJson.rope_scaling ?? o.rope_scaling) as Record<string, unknown> | undefined;
  if (typeof rs !== "object" || rs === null || !Array.isArray(rs.mrope_section)) {
    fail(source, "rope_scaling.mrope_section", rs, "a list of 3 integers (M-RoPE)");
  }
  delete textJson.rope_scaling;
  delete textJson.vision_config;
  delete textJson.text_config;
  textJson.model_type = "qwen2";
  const text = configFromHf(textJson, `${source} (decoder)`);
  const vj = o.vision_config;
  const required = qwen25
    ? ["depth", "hidden_size", "intermediate_size", "num_heads"]
    : ["depth", "embed_dim", "num_heads"];
  if (typeof vj !== "object" || vj === null) {
    fail(source, "vision_config", vj, `an object with ${required.join(", ")}`);
  }
  const v = vj as Record<string, unknown>;
  for (const key of required) {
    if (v[key] === undefined) fail(source, `vision_config.${key}`, undefined, "present");
  }
  const init: Record<string, unknown> = qwen25
    ? {
      kind,
      depth: v.depth,
      embedDim: v.hidden_size,
      intermediateSize: v.intermediate_size,
      numHeads: v.num_heads,
      outHiddenSize: v.out_hidden_size ?? text.hiddenSize,
    }
    : {
      kind,
      depth: v.depth,
      embedDim: v.embed_dim,
      numHeads: v.num_heads,
      outHiddenSize: v.hidden_size ?? text.hiddenSize,
    };
  const optional: Record<string, string> = {
    ...(qwen25 ? { window_size: "windowSize" } : { mlp_ratio: "mlpRatio" }),
    hidden_act: "hiddenAct",
    in_chans: "inChannels",
    in_channels: "inChannels",
    patch_size: "patchSize",
    temporal_patch_size: "temporalPatchSize",
    spatial_merge_size: "spatialMergeSize",
  };
  for (const [key, field] of Object.entries(optional)) {
    if (v[key] !== undefined && v[key] !== null) init[field] = v[key];
  }
  const full = v.fullatt_block_indexes;
  if (qwen25 && full !== undefined && full !== null) {
    if (!Array.isArray(full) || !full.every((i) => Number.isInteger(i) && i >= 0)) {
      fail(
        source,
        "vision_config.fullatt_block_indexes",
        full,
        "a list of block indexes (integers >= 0)",
      );
    }
    const depth = int(`${source}: vision_config`, "depth", v.depth, 1);
    init.fullattBlockIndexes = (full as number[]).filter((i) => i < depth);
  }
  const vision = visionConfig(init as unknown as VisionConfigInit, `${source}: vision_config`);
  const tok = (key: string): number => {
    const value = o[key] ?? (nested as Record<string, unknown> | undefined)?.[key];
    return int(source, key, value, 0);
  };
  return visionLanguageConfig({
    text,
    vision,
    imageTokenId: tok("image_token_id"),
    visionStartTokenId: tok("vision_start_token_id"),
    visionEndTokenId: tok("vision_end_token_id"),
    mropeSection: rs.mrope_section as unknown as [number, number, number],
  }, source);
}

/**
 * Writes a config as a Qwen2-VL or Qwen2.5-VL `config.json` object (by `vision.kind`) in the
 * original layout (decoder keys at the top level, `vision_config`, M-RoPE `rope_scaling`), which
 * {@link vlConfigFromHf} and transformers both read.
 *
 * @example Usage
 * ```ts
 * import { modelConfig, visionConfig, visionLanguageConfig, vlConfigToHf } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const text = modelConfig({
 *   modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
 *   numHeads: 2,
 * });
 * const hf = vlConfigToHf(visionLanguageConfig({
 *   text, vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32 }),
 *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
 * }));
 * assert.equal(hf.model_type, "qwen2_vl");
 * assert.deepEqual(hf.architectures, ["Qwen2VLForConditionalGeneration"]);
 * const hf25 = vlConfigToHf(visionLanguageConfig({
 *   text,
 *   vision: visionConfig({
 *     kind: "qwen2_5_vl", depth: 1, embedDim: 16, numHeads: 2, intermediateSize: 24,
 *     outHiddenSize: 32,
 *   }),
 *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
 * }));
 * assert.equal(hf25.model_type, "qwen2_5_vl");
 * assert.equal((hf25.vision_config as Record<string, unknown>).out_hidden_size, 32);
 * ```
 */
export function vlConfigToHf(config: VisionLanguageConfig): Record<string, unknown> {
  const v = config.vision;
  const qwen25 = v.kind === "qwen2_5_vl";
  return {
    ...configToHf(config.text),
    architectures: [
      qwen25 ? "Qwen2_5_VLForConditionalGeneration" : "Qwen2VLForConditionalGeneration",
    ],
    model_type: v.kind,
    image_token_id: config.imageTokenId,
    vision_start_token_id: config.visionStartTokenId,
    vision_end_token_id: config.visionEndTokenId,
    rope_scaling: { type: "mrope", mrope_section: [...config.mropeSection] },
    vision_config: qwen25
      ? {
        depth: v.depth,
        hidden_size: v.embedDim,
        intermediate_size: v.intermediateSize,
        num_heads: v.numHeads,
        hidden_act: v.hiddenAct,
        in_chans: v.inChannels,
        in_channels: v.inChannels,
        patch_size: v.patchSize,
        temporal_patch_size: v.temporalPatchSize,
        spatial_merge_size: v.spatialMergeSize,
        window_size: v.windowSize,
        fullatt_block_indexes: [...v.fullattBlockIndexes],
        out_hidden_size: v.outHiddenSize,
      }
      : {
        depth: v.depth,
        embed_dim: v.embedDim,
        num_heads: v.numHeads,
        mlp_ratio: v.mlpRatio,
        hidden_act: v.hiddenAct,
        in_chans: v.inChannels,
        patch_size: v.patchSize,
        temporal_patch_size: v.temporalPatchSize,
        spatial_merge_size: v.spatialMergeSize,
        hidden_size: v.outHiddenSize,
      },
  };
}

/**
 * Names and shapes of the vision tower's parameters, with Hugging Face's names (`visual.*` of
 * the original checkpoints), in a fixed order. A Qwen2.5-VL tower has RMSNorms (weights only)
 * and a gated MLP (`gate_proj`, `up_proj`, `down_proj`) where Qwen2-VL has LayerNorms and
 * `fc1`/`fc2`.
 *
 * @example Usage
 * ```ts
 * import { visionConfig, visionParameterShapes } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const shapes = visionParameterShapes(
 *   visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32 }),
 * );
 * assert.deepEqual(shapes.get("visual.patch_embed.proj.weight"), [16, 3, 2, 14, 14]);
 * assert.deepEqual(shapes.get("visual.merger.mlp.2.weight"), [32, 64]);
 * const shapes25 = visionParameterShapes(visionConfig({
 *   kind: "qwen2_5_vl", depth: 1, embedDim: 16, numHeads: 2, intermediateSize: 24,
 *   outHiddenSize: 32,
 * }));
 * assert.deepEqual(shapes25.get("visual.blocks.0.mlp.gate_proj.weight"), [24, 16]);
 * assert.equal(shapes25.has("visual.merger.ln_q.bias"), false);
 * ```
 */
export function visionParameterShapes(v: VisionConfig): Map<string, readonly number[]> {
  const e = v.embedDim;
  const mlp = v.intermediateSize;
  const merged = e * v.spatialMergeSize ** 2;
  const qwen25 = v.kind === "qwen2_5_vl";
  const out = new Map<string, readonly number[]>();
  out.set("visual.patch_embed.proj.weight", [
    e,
    v.inChannels,
    v.temporalPatchSize,
    v.patchSize,
    v.patchSize,
  ]);
  for (let i = 0; i < v.depth; i++) {
    const p = `visual.blocks.${i}`;
    out.set(`${p}.norm1.weight`, [e]);
    if (!qwen25) out.set(`${p}.norm1.bias`, [e]);
    out.set(`${p}.attn.qkv.weight`, [3 * e, e]);
    out.set(`${p}.attn.qkv.bias`, [3 * e]);
    out.set(`${p}.attn.proj.weight`, [e, e]);
    out.set(`${p}.attn.proj.bias`, [e]);
    out.set(`${p}.norm2.weight`, [e]);
    if (qwen25) {
      out.set(`${p}.mlp.gate_proj.weight`, [mlp, e]);
      out.set(`${p}.mlp.gate_proj.bias`, [mlp]);
      out.set(`${p}.mlp.up_proj.weight`, [mlp, e]);
      out.set(`${p}.mlp.up_proj.bias`, [mlp]);
      out.set(`${p}.mlp.down_proj.weight`, [e, mlp]);
      out.set(`${p}.mlp.down_proj.bias`, [e]);
    } else {
      out.set(`${p}.norm2.bias`, [e]);
      out.set(`${p}.mlp.fc1.weight`, [mlp, e]);
      out.set(`${p}.mlp.fc1.bias`, [mlp]);
      out.set(`${p}.mlp.fc2.weight`, [e, mlp]);
      out.set(`${p}.mlp.fc2.bias`, [e]);
    }
  }
  out.set("visual.merger.ln_q.weight", [e]);
  if (!qwen25) out.set("visual.merger.ln_q.bias", [e]);
  out.set("visual.merger.mlp.0.weight", [merged, merged]);
  out.set("visual.merger.mlp.0.bias", [merged]);
  out.set("visual.merger.mlp.2.weight", [v.outHiddenSize, merged]);
  out.set("visual.merger.mlp.2.bias", [v.outHiddenSize]);
  return out;
}

/**
 * The original Qwen2-VL name of a parameter written by newer transformers
 * (`model.visual.x` → `visual.x`, `model.language_model.x` → `model.x`); other names unchanged.
 *
 * @example Usage
 * ```ts
 * import { originalVlName } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * assert.equal(originalVlName("model.language_model.norm.weight"), "model.norm.weight");
 * assert.equal(originalVlName("model.visual.merger.ln_q.bias"), "visual.merger.ln_q.bias");
 * assert.equal(originalVlName("lm_head.weight"), "lm_head.weight");
 * ```
 */
export function originalVlName(name: string): string {
  if (name.startsWith("model.visual.")) return name.slice("model.".length);
  if (name.startsWith("model.language_model.")) {
    return `model.${name.slice("model.language_model.".length)}`;
  }
  return name;
}
