/**
 * The model configuration of the Llama 3 / Qwen2 / Qwen2.5 / Qwen3 decoder family, read from and
 * written to a Hugging Face `config.json`, and the parameter names and shapes it implies.
 *
 * Design: one config type covers the family, because the architectures differ only in switches
 * (QKV bias for Qwen2, per-head QK RMSNorm for Qwen3, Llama 3 rope scaling, tied embeddings, a
 * head dimension that need not be `hidden / heads`). `model_type` only picks the defaults Hugging
 * Face applies when a field is absent (Qwen2 always has a QKV bias; Qwen3 always has QK-norm), so
 * a config we write and read back is the same config. Parameter names are the Hugging Face names,
 * so checkpoints load and save without a mapping table. Every field is validated once, here, and
 * an error names the field, the value and what would be accepted.
 *
 * @module
 */

import { fail, int } from "./_check.ts";

/** Architectures this package implements (the `model_type` of `config.json`). */
export const MODEL_TYPES = ["llama", "qwen2", "qwen3"] as const;

/** One of {@link MODEL_TYPES}. */
export type ModelType = typeof MODEL_TYPES[number];

/** Llama 3 rope scaling (`rope_scaling` with `rope_type: "llama3"`). */
export interface Llama3RopeScaling {
  /** Always `"llama3"`. */
  readonly type: "llama3";
  /** Wavelength stretch of the low frequencies (`factor`, 8 in Llama 3.1). */
  readonly factor: number;
  /** `low_freq_factor` (1 in Llama 3.1). */
  readonly lowFreqFactor: number;
  /** `high_freq_factor` (4 in Llama 3.1). */
  readonly highFreqFactor: number;
  /** `original_max_position_embeddings` (8192 in Llama 3.1). */
  readonly originalMaxPositions: number;
}

/** A validated decoder configuration. Field names are camelCase forms of the HF keys. */
export interface ModelConfig {
  /** Architecture (decides defaults and the `architectures` entry written back). */
  readonly modelType: ModelType;
  /** `vocab_size`: rows of the embedding and of the LM head. */
  readonly vocabSize: number;
  /** `hidden_size`. */
  readonly hiddenSize: number;
  /** `intermediate_size`: width of the SwiGLU MLP. */
  readonly intermediateSize: number;
  /** `num_hidden_layers`. */
  readonly numLayers: number;
  /** `num_attention_heads`. */
  readonly numHeads: number;
  /** `num_key_value_heads` (GQA; equals `numHeads` for multi-head attention). */
  readonly numKvHeads: number;
  /** `head_dim` (default `hiddenSize / numHeads`; Qwen3 sets it independently). */
  readonly headDim: number;
  /** `rms_norm_eps`. */
  readonly rmsNormEps: number;
  /** `rope_theta`. */
  readonly ropeTheta: number;
  /** `rope_scaling` of type `"llama3"`, or null for none. */
  readonly ropeScaling: Llama3RopeScaling | null;
  /** `max_position_embeddings`. */
  readonly maxPositions: number;
  /** `tie_word_embeddings`: the LM head reuses the embedding matrix. */
  readonly tieWordEmbeddings: boolean;
  /** Bias on the q, k and v projections (Qwen2: always; Llama: `attention_bias`). */
  readonly qkvBias: boolean;
  /** Bias on the output projection (Llama `attention_bias` also biases `o_proj`). */
  readonly oBias: boolean;
  /** Per-head RMSNorm of queries and keys before RoPE (Qwen3). */
  readonly qkNorm: boolean;
  /** `bos_token_id`, or null. */
  readonly bosTokenId: number | null;
  /** `eos_token_id` (HF allows a number or a list). */
  readonly eosTokenIds: readonly number[];
  /** `pad_token_id`, or null. */
  readonly padTokenId: number | null;
}

/** The fields a caller must give to {@link modelConfig}; the rest have family defaults. */
export type ModelConfigInit =
  & Pick<
    ModelConfig,
    "vocabSize" | "hiddenSize" | "intermediateSize" | "numLayers" | "numHeads"
  >
  & Partial<ModelConfig>;

function positive(source: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    fail(source, field, value, "a finite number > 0");
  }
  return value;
}

function bool(source: string, field: string, value: unknown): boolean {
  if (typeof value !== "boolean") fail(source, field, value, "true or false");
  return value;
}

function tokenId(source: string, field: string, value: unknown): number | null {
  if (value === null || value === undefined) return null;
  return int(source, field, value, 0);
}

/**
 * Builds a validated config from camelCase fields, filling the family defaults: `headDim =
 * hiddenSize / numHeads`, `numKvHeads = numHeads`, `rmsNormEps = 1e-6`, `ropeTheta = 10000`
 * (Llama) or `1e6` (Qwen), QKV bias on for Qwen2, QK-norm on for Qwen3, untied embeddings.
 *
 * @param init Required sizes and any overrides.
 * @param source Prefix of error messages (e.g. the file the fields came from).
 * @returns The validated, frozen config.
 * @throws {RangeError} naming the field, the value and the accepted range.
 *
 * @example Usage
 * ```ts
 * import { modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const c = modelConfig({
 *   modelType: "qwen2", vocabSize: 64, hiddenSize: 32, intermediateSize: 64,
 *   numLayers: 2, numHeads: 4, numKvHeads: 2,
 * });
 * assert.equal(c.headDim, 8);
 * assert.equal(c.qkvBias, true); // Qwen2 always biases q, k and v
 * ```
 */
export function modelConfig(init: ModelConfigInit, source = "modelConfig"): ModelConfig {
  const modelType = init.modelType ?? "llama";
  if (!(MODEL_TYPES as readonly string[]).includes(modelType)) {
    fail(source, "modelType", modelType, `one of ${MODEL_TYPES.join(", ")}`);
  }
  const vocabSize = int(source, "vocabSize", init.vocabSize, 1);
  const hiddenSize = int(source, "hiddenSize", init.hiddenSize, 1);
  const intermediateSize = int(source, "intermediateSize", init.intermediateSize, 1);
  const numLayers = int(source, "numLayers", init.numLayers, 1);
  const numHeads = int(source, "numHeads", init.numHeads, 1);
  const numKvHeads = int(source, "numKvHeads", init.numKvHeads ?? numHeads, 1);
  if (numHeads % numKvHeads !== 0) {
    fail(source, "numKvHeads", numKvHeads, `a divisor of numHeads (${numHeads})`);
  }
  if (init.headDim === undefined && hiddenSize % numHeads !== 0) {
    fail(
      source,
      "headDim",
      undefined,
      `given when hiddenSize (${hiddenSize}) is not a multiple of numHeads (${numHeads})`,
    );
  }
  const headDim = int(source, "headDim", init.headDim ?? hiddenSize / numHeads, 2);
  if (headDim % 2 !== 0) fail(source, "headDim", headDim, "even (RoPE rotates pairs)");
  const qwen = modelType !== "llama";
  const ropeScaling = init.ropeScaling ?? null;
  if (ropeScaling !== null) {
    if (ropeScaling.type !== "llama3") {
      fail(source, "ropeScaling.type", ropeScaling.type, `"llama3"`);
    }
    positive(source, "ropeScaling.factor", ropeScaling.factor);
    positive(source, "ropeScaling.lowFreqFactor", ropeScaling.lowFreqFactor);
    positive(source, "ropeScaling.highFreqFactor", ropeScaling.highFreqFactor);
    if (ropeScaling.highFreqFactor <= ropeScaling.lowFreqFactor) {
      fail(
        source,
        "ropeScaling.highFreqFactor",
        ropeScaling.highFreqFactor,
        `> lowFreqFactor (${ropeScaling.lowFreqFactor})`,
      );
    }
    int(source, "ropeScaling.originalMaxPositions", ropeScaling.originalMaxPositions, 1);
  }
  const eos = init.eosTokenIds ?? [];
  eos.forEach((id, i) => int(source, `eosTokenIds[${i}]`, id, 0));
  const config: ModelConfig = {
    modelType,
    vocabSize,
    hiddenSize,
    intermediateSize,
    numLayers,
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: positive(source, "rmsNormEps", init.rmsNormEps ?? 1e-6),
    ropeTheta: positive(source, "ropeTheta", init.ropeTheta ?? (qwen ? 1e6 : 10000)),
    ropeScaling: ropeScaling === null ? null : Object.freeze({ ...ropeScaling }),
    maxPositions: int(source, "maxPositions", init.maxPositions ?? 4096, 1),
    tieWordEmbeddings: bool(source, "tieWordEmbeddings", init.tieWordEmbeddings ?? false),
    qkvBias: bool(source, "qkvBias", init.qkvBias ?? modelType === "qwen2"),
    oBias: bool(source, "oBias", init.oBias ?? false),
    qkNorm: bool(source, "qkNorm", init.qkNorm ?? modelType === "qwen3"),
    bosTokenId: tokenId(source, "bosTokenId", init.bosTokenId),
    eosTokenIds: Object.freeze([...eos]),
    padTokenId: tokenId(source, "padTokenId", init.padTokenId),
  };
  return Object.freeze(config);
}

const HF_FIELDS: Record<string, keyof ModelConfig> = {
  vocab_size: "vocabSize",
  hidden_size: "hiddenSize",
  intermediate_size: "intermediateSize",
  num_hidden_layers: "numLayers",
  num_attention_heads: "numHeads",
  num_key_value_heads: "numKvHeads",
  head_dim: "headDim",
  rms_norm_eps: "rmsNormEps",
  rope_theta: "ropeTheta",
  max_position_embeddings: "maxPositions",
  tie_word_embeddings: "tieWordEmbeddings",
  bos_token_id: "bosTokenId",
  pad_token_id: "padTokenId",
};

/**
 * Reads a Hugging Face `config.json` object (Llama, Qwen2, Qwen2.5, Qwen3). Unknown keys are
 * ignored, as transformers does; a missing size, an unsupported `model_type` or `hidden_act`, or a
 * rope scaling other than Llama 3's is an error naming the key.
 *
 * @param json The parsed `config.json`.
 * @param source Prefix of error messages, e.g. the file path.
 * @returns The validated config.
 *
 * @example Usage
 * ```ts
 * import { configFromHf, configToHf } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const hf = {
 *   model_type: "qwen3", vocab_size: 100, hidden_size: 32, intermediate_size: 64,
 *   num_hidden_layers: 1, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,
 *   eos_token_id: [1, 2],
 * };
 * const c = configFromHf(hf);
 * assert.equal(c.qkNorm, true);
 * assert.deepEqual(configFromHf(configToHf(c)), c);
 * ```
 */
export function configFromHf(json: unknown, source = "config.json"): ModelConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    fail(source, "(root)", json, "a JSON object");
  }
  const o = json as Record<string, unknown>;
  const modelType = o.model_type;
  if (typeof modelType !== "string" || !(MODEL_TYPES as readonly string[]).includes(modelType)) {
    fail(source, "model_type", modelType, `one of ${MODEL_TYPES.map((t) => `"${t}"`).join(", ")}`);
  }
  const act = o.hidden_act ?? "silu";
  if (act !== "silu") fail(source, "hidden_act", act, `"silu" (SwiGLU)`);
  if (o.mlp_bias === true) fail(source, "mlp_bias", true, "false (MLP biases are not supported)");
  for (
    const key of [
      "vocab_size",
      "hidden_size",
      "intermediate_size",
      "num_hidden_layers",
      "num_attention_heads",
    ]
  ) {
    if (o[key] === undefined) fail(source, key, undefined, "present");
  }
  const init: Record<string, unknown> = { modelType };
  for (const [key, field] of Object.entries(HF_FIELDS)) {
    if (o[key] !== undefined && o[key] !== null) init[field] = o[key];
  }
  if (o.bos_token_id === null) init.bosTokenId = null;
  const eos = o.eos_token_id;
  if (eos !== undefined && eos !== null) {
    if (!Array.isArray(eos) && typeof eos !== "number") {
      fail(source, "eos_token_id", eos, "a token id or a list of token ids");
    }
    init.eosTokenIds = Array.isArray(eos) ? eos : [eos];
  }
  if (modelType === "llama" && o.attention_bias !== undefined) {
    const b = bool(source, "attention_bias", o.attention_bias);
    init.qkvBias = b;
    init.oBias = b;
  } else if (modelType === "qwen3" && o.attention_bias !== undefined) {
    init.qkvBias = bool(source, "attention_bias", o.attention_bias);
    init.oBias = init.qkvBias;
  }
  const rs = o.rope_scaling;
  if (rs !== undefined && rs !== null) {
    const r = rs as Record<string, unknown>;
    const kind = r.rope_type ?? r.type;
    if (kind === "default") {
      // no scaling, as transformers treats it
    } else if (kind !== "llama3") {
      fail(
        source,
        "rope_scaling.rope_type",
        kind,
        `"llama3" or "default" (other scalings are not implemented)`,
      );
    } else {
      init.ropeScaling = {
        type: "llama3",
        factor: r.factor,
        lowFreqFactor: r.low_freq_factor,
        highFreqFactor: r.high_freq_factor,
        originalMaxPositions: r.original_max_position_embeddings,
      };
    }
  }
  return modelConfig(init as ModelConfigInit, source);
}

/**
 * Writes a config as a Hugging Face `config.json` object that transformers reads as the same
 * architecture (`architectures`, `model_type`, every size, `torch_dtype: "float32"`).
 *
 * @param config The config.
 * @returns A JSON-serialisable object.
 *
 * @example Usage
 * ```ts
 * import { configToHf, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const hf = configToHf(modelConfig({
 *   vocabSize: 10, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 * }));
 * assert.deepEqual(hf.architectures, ["LlamaForCausalLM"]);
 * ```
 */
export function configToHf(
  config: ModelConfig,
): Record<string, unknown> & { architectures: string[] } {
  const arch = { llama: "LlamaForCausalLM", qwen2: "Qwen2ForCausalLM", qwen3: "Qwen3ForCausalLM" }[
    config.modelType
  ];
  const out: Record<string, unknown> & { architectures: string[] } = {
    architectures: [arch],
    model_type: config.modelType,
    hidden_act: "silu",
    torch_dtype: "float32",
  };
  for (const [key, field] of Object.entries(HF_FIELDS)) out[key] = config[field];
  out.eos_token_id = config.eosTokenIds.length === 1
    ? config.eosTokenIds[0]
    : [...config.eosTokenIds];
  if (config.modelType === "qwen2") {
    if (!config.qkvBias || config.oBias) {
      throw new RangeError(
        `configToHf: a qwen2 config has a q/k/v bias and no o bias in transformers, got qkvBias=${config.qkvBias}, oBias=${config.oBias}; use modelType "llama" for other choices`,
      );
    }
  } else {
    if (config.qkvBias !== config.oBias) {
      throw new RangeError(
        `configToHf: ${config.modelType}'s attention_bias biases q, k, v and o together, got qkvBias=${config.qkvBias}, oBias=${config.oBias}; use modelType "qwen2" for a q/k/v-only bias`,
      );
    }
    out.attention_bias = config.qkvBias;
  }
  if ((config.modelType === "qwen3") !== config.qkNorm) {
    throw new RangeError(
      `configToHf: QK-norm exists exactly in qwen3 in transformers, got modelType "${config.modelType}" with qkNorm=${config.qkNorm}`,
    );
  }
  out.rope_scaling = config.ropeScaling === null ? null : {
    rope_type: "llama3",
    factor: config.ropeScaling.factor,
    low_freq_factor: config.ropeScaling.lowFreqFactor,
    high_freq_factor: config.ropeScaling.highFreqFactor,
    original_max_position_embeddings: config.ropeScaling.originalMaxPositions,
  };
  return out;
}

/**
 * The Hugging Face parameter names of a config and their shapes, in a stable order (embedding,
 * then each layer, then the final norm and the LM head unless tied). Weights of linear layers are
 * `[out, in]` as in PyTorch.
 *
 * @param config The config.
 * @returns Name → shape.
 *
 * @example Usage
 * ```ts
 * import { modelConfig, parameterShapes } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const shapes = parameterShapes(modelConfig({
 *   vocabSize: 10, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 *   tieWordEmbeddings: true,
 * }));
 * assert.deepEqual(shapes.get("model.layers.0.mlp.down_proj.weight"), [8, 16]);
 * assert.equal(shapes.has("lm_head.weight"), false); // tied
 * ```
 */
export function parameterShapes(config: ModelConfig): Map<string, readonly number[]> {
  const { hiddenSize: h, intermediateSize: f, headDim: d, numHeads, numKvHeads } = config;
  const shapes = new Map<string, readonly number[]>();
  shapes.set("model.embed_tokens.weight", [config.vocabSize, h]);
  for (let i = 0; i < config.numLayers; i++) {
    const p = `model.layers.${i}`;
    shapes.set(`${p}.input_layernorm.weight`, [h]);
    shapes.set(`${p}.self_attn.q_proj.weight`, [numHeads * d, h]);
    shapes.set(`${p}.self_attn.k_proj.weight`, [numKvHeads * d, h]);
    shapes.set(`${p}.self_attn.v_proj.weight`, [numKvHeads * d, h]);
    if (config.qkvBias) {
      shapes.set(`${p}.self_attn.q_proj.bias`, [numHeads * d]);
      shapes.set(`${p}.self_attn.k_proj.bias`, [numKvHeads * d]);
      shapes.set(`${p}.self_attn.v_proj.bias`, [numKvHeads * d]);
    }
    shapes.set(`${p}.self_attn.o_proj.weight`, [h, numHeads * d]);
    if (config.oBias) shapes.set(`${p}.self_attn.o_proj.bias`, [h]);
    if (config.qkNorm) {
      shapes.set(`${p}.self_attn.q_norm.weight`, [d]);
      shapes.set(`${p}.self_attn.k_norm.weight`, [d]);
    }
    shapes.set(`${p}.post_attention_layernorm.weight`, [h]);
    shapes.set(`${p}.mlp.gate_proj.weight`, [f, h]);
    shapes.set(`${p}.mlp.up_proj.weight`, [f, h]);
    shapes.set(`${p}.mlp.down_proj.weight`, [h, f]);
  }
  shapes.set("model.norm.weight", [h]);
  if (!config.tieWordEmbeddings) shapes.set("lm_head.weight", [config.vocabSize, h]);
  return shapes;
}

/**
 * Number of parameters of a config (tied embeddings counted once).
 *
 * @param config The config.
 * @returns The parameter count.
 *
 * @example Usage
 * ```ts
 * import { modelConfig, parameterCount } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const n = parameterCount(modelConfig({
 *   vocabSize: 10, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 * }));
 * assert.equal(n, 10 * 8 + 8 + 3 * 64 + 64 + 8 + 3 * 128 + 8 + 10 * 8);
 * ```
 */
export function parameterCount(config: ModelConfig): number {
  let n = 0;
  for (const shape of parameterShapes(config).values()) n += shape.reduce((a, b) => a * b, 1);
  return n;
}
