/**
 * Images of task rows for a vision-language policy: {@link RowImages} decodes and processes
 * each row's `images` (PNG/JPEG data URLs or file paths) once, with the model's processor
 * options, and keeps the result by source, so the groups of a prompt, its scoring, its
 * reference scoring and its evaluation share one decode. `hook` turns it into the
 * `ForwardHook` that `generate` and `scoreCompletions` take on `model.lm`.
 *
 * Design decisions: images are processed before a batch's first forward pass (`prepare`,
 * asynchronous: a path is read from disk) so that the hook, which runs inside the synchronous
 * forward, only reads the cache; the cache is bounded by entries (least recently used out), and
 * each image by the decoder's byte and pixel limits, since rows come from users' datasets.
 *
 * @module
 */

import {
  type DecodeLimits,
  loadImage,
  parseDataUrl,
  processQwen2VLImages,
  qwen2VLImageGrid,
  type Qwen2VLOptions,
  readImageHeader,
  resolveDecodeLimits,
} from "@rlvr/image";
import {
  type CausalLM,
  concatPixels,
  type ForwardHook,
  type GridThw,
  imageInputs,
  type ProcessedPixels,
  type VisionLanguageModel,
  type VisionTower,
} from "@rlvr/policy";
import type { TaskRow } from "@rlvr/rewards";

/** The most images one row may carry. */
export const MAX_IMAGES_PER_ROW = 16;

/** One processed image: its patches, grid and image-token count. */
interface Processed {
  pixelValues: Float32Array;
  patchDim: number;
  grid: GridThw;
  tokens: number;
}

/** Options of {@link RowImages}. */
export interface RowImagesOptions {
  /** The model's processor options (from its `preprocessor_config.json`). */
  processor?: Qwen2VLOptions;
  /** Decoder limits per image (bytes, pixels). */
  limits?: DecodeLimits;
  /** Processed images kept (default 4096; least recently used dropped first). */
  maxEntries?: number;
}

/**
 * A row's `images` value checked as image sources: a list of at most
 * {@link MAX_IMAGES_PER_ROW} non-empty strings (data URLs or file paths), or null when the row
 * has none. Throws naming `what` (e.g. `row r7: `), the field and the fix otherwise. One rule for
 * rows of tasks and of data files.
 *
 * @param value The row's `images` field.
 * @param what A prefix for messages that names the row ("" for none).
 * @returns The sources, or null.
 *
 * @example Usage
 * ```ts
 * import { imageSources } from "./vision.ts";
 * import assert from "node:assert/strict";
 * assert.equal(imageSources(undefined, ""), null);
 * assert.deepEqual(imageSources(["a.png"], ""), ["a.png"]);
 * assert.throws(() => imageSources("a.png", "row r: "), /row r: images is string; use a list/);
 * ```
 */
export function imageSources(value: unknown, what: string): string[] | null {
  if (value === undefined || value === null) return null;
  const fix = "use a list of image file paths (relative to the dataset) or data:image/... URLs";
  if (!Array.isArray(value)) throw new TypeError(`${what}images is ${typeof value}; ${fix}`);
  if (value.length > MAX_IMAGES_PER_ROW) {
    throw new RangeError(
      `${what}images holds ${value.length} images, more than ${MAX_IMAGES_PER_ROW}; split the row`,
    );
  }
  value.forEach((s, i) => {
    if (typeof s !== "string" || s.trim() === "") {
      throw new TypeError(`${what}images[${i}] is ${JSON.stringify(s)?.slice(0, 40)}; ${fix}`);
    }
  });
  return value as string[];
}

/**
 * The image sources of a row: `row.images` as a list of strings, `[]` for a text-only row.
 * Throws naming the row and the field when it is something else ({@link imageSources}).
 *
 * @example Usage
 * ```ts
 * import { rowImageSources } from "./vision.ts";
 * import assert from "node:assert/strict";
 * const row = { id: "r", task: "t", prompt: "?", answer: "1", difficulty: 1 };
 * assert.deepEqual(rowImageSources(row), []);
 * assert.throws(() => rowImageSources({ ...row, images: [3] }), /row r: images\[0\] is 3/);
 * ```
 */
export function rowImageSources(row: TaskRow): string[] {
  const images = (row as TaskRow & { images?: unknown }).images;
  return imageSources(images, `row ${row.id}: `) ?? [];
}

/**
 * Processed images of task rows, cached by source (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { RowImages } from "./vision.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const row = countShapesTask({ size: 56, count: [0, 2], distractors: [1, 2], shapeSize: [8, 10] }).row(0, 0);
 * const images = new RowImages({ processor: { minPixels: 56 * 56, maxPixels: 56 * 56 } });
 * await images.prepare([row]);
 * assert.deepEqual(images.tokenCounts(row), [4]); // 56 px: 4×4 patches, 2×2 merged
 * assert.equal(images.pixels(row)!.gridThw.length, 1);
 * ```
 */
export class RowImages {
  readonly #processor: Qwen2VLOptions;
  readonly #limits: DecodeLimits | undefined;
  readonly #maxEntries: number;
  readonly #cache = new Map<string, Processed>();

  constructor(options: RowImagesOptions = {}) {
    this.#processor = options.processor ?? {};
    this.#limits = options.limits;
    const max = options.maxEntries ?? 4096;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`RowImages: maxEntries must be an integer >= 1, got ${max}`);
    }
    this.#maxEntries = max;
  }

  /** Decodes and processes the images of `rows` that are not cached yet. */
  async prepare(rows: readonly TaskRow[]): Promise<void> {
    for (const row of rows) {
      for (const [i, source] of rowImageSources(row).entries()) {
        if (this.#cache.has(source)) {
          this.#touch(source);
          continue;
        }
        let out: ReturnType<typeof processQwen2VLImages>;
        try {
          const image = await loadImage(source, this.#limits);
          out = processQwen2VLImages([image], this.#processor);
        } catch (e) {
          throw new Error(`row ${row.id}: images[${i}]: ${(e as Error).message}`, { cause: e });
        }
        this.#cache.set(source, {
          pixelValues: out.pixelValues,
          patchDim: out.patchDim,
          grid: out.gridThw[0]!,
          tokens: out.imageTokenCounts[0]!,
        });
        while (this.#cache.size > this.#maxEntries) {
          this.#cache.delete(this.#cache.keys().next().value!);
        }
      }
    }
  }

  #touch(source: string): void {
    const v = this.#cache.get(source)!;
    this.#cache.delete(source);
    this.#cache.set(source, v);
  }

  #get(row: TaskRow): Processed[] {
    return rowImageSources(row).map((source, i) => {
      const p = this.#cache.get(source);
      if (p === undefined) {
        throw new Error(
          `RowImages: row ${row.id}: images[${i}] was not prepared; call prepare(rows) before ` +
            `the forward pass`,
        );
      }
      return p;
    });
  }

  /**
   * The `<|image_pad|>` tokens each image of `row` takes: from the processed image once
   * {@link prepare}d, else from the image's header alone (its size decides the count), so
   * prompts can be measured without decoding every image of a dataset.
   */
  tokenCounts(row: TaskRow): number[] {
    return rowImageSources(row).map((source, i) => {
      const p = this.#cache.get(source);
      if (p !== undefined) return p.tokens;
      try {
        const { width, height } = readImageHeader(this.#headerBytes(source));
        return qwen2VLImageGrid(height, width, this.#processor).tokens;
      } catch (e) {
        throw new Error(`row ${row.id}: images[${i}]: ${(e as Error).message}`, { cause: e });
      }
    });
  }

  /** The encoded bytes of a data URL or a file (its size checked first). */
  #headerBytes(source: string): Uint8Array {
    const limits = resolveDecodeLimits("RowImages", this.#limits);
    if (/^data:/i.test(source)) return parseDataUrl(source, limits).bytes;
    if (typeof Deno === "undefined") {
      // A browser tab (the training session runs there too) has no files to read.
      throw new Error(
        `the image ${source} is a file, which only Deno reads; give the row's images as data URLs (data:image/png;base64,...)`,
      );
    }
    const path = /^file:\/\//i.test(source) ? new URL(source) : source;
    const size = Deno.statSync(path).size;
    if (size > limits.maxBytes) {
      throw new RangeError(
        `the image file ${source} is ${size} bytes, more than the limit of ${limits.maxBytes}`,
      );
    }
    return Deno.readFileSync(path);
  }

  /** Every image of `row` as one processor output, or undefined for a text-only row. */
  pixels(row: TaskRow): ProcessedPixels | undefined {
    const parts = this.#get(row);
    if (parts.length === 0) return undefined;
    return concatPixels(
      parts.map((p) => ({ pixelValues: p.pixelValues, patchDim: p.patchDim, gridThw: [p.grid] })),
    );
  }

  /**
   * The hook that runs `model` with the images of each row: `rowOf(i)` is the task row of the
   * call's sequence `i` (prompt index in `generate`, item index in `scoreCompletions`).
   */
  hook(
    model: VisionLanguageModel,
    rowOf: (i: number) => TaskRow | undefined,
    tower?: VisionTower,
  ): ForwardHook {
    const backend = model.lm.params.get("model.embed_tokens.weight")!.backend;
    return model.forwardHook((i) => {
      const row = rowOf(i);
      const px = row === undefined ? undefined : this.pixels(row);
      return px === undefined ? undefined : imageInputs(px, backend);
    }, tower === undefined ? {} : { tower });
  }
}

/**
 * The images of a training run with a vision-language policy: the rows' processed images
 * ({@link RowImages}), the token counts prompts are expanded with (`promptIds` of `prompt.ts`),
 * and the forward hook of each model that runs with images (the policy and, when the run holds
 * one, the reference copy: each has its own tower). Every `generate` and `scoreCompletions` of
 * the loop gets its hook through {@link forwardHookOf}.
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "./policy.ts";
 * import { promptIds } from "./prompt.ts";
 * import { forwardHookOf, VisionInputs } from "./vision.ts";
 * import { generate } from "@rlvr/policy";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const policy = await loadPolicy("builtin:tiny-vl");
 * const vision = new VisionInputs(policy.vision!.model, { processor: policy.vision!.processor });
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 0);
 * await vision.prepare([row]);
 * const ids = promptIds(policy.tokenizer, row, "compact", vision);
 * assert.equal(ids.filter((id) => id === vision.imageTokenId).length, 16); // 4×4 patches
 * const out = await generate(policy.model, [ids], {
 *   maxNewTokens: 4, sampler: { temperature: 0, seed: 0 },
 *   ...forwardHookOf(vision, policy.model, () => row),
 * });
 * assert.equal(out.sequences[0]!.tokens.length, 4);
 * policy.model.dispose();
 * ```
 */
export class VisionInputs {
  /** The processed images of the rows seen. */
  readonly images: RowImages;
  /** The id of `<|image_pad|>`. */
  readonly imageTokenId: number;
  readonly #models = new Map<CausalLM, VisionLanguageModel>();
  #referenceTower: VisionTower | null = null;

  /** `model` is the policy; `options` those of its {@link RowImages}. */
  constructor(model: VisionLanguageModel, options: RowImagesOptions = {}) {
    this.images = new RowImages(options);
    this.imageTokenId = model.config.imageTokenId;
    this.#models.set(model.lm, model);
  }

  /** Registers another model that runs with the same images (the reference copy). */
  addModel(model: VisionLanguageModel): void {
    if (model.config.imageTokenId !== this.imageTokenId) {
      throw new Error(
        `VisionInputs.addModel: the model's image token is ${model.config.imageTokenId}, the ` +
          `policy's ${this.imageTokenId}; both must come from the same checkpoint`,
      );
    }
    this.#models.set(model.lm, model);
  }

  /**
   * The tower of the reference policy when the reference is the policy's own decoder without its
   * LoRA adapters (`"base"`) while the policy's tower trains: a frozen copy of the initial tower,
   * which {@link hook} with `reference` uses. This object disposes it.
   */
  setReferenceTower(tower: VisionTower): void {
    this.#referenceTower?.dispose();
    this.#referenceTower = tower;
  }

  /** Frees the reference tower, if one was set. */
  dispose(): void {
    this.#referenceTower?.dispose();
    this.#referenceTower = null;
  }

  /** The vision-language model whose decoder is `lm`, or undefined when not registered. */
  modelOf(lm: CausalLM): VisionLanguageModel | undefined {
    return this.#models.get(lm);
  }

  /** Decodes and processes the images of `rows` not seen yet (before their forward passes). */
  async prepare(rows: readonly TaskRow[]): Promise<void> {
    await this.images.prepare(rows);
  }

  /** Tokens per image of a prepared row. */
  tokenCounts(row: TaskRow): number[] {
    return this.images.tokenCounts(row);
  }

  /**
   * The forward hook of `model` (a registered decoder) for calls whose sequence `i` is
   * `rowOf(i)`; with `reference`, the images go through the reference tower when one was set
   * ({@link setReferenceTower}).
   */
  hook(
    model: CausalLM,
    rowOf: (i: number) => TaskRow | undefined,
    reference = false,
  ): ForwardHook {
    const vlm = this.#models.get(model);
    if (vlm === undefined) {
      throw new Error(
        "VisionInputs.hook: this model was not registered (the policy is, other copies need " +
          "addModel)",
      );
    }
    const tower = reference ? this.#referenceTower ?? undefined : undefined;
    return this.images.hook(vlm, rowOf, tower);
  }
}

/**
 * `{ forwardHook }` for a `generate` or `scoreCompletions` call of `model` whose sequence `i` is
 * `rowOf(i)`, or `{}` for a text-only run (`vision` null or undefined): spread it into the
 * call's options. `reference`: the hook of the LoRA reference (`"base"`), whose images go
 * through the reference tower when the policy's tower trains.
 *
 * @example Usage
 * ```ts
 * import { forwardHookOf } from "./vision.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(forwardHookOf(null, null as never, () => undefined), {});
 * ```
 */
export function forwardHookOf(
  vision: VisionInputs | null | undefined,
  model: CausalLM,
  rowOf: (i: number) => TaskRow | undefined,
  reference = false,
): { forwardHook?: ForwardHook } {
  return vision == null ? {} : { forwardHook: vision.hook(model, rowOf, reference) };
}
