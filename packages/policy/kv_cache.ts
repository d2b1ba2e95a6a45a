/**
 * The key/value cache of {@link CausalLM} for incremental decoding: per layer, the rotated keys
 * and the values of every token seen so far, `[batch, kvHeads, length, headDim]`.
 *
 * Design: the cache is a plain list of tensors that grows by concatenation, one new tensor per
 * layer and step, the old one freed. A preallocated ring with in-place writes would copy less, but
 * tensors are immutable values in `@rlvr/tensor`, and concatenation keeps every cached value
 * bit-identical to what a full recomputation produces, which is what lets the cached and the
 * recomputed logits agree exactly on the CPU. All rows share one length (left padding, as Hugging
 * Face batches prompts); which keys a row may see is the caller's `attentionMask`. Cached tensors
 * carry no autograd graph: the keys of the current call get gradients inside that call, earlier
 * ones are constants, as in generation. `selectRows` keeps (or repeats) batch rows, so finished
 * sequences stop costing compute and one prefilled prompt can be fanned out to a group of samples.
 *
 * @module
 */

import { concat, fmtShape, keep, noGrad, type Tensor, tensor, tidy } from "@rlvr/tensor";
import type { ModelConfig } from "./config.ts";

/** The cached keys and values of one layer, each `[batch, kvHeads, length, headDim]`. */
export interface LayerKV {
  /** Keys after RoPE (and QK-norm). */
  readonly key: Tensor;
  /** Values. */
  readonly value: Tensor;
}

/**
 * Keys and values of past tokens for every layer of a {@link CausalLM}; pass it as
 * `forward(ids, { cache })` and each call appends its tokens in place.
 *
 * @example Usage
 * ```ts
 * import { CausalLM, KVCache, modelConfig } from "@rlvr/policy";
 * import { noGrad, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({
 *   vocabSize: 16, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 * });
 * const model = CausalLM.random(config, { seed: 0 });
 * const cache = new KVCache(config, 1);
 * noGrad(() => {
 *   model.forward(tensor([[1, 2, 3]], { dtype: "i32" }), { cache }).dispose();
 *   model.forward(tensor([[4]], { dtype: "i32" }), { cache }).dispose();
 * });
 * assert.equal(cache.length, 4);
 * cache.dispose();
 * model.dispose();
 * ```
 */
export class KVCache {
  /** The model configuration the cache is shaped for. */
  readonly config: ModelConfig;
  #batch: number;
  #layers: (LayerKV | null)[];

  /**
   * An empty cache for `batch` sequences.
   *
   * @param config The model's configuration (layers, kv heads, head dimension).
   * @param batch Number of sequences (rows).
   */
  constructor(config: ModelConfig, batch: number) {
    if (!Number.isInteger(batch) || batch < 1) {
      throw new RangeError(`KVCache: batch must be an integer >= 1, got ${batch}`);
    }
    this.config = config;
    this.#batch = batch;
    this.#layers = Array.from({ length: config.numLayers }, () => null);
  }

  /** Number of rows (sequences); changes with {@link KVCache.selectRows}. */
  get batch(): number {
    return this.#batch;
  }

  /**
   * Tokens cached per row (the same for every row, padding included). During a forward pass the
   * earlier layers are already one step ahead; the last layer's length is the committed one.
   */
  get length(): number {
    return this.#lengthOf(this.config.numLayers - 1);
  }

  #lengthOf(layer: number): number {
    return this.#layers[layer]?.key.shape[2] ?? 0;
  }

  /**
   * The cached keys and values of `layer`, or null before anything was appended. The tensors
   * belong to the cache: read them, do not dispose them.
   *
   * @param layer Layer index in `[0, numLayers)`.
   * @returns The layer's keys and values.
   */
  layer(layer: number): LayerKV | null {
    this.#checkLayer("KVCache.layer", layer);
    return this.#layers[layer]!;
  }

  /**
   * Appends the keys and values of new tokens to `layer` and returns the whole sequence (cached
   * prefix, then the new tokens). The returned tensors are the caller's (they carry gradients to
   * `key` and `value`); the cache keeps graph-free views of them.
   *
   * @param layer Layer index.
   * @param key New keys `[batch, kvHeads, t, headDim]`.
   * @param value New values of the same shape.
   * @returns Keys and values `[batch, kvHeads, length + t, headDim]`.
   */
  append(layer: number, key: Tensor, value: Tensor): LayerKV {
    const op = "KVCache.append";
    this.#checkLayer(op, layer);
    const { numKvHeads, headDim } = this.config;
    for (const [name, t] of [["key", key], ["value", value]] as const) {
      const [b, h, , d] = t.shape;
      if (t.ndim !== 4 || b !== this.#batch || h !== numKvHeads || d !== headDim) {
        throw new RangeError(
          `${op}: ${name} must be [batch, kvHeads, t, headDim] = [${this.#batch},${numKvHeads},t,${headDim}], ` +
            `got ${fmtShape(t.shape)}; a cache built for another model or batch cannot be reused`,
        );
      }
    }
    if (key.shape[2] !== value.shape[2]) {
      throw new RangeError(
        `${op}: key ${fmtShape(key.shape)} and value ${
          fmtShape(value.shape)
        } cover different lengths`,
      );
    }
    // Layers are appended in order within one forward pass, so every layer not yet appended in
    // this pass still has the committed length.
    if (this.#lengthOf(layer) !== this.length) {
      throw new Error(
        `${op}: layer ${layer} holds ${
          this.#lengthOf(layer)
        } tokens but the cache holds ${this.length}; ` +
          `a forward pass was interrupted, so start a new cache`,
      );
    }
    const old = this.#layers[layer];
    const full: LayerKV = old === null || old === undefined ? { key, value } : {
      key: concat([old.key, key], 2),
      value: concat([old.value, value], 2),
    };
    this.#layers[layer] = keep({ key: full.key.detach(), value: full.value.detach() });
    if (old) {
      old.key.dispose();
      old.value.dispose();
    }
    return full;
  }

  /**
   * Keeps only the given rows, in the given order; a row may repeat (to fan one prefilled prompt
   * out into several samples). The batch becomes `rows.length`.
   *
   * @param rows Row indices in `[0, batch)`, at least one.
   */
  selectRows(rows: readonly number[]): void {
    const op = "KVCache.selectRows";
    if (!Array.isArray(rows) || rows.length === 0) {
      throw new RangeError(
        `${op}: rows must list at least one row index, got ${JSON.stringify(rows)}; ` +
          `dispose the cache when no sequence is left`,
      );
    }
    rows.forEach((r, i) => {
      if (!Number.isInteger(r) || r < 0 || r >= this.#batch) {
        throw new RangeError(
          `${op}: rows[${i}] must be an integer in [0, ${this.#batch}), got ${r}`,
        );
      }
    });
    this.#layers = this.#layers.map((kv) => {
      if (kv === null) return null;
      const picked = noGrad(() =>
        tidy(() => {
          const index = tensor(rows, { dtype: "i32", backend: kv.key.backend });
          return { key: kv.key.indexSelect(0, index), value: kv.value.indexSelect(0, index) };
        })
      );
      kv.key.dispose();
      kv.value.dispose();
      return keep(picked);
    });
    this.#batch = rows.length;
  }

  /** Frees every cached tensor; the cache is empty afterwards (length 0). */
  dispose(): void {
    for (const kv of this.#layers) {
      kv?.key.dispose();
      kv?.value.dispose();
    }
    this.#layers = this.#layers.map(() => null);
  }

  #checkLayer(op: string, layer: number): void {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.config.numLayers) {
      throw new RangeError(
        `${op}: layer must be an integer in [0, ${this.config.numLayers}), got ${layer}`,
      );
    }
  }
}
