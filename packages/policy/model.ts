/**
 * The decoder of the Llama 3 / Qwen2 / Qwen2.5 / Qwen3 family as a {@link CausalLM}: token
 * embedding, `numLayers` pre-norm blocks (RMSNorm → grouped-query attention with RoPE → residual,
 * RMSNorm → SwiGLU MLP → residual), a final RMSNorm and a tied or untied LM head, with the math of
 * Hugging Face transformers (`modeling_llama.py`, `modeling_qwen2.py`, `modeling_qwen3.py`).
 *
 * Design: the parameters are one `Map` keyed by the Hugging Face names of
 * {@link parameterShapes}, so a checkpoint loads and saves without a name table and a test can
 * swap a single tensor. Architectural differences are config switches read in one place (QKV and
 * O biases, per-head QK RMSNorm before RoPE, Llama 3 rope scaling, `headDim` independent of the
 * hidden size, tied embeddings). Every linear layer goes through one method that offers its input
 * and output to the attached {@link ModelExtension}s, which is how LoRA adds its low-rank term
 * without the model knowing about LoRA; a value head is an extension too, so
 * `parameters()` is always "what an optimizer should update". Each forward pass runs in `tidy`
 * scopes (one per layer, so inference holds one layer's temporaries at a time) and leaks nothing.
 *
 * Exactness: every per-token computation (projections, norms, RoPE, each query's attention row)
 * depends only on that token's row and the keys it may see, and the CPU kernels accumulate each
 * output row in the same order whatever the number of rows. Decoding with a {@link KVCache} and
 * recomputing the whole sequence therefore give bit-identical logits on the CPU backend (the tests
 * assert equality). On WebGPU the matmul kernel variant depends on the shapes, so the two paths
 * agree to f32 rounding only.
 *
 * @module
 */

import {
  checkpoint,
  embedding,
  fmtShape,
  isGradEnabled,
  keep,
  NORMAL_METHODS,
  type NormalMethod,
  type NormalSource,
  normalSource,
  rmsNorm,
  rope,
  type RopeTables,
  ropeTables,
  scaledDotProductAttention,
  setStorageFormat,
  STORAGE_FORMATS,
  type StorageFormat,
  type Tensor,
  tensor,
  tidy,
} from "@rlvr/tensor";
import { describeProblems, paramProblems } from "./_check.ts";
import { type ModelConfig, parameterShapes } from "./config.ts";
import type { KVCache } from "./kv_cache.ts";

/** Options of {@link CausalLM.forward} and {@link CausalLM.hidden}. */
export interface ForwardOptions {
  /**
   * Keys and values of earlier tokens; this call's tokens are appended to it in place, for every
   * layer. Its batch must equal the batch of `ids`.
   */
  cache?: KVCache;
  /**
   * Position of every token, `[batch][t]` (for left padding: count real tokens only, as Hugging
   * Face's `attention_mask.cumsum(-1) - 1`). Default `cache.length + t` for every row.
   */
  positions?: readonly (readonly number[])[];
  /**
   * Key-padding mask `[batch, cacheLength + t]`, bool or i32 (1 = real token, 0 = padding), as
   * Hugging Face's `attention_mask`: padded keys are invisible to every query.
   */
  attentionMask?: Tensor;
  /**
   * Input embeddings `[batch, t, hiddenSize]` used instead of looking `ids` up in the embedding
   * matrix (`ids` still gives the shape): a vision-language model puts image features at its
   * image tokens this way, as `inputs_embeds` in Hugging Face. The caller keeps ownership.
   */
  inputEmbeds?: Tensor;
  /**
   * RoPE tables (`cos`, `sin`, `[batch, t, headDim/2]` or `[t, headDim/2]`) used instead of those
   * of `positions`: multimodal rotary positions (Qwen2-VL's M-RoPE) give each rotary frequency
   * its own position stream. The caller keeps ownership.
   */
  rope?: RopeTables;
}

/** What a {@link ForwardHook} sees of one decoder call made by `generate` or `scoreCompletions`. */
export interface ForwardCall {
  /** Token ids of the call, `[rows][t]`: the (left-padded) prompts at prefill, one token a row when decoding, prompt + completion when scoring. */
  ids: readonly (readonly number[])[];
  /** For each row, the index of its sequence in the caller's input (the prompt, or the scored item). */
  rows: readonly number[];
  /** Tokens already in the KV cache (0 at prefill and when scoring). */
  cacheLength: number;
  /** Key-padding mask `[rows][cacheLength + t]` (1 = real token), or null when nothing is padded. */
  mask: readonly (readonly number[])[] | null;
}

/**
 * Extra inputs a model adds to each decoder call of `generate` and `scoreCompletions`: input
 * embeddings (image features at image tokens) and RoPE tables (multimodal positions). A
 * vision-language model makes one with `VisionLanguageModel.forwardHook`. Tensors it returns
 * are freed by the caller's scope.
 *
 * A hook whose decode calls (cache length > 0) only rotate by plain RoPE at a shifted position
 * (`cache column + shift`; M-RoPE after the prefill: every stream at the same position) says so
 * with `decodeShift(row)`, the shift of sequence `row` once its prefill went through the hook:
 * the device decode loop then runs the decode steps itself.
 *
 * @example Usage
 * ```ts
 * import type { ForwardHook } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const plain: ForwardHook = () => ({}); // text only: nothing to add
 * assert.deepEqual(plain({ ids: [[1]], rows: [0], cacheLength: 0, mask: null }), {});
 * ```
 */
export type ForwardHook =
  & ((call: ForwardCall) => Pick<ForwardOptions, "inputEmbeds" | "rope">)
  & { decodeShift?: (row: number) => number };

/**
 * Something attached to a {@link CausalLM} that owns trainable tensors: LoRA adapters
 * (`attachLora`) or a value head (`attachValueHead`). At most one extension of each `kind`.
 *
 * @example Usage
 * ```ts
 * import { CausalLM, modelConfig, type ModelExtension } from "@rlvr/policy";
 * import { type Tensor, zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // A toy extension: one extra trainable scalar that the model lists with its parameters.
 * const extra = zeros([1], { requiresGrad: true });
 * const ext: ModelExtension = {
 *   kind: "extra",
 *   freezesBase: false,
 *   namedParameters: () => new Map<string, Tensor>([["extra", extra]]),
 *   dispose: () => extra.dispose(),
 * };
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 * }));
 * model.attach(ext);
 * assert.ok(model.namedParameters().has("extra"));
 * model.dispose(); // disposes attached extensions too
 * assert.ok(extra.isDisposed);
 * ```
 */
export interface ModelExtension {
  /** Kind, e.g. `"lora"` or `"valueHead"`; a model holds one extension per kind. */
  readonly kind: string;
  /**
   * True when the base parameters must not train while this is attached (LoRA): they get
   * `requiresGrad = false` and `parameters()` lists only extension tensors.
   */
  readonly freezesBase: boolean;
  /** The extension's trainable tensors by checkpoint name. */
  namedParameters(): Map<string, Tensor>;
  /**
   * Called by every linear layer with its module path (e.g.
   * `model.layers.0.self_attn.q_proj`), its input `x` `[n, in]` and its output `y` `[n, out]`;
   * returns the output to use (`y` itself when the module is not adapted).
   */
  adaptLinear?(module: string, x: Tensor, y: Tensor): Tensor;
  /** Frees the extension's tensors. */
  dispose(): void;
}

function rowMajorNormal(source: NormalSource, size: number, std: number): Float32Array {
  // Element by element `source.normal() * std`, continuing one stream across tensors.
  return source.fillNormal(new Float32Array(size), std);
}

/**
 * A decoder-only causal language model of the Llama / Qwen2 / Qwen3 family.
 *
 * @example Usage
 * ```ts
 * import { CausalLM, modelConfig } from "@rlvr/policy";
 * import { noGrad, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   modelType: "qwen2", vocabSize: 32, hiddenSize: 16, intermediateSize: 32,
 *   numLayers: 2, numHeads: 4, numKvHeads: 2, tieWordEmbeddings: true,
 * }), { seed: 1 });
 * const logits = noGrad(() => model.forward(tensor([[3, 1, 4]], { dtype: "i32" })));
 * assert.deepEqual(logits.shape, [1, 3, 32]);
 * logits.dispose();
 * model.dispose();
 * ```
 */
export class CausalLM {
  /** The validated configuration. */
  readonly config: ModelConfig;
  /** Parameters by Hugging Face name (see `parameterShapes`), f32, owned by the model. */
  readonly params: Map<string, Tensor>;
  /**
   * Activation checkpointing (`trainer.activationCheckpointing`; Hugging Face's
   * `gradient_checkpointing_enable()`): while gradients are recorded and no KV cache is used,
   * each decoder layer keeps only its input for the backward pass and runs again there
   * (`checkpoint` of `@rlvr/tensor`). The activations held between forward and backward shrink
   * from every layer's intermediates to one `[batch, t, hidden]` tensor per layer, for about a
   * third more compute; gradients are the same (bit for bit for parameters used by one layer).
   * Default false.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 2, numHeads: 2,
   * }), { seed: 1 });
   * model.activationCheckpointing = true;
   * model.forward(tensor([[1, 2, 3]], { dtype: "i32" })).sum().backward();
   * assert.ok(model.params.get("model.layers.0.mlp.up_proj.weight")!.grad !== null);
   * model.dispose();
   * ```
   */
  activationCheckpointing = false;
  #extensions = new Map<string, ModelExtension>();

  private constructor(config: ModelConfig, params: Map<string, Tensor>) {
    this.config = config;
    this.params = params;
    for (const p of params.values()) p.requiresGrad = true;
  }

  /**
   * A model with seeded random weights, initialised as Hugging Face's `_init_weights`: every
   * linear and embedding weight from `N(0, std²)`, norm weights 1, biases 0. Values are drawn on
   * the host from one stream in `parameterShapes` order, so a seed gives the same model on every
   * backend. Tensors go to the default backend (`withBackend` to choose one).
   *
   * `init` picks how the normals are drawn: `"box-muller"` (default) is `Rng.normal()`, the stream
   * every seeded checkpoint and pinned test was made with, bit for bit; `"ziggurat"` is
   * `ZigguratNormal` from the same seeded generator, a different stream with the same
   * distribution, about 8x faster per draw (the Qwen2.5-0.5B shape in about 4 s instead of 23 s on
   * a 2-core VM). Use it where the weights need not reproduce an earlier run (benchmarks, fresh
   * experiments).
   *
   * @param config The configuration.
   * @param opts `seed` (default 0), `std` (default 0.02, `initializer_range`), `storage`
   *   (`"f32"`, default, or `"bf16"`: the values drawn are rounded to bfloat16 and held in half
   *   the memory; see {@link CausalLM.setStorageFormat}) and `init` (`"box-muller"`, default, or
   *   `"ziggurat"`; see above).
   * @returns The model; it owns its tensors (call `dispose`).
   * @throws {RangeError} naming the option, the value and the choices when one is invalid.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const config = modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * });
   * const a = CausalLM.random(config, { seed: 3 });
   * const b = CausalLM.random(config, { seed: 3 });
   * const name = "model.layers.0.mlp.up_proj.weight";
   * assert.deepEqual(await a.params.get(name)!.toArray(), await b.params.get(name)!.toArray());
   * assert.deepEqual(await a.params.get("model.norm.weight")!.toArray(), [1, 1, 1, 1]);
   * const fast = CausalLM.random(config, { seed: 3, init: "ziggurat" }); // a different stream
   * assert.notDeepEqual(await fast.params.get(name)!.toArray(), await a.params.get(name)!.toArray());
   * a.dispose();
   * b.dispose();
   * fast.dispose();
   * ```
   */
  static random(
    config: ModelConfig,
    opts: { seed?: number; std?: number; storage?: StorageFormat; init?: NormalMethod } = {},
  ): CausalLM {
    const seed = opts.seed ?? 0;
    const std = opts.std ?? 0.02;
    const storage = opts.storage ?? "f32";
    const init = opts.init ?? "box-muller";
    if (!NORMAL_METHODS.includes(init)) {
      throw new RangeError(
        `CausalLM.random: init must be one of ${NORMAL_METHODS.join(", ")}, got ${
          JSON.stringify(init)
        }`,
      );
    }
    if (!STORAGE_FORMATS.includes(storage)) {
      throw new RangeError(
        `CausalLM.random: storage must be one of ${STORAGE_FORMATS.join(", ")}, got ${
          JSON.stringify(storage)
        }`,
      );
    }
    if (!Number.isFinite(seed)) {
      throw new RangeError(`CausalLM.random: seed must be a finite number, got ${seed}`);
    }
    if (!(Number.isFinite(std) && std >= 0)) {
      throw new RangeError(`CausalLM.random: std must be a finite number >= 0, got ${std}`);
    }
    const source = normalSource(seed, init);
    const params = new Map<string, Tensor>();
    for (const [name, shape] of parameterShapes(config)) {
      const size = shape.reduce((a, b) => a * b, 1);
      const values = name.endsWith("norm.weight")
        ? new Float32Array(size).fill(1)
        : name.endsWith(".bias")
        ? new Float32Array(size)
        : rowMajorNormal(source, size, std);
      const t = keep(tensor(values, { shape }));
      // Tensor by tensor, so only one f32 copy is alive at a time.
      if (storage !== "f32") setStorageFormat(t, storage);
      params.set(name, t);
    }
    return new CausalLM(config, params);
  }

  /**
   * A model over existing tensors (e.g. read from a checkpoint), which it takes ownership of.
   * Every name of `parameterShapes(config)` must be present with its shape, as an f32 leaf on one
   * backend, and no other name; otherwise one error lists every missing, unexpected and
   * mis-shaped name.
   *
   * @param config The configuration.
   * @param params Tensors by Hugging Face name.
   * @returns The model.
   * @throws {RangeError} listing all problems at once.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import { zeros } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const config = modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * });
   * const params = new Map([["model.embed_tokens.weight", zeros([8, 5])]]);
   * assert.throws(
   *   () => CausalLM.fromParams(config, params),
   *   /mis-shaped: model\.embed_tokens\.weight is \[8,5\], want \[8,4\]/,
   * );
   * ```
   */
  static fromParams(config: ModelConfig, params: Map<string, Tensor>): CausalLM {
    const problems = paramProblems(parameterShapes(config), params);
    const { missing, unexpected, wrong } = problems;
    if (missing.length + unexpected.length + wrong.length > 0) {
      throw new RangeError(
        `CausalLM.fromParams: the tensors do not fit the ${config.modelType} config ` +
          `(${missing.length} missing, ${unexpected.length} unexpected, ${wrong.length} mis-shaped); ` +
          `${describeProblems(problems)}. Names and shapes come from parameterShapes(config)` +
          (config.tieWordEmbeddings && params.has("lm_head.weight")
            ? "; the config ties embeddings, so drop lm_head.weight"
            : ""),
      );
    }
    return new CausalLM(config, keep(new Map(params)));
  }

  #param(name: string): Tensor {
    const t = this.params.get(name);
    if (t === undefined) {
      throw new Error(`CausalLM: parameter ${name} is missing from model.params`);
    }
    return t;
  }

  /**
   * Logits of every position: `lmHead(hidden(ids, opts))`.
   *
   * @param ids Token ids, i32 `[batch, t]`.
   * @param opts Cache, positions and attention mask.
   * @returns Logits, f32 `[batch, t, vocabSize]`.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import { logprobsOf, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const ids = tensor([[1, 2, 3]], { dtype: "i32" });
   * const logits = model.forward(ids);
   * // Log-probability of each next token, differentiable for policy gradients.
   * const lp = logprobsOf(logits.narrow(1, 0, 2), ids.narrow(1, 1, 2));
   * lp.sum().backward();
   * assert.ok(model.params.get("model.embed_tokens.weight")!.grad !== null);
   * model.dispose();
   * ```
   */
  forward(ids: Tensor, opts: ForwardOptions = {}): Tensor {
    return tidy(() => this.lmHead(this.hidden(ids, opts)));
  }

  /**
   * Final-normed hidden states (the input of the LM head and of a value head).
   *
   * @param ids Token ids, i32 `[batch, t]`.
   * @param opts Cache, positions and attention mask.
   * @returns Hidden states, f32 `[batch, t, hiddenSize]`.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import { noGrad, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }), { std: 1 });
   * const h = noGrad(() => model.hidden(tensor([[1, 2]], { dtype: "i32" })));
   * assert.deepEqual(h.shape, [1, 2, 4]);
   * // RMSNorm with unit weights: every row has mean square 1 (up to eps).
   * const row = (await h.toArray() as number[][][])[0]![0]!;
   * assert.ok(Math.abs(row.reduce((s, v) => s + v * v, 0) / 4 - 1) < 1e-3);
   * model.dispose();
   * ```
   */
  hidden(ids: Tensor, opts: ForwardOptions = {}): Tensor {
    const c = this.config;
    const embed = this.#param("model.embed_tokens.weight");
    const { batch, t, past } = this.#checkInputs(ids, opts, embed);
    const positions = opts.positions ?? Array.from({ length: t }, (_, i) => past + i);
    return tidy(() => {
      const tables = opts.rope ?? ropeTables(positions, {
        dim: c.headDim,
        theta: c.ropeTheta,
        backend: embed.backend,
        ...(c.ropeScaling === null ? {} : { scaling: c.ropeScaling }),
      });
      let x = opts.inputEmbeds ?? embedding(embed, ids);
      const ckpt = this.activationCheckpointing && opts.cache === undefined && isGradEnabled();
      const mask = opts.attentionMask;
      for (let layer = 0; layer < c.numLayers; layer++) {
        const prev = x;
        // Checkpointed, the layer reads the RoPE tables and the mask again in the backward
        // pass, after this scope has freed its handles: they go in as inputs, kept alive.
        x = ckpt
          ? checkpoint(
            (h, cos, sin, m) =>
              this.#block(layer, h!, batch, t, { cos: cos!, sin: sin! }, {
                ...opts,
                ...(m === undefined ? {} : { attentionMask: m }),
              }),
            [prev, tables.cos, tables.sin, ...(mask === undefined ? [] : [mask])],
          )
          : tidy(() => this.#block(layer, prev, batch, t, tables, opts));
        if (prev !== opts.inputEmbeds) prev.dispose();
      }
      return rmsNorm(x, this.#param("model.norm.weight"), c.rmsNormEps);
    });
  }

  /**
   * The LM head: `hidden · Wᵀ` with `lm_head.weight`, or with the embedding matrix when the
   * config ties them.
   *
   * @param hidden Hidden states `[..., hiddenSize]`.
   * @returns Logits `[..., vocabSize]`.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import { noGrad, zeros } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const logits = noGrad(() => model.lmHead(zeros([2, 4])));
   * assert.deepEqual(await logits.toArray(), [[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]]);
   * model.dispose();
   * ```
   */
  lmHead(hidden: Tensor): Tensor {
    const c = this.config;
    const h = c.hiddenSize;
    if (hidden.ndim < 1 || hidden.shape[hidden.ndim - 1] !== h) {
      throw new RangeError(
        `CausalLM.lmHead: hidden must be [..., hiddenSize=${h}], got ${fmtShape(hidden.shape)}`,
      );
    }
    const w = this.#param(c.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight");
    return tidy(() => {
      const lead = hidden.shape.slice(0, -1);
      const rows = lead.reduce((a, b) => a * b, 1);
      return hidden.reshape(rows, h).matmul(w, { transB: true }).reshape(...lead, c.vocabSize);
    });
  }

  /**
   * The tensors an optimizer should update: the base parameters, or only the extension tensors
   * while an extension that freezes the base (LoRA) is attached, plus every other extension's
   * (a value head).
   *
   * @returns Trainable tensors (no duplicates).
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig, parameterShapes } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const config = modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * });
   * const model = CausalLM.random(config);
   * assert.equal(model.parameters().length, parameterShapes(config).size);
   * model.dispose();
   * ```
   */
  parameters(): Tensor[] {
    return [...new Set(this.namedParameters().values())];
  }

  /**
   * Re-stores every base parameter (not the extensions': LoRA adapters and value heads stay f32)
   * as `format`: `"bf16"` halves their memory and rounds each value to bfloat16 once; ops still
   * compute in f32 (`setStorageFormat` in `@rlvr/tensor`). For frozen weights: a LoRA base, a
   * reference model. An optimizer step or a LoRA merge on a bf16 base rounds its result to bf16.
   * Throws on a backend without bf16 storage (WebGPU).
   *
   * @param format `"bf16"` or `"f32"`.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import { storageFormat, withBackend, createCpuBackend } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const backend = createCpuBackend();
   * const model = withBackend(backend, () => CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * })));
   * const before = backend.memory().liveBytes;
   * model.setStorageFormat("bf16");
   * assert.equal(backend.memory().liveBytes, before / 2);
   * assert.equal(storageFormat(model.params.get("lm_head.weight")!), "bf16");
   * model.dispose();
   * ```
   */
  setStorageFormat(format: StorageFormat): void {
    for (const t of new Set(this.params.values())) setStorageFormat(t, format);
  }

  /**
   * {@link CausalLM.parameters} with names: Hugging Face names for the base, the extensions'
   * own names (PEFT for LoRA, TRL for the value head).
   *
   * @returns Name → trainable tensor.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * assert.ok(model.namedParameters().has("model.layers.0.self_attn.q_proj.weight"));
   * model.dispose();
   * ```
   */
  namedParameters(): Map<string, Tensor> {
    const out = new Map<string, Tensor>();
    if (!this.#frozen()) { for (const [n, t] of this.params) out.set(n, t); }
    for (const ext of this.#extensions.values()) {
      for (const [n, t] of ext.namedParameters()) out.set(n, t);
    }
    return out;
  }

  /**
   * Attaches an extension (LoRA adapters, a value head); `attachLora` and `attachValueHead` call
   * this. Throws if one of the same kind is attached.
   *
   * @param ext The extension; the model disposes it in {@link CausalLM.dispose}.
   *
   * @example Usage
   * ```ts
   * import { attachValueHead, CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const head = attachValueHead(model); // calls model.attach(head)
   * assert.equal(model.extension("valueHead"), head);
   * assert.throws(() => model.attach(head), /already has a valueHead/);
   * model.dispose();
   * ```
   */
  attach(ext: ModelExtension): void {
    if (this.#extensions.has(ext.kind)) {
      throw new Error(
        `CausalLM.attach: the model already has a ${ext.kind} extension; detach it first`,
      );
    }
    this.#extensions.set(ext.kind, ext);
    this.#syncFrozen();
  }

  /**
   * Detaches an extension without disposing it; the base parameters train again when no
   * attached extension freezes them.
   *
   * @param ext An attached extension.
   *
   * @example Usage
   * ```ts
   * import { attachLora, CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const lora = attachLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] });
   * model.detach(lora);
   * assert.equal(model.params.get("model.norm.weight")!.requiresGrad, true);
   * lora.dispose();
   * model.dispose();
   * ```
   */
  detach(ext: ModelExtension): void {
    if (this.#extensions.get(ext.kind) !== ext) {
      throw new Error(`CausalLM.detach: this ${ext.kind} extension is not attached to the model`);
    }
    this.#extensions.delete(ext.kind);
    this.#syncFrozen();
  }

  /**
   * The attached extension of a kind, if any.
   *
   * @param kind E.g. `"lora"` or `"valueHead"`.
   * @returns The extension or undefined.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * assert.equal(model.extension("lora"), undefined);
   * model.dispose();
   * ```
   */
  extension(kind: string): ModelExtension | undefined {
    return this.#extensions.get(kind);
  }

  /**
   * Whether an attached extension changes the outputs of linear layers (LoRA does, a value head
   * does not): programs that read the weights directly, like the device decode loop, would miss
   * its term.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * assert.equal(model.adaptsLinears, false);
   * model.dispose();
   * ```
   */
  get adaptsLinears(): boolean {
    return this.linearAdapterKinds().length > 0;
  }

  /**
   * The kinds of the attached extensions that adapt linear layers (e.g. `["lora"]`), in the
   * order they were attached: what a path that reads the weights directly must account for.
   *
   * @returns The kinds; empty when every linear layer computes with its weight alone.
   *
   * @example Usage
   * ```ts
   * import { attachLora, CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * attachLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] });
   * assert.deepEqual(model.linearAdapterKinds(), ["lora"]);
   * model.dispose();
   * ```
   */
  linearAdapterKinds(): string[] {
    return [...this.#extensions.values()].filter((e) => e.adaptLinear !== undefined).map((e) =>
      e.kind
    );
  }

  /**
   * Frees the parameters and every attached extension.
   *
   * @example Usage
   * ```ts
   * import { CausalLM, modelConfig } from "@rlvr/policy";
   * import { getBackend } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const before = getBackend().memory().liveBuffers;
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * model.dispose();
   * assert.equal(getBackend().memory().liveBuffers, before);
   * ```
   */
  dispose(): void {
    for (const ext of this.#extensions.values()) ext.dispose();
    this.#extensions.clear();
    for (const t of this.params.values()) t.dispose();
  }

  #frozen(): boolean {
    for (const ext of this.#extensions.values()) if (ext.freezesBase) return true;
    return false;
  }

  #syncFrozen(): void {
    const train = !this.#frozen();
    for (const p of this.params.values()) p.requiresGrad = train;
  }

  #checkInputs(
    ids: Tensor,
    opts: ForwardOptions,
    embed: Tensor,
  ): { batch: number; t: number; past: number } {
    const op = "CausalLM.forward";
    if (ids.dtype !== "i32" || ids.ndim !== 2) {
      throw new TypeError(
        `${op}: ids must be i32 [batch, t], got ${ids.dtype} ${fmtShape(ids.shape)}; ` +
          `build it with tensor(rows, { dtype: "i32" })`,
      );
    }
    const [batch, t] = ids.shape as [number, number];
    if (batch < 1 || t < 1) {
      throw new RangeError(
        `${op}: ids must hold at least one token per row, got ${fmtShape(ids.shape)}`,
      );
    }
    if (ids.backend !== embed.backend) {
      throw new Error(
        `${op}: ids live on ${ids.backend.name} but the model on ${embed.backend.name}; ` +
          `create ids with { backend: model.params.get("model.embed_tokens.weight")!.backend }`,
      );
    }
    const cache = opts.cache;
    if (cache !== undefined) {
      const cc = cache.config;
      if (
        cc.numLayers !== this.config.numLayers || cc.numKvHeads !== this.config.numKvHeads ||
        cc.headDim !== this.config.headDim
      ) {
        throw new RangeError(
          `${op}: cache was built for ${cc.numLayers} layers × ${cc.numKvHeads} kv heads × ${cc.headDim}, ` +
            `the model has ${this.config.numLayers} × ${this.config.numKvHeads} × ${this.config.headDim}; ` +
            `use new KVCache(model.config, batch)`,
        );
      }
      if (cache.batch !== batch) {
        throw new RangeError(
          `${op}: cache holds ${cache.batch} rows but ids have ${batch}; ` +
            `call cache.selectRows to drop finished rows before the step`,
        );
      }
    }
    const past = cache?.length ?? 0;
    const pos = opts.positions;
    if (pos !== undefined) {
      const ok = Array.isArray(pos) && pos.length === batch &&
        pos.every((r) =>
          Array.isArray(r) && r.length === t && r.every((p) => Number.isInteger(p) && p >= 0)
        );
      if (!ok) {
        throw new RangeError(
          `${op}: positions must be ${batch} rows of ${t} integers >= 0 (one per token of ids ` +
            `${fmtShape(ids.shape)}), got ${JSON.stringify(pos).slice(0, 200)}`,
        );
      }
    }
    const mask = opts.attentionMask;
    if (mask !== undefined) {
      if (
        mask.dtype === "f32" || mask.ndim !== 2 || mask.shape[0] !== batch ||
        mask.shape[1] !== past + t
      ) {
        throw new RangeError(
          `${op}: attentionMask must be bool or i32 [batch, cacheLength + t] = [${batch},${
            past + t
          }], ` +
            `got ${mask.dtype} ${fmtShape(mask.shape)}; it covers the cached tokens too`,
        );
      }
    }
    const emb = opts.inputEmbeds;
    if (emb !== undefined) {
      const want = [batch, t, this.config.hiddenSize];
      if (
        emb.dtype !== "f32" || emb.ndim !== 3 || emb.shape.some((n, i) => n !== want[i]) ||
        emb.backend !== embed.backend
      ) {
        throw new RangeError(
          `${op}: inputEmbeds must be f32 ${fmtShape(want)} on ${embed.backend.name} (one row ` +
            `per token of ids), got ${emb.dtype} ${fmtShape(emb.shape)} on ${emb.backend.name}`,
        );
      }
    }
    const rt = opts.rope;
    if (rt !== undefined) {
      const half = this.config.headDim / 2;
      const ok = [rt.cos, rt.sin].every((x) =>
        x.backend === embed.backend && x.shape[x.ndim - 1] === half &&
        x.shape[x.ndim - 2] === t &&
        (x.ndim === 2 || (x.ndim === 3 && (x.shape[0] === batch || x.shape[0] === 1)))
      );
      if (!ok) {
        throw new RangeError(
          `${op}: rope tables must be [batch, t, headDim/2] = [${batch},${t},${half}] (or ` +
            `[${t},${half}]) on ${embed.backend.name}, got cos ${fmtShape(rt.cos.shape)}, sin ` +
            `${fmtShape(rt.sin.shape)}; build them for this call's tokens`,
        );
      }
    }
    return { batch, t, past };
  }

  /** `y = x · Wᵀ + b` for the module at `path`, then the extensions' hooks. */
  #linear(path: string, x: Tensor): Tensor {
    let y = x.matmul(this.#param(`${path}.weight`), { transB: true });
    const bias = this.params.get(`${path}.bias`);
    if (bias !== undefined) y = y.add(bias);
    for (const ext of this.#extensions.values()) {
      if (ext.adaptLinear !== undefined) y = ext.adaptLinear(path, x, y);
    }
    return y;
  }

  /** One decoder layer on `x` `[batch, t, hidden]`. */
  #block(
    layer: number,
    x: Tensor,
    batch: number,
    t: number,
    tables: RopeTables,
    opts: ForwardOptions,
  ): Tensor {
    const c = this.config;
    const p = `model.layers.${layer}`;
    const rows = batch * t;
    const normed = rmsNorm(x, this.#param(`${p}.input_layernorm.weight`), c.rmsNormEps)
      .reshape(rows, c.hiddenSize);
    // [rows, heads·d] → [batch, t, heads, d] (QK-norm acts per head here, as Qwen3) → [batch, heads, t, d]
    const heads = (name: string, n: number, norm: string | null): Tensor => {
      let h = this.#linear(`${p}.self_attn.${name}`, normed).reshape(batch, t, n, c.headDim);
      if (norm !== null) h = rmsNorm(h, this.#param(`${p}.self_attn.${norm}.weight`), c.rmsNormEps);
      return h.permute(0, 2, 1, 3);
    };
    const q = rope(heads("q_proj", c.numHeads, c.qkNorm ? "q_norm" : null), tables.cos, tables.sin);
    let k = rope(heads("k_proj", c.numKvHeads, c.qkNorm ? "k_norm" : null), tables.cos, tables.sin);
    let v = heads("v_proj", c.numKvHeads, null);
    if (opts.cache !== undefined) ({ key: k, value: v } = opts.cache.append(layer, k, v));
    const attn = scaledDotProductAttention(q, k, v, {
      causal: true,
      scale: c.headDim ** -0.5,
      ...(opts.attentionMask === undefined ? {} : { mask: opts.attentionMask }),
    }).permute(0, 2, 1, 3).reshape(rows, c.numHeads * c.headDim);
    const h = x.add(this.#linear(`${p}.self_attn.o_proj`, attn).reshape(batch, t, c.hiddenSize));
    const normed2 = rmsNorm(h, this.#param(`${p}.post_attention_layernorm.weight`), c.rmsNormEps)
      .reshape(rows, c.hiddenSize);
    const gate = this.#linear(`${p}.mlp.gate_proj`, normed2);
    const up = this.#linear(`${p}.mlp.up_proj`, normed2);
    const down = this.#linear(`${p}.mlp.down_proj`, gate.silu().mul(up));
    return h.add(down.reshape(batch, t, c.hiddenSize));
  }
}
