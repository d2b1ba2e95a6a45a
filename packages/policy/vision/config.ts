/**
 * Configuration of a Qwen2-VL vision-language model: the vision tower's sizes (`vision_config`
 * of a Hugging Face `config.json`), the decoder's (a Qwen2 {@link ModelConfig}), the special
 * token ids that mark images in the text, and the multimodal RoPE sections.
 *
 * Both `config.json` layouts are read: the original one (decoder keys at the top level, as the
 * Qwen/Qwen2-VL-* checkpoints ship it) and the newer one with a `text_config` object.
 *
 * @module
 */

import { fail, int } from "../_check.ts";
import { configFromHf, configToHf, type ModelConfig } from "../config.ts";

/** The vision tower of Qwen2-VL (`Qwen2VisionTransformerPretrainedModel`). */
export interface VisionConfig {
  /** `depth`: number of ViT blocks. */
  readonly depth: number;
  /** `embed_dim`: width of the ViT. */
  readonly embedDim: number;
  /** `num_heads` (the head size `embedDim / numHeads` must be a multiple of 4: 2-D RoPE). */
  readonly numHeads: number;
  /** `mlp_ratio`: the MLP is `int(embedDim · mlpRatio)` wide. */
  readonly mlpRatio: number;
  /** `hidden_act` of the MLP: `"quick_gelu"` (Qwen2-VL) or `"gelu"` (exact, erf). */
  readonly hiddenAct: "quick_gelu" | "gelu";
  /** `in_chans` / `in_channels` (3). */
  readonly inChannels: number;
  /** `patch_size` (14). */
  readonly patchSize: number;
  /** `temporal_patch_size` (2: an image is repeated twice along time). */
  readonly temporalPatchSize: number;
  /** `spatial_merge_size` (2: 2×2 patches become one token). */
  readonly spatialMergeSize: number;
  /** `hidden_size` of `vision_config`: the merger's output, the decoder's width. */
  readonly outHiddenSize: number;
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

/** Fields of {@link visionConfig}: the sizes, the rest defaulting to Qwen2-VL's. */
export type VisionConfigInit =
  & Pick<VisionConfig, "depth" | "embedDim" | "numHeads" | "outHiddenSize">
  & Partial<VisionConfig>;

/**
 * A validated vision tower config; defaults are Qwen2-VL's (`mlpRatio` 4, `quick_gelu`, 3
 * channels, 14-pixel patches, temporal patch 2, 2×2 merge).
 *
 * @example Usage
 * ```ts
 * import { visionConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const v = visionConfig({ depth: 2, embedDim: 32, numHeads: 2, outHiddenSize: 48 });
 * assert.equal(v.patchSize, 14);
 * assert.throws(() => visionConfig({ depth: 2, embedDim: 30, numHeads: 5, outHiddenSize: 48 }));
 * ```
 */
export function visionConfig(init: VisionConfigInit, source = "visionConfig"): VisionConfig {
  if (typeof init !== "object" || init === null) fail(source, "(root)", init, "an object");
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
  const mlpRatio = init.mlpRatio ?? 4;
  if (typeof mlpRatio !== "number" || !(mlpRatio > 0) || !Number.isFinite(mlpRatio)) {
    fail(source, "mlpRatio", mlpRatio, "a finite number > 0");
  }
  if (Math.trunc(embedDim * mlpRatio) < 1) {
    fail(source, "mlpRatio", mlpRatio, `large enough that int(embedDim · mlpRatio) >= 1`);
  }
  const hiddenAct = init.hiddenAct ?? "quick_gelu";
  if (hiddenAct !== "quick_gelu" && hiddenAct !== "gelu") {
    fail(source, "hiddenAct", hiddenAct, `"quick_gelu" or "gelu"`);
  }
  return Object.freeze({
    depth: int(source, "depth", init.depth, 1),
    embedDim,
    numHeads,
    mlpRatio,
    hiddenAct,
    inChannels: int(source, "inChannels", init.inChannels ?? 3, 1),
    patchSize: int(source, "patchSize", init.patchSize ?? 14, 1),
    temporalPatchSize: int(source, "temporalPatchSize", init.temporalPatchSize ?? 2, 1),
    spatialMergeSize: int(source, "spatialMergeSize", init.spatialMergeSize ?? 2, 1),
    outHiddenSize: int(source, "outHiddenSize", init.outHiddenSize, 1),
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
 * Reads a Qwen2-VL `config.json` object (`model_type: "qwen2_vl"`), in the original layout
 * (decoder keys at the top level) or the newer one (`text_config`). Errors name the key.
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
 * ```
 */
export function vlConfigFromHf(json: unknown, source = "config.json"): VisionLanguageConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    fail(source, "(root)", json, "a JSON object");
  }
  const o = json as Record<string, unknown>;
  if (o.model_type !== "qwen2_vl") fail(source, "model_type", o.model_type, `"qwen2_vl"`);
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
  if (typeof vj !== "object" || vj === null) {
    fail(source, "vision_config", vj, "an object with depth, embed_dim, num_heads, hidden_size");
  }
  const v = vj as Record<string, unknown>;
  for (const key of ["depth", "embed_dim", "num_heads"]) {
    if (v[key] === undefined) fail(source, `vision_config.${key}`, undefined, "present");
  }
  const init: Record<string, unknown> = {
    depth: v.depth,
    embedDim: v.embed_dim,
    numHeads: v.num_heads,
    outHiddenSize: v.hidden_size ?? text.hiddenSize,
  };
  const optional: Record<string, string> = {
    mlp_ratio: "mlpRatio",
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
 * Writes a config as a Qwen2-VL `config.json` object in the original layout (decoder keys at
 * the top level, `vision_config`, M-RoPE `rope_scaling`), which {@link vlConfigFromHf} and
 * transformers both read.
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
 * ```
 */
export function vlConfigToHf(config: VisionLanguageConfig): Record<string, unknown> {
  const v = config.vision;
  return {
    ...configToHf(config.text),
    architectures: ["Qwen2VLForConditionalGeneration"],
    model_type: "qwen2_vl",
    image_token_id: config.imageTokenId,
    vision_start_token_id: config.visionStartTokenId,
    vision_end_token_id: config.visionEndTokenId,
    rope_scaling: { type: "mrope", mrope_section: [...config.mropeSection] },
    vision_config: {
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
 * the original Qwen2-VL checkpoints), in a fixed order.
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
 * ```
 */
export function visionParameterShapes(v: VisionConfig): Map<string, readonly number[]> {
  const e = v.embedDim;
  const mlp = Math.trunc(e * v.mlpRatio);
  const merged = e * v.spatialMergeSize ** 2;
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
    out.set(`${p}.norm1.bias`, [e]);
    out.set(`${p}.attn.qkv.weight`, [3 * e, e]);
    out.set(`${p}.attn.qkv.bias`, [3 * e]);
    out.set(`${p}.attn.proj.weight`, [e, e]);
    out.set(`${p}.attn.proj.bias`, [e]);
    out.set(`${p}.norm2.weight`, [e]);
    out.set(`${p}.norm2.bias`, [e]);
    out.set(`${p}.mlp.fc1.weight`, [mlp, e]);
    out.set(`${p}.mlp.fc1.bias`, [mlp]);
    out.set(`${p}.mlp.fc2.weight`, [e, mlp]);
    out.set(`${p}.mlp.fc2.bias`, [e]);
  }
  out.set("visual.merger.ln_q.weight", [e]);
  out.set("visual.merger.ln_q.bias", [e]);
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
