/**
 * The device decode loop: decode steps of a {@link CausalLM} as fixed GPU programs that sample on
 * the GPU and feed each token to the next step there, so many steps run per host round trip.
 *
 * Why: on Deno's WebGPU every wait for the GPU (`mapAsync`, `onSubmittedWorkDone`) takes about
 * 11 ms (its implementation polls the device, then sleeps 10 ms; `bench/webgpu_wait.ts`), and
 * encoding a decode step through the tensor ops costs tens of microseconds per dispatch. A step
 * that reads its logits back to sample on the host is therefore bounded near 85 steps per second
 * whatever the GPU. Here a
 * step is about ten dispatches per layer with bind groups built once; the host records chunks of
 * steps, submits them, and reads the tokens of a chunk while the next one runs.
 *
 * What differs from the host loop of `generate`: the logits come from these kernels (f32, other
 * summation orders than the tensor ops) and the inverse CDF runs in f32, so a token can differ
 * from the host loop's where two candidates are within rounding; rows that end early keep
 * decoding until the host reads their chunk (their tokens are dropped). Supported: f32 weights,
 * LoRA adapters (unmerged adapters are folded into copies of the adapted weights when the decoder
 * is built, `LoraAdapters.mergedWeights`, so its kernels stay plain GEMVs; no other linear-layer
 * extension), temperature sampling with top-k / top-p / min-p in the host sampler's orders
 * (`filters`: each stage keeps a prefix of the tokens by value, found by bisection on the GPU), or
 * greedy decoding.
 *
 * @module
 */

import { ropeTables, type Tensor, type WebGpuBackend } from "@rlvr/tensor";
import type { ModelConfig } from "../config.ts";
import type { KVCache } from "../kv_cache.ts";
import { LoraAdapters } from "../lora.ts";
import type { CausalLM } from "../model.ts";
import {
  ADVANCE_WGSL,
  type AttentionShape,
  attentionWgsl,
  type DeviceFilters,
  embedWgsl,
  GEMV_OUTPUTS_PER_GROUP,
  gemvWgsl,
  rmsNormWgsl,
  ropeKvWgsl,
  samplerWgsl,
} from "./kernels.ts";

export type { DeviceFilters } from "./kernels.ts";

/** Options of {@link DeviceDecoder}. */
export interface DeviceDecoderOptions {
  /** Batch rows decoded together. */
  rows: number;
  /** Cache columns per row: the padded prompt plus every token to generate. */
  maxLen: number;
  /** Token indices to allocate outputs for (`maxNewTokens`). */
  maxSteps: number;
  /** Sampling temperature, 0 for greedy. */
  temperature: number;
  /** Top-k / top-p / min-p after the temperature (default none). */
  filters?: DeviceFilters;
  /**
   * RoPE positions the tables cover (default `maxLen`): more when a row's position runs ahead of
   * its cache column (`start`'s `positionShifts` above 0).
   */
  ropePositions?: number;
}

/** The tokens of one chunk of steps, row-major `[steps, rows]`. */
export interface DeviceChunk {
  /** First token index of the chunk. */
  from: number;
  /** Steps in the chunk. */
  steps: number;
  /** Token ids `[steps · rows]`. */
  tokens: Uint32Array;
  /** Per token: log-prob under the sampling distribution (greedy: 0). */
  logprobs: Float32Array;
  /** Per token: `log softmax(logits / T)` (greedy: `log softmax(logits)`). */
  scaledLogprobs: Float32Array;
}

interface Dispatch {
  pipeline: GPUComputePipeline;
  group: GPUBindGroup;
  x: number;
  y: number;
}

const STORAGE = 0x80 | 0x04 | 0x08; // STORAGE | COPY_SRC | COPY_DST

/**
 * Compiled pipelines per device and WGSL source: a decoder is built per `generate` call, and
 * compiling its shaders again each time would cost more than a short generation.
 */
const PIPELINES = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();
const STAGING = 0x01 | 0x08; // MAP_READ | COPY_DST

/**
 * Why `model` cannot decode on the device, or null when it can.
 *
 * @param model The policy.
 * @returns A sentence naming what is unsupported, or null.
 *
 * @example Usage
 * ```ts
 * import { CausalLM, deviceDecodeProblem, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 16, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 * }));
 * assert.match(deviceDecodeProblem(model)!, /WebGPU/); // a CPU model
 * model.dispose();
 * ```
 */
export function deviceDecodeProblem(model: CausalLM): string | null {
  const embed = model.params.get("model.embed_tokens.weight");
  if (embed === undefined) return "the model has no model.embed_tokens.weight (disposed?)";
  const backend = embed.backend as Partial<WebGpuBackend>;
  if (backend.name !== "webgpu" || typeof backend.gpuBuffer !== "function") {
    return `the model's parameters are on the ${embed.backend.name} backend, not WebGPU`;
  }
  const c = model.config;
  if (
    c.hiddenSize % 4 !== 0 || c.intermediateSize % 4 !== 0 || (c.numHeads * c.headDim) % 4 !== 0
  ) {
    return `hiddenSize ${c.hiddenSize}, intermediateSize ${c.intermediateSize} and ` +
      `numHeads·headDim ${c.numHeads * c.headDim} must be multiples of 4`;
  }
  if (c.headDim > 128 || 128 % c.headDim !== 0) {
    return `headDim ${c.headDim} must divide 128`;
  }
  for (const [name, t] of model.params) {
    if (t.dtype !== "f32") return `parameter ${name} is ${t.dtype}, not f32`;
    if (/mlp\.(gate|up|down)_proj\.bias$/.test(name)) {
      return `MLP biases (${name}) are not supported`;
    }
  }
  const other = model.linearAdapterKinds().find((k) =>
    !(model.extension(k) instanceof LoraAdapters)
  );
  if (other !== undefined) {
    return `a linear-layer extension other than LoRA (${other}) is attached; merge it into the ` +
      `weights first`;
  }
  return null;
}

/**
 * Decode steps of a {@link CausalLM} on WebGPU with sampling on the GPU (see the module doc).
 * `generate(..., { decodeLoop: "device" })` drives it; use it directly to decode from a
 * {@link KVCache} of your own.
 *
 * @example Usage
 * ```ts
 * import { CausalLM, DeviceDecoder, modelConfig } from "@rlvr/policy";
 * import { createWebGpuBackend, withBackend } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const adapter = await navigator.gpu?.requestAdapter();
 * if (adapter) {
 *   const backend = await createWebGpuBackend({ adapter });
 *   const config = modelConfig({
 *     vocabSize: 16, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 *   });
 *   const model = withBackend(backend, () => CausalLM.random(config));
 *   const dec = new DeviceDecoder(model, { rows: 1, maxLen: 8, maxSteps: 4, temperature: 0 });
 *   assert.equal(dec.dispatchesPerStep, 15); // embed, 10 per layer, norm, head, sample, advance
 *   dec.dispose();
 *   model.dispose();
 *   backend.destroy();
 * }
 * ```
 */
export class DeviceDecoder {
  readonly #backend: WebGpuBackend;
  readonly #device: GPUDevice;
  readonly #config: ModelConfig;
  readonly #opts: DeviceDecoderOptions;
  readonly #owned: GPUBuffer[] = [];
  readonly #tables: Tensor[] = [];
  /** LoRA's adapted weights with the adapters folded in (owned; empty without adapters). */
  readonly #merged: Map<string, Tensor>;
  readonly #steps: Dispatch[] = [];
  readonly #kc: GPUBuffer[] = [];
  readonly #vc: GPUBuffer[] = [];
  readonly #tok: GPUBuffer;
  readonly #pad: GPUBuffer;
  readonly #shift: GPUBuffer;
  readonly #state: GPUBuffer;
  readonly #u: GPUBuffer;
  readonly #outTok: GPUBuffer;
  readonly #outLp: GPUBuffer;
  #disposed = false;
  readonly #built: Promise<GPUError | null>;

  /**
   * Builds the pipelines, buffers and bind groups of one step for `opts.rows` rows.
   *
   * @param model The policy; it must stay alive (its weights are bound) until `dispose()`. With
   *   LoRA adapters, they are folded into copies of the adapted weights now: a later change to
   *   the adapters or the weights is not seen by this decoder.
   * @param opts Rows, cache length, output length, temperature.
   */
  constructor(model: CausalLM, opts: DeviceDecoderOptions) {
    const problem = deviceDecodeProblem(model);
    if (problem !== null) throw new Error(`DeviceDecoder: ${problem}`);
    for (const k of ["rows", "maxLen", "maxSteps"] as const) {
      if (!Number.isInteger(opts[k]) || opts[k] < 1) {
        throw new RangeError(`DeviceDecoder: ${k} must be an integer >= 1, got ${opts[k]}`);
      }
    }
    if (!(opts.temperature >= 0 && Number.isFinite(opts.temperature))) {
      throw new RangeError(
        `DeviceDecoder: temperature must be a finite number >= 0, got ${opts.temperature}`,
      );
    }
    const ropeRows = opts.ropePositions ?? opts.maxLen;
    if (!Number.isInteger(ropeRows) || ropeRows < opts.maxLen) {
      throw new RangeError(
        `DeviceDecoder: ropePositions must be an integer >= maxLen (${opts.maxLen}), got ${ropeRows}`,
      );
    }
    const f = opts.filters;
    if (f !== undefined) {
      const bad = !Number.isInteger(f.topK) || f.topK < 0
        ? `topK must be an integer >= 0 (0: off), got ${f.topK}`
        : !(f.topP > 0 && f.topP <= 1)
        ? `topP must be in (0, 1] (1: off), got ${f.topP}`
        : !(f.minP >= 0 && f.minP <= 1)
        ? `minP must be in [0, 1] (0: off), got ${f.minP}`
        : f.order !== "hf" && f.order !== "vllm"
        ? `order must be "hf" or "vllm", got ${JSON.stringify(f.order)}`
        : null;
      if (bad !== null) throw new RangeError(`DeviceDecoder: filters.${bad}`);
    }
    const embed = model.params.get("model.embed_tokens.weight")!;
    const backend = embed.backend as WebGpuBackend;
    this.#backend = backend;
    this.#device = backend.device;
    this.#config = model.config;
    this.#opts = { ...opts, ropePositions: ropeRows };
    const c = model.config;
    const B = opts.rows;
    const D = c.headDim;
    const maxGroups = this.#device.limits.maxComputeWorkgroupsPerDimension;
    if (Math.ceil(c.vocabSize / GEMV_OUTPUTS_PER_GROUP) > maxGroups) {
      throw new RangeError(
        `DeviceDecoder: vocabSize ${c.vocabSize} needs more than ${maxGroups} workgroups per ` +
          `dimension in the LM head`,
      );
    }

    const lora = model.extension("lora");
    this.#merged = lora instanceof LoraAdapters ? lora.mergedWeights() : new Map();
    // A pooled buffer can be larger than its tensor: bind only the tensor's bytes.
    const sizes = new Map<GPUBuffer, number>();
    const bound = (t: Tensor): GPUBuffer => {
      const { buffer, bytes } = backend.gpuBuffer(t.buffer);
      sizes.set(buffer, bytes);
      return buffer;
    };
    const weight = (name: string): GPUBuffer => {
      const t = this.#merged.get(name) ?? model.params.get(name);
      if (t === undefined) throw new Error(`DeviceDecoder: the model has no ${name}`);
      return bound(t);
    };
    const buffer = (bytes: number, label: string): GPUBuffer => {
      const b = this.#device.createBuffer({ size: Math.max(16, bytes), usage: STORAGE, label });
      this.#owned.push(b);
      return b;
    };
    const x = buffer(B * c.hiddenSize * 4, "decode.x");
    const h = buffer(B * c.hiddenSize * 4, "decode.h");
    const q = buffer(B * c.numHeads * D * 4, "decode.q");
    const k = buffer(B * c.numKvHeads * D * 4, "decode.k");
    const v = buffer(B * c.numKvHeads * D * 4, "decode.v");
    const attn = buffer(B * c.numHeads * D * 4, "decode.attn");
    const mlp = buffer(B * c.intermediateSize * 4, "decode.mlp");
    const logits = buffer(B * c.vocabSize * 4, "decode.logits");
    this.#tok = buffer(B * 4, "decode.tok");
    this.#pad = buffer(B * 4, "decode.pad");
    this.#shift = buffer(B * 4, "decode.shift");
    this.#state = buffer(16, "decode.state");
    this.#u = buffer(opts.maxSteps * B * 4, "decode.u");
    this.#outTok = buffer(opts.maxSteps * B * 4, "decode.outTok");
    this.#outLp = buffer(opts.maxSteps * B * 8, "decode.outLp");
    for (let l = 0; l < c.numLayers; l++) {
      this.#kc.push(buffer(B * c.numKvHeads * opts.maxLen * D * 4, `decode.k${l}`));
      this.#vc.push(buffer(B * c.numKvHeads * opts.maxLen * D * 4, `decode.v${l}`));
    }
    const tables = ropeTables(Array.from({ length: ropeRows }, (_, i) => i), {
      dim: D,
      theta: c.ropeTheta,
      backend,
      ...(c.ropeScaling === null ? {} : { scaling: c.ropeScaling }),
    });
    this.#tables.push(tables.cos, tables.sin);
    const rotary = 2 * tables.cos.shape[tables.cos.ndim - 1]!;
    const cos = bound(tables.cos);
    const sin = bound(tables.sin);

    // Pipelines and bind groups are checked in one error scope: `checked()` reports a shader
    // that did not compile instead of letting the steps run without it.
    this.#device.pushErrorScope("validation");
    let pipelines = PIPELINES.get(this.#device);
    if (pipelines === undefined) {
      pipelines = new Map();
      PIPELINES.set(this.#device, pipelines);
    }
    const pipeline = (code: string, label: string): GPUComputePipeline => {
      let p = pipelines!.get(code);
      if (p === undefined) {
        const module = this.#device.createShaderModule({ code, label });
        p = this.#device.createComputePipeline({
          layout: "auto",
          compute: { module, entryPoint: "main" },
          label,
        });
        pipelines!.set(code, p);
      }
      return p;
    };
    const add = (p: GPUComputePipeline, buffers: GPUBuffer[], x: number, y = 1): void => {
      const group = this.#device.createBindGroup({
        layout: p.getBindGroupLayout(0),
        entries: buffers.map((buffer, binding) => {
          const size = sizes.get(buffer);
          return { binding, resource: size === undefined ? { buffer } : { buffer, size } };
        }),
      });
      this.#steps.push({ pipeline: p, group, x, y });
    };
    const rowBlock = Math.min(B, 8);
    const rowGroups = Math.ceil(B / rowBlock);
    const gemv = (
      input: GPUBuffer,
      weights: GPUBuffer[],
      bias: GPUBuffer | null,
      out: GPUBuffer,
      n: number,
      kk: number,
      mode: "set" | "accumulate" | "swiglu",
    ): void => {
      const code = gemvWgsl({
        n,
        k: kk,
        rows: B,
        rowBlock,
        bias: bias !== null,
        accumulate: mode === "accumulate",
        swiglu: mode === "swiglu",
      });
      const bufs = [input, ...weights, ...(bias === null ? [] : [bias]), out];
      add(pipeline(code, `decode.gemv.${mode}.${n}x${kk}`), bufs, Math.ceil(n / 4), rowGroups);
    };
    const norm = pipeline(rmsNormWgsl(c.hiddenSize, c.rmsNormEps), "decode.rmsnorm");
    const shape: AttentionShape = {
      rows: B,
      heads: c.numHeads,
      kvHeads: c.numKvHeads,
      headDim: D,
      rotary,
      maxLen: opts.maxLen,
    };
    const rope = pipeline(ropeKvWgsl(shape, c.qkNorm, c.rmsNormEps), "decode.ropekv");
    const attention = pipeline(attentionWgsl(shape, D ** -0.5), "decode.attention");
    const has = (name: string) => model.params.has(name);

    add(pipeline(embedWgsl(c.hiddenSize), "decode.embed"), [
      this.#tok,
      weight("model.embed_tokens.weight"),
      x,
    ], B);
    // `y = x · Wᵀ (+ b)` of the linear module at `path`, into `out` (set, or added to it).
    const linear = (
      path: string,
      input: GPUBuffer,
      out: GPUBuffer,
      n: number,
      kk: number,
      mode: "set" | "accumulate",
    ) =>
      gemv(
        input,
        [weight(`${path}.weight`)],
        has(`${path}.bias`) ? weight(`${path}.bias`) : null,
        out,
        n,
        kk,
        mode,
      );
    for (let l = 0; l < c.numLayers; l++) {
      const p = `model.layers.${l}`;
      const H = c.hiddenSize;
      add(norm, [x, weight(`${p}.input_layernorm.weight`), h], B);
      linear(`${p}.self_attn.q_proj`, h, q, c.numHeads * D, H, "set");
      linear(`${p}.self_attn.k_proj`, h, k, c.numKvHeads * D, H, "set");
      linear(`${p}.self_attn.v_proj`, h, v, c.numKvHeads * D, H, "set");
      add(
        rope,
        [
          q,
          k,
          v,
          this.#kc[l]!,
          this.#vc[l]!,
          cos,
          sin,
          this.#shift,
          this.#state,
          ...(c.qkNorm
            ? [weight(`${p}.self_attn.q_norm.weight`), weight(`${p}.self_attn.k_norm.weight`)]
            : []),
        ],
        B * (c.numHeads + c.numKvHeads),
      );
      add(attention, [q, this.#kc[l]!, this.#vc[l]!, this.#pad, this.#state, attn], B * c.numHeads);
      linear(`${p}.self_attn.o_proj`, attn, x, H, c.numHeads * D, "accumulate");
      add(norm, [x, weight(`${p}.post_attention_layernorm.weight`), h], B);
      const gateUp = [weight(`${p}.mlp.gate_proj.weight`), weight(`${p}.mlp.up_proj.weight`)];
      gemv(h, gateUp, null, mlp, c.intermediateSize, H, "swiglu");
      linear(`${p}.mlp.down_proj`, mlp, x, H, c.intermediateSize, "accumulate");
    }
    add(norm, [x, weight("model.norm.weight"), h], B);
    const head = c.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight";
    gemv(h, [weight(head)], null, logits, c.vocabSize, c.hiddenSize, "set");
    add(
      pipeline(samplerWgsl(c.vocabSize, B, opts.temperature, opts.filters), "decode.sampler"),
      [logits, this.#u, this.#state, this.#tok, this.#outTok, this.#outLp],
      B,
    );
    add(pipeline(ADVANCE_WGSL, "decode.advance"), [this.#state], 1);
    this.#built = this.#device.popErrorScope();
  }

  /**
   * Resolves once the device has validated the pipelines and bind groups; rejects with the first
   * error (e.g. a shader that did not compile). Await it before trusting the first chunk.
   *
   * @returns Nothing, once validated.
   */
  async checked(): Promise<void> {
    const error = await this.#built;
    if (error !== null) {
      throw new Error(`DeviceDecoder: building the decode step failed: ${error.message}`);
    }
  }

  /** Dispatches per decode step. */
  get dispatchesPerStep(): number {
    return this.#steps.length;
  }

  /**
   * Starts decoding after a prefill: copies the cache's columns, and sets each row's left
   * padding, the token to feed first, the cache column it goes to, its token index, and the
   * uniforms of every draw.
   *
   * @param cache The prefilled cache, `rows` rows of `length` columns (`length <= maxLen`).
   * @param start First step: per row its padding, its token and (default `-pad`) the shift from
   *   cache column to RoPE position (a multimodal model's M-RoPE delta); the token index it
   *   samples next.
   * @param uniforms Uniform of token index `t` of row `r` at `[t · rows + r]` (`maxSteps · rows`).
   */
  start(
    cache: KVCache,
    start: {
      pads: readonly number[];
      tokens: readonly number[];
      step: number;
      positionShifts?: readonly number[];
    },
    uniforms: Float32Array,
  ): void {
    this.#alive();
    const c = this.#config;
    const B = this.#opts.rows;
    const len = cache.length;
    if (cache.batch !== B) {
      throw new RangeError(`DeviceDecoder.start: the cache has ${cache.batch} rows, not ${B}`);
    }
    if (len < 1 || len >= this.#opts.maxLen) {
      throw new RangeError(
        `DeviceDecoder.start: the cache holds ${len} columns; it must hold 1 to maxLen - 1 ` +
          `(${this.#opts.maxLen - 1})`,
      );
    }
    if (start.pads.length !== B || start.tokens.length !== B) {
      throw new RangeError(`DeviceDecoder.start: pads and tokens must list ${B} rows`);
    }
    const shifts = start.positionShifts ?? start.pads.map((p) => -p);
    if (shifts.length !== B) {
      throw new RangeError(`DeviceDecoder.start: positionShifts must list ${B} rows`);
    }
    const positions = this.#opts.ropePositions!; // the constructor sets it
    shifts.forEach((s, r) => {
      const lo = len + s;
      const hi = this.#opts.maxLen - 1 + s;
      if (!Number.isInteger(s) || lo < 0 || hi >= positions) {
        throw new RangeError(
          `DeviceDecoder.start: row ${r}'s position shift ${s} puts its RoPE positions at ` +
            `[${lo}, ${hi}], outside the tables' [0, ${positions - 1}]; raise ropePositions`,
        );
      }
    });

    if (uniforms.length !== this.#opts.maxSteps * B) {
      throw new RangeError(
        `DeviceDecoder.start: uniforms must hold maxSteps · rows = ${this.#opts.maxSteps * B}, ` +
          `got ${uniforms.length}`,
      );
    }
    const D = c.headDim;
    const enc = this.#device.createCommandEncoder();
    for (let l = 0; l < c.numLayers; l++) {
      const kv = cache.layer(l)!;
      const key = this.#backend.gpuBuffer(kv.key.buffer).buffer;
      const value = this.#backend.gpuBuffer(kv.value.buffer).buffer;
      for (let bh = 0; bh < B * c.numKvHeads; bh++) {
        const from = bh * len * D * 4;
        const to = bh * this.#opts.maxLen * D * 4;
        enc.copyBufferToBuffer(key, from, this.#kc[l]!, to, len * D * 4);
        enc.copyBufferToBuffer(value, from, this.#vc[l]!, to, len * D * 4);
      }
    }
    this.#device.queue.submit([enc.finish()]);
    const q = this.#device.queue;
    q.writeBuffer(this.#pad, 0, new Uint32Array(start.pads));
    q.writeBuffer(this.#shift, 0, new Int32Array(shifts));
    q.writeBuffer(this.#tok, 0, new Uint32Array(start.tokens));
    q.writeBuffer(this.#state, 0, new Uint32Array([len, start.step, 0, 0]));
    q.writeBuffer(this.#u, 0, new Float32Array(uniforms));
  }

  /**
   * Records and submits `steps` decode steps (token indices `from` to `from + steps - 1`; they
   * must follow the previous call's), then copies their tokens out. Await the result when the
   * tokens are needed; call again before that to keep the GPU busy meanwhile.
   *
   * @param from First token index of the chunk.
   * @param steps Number of steps.
   * @returns The chunk's tokens and log-probs, once the GPU has run it.
   */
  run(from: number, steps: number): Promise<DeviceChunk> {
    this.#alive();
    const B = this.#opts.rows;
    if (!Number.isInteger(steps) || steps < 1 || from + steps > this.#opts.maxSteps) {
      throw new RangeError(
        `DeviceDecoder.run: steps ${from}..${
          from + steps - 1
        } exceed maxSteps ${this.#opts.maxSteps}`,
      );
    }
    const enc = this.#device.createCommandEncoder();
    const pass = enc.beginComputePass();
    let last: GPUComputePipeline | null = null;
    for (let s = 0; s < steps; s++) {
      for (const d of this.#steps) {
        if (d.pipeline !== last) pass.setPipeline(d.pipeline);
        last = d.pipeline;
        pass.setBindGroup(0, d.group);
        pass.dispatchWorkgroups(d.x, d.y);
      }
    }
    pass.end();
    const n = steps * B;
    const staging = this.#device.createBuffer({ size: n * 12, usage: STAGING });
    enc.copyBufferToBuffer(this.#outTok, from * B * 4, staging, 0, n * 4);
    enc.copyBufferToBuffer(this.#outLp, from * B * 8, staging, n * 4, n * 8);
    this.#device.queue.submit([enc.finish()]);
    return staging.mapAsync(GPUMapMode.READ).then(() => {
      const bytes = staging.getMappedRange().slice(0);
      staging.unmap();
      staging.destroy();
      const tokens = new Uint32Array(bytes, 0, n);
      const lps = new Float32Array(bytes, n * 4, n * 2);
      const logprobs = new Float32Array(n);
      const scaledLogprobs = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        logprobs[i] = lps[2 * i]!;
        scaledLogprobs[i] = lps[2 * i + 1]!;
      }
      return { from, steps, tokens, logprobs, scaledLogprobs };
    });
  }

  /**
   * Runs one decode step (token index `from`, as {@link DeviceDecoder.run} would) with every
   * dispatch in its own compute pass between two GPU timestamps, and returns the GPU time per
   * kernel (pipeline label), largest first. Separate passes add a little time of their own, so
   * the sum is an upper bound of a normal step's. Needs the `timestamp-query` feature.
   *
   * @param from Token index of the step (it advances the state like `run`).
   * @returns Per kernel: label, dispatches per step, GPU milliseconds in all.
   */
  async profile(from: number): Promise<{ kernel: string; dispatches: number; ms: number }[]> {
    this.#alive();
    if (!this.#device.features.has("timestamp-query")) {
      throw new Error("DeviceDecoder.profile: the device lacks the timestamp-query feature");
    }
    if (!Number.isInteger(from) || from < 0 || from >= this.#opts.maxSteps) {
      throw new RangeError(
        `DeviceDecoder.profile: token index ${from} is outside [0, ${this.#opts.maxSteps})`,
      );
    }
    const n = this.#steps.length;
    const querySet = this.#device.createQuerySet({ type: "timestamp", count: 2 * n });
    const resolved = this.#device.createBuffer({ size: 16 * n, usage: 0x200 | 0x04 }); // QUERY_RESOLVE | COPY_SRC
    const staging = this.#device.createBuffer({ size: 16 * n, usage: STAGING });
    try {
      const enc = this.#device.createCommandEncoder();
      this.#steps.forEach((d, i) => {
        const pass = enc.beginComputePass({
          timestampWrites: {
            querySet,
            beginningOfPassWriteIndex: 2 * i,
            endOfPassWriteIndex: 2 * i + 1,
          },
        });
        pass.setPipeline(d.pipeline);
        pass.setBindGroup(0, d.group);
        pass.dispatchWorkgroups(d.x, d.y);
        pass.end();
      });
      enc.resolveQuerySet(querySet, 0, 2 * n, resolved, 0);
      enc.copyBufferToBuffer(resolved, 0, staging, 0, 16 * n);
      this.#device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const ts = new BigUint64Array(staging.getMappedRange().slice(0));
      staging.unmap();
      const by = new Map<string, { dispatches: number; ms: number }>();
      this.#steps.forEach((d, i) => {
        const ns = ts[2 * i + 1]! >= ts[2 * i]! ? Number(ts[2 * i + 1]! - ts[2 * i]!) : 0;
        const e = by.get(d.pipeline.label) ?? { dispatches: 0, ms: 0 };
        e.dispatches++;
        e.ms += ns / 1e6;
        by.set(d.pipeline.label, e);
      });
      return [...by].map(([kernel, e]) => ({ kernel, ...e })).sort((a, b) => b.ms - a.ms);
    } finally {
      querySet.destroy();
      resolved.destroy();
      staging.destroy();
    }
  }

  /** Frees the decoder's buffers (the model's weights stay). */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const b of this.#owned) b.destroy();
    for (const t of this.#tables) t.dispose();
    for (const t of this.#merged.values()) t.dispose();
  }

  #alive(): void {
    if (this.#disposed) throw new Error("DeviceDecoder: used after dispose()");
  }
}
