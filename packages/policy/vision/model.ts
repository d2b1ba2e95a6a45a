/**
 * A Qwen2-VL or Qwen2.5-VL vision-language model ({@link VisionLanguageModel}; the two differ in
 * the tower only, by `config.vision.kind`): the {@link VisionTower} turns
 * each image into one feature row per merged patch window, those rows replace the embeddings of
 * the prompt's `<|image_pad|>` tokens (transformers' `masked_scatter` of `inputs_embeds`), and
 * the Qwen2 decoder ({@link CausalLM}) runs with multimodal rotary positions (M-RoPE,
 * {@link mropePositions}). Decoding with a KV cache continues each row at `cache index + delta`,
 * as transformers' `rope_deltas` do.
 *
 * Parameters keep Hugging Face's names of the original Qwen2-VL / Qwen2.5-VL checkpoints: `visual.*` for the
 * tower, `model.*` and `lm_head.*` for the decoder.
 *
 * @module
 */

import { concat, embedding, type RopeTables, stack, type Tensor, tensor, tidy } from "@rlvr/tensor";
import { parameterShapes as decoderShapes } from "../config.ts";
import type { KVCache } from "../kv_cache.ts";
import { CausalLM, type ForwardHook } from "../model.ts";
import { originalVlName, type VisionLanguageConfig, visionParameterShapes } from "./config.ts";
import { type GridThw, mropePositions, mropeTables } from "./rope.ts";
import { VisionTower } from "./tower.ts";

/** The kind of the extension by which a {@link VisionLanguageModel}'s tower rides on its decoder. */
export const VISION_EXTENSION = "vision";

/** Images ready for the tower: the processor's patches and grids (`processQwen2VLImages`). */
export interface ImageInputs {
  /** f32 `[Σ t·h·w, patchDim]`, the patches of every image in order. */
  pixelValues: Tensor;
  /** `[t, h, w]` of each image, in prompt order across the batch. */
  gridThw: readonly GridThw[];
}

/** Options of {@link VisionLanguageModel.forward}. */
export interface VisionForwardOptions {
  /** The images of the prompts (prefill only: a call on a non-empty cache takes none). */
  images?: ImageInputs;
  /** Key-padding mask `[batch][cacheLength + t]`, 1 = real token, 0 = left padding. */
  mask?: readonly (readonly number[])[];
  /** Keys and values of earlier tokens; this call's tokens are appended. */
  cache?: KVCache;
  /**
   * Each row's M-RoPE delta from the prefill (`ropeDeltas` of its result): required when the
   * cache is not empty.
   */
  ropeDeltas?: readonly number[];
}

/** What {@link VisionLanguageModel.forward} returns. */
export interface VisionForwardResult {
  /** f32 `[batch, t, vocabSize]`. */
  logits: Tensor;
  /** Per row: add to a later token's cache index to get its position (all three streams). */
  ropeDeltas: number[];
}

/**
 * A Qwen2-VL or Qwen2.5-VL model: vision tower plus Qwen2 decoder.
 *
 * @example Usage
 * ```ts
 * import {
 *   modelConfig, VisionLanguageModel, visionConfig, visionLanguageConfig,
 * } from "@rlvr/policy";
 * import { noGrad, zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = visionLanguageConfig({
 *   text: modelConfig({
 *     modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
 *     numHeads: 2,
 *   }),
 *   vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32, patchSize: 2 }),
 *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
 * });
 * const model = VisionLanguageModel.random(config, { seed: 1 });
 * // A 2×4-patch image is 2 tokens after merging: <|vision_start|> 37 37 <|vision_end|> text.
 * const { logits, ropeDeltas } = noGrad(() =>
 *   model.forward([[38, 37, 37, 39, 5]], {
 *     images: { pixelValues: zeros([8, 24]), gridThw: [[1, 2, 4]] },
 *   })
 * );
 * assert.deepEqual(logits.shape, [1, 5, 40]);
 * assert.deepEqual(ropeDeltas, [0]); // widths 0, 1, 2, 3, 4: the last is 4 = 5 − 1
 * model.dispose();
 * ```
 */
export class VisionLanguageModel {
  /** The configuration. */
  readonly config: VisionLanguageConfig;
  /** The decoder. */
  readonly lm: CausalLM;
  /** The vision tower. */
  readonly tower: VisionTower;

  #towerTrainable = true;

  private constructor(config: VisionLanguageConfig, lm: CausalLM, tower: VisionTower) {
    this.config = config;
    this.lm = lm;
    this.tower = tower;
    // The tower rides on the decoder as an extension, so that everything that takes a CausalLM
    // (an optimizer over `lm.parameters()`, gradient clipping, weight sync, `lm.dispose()`)
    // covers it too; with LoRA attached it stays trainable unless frozen.
    lm.attach({
      kind: VISION_EXTENSION,
      freezesBase: false,
      namedParameters: () => this.#towerTrainable ? new Map(tower.params) : new Map(),
      dispose: () => tower.dispose(),
    });
  }

  /**
   * Whether the tower trains (default true): false leaves it out of `parameters()` (and of
   * `lm.parameters()`) and stops gradients into it, as a frozen vision encoder in TRL / veRL.
   *
   * @example Usage
   * ```ts
   * import {
   *   modelConfig, VisionLanguageModel, visionConfig, visionLanguageConfig,
   * } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = VisionLanguageModel.random(visionLanguageConfig({
   *   text: modelConfig({
   *     modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
   *     numHeads: 2,
   *   }),
   *   vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32 }),
   *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
   * }));
   * const all = model.parameters().length;
   * model.towerTrainable = false;
   * assert.equal(model.parameters().length, all - model.tower.params.size);
   * model.dispose();
   * ```
   */
  get towerTrainable(): boolean {
    return this.#towerTrainable;
  }

  set towerTrainable(on: boolean) {
    this.#towerTrainable = on;
    for (const t of this.tower.params.values()) t.requiresGrad = on;
  }

  /**
   * Seeded random weights (the decoder from `seed`, the tower from `seed + 1`), as
   * `CausalLM.random` and `VisionTower.random` draw them.
   *
   * @example Usage
   * ```ts
   * import {
   *   modelConfig, VisionLanguageModel, visionConfig, visionLanguageConfig,
   * } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = VisionLanguageModel.random(visionLanguageConfig({
   *   text: modelConfig({
   *     modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
   *     numHeads: 2,
   *   }),
   *   vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32 }),
   *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
   * }));
   * assert.ok(model.params.has("visual.merger.mlp.2.weight"));
   * assert.ok(model.params.has("model.embed_tokens.weight"));
   * model.dispose();
   * ```
   */
  static random(
    config: VisionLanguageConfig,
    opts: { seed?: number; std?: number } = {},
  ): VisionLanguageModel {
    const seed = opts.seed ?? 0;
    const std = opts.std ?? 0.02;
    const lm = CausalLM.random(config.text, { seed, std });
    const tower = VisionTower.random(config.vision, { seed: seed + 1, std });
    return new VisionLanguageModel(config, lm, tower);
  }

  /**
   * A model over existing tensors by Hugging Face name (`visual.*` go to the tower, the rest to
   * the decoder), which it takes ownership of. Checkpoints written by newer transformers
   * (`model.visual.*`, `model.language_model.*`) are renamed to the original layout first.
   *
   * @example Usage
   * ```ts
   * import {
   *   modelConfig, VisionLanguageModel, visionConfig, visionLanguageConfig,
   * } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const config = visionLanguageConfig({
   *   text: modelConfig({
   *     modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
   *     numHeads: 2,
   *   }),
   *   vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32 }),
   *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
   * });
   * const a = VisionLanguageModel.random(config);
   * const b = VisionLanguageModel.fromParams(config, new Map(a.params));
   * assert.equal(b.params.size, a.params.size);
   * b.dispose(); // b owns the tensors of a now
   * ```
   */
  static fromParams(
    config: VisionLanguageConfig,
    params: Map<string, Tensor>,
  ): VisionLanguageModel {
    const lmParams = new Map<string, Tensor>();
    const towerParams = new Map<string, Tensor>();
    for (const [raw, t] of params) {
      const name = originalVlName(raw);
      (name.startsWith("visual.") ? towerParams : lmParams).set(name, t);
    }
    const tower = VisionTower.fromParams(config.vision, towerParams);
    const lm = CausalLM.fromParams(config.text, lmParams);
    return new VisionLanguageModel(config, lm, tower);
  }

  /** Every parameter by Hugging Face name: the tower's and the decoder's. */
  get params(): Map<string, Tensor> {
    return new Map([...this.lm.params, ...this.tower.params]);
  }

  /** Names and shapes of every parameter (tower, then decoder). */
  static parameterShapes(config: VisionLanguageConfig): Map<string, readonly number[]> {
    return new Map([
      ...visionParameterShapes(config.vision),
      ...decoderShapes(config.text),
    ]);
  }

  /**
   * The tensors an optimizer should update, `lm.parameters()`: the decoder's (only the LoRA
   * adapters while LoRA is attached) and the tower's unless {@link towerTrainable} is false.
   */
  parameters(): Tensor[] {
    return this.lm.parameters();
  }

  /**
   * Logits of every position. Prompts carry `<|vision_start|>` followed by `t·h·w / merge²`
   * image tokens per image, in the order of `images.gridThw` across the batch.
   *
   * @param ids Token ids `[batch][t]` (host: the image tokens and positions are read from them).
   * @param opts Images, mask, cache and deltas.
   * @returns Logits and each row's M-RoPE delta.
   */
  forward(
    ids: readonly (readonly number[])[],
    opts: VisionForwardOptions = {},
  ): VisionForwardResult {
    const owner = "VisionLanguageModel.forward";
    const embed = this.lm.params.get("model.embed_tokens.weight")!;
    const backend = embed.backend;
    const batch = ids.length;
    const t = ids[0]?.length ?? 0;
    if (batch < 1 || t < 1 || ids.some((r) => !Array.isArray(r) || r.length !== t)) {
      throw new RangeError(
        `${owner}: ids must be ≥ 1 rows of the same length ≥ 1, got ${
          JSON.stringify(ids).slice(0, 120)
        }; pad them (left) and pass a mask`,
      );
    }
    const past = opts.cache?.length ?? 0;
    const mask = opts.mask;
    if (mask !== undefined) {
      if (mask.length !== batch || mask.some((r) => r.length !== past + t)) {
        throw new RangeError(
          `${owner}: mask must be ${batch} rows of cacheLength + t = ${past + t} values (it ` +
            `covers the cached tokens too)`,
        );
      }
    }
    if (past > 0 && opts.images !== undefined) {
      throw new RangeError(
        `${owner}: images go with the prompt (an empty cache), not with a decode step at ` +
          `cache length ${past}`,
      );
    }
    const d = opts.ropeDeltas;
    if (past > 0 && (d === undefined || d.length !== batch || !d.every(Number.isInteger))) {
      throw new RangeError(
        `${owner}: ropeDeltas must be ${batch} integers (the prefill's ropeDeltas) when the ` +
          `cache is not empty, got ${JSON.stringify(d)}`,
      );
    }
    return tidy(() => {
      const { inputEmbeds, rope, deltas } = this.#decoderInputs(
        ids,
        past,
        opts.images,
        mask,
        d ?? [],
      );
      const logits = this.lm.forward(tensor(ids as number[][], { dtype: "i32", backend }), {
        rope,
        ...(inputEmbeds === undefined ? {} : { inputEmbeds }),
        ...(opts.cache === undefined ? {} : { cache: opts.cache }),
        ...(mask === undefined
          ? {}
          : { attentionMask: tensor(mask as number[][], { dtype: "i32", backend }) }),
      });
      return { logits, ropeDeltas: deltas };
    });
  }

  /**
   * A {@link ForwardHook} for `generate` and `scoreCompletions` on `model.lm`: at a prefill (or
   * when scoring) the images of each row (`imagesOf(row)`, `row` the prompt or item index; none
   * for a text-only row) go through the tower into the image tokens' embeddings and every token
   * gets its M-RoPE position; decode steps continue each row at `cache index + delta`. One hook
   * per `generate` call (it remembers the prefill's deltas).
   *
   * @param imagesOf The images of a row, in prompt order, or undefined.
   * @param options `tower`: another tower of this model's config to compute the image features
   *   with (a frozen copy of the initial tower, for a reference policy that shares the decoder).
   * @returns The hook.
   *
   * @example Usage
   * ```ts
   * import {
   *   generate, modelConfig, VisionLanguageModel, visionConfig, visionLanguageConfig,
   * } from "@rlvr/policy";
   * import { zeros } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const model = VisionLanguageModel.random(visionLanguageConfig({
   *   text: modelConfig({
   *     modelType: "qwen2", vocabSize: 40, hiddenSize: 32, intermediateSize: 64, numLayers: 1,
   *     numHeads: 2,
   *   }),
   *   vision: visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 32, patchSize: 2 }),
   *   imageTokenId: 37, visionStartTokenId: 38, visionEndTokenId: 39, mropeSection: [2, 3, 3],
   * }));
   * const image = { pixelValues: zeros([4, 24]), gridThw: [[1, 2, 2]] as [number, number, number][] };
   * const out = await generate(model.lm, [[38, 37, 39, 5], [38, 37, 39]], {
   *   maxNewTokens: 3,
   *   sampler: { temperature: 0, seed: 0 },
   *   forwardHook: model.forwardHook(() => image),
   * });
   * assert.equal(out.sequences.length, 2);
   * model.dispose();
   * ```
   */
  forwardHook(
    imagesOf: (row: number) => ImageInputs | undefined,
    options: { tower?: VisionTower } = {},
  ): ForwardHook {
    const tower = options.tower ?? this.tower;
    const deltas = new Map<number, number>();
    const deltaOf = (r: number) => {
      const v = deltas.get(r);
      if (v === undefined) {
        throw new Error(
          `VisionLanguageModel.forwardHook: row ${r} is decoding without a prefill through ` +
            `this hook; make one hook per generate call`,
        );
      }
      return v;
    };
    const hook: ForwardHook = (call) => {
      if (call.cacheLength === 0) {
        const own = call.rows.map((r) => imagesOf(r));
        const parts = own.filter((x) => x !== undefined);
        const images: ImageInputs | undefined = parts.length === 0 ? undefined : {
          pixelValues: parts.length === 1
            ? parts[0]!.pixelValues
            : concat(parts.map((p) => p.pixelValues), 0),
          gridThw: parts.flatMap((p) => [...p.gridThw]),
        };
        // Each row's images are its own: a later image span (one the policy sampled) is text.
        const perRow = own.map((x) => x?.gridThw.length ?? 0);
        const out = this.#decoderInputs(
          call.ids,
          0,
          images,
          call.mask ?? undefined,
          [],
          perRow,
          tower,
        );
        call.rows.forEach((r, i) => deltas.set(r, out.deltas[i]!));
        return out.inputEmbeds === undefined ? { rope: out.rope } : {
          rope: out.rope,
          inputEmbeds: out.inputEmbeds,
        };
      }
      const d = call.rows.map(deltaOf);
      return {
        rope: this.#decoderInputs(call.ids, call.cacheLength, undefined, undefined, d).rope,
      };
    };
    // After the prefill a row's three M-RoPE streams share one position, column + delta: plain
    // RoPE, which the device decode loop computes itself.
    hook.decodeShift = deltaOf;
    return hook;
  }

  /** The decoder's inputs for a call: image-filled embeddings (prefill with images) and M-RoPE. */
  #decoderInputs(
    ids: readonly (readonly number[])[],
    past: number,
    images: ImageInputs | undefined,
    mask: readonly (readonly number[])[] | undefined,
    pastDeltas: readonly number[],
    imagesPerRow?: readonly number[],
    tower: VisionTower = this.tower,
  ): { inputEmbeds: Tensor | undefined; rope: RopeTables; deltas: number[] } {
    const c = this.config;
    const backend = this.lm.params.get("model.embed_tokens.weight")!.backend;
    let positions: number[][][];
    let deltas: number[];
    let imageMask: number[][] = [];
    if (past === 0) {
      ({ positions, deltas, imageMask } = mropePositions(
        ids,
        images?.gridThw ?? [],
        {
          imageTokenId: c.imageTokenId,
          visionStartTokenId: c.visionStartTokenId,
          mergeSize: c.vision.spatialMergeSize,
        },
        mask,
        imagesPerRow,
      ));
    } else {
      deltas = [...pastDeltas];
      const rows = ids.map((row, b) => row.map((_, i) => past + i + pastDeltas[b]!));
      positions = [rows, rows, rows];
    }
    const rope = mropeTables(positions, {
      headDim: c.text.headDim,
      theta: c.text.ropeTheta,
      section: c.mropeSection,
      backend,
    });
    const inputEmbeds = images === undefined ? undefined : this.#scatterImages(
      ids,
      tensor(ids as number[][], { dtype: "i32", backend }),
      images,
      imageMask,
      tower,
    );
    return { inputEmbeds, rope, deltas };
  }

  /** Token embeddings with the rows of image tokens replaced by the tower's features, in order. */
  #scatterImages(
    ids: readonly (readonly number[])[],
    idsT: Tensor,
    images: ImageInputs,
    imageMask: readonly (readonly number[])[],
    tower: VisionTower,
  ): Tensor {
    const c = this.config;
    const features = tower.forward(images.pixelValues, images.gridThw);
    const tokens = embedding(this.lm.params.get("model.embed_tokens.weight")!, idsT);
    // The tokens of the image spans (mropePositions decides them), not every image token id.
    const isImage = (b: number, i: number) => imageMask[b]![i] === 1;
    const count = ids.reduce((s, row, b) => s + row.filter((_, i) => isImage(b, i)).length, 0);
    if (count !== features.shape[0]) {
      throw new RangeError(
        `VisionLanguageModel.forward: the prompts hold ${count} image tokens but the images give ` +
          `${features.shape[0]} features; each image needs t·h·w / ${
            c.vision.spatialMergeSize ** 2
          } tokens`,
      );
    }
    let used = 0;
    const rows = ids.map((row, b) => {
      const parts: Tensor[] = [];
      const own = tokens.narrow(0, b, 1).reshape(row.length, c.text.hiddenSize);
      let i = 0;
      while (i < row.length) {
        const image = isImage(b, i);
        let j = i;
        while (j < row.length && isImage(b, j) === image) j++;
        parts.push(image ? features.narrow(0, used, j - i) : own.narrow(0, i, j - i));
        if (image) used += j - i;
        i = j;
      }
      return parts.length === 1 ? parts[0]! : concat(parts, 0);
    });
    return stack(rows, 0);
  }

  /** Frees every tensor (decoder, its extensions, the tower among them). */
  dispose(): void {
    this.lm.dispose();
  }
}
