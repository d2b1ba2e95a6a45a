/**
 * The Qwen2-VL / Qwen2.5-VL image processor: Hugging Face transformers'
 * `Qwen2VLImageProcessor` (the PIL path: `Qwen2VLImageProcessorPil` in transformers 5,
 * `Qwen2VLImageProcessor` before), reimplemented from its source.
 *
 * Per image: {@link smartResize} picks a size whose sides are multiples of
 * `patchSize · mergeSize` with a pixel count in [minPixels, maxPixels]; the image is resized to
 * it with Pillow's bicubic filter ({@link resizeBicubic}, bit-exact); each 8-bit value v becomes
 * `float32(v · rescaleFactor)` (computed in float64, as HF's `rescale` does), then
 * `(x − mean[c]) / std[c]` in float32 arithmetic (HF's `normalize`), so every value equals HF's
 * float32 output bit for bit. The image is repeated `temporalPatchSize` times (one still frame
 * makes one temporal patch) and cut into patches of `C × temporalPatchSize × patchSize ×
 * patchSize` values, ordered so that the `mergeSize × mergeSize` patches that the model merges
 * into one token are consecutive rows. In HF's terms, the (T, C, H, W) stack is reshaped to
 * (grid_t, T, C, grid_h/m, m, P, grid_w/m, m, P) and transposed by (0, 3, 6, 4, 7, 2, 1, 5, 8):
 * pixel (c, y, x) of temporal copy tt lands at
 *
 * - row `((y / (m·P)) · (grid_w/m) + x / (m·P)) · m² + ((y / P) mod m) · m + (x / P) mod m`,
 * - column `((c · T + tt) · P + y mod P) · P + x mod P` (integer divisions).
 *
 * The torchvision path (transformers 5's default `Qwen2VLImageProcessor`, 4.x's
 * `Qwen2VLImageProcessorFast`) resizes in float with torch and fuses rescale and normalise; its
 * values can differ from these by one 8-bit level before normalisation (≈ 0.015 after).
 *
 * @module
 */

import { checkImage, type RgbImage } from "./image.ts";
import { resizeBicubic } from "./resize.ts";

/**
 * CLIP's per-channel mean, the default `image_mean` of Qwen2-VL.
 *
 * @example Usage
 * ```ts
 * import { OPENAI_CLIP_MEAN } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * assert.deepEqual(OPENAI_CLIP_MEAN, [0.48145466, 0.4578275, 0.40821073]);
 * ```
 */
export const OPENAI_CLIP_MEAN: readonly [number, number, number] = [
  0.48145466,
  0.4578275,
  0.40821073,
];

/**
 * CLIP's per-channel standard deviation, the default `image_std` of Qwen2-VL.
 *
 * @example Usage
 * ```ts
 * import { OPENAI_CLIP_STD } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * assert.deepEqual(OPENAI_CLIP_STD, [0.26862954, 0.26130258, 0.27577711]);
 * ```
 */
export const OPENAI_CLIP_STD: readonly [number, number, number] = [
  0.26862954,
  0.26130258,
  0.27577711,
];

/**
 * The most extreme aspect ratio (long side / short side) {@link smartResize} accepts.
 *
 * @example Usage
 * ```ts
 * import { MAX_ASPECT_RATIO, smartResize } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * assert.throws(() => smartResize(10, 10 * MAX_ASPECT_RATIO + 1), /aspect ratio/);
 * ```
 */
export const MAX_ASPECT_RATIO = 200;

/** Options of {@link smartResize}; the defaults are `Qwen2VLImageProcessor`'s. */
export interface SmartResizeOptions {
  /** Both sides become multiples of it: `patchSize · mergeSize`. Default 28. */
  readonly factor?: number;
  /** Fewest pixels of the result (HF's `min_pixels`, `size.shortest_edge`). Default 56·56 = 3136. */
  readonly minPixels?: number;
  /**
   * Most pixels of the result (HF's `max_pixels`, `size.longest_edge`). Default 28·28·1280 =
   * 1003520, the class default; Qwen's released `preprocessor_config.json` files say 12845056
   * (16384 tokens): read them with {@link qwen2VLOptionsFromConfig}.
   */
  readonly maxPixels?: number;
}

/** A size in pixels. */
export interface ImageSize {
  /** Height in pixels. */
  readonly height: number;
  /** Width in pixels. */
  readonly width: number;
}

/** Python 3's `round` on a float: to nearest, ties to even. */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

function positiveInteger(owner: string, field: string, value: unknown, max = 2 ** 26): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(
      `${owner}: ${field} must be an integer in [1, ${max}], got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function pixelBudget(owner: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 2 ** 40) {
    throw new RangeError(
      `${owner}: ${field} must be a number in (0, 2^40], got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * The size `Qwen2VLImageProcessor` resizes a `height × width` image to, HF's `smart_resize`
 * (transformers 5) with the same float arithmetic: each side rounded to the nearest multiple of
 * `factor` (Python's `round`, ties to even: 42 → 56 and 70 → 56 for factor 28); if that has more
 * than `maxPixels` pixels, both sides are divided by β = √(h·w / maxPixels) and floored to a
 * multiple of `factor` (at least `factor`); if fewer than `minPixels`, both are multiplied by
 * β = √(minPixels / (h·w)) and ceiled to a multiple. The aspect ratio is kept as closely as the
 * multiples allow. Throws a RangeError, as HF raises its ValueError, when the long side is more
 * than {@link MAX_ASPECT_RATIO} times the short one. (transformers 4.x also refused a side
 * shorter than `factor`; transformers 5 accepts it and scales it up, as here.)
 *
 * @example Usage
 * ```ts
 * import { smartResize } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * // 1080×1920 rounds to 1092×1932 > 1003520 pixels: scaled by 1/β, β = √(1080·1920/1003520).
 * assert.deepEqual(smartResize(1080, 1920), { height: 728, width: 1316 });
 * assert.deepEqual(smartResize(70, 70), { height: 56, width: 56 }); // round(2.5) = 2
 * ```
 */
export function smartResize(
  height: number,
  width: number,
  options: SmartResizeOptions = {},
): ImageSize {
  const owner = "smartResize";
  positiveInteger(owner, "height", height);
  positiveInteger(owner, "width", width);
  const factor = positiveInteger(owner, "factor", options.factor ?? 28, 4096);
  const minPixels = pixelBudget(owner, "minPixels", options.minPixels ?? 56 * 56);
  const maxPixels = pixelBudget(owner, "maxPixels", options.maxPixels ?? 28 * 28 * 1280);
  if (minPixels > maxPixels) {
    throw new RangeError(
      `${owner}: minPixels (${minPixels}) must not exceed maxPixels (${maxPixels})`,
    );
  }
  const ratio = Math.max(height, width) / Math.min(height, width);
  if (ratio > MAX_ASPECT_RATIO) {
    throw new RangeError(
      `${owner}: absolute aspect ratio must be smaller than ${MAX_ASPECT_RATIO}, got ${ratio} ` +
        `(${height}×${width}); crop or pad the image to a less extreme shape`,
    );
  }
  let h = roundHalfEven(height / factor) * factor;
  let w = roundHalfEven(width / factor) * factor;
  if (h * w > maxPixels) {
    const beta = Math.sqrt((height * width) / maxPixels);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
  } else if (h * w < minPixels) {
    const beta = Math.sqrt(minPixels / (height * width));
    h = Math.ceil((height * beta) / factor) * factor;
    w = Math.ceil((width * beta) / factor) * factor;
  }
  return { height: h, width: w };
}

/** Options of {@link processQwen2VLImages}; the defaults are `Qwen2VLImageProcessor`'s. */
export interface Qwen2VLOptions {
  /** Side of a ViT patch in pixels (`patch_size`). Default 14. */
  readonly patchSize?: number;
  /** Frames per temporal patch (`temporal_patch_size`); an image is repeated this often. Default 2. */
  readonly temporalPatchSize?: number;
  /** Side of the block of patches merged into one LLM token (`merge_size`). Default 2. */
  readonly mergeSize?: number;
  /** Fewest pixels after resizing ({@link SmartResizeOptions.minPixels}). Default 3136. */
  readonly minPixels?: number;
  /** Most pixels after resizing ({@link SmartResizeOptions.maxPixels}). Default 1003520. */
  readonly maxPixels?: number;
  /** Per-channel mean (`image_mean`). Default {@link OPENAI_CLIP_MEAN}. */
  readonly imageMean?: readonly number[];
  /** Per-channel standard deviation (`image_std`). Default {@link OPENAI_CLIP_STD}. */
  readonly imageStd?: readonly number[];
  /** Multiplies the 8-bit values before normalising (`rescale_factor`). Default 1/255. */
  readonly rescaleFactor?: number;
  /**
   * Resize with {@link smartResize} and {@link resizeBicubic} (`do_resize`). Default true; when
   * false both sides must already be multiples of `patchSize · mergeSize`.
   */
  readonly doResize?: boolean;
}

/** The model inputs {@link processQwen2VLImages} returns, as HF's `pixel_values` and `image_grid_thw`. */
export interface Qwen2VLPixelInputs {
  /** Rows of `patchDim` float32 values, all images' patches one after the other. */
  readonly pixelValues: Float32Array;
  /** Values per row: `3 · temporalPatchSize · patchSize²` (1176 by default). */
  readonly patchDim: number;
  /** Per image, `[t, h, w]` in patches: `[1, height / patchSize, width / patchSize]`. */
  readonly gridThw: [number, number, number][];
  /** Per image, the `<|image_pad|>` tokens it takes: `t · h · w / mergeSize²`. */
  readonly imageTokenCounts: number[];
}

interface ResolvedQwen2VLOptions {
  readonly patchSize: number;
  readonly temporalPatchSize: number;
  readonly mergeSize: number;
  readonly minPixels: number;
  readonly maxPixels: number;
  readonly imageMean: readonly number[];
  readonly imageStd: readonly number[];
  readonly rescaleFactor: number;
  readonly doResize: boolean;
}

function resolveOptions(owner: string, options: Qwen2VLOptions): ResolvedQwen2VLOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${owner}: options must be an object`);
  }
  const patchSize = positiveInteger(owner, "patchSize", options.patchSize ?? 14, 1024);
  const temporalPatchSize = positiveInteger(
    owner,
    "temporalPatchSize",
    options.temporalPatchSize ?? 2,
    64,
  );
  const mergeSize = positiveInteger(owner, "mergeSize", options.mergeSize ?? 2, 64);
  const minPixels = pixelBudget(owner, "minPixels", options.minPixels ?? 56 * 56);
  const maxPixels = pixelBudget(owner, "maxPixels", options.maxPixels ?? 28 * 28 * 1280);
  const channelStats = (field: string, value: readonly number[]) => {
    if (
      !Array.isArray(value) || value.length !== 3 ||
      !value.every((v) => typeof v === "number" && Number.isFinite(v))
    ) {
      throw new RangeError(
        `${owner}: ${field} must be 3 finite numbers, got ${JSON.stringify(value)}`,
      );
    }
    return value;
  };
  const imageMean = channelStats("imageMean", options.imageMean ?? OPENAI_CLIP_MEAN);
  const imageStd = channelStats("imageStd", options.imageStd ?? OPENAI_CLIP_STD);
  if (!imageStd.every((v) => v !== 0)) {
    throw new RangeError(`${owner}: imageStd must not contain 0, got ${JSON.stringify(imageStd)}`);
  }
  const rescaleFactor = options.rescaleFactor ?? 1 / 255;
  if (typeof rescaleFactor !== "number" || !Number.isFinite(rescaleFactor)) {
    throw new RangeError(`${owner}: rescaleFactor must be a finite number, got ${rescaleFactor}`);
  }
  const doResize = options.doResize ?? true;
  if (typeof doResize !== "boolean") {
    throw new TypeError(`${owner}: doResize must be a boolean, got ${JSON.stringify(doResize)}`);
  }
  return {
    patchSize,
    temporalPatchSize,
    mergeSize,
    minPixels,
    maxPixels,
    imageMean,
    imageStd,
    rescaleFactor,
    doResize,
  };
}

/** The size an image is resized to, and its grid, under resolved options. */
function planImage(owner: string, height: number, width: number, o: ResolvedQwen2VLOptions) {
  const factor = o.patchSize * o.mergeSize;
  let size: ImageSize = { height, width };
  if (o.doResize) {
    size = smartResize(height, width, {
      factor,
      minPixels: o.minPixels,
      maxPixels: o.maxPixels,
    });
  } else if (height % factor !== 0 || width % factor !== 0) {
    throw new RangeError(
      `${owner}: with doResize false the image's sides must be multiples of patchSize · ` +
        `mergeSize = ${factor}, got ${height}×${width} (height × width); resize it first ` +
        `(smartResize gives the size) or set doResize true`,
    );
  }
  const grid: [number, number, number] = [1, size.height / o.patchSize, size.width / o.patchSize];
  return { size, grid, tokens: (grid[1] * grid[2]) / (o.mergeSize * o.mergeSize) };
}

/** What {@link qwen2VLImageGrid} returns. */
export interface Qwen2VLGrid {
  /** The size the image is resized to (its own size when `doResize` is false). */
  readonly resized: ImageSize;
  /** `[t, h, w]` in patches, as in `image_grid_thw`. */
  readonly gridThw: [number, number, number];
  /** The `<|image_pad|>` tokens the image takes: `t · h · w / mergeSize²`. */
  readonly tokens: number;
}

/**
 * The grid and the image-token count `Qwen2VLImageProcessor` gives a `height × width` image,
 * without its pixels (HF's `get_number_of_image_patches` divided by `mergeSize²`): what a prompt
 * needs to hold `tokens` `<|image_pad|>` tokens.
 *
 * @example Usage
 * ```ts
 * import { qwen2VLImageGrid } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const { resized, gridThw, tokens } = qwen2VLImageGrid(1080, 1920);
 * assert.deepEqual(resized, { height: 728, width: 1316 });
 * assert.deepEqual(gridThw, [1, 52, 94]);
 * assert.equal(tokens, 1222); // 52 · 94 / 4
 * ```
 */
export function qwen2VLImageGrid(
  height: number,
  width: number,
  options: Qwen2VLOptions = {},
): Qwen2VLGrid {
  const owner = "qwen2VLImageGrid";
  const o = resolveOptions(owner, options);
  positiveInteger(owner, "height", height);
  positiveInteger(owner, "width", width);
  const { size, grid, tokens } = planImage(owner, height, width, o);
  return { resized: size, gridThw: grid, tokens };
}

/**
 * HF `Qwen2VLImageProcessor(images)`'s `pixel_values` and `image_grid_thw` for a list of images:
 * each image resized ({@link smartResize}, {@link resizeBicubic}), rescaled and normalised in
 * float32 as HF does, repeated `temporalPatchSize` times and flattened into patch rows in HF's
 * order (the module notes give the index formula). Row r of `pixelValues` is row r of HF's
 * `pixel_values`; images follow one another in the order given.
 *
 * @example Usage
 * ```ts
 * import { createImage, processQwen2VLImages } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const out = processQwen2VLImages([createImage(84, 56, { fill: [255, 255, 255] })]);
 * assert.deepEqual(out.gridThw, [[1, 4, 6]]);
 * assert.equal(out.patchDim, 3 * 2 * 14 * 14);
 * assert.equal(out.pixelValues.length, 24 * 1176);
 * assert.deepEqual(out.imageTokenCounts, [6]);
 * // White in channel 0: (1 − 0.48145466) / 0.26862954 in float32.
 * assert.ok(Math.abs(out.pixelValues[0]! - 1.9303361) < 1e-6);
 * ```
 */
export function processQwen2VLImages(
  images: readonly RgbImage[],
  options: Qwen2VLOptions = {},
): Qwen2VLPixelInputs {
  const owner = "processQwen2VLImages";
  if (!Array.isArray(images)) {
    throw new TypeError(`${owner}: images must be an array of RgbImage (one image: [image])`);
  }
  const o = resolveOptions(owner, options);
  const P = o.patchSize;
  const T = o.temporalPatchSize;
  const m = o.mergeSize;
  const patchDim = 3 * T * P * P;
  const plans = images.map((image, i) => {
    const img = checkImage(owner, `images[${i}]`, image);
    return { img, ...planImage(owner, img.height, img.width, o) };
  });
  const totalRows = plans.reduce((sum, p) => sum + p.grid[1] * p.grid[2], 0);
  const pixelValues = new Float32Array(totalRows * patchDim);

  // HF: rescale in float64 then cast to float32; normalise in float32 ((x - mean) / std with
  // float32 mean and std). Math.fround of the float64 result of float32 operands is the float32
  // result, so one table per channel holds every value HF can produce.
  const tables = [0, 1, 2].map((c) => {
    const mean = Math.fround(o.imageMean[c] as number);
    const std = Math.fround(o.imageStd[c] as number);
    const table = new Float32Array(256);
    for (let v = 0; v < 256; v++) {
      const x = Math.fround(v * o.rescaleFactor);
      table[v] = Math.fround(Math.fround(x - mean) / std);
    }
    return table;
  }) as [Float32Array, Float32Array, Float32Array];

  let row = 0;
  for (const plan of plans) {
    const { height, width } = plan.size;
    const resized = height === plan.img.height && width === plan.img.width
      ? plan.img
      : resizeBicubic(plan.img, width, height);
    const data = resized.data;
    const blocksH = plan.grid[1] / m;
    const blocksW = plan.grid[2] / m;
    // Rows in HF's order: merge blocks row-major, then the m × m patches inside a block.
    for (let bh = 0; bh < blocksH; bh++) {
      for (let bw = 0; bw < blocksW; bw++) {
        for (let mh = 0; mh < m; mh++) {
          for (let mw = 0; mw < m; mw++) {
            const base = row * patchDim;
            const y0 = (bh * m + mh) * P;
            const x0 = (bw * m + mw) * P;
            // Columns: channel, then temporal copy, then the patch's rows and columns.
            for (let c = 0; c < 3; c++) {
              const table = tables[c as 0 | 1 | 2];
              const first = base + c * T * P * P;
              for (let py = 0; py < P; py++) {
                let src = 3 * ((y0 + py) * width + x0) + c;
                const col = first + py * P;
                for (let px = 0; px < P; px++, src += 3) {
                  pixelValues[col + px] = table[data[src] as number] as number;
                }
              }
              // The other temporal copies of a still image are the same values.
              const copy = pixelValues.subarray(first, first + P * P);
              for (let tt = 1; tt < T; tt++) pixelValues.set(copy, first + tt * P * P);
            }
            row++;
          }
        }
      }
    }
  }
  return {
    pixelValues,
    patchDim,
    gridThw: plans.map((p) => [...p.grid] as [number, number, number]),
    imageTokenCounts: plans.map((p) => p.tokens),
  };
}

function configNumber(owner: string, key: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new TypeError(`${owner}: ${key} must be a number, got ${JSON.stringify(value)}`);
  }
  return value;
}

function configTriple(owner: string, key: string, value: unknown): readonly number[] {
  if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === "number")) {
    throw new TypeError(`${owner}: ${key} must be 3 numbers, got ${JSON.stringify(value)}`);
  }
  return value as number[];
}

/**
 * {@link Qwen2VLOptions} from a Hugging Face `preprocessor_config.json` object (parsed JSON):
 * `patch_size`, `temporal_patch_size`, `merge_size`, `image_mean`, `image_std`,
 * `rescale_factor`, `do_resize`, and the pixel budget from `min_pixels` / `max_pixels`, which
 * take precedence (as in transformers) over the newer `size: {shortest_edge, longest_edge}` (and
 * the older `size: {min_pixels, max_pixels}`). Absent keys keep the defaults. Settings this
 * implementation does not follow (`do_rescale`, `do_normalize` or `do_convert_rgb` false, a
 * `resample` other than 3 = bicubic) are refused rather than ignored.
 *
 * @example Usage
 * ```ts
 * import { processQwen2VLImages, qwen2VLOptionsFromConfig } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const options = qwen2VLOptionsFromConfig({
 *   min_pixels: 3136,
 *   max_pixels: 12845056,
 *   patch_size: 14,
 *   temporal_patch_size: 2,
 *   merge_size: 2,
 *   image_mean: [0.48145466, 0.4578275, 0.40821073],
 *   image_std: [0.26862954, 0.26130258, 0.27577711],
 *   image_processor_type: "Qwen2VLImageProcessor",
 * });
 * assert.equal(options.maxPixels, 12845056);
 * assert.equal(typeof processQwen2VLImages, "function");
 * ```
 */
export function qwen2VLOptionsFromConfig(
  config: Readonly<Record<string, unknown>>,
): Qwen2VLOptions {
  const owner = "qwen2VLOptionsFromConfig";
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new TypeError(`${owner}: config must be the parsed preprocessor_config.json object`);
  }
  for (const key of ["do_rescale", "do_normalize", "do_convert_rgb"]) {
    if (config[key] === false) {
      throw new RangeError(
        `${owner}: ${key}: false is not supported (the processor always rescales, normalises ` +
          `and takes RGB)`,
      );
    }
  }
  if (config.resample !== undefined && config.resample !== 3) {
    throw new RangeError(
      `${owner}: resample ${JSON.stringify(config.resample)} is not supported (only 3, bicubic)`,
    );
  }
  let minPixels: number | undefined;
  let maxPixels: number | undefined;
  const size = config.size;
  if (size !== undefined && size !== null) {
    if (typeof size !== "object" || Array.isArray(size)) {
      throw new TypeError(`${owner}: size must be an object, got ${JSON.stringify(size)}`);
    }
    const s = size as Record<string, unknown>;
    const shortest = s.shortest_edge ?? s.min_pixels;
    const longest = s.longest_edge ?? s.max_pixels;
    if (shortest !== undefined) minPixels = configNumber(owner, "size.shortest_edge", shortest);
    if (longest !== undefined) maxPixels = configNumber(owner, "size.longest_edge", longest);
  }
  if (config.min_pixels !== undefined && config.min_pixels !== null) {
    minPixels = configNumber(owner, "min_pixels", config.min_pixels);
  }
  if (config.max_pixels !== undefined && config.max_pixels !== null) {
    maxPixels = configNumber(owner, "max_pixels", config.max_pixels);
  }
  const out: {
    -readonly [K in keyof Qwen2VLOptions]: Qwen2VLOptions[K];
  } = {};
  if (minPixels !== undefined) out.minPixels = minPixels;
  if (maxPixels !== undefined) out.maxPixels = maxPixels;
  if (config.patch_size !== undefined) {
    out.patchSize = configNumber(owner, "patch_size", config.patch_size);
  }
  if (config.temporal_patch_size !== undefined) {
    out.temporalPatchSize = configNumber(owner, "temporal_patch_size", config.temporal_patch_size);
  }
  if (config.merge_size !== undefined) {
    out.mergeSize = configNumber(owner, "merge_size", config.merge_size);
  }
  if (config.image_mean !== undefined) {
    out.imageMean = configTriple(owner, "image_mean", config.image_mean);
  }
  if (config.image_std !== undefined) {
    out.imageStd = configTriple(owner, "image_std", config.image_std);
  }
  if (config.rescale_factor !== undefined) {
    out.rescaleFactor = configNumber(owner, "rescale_factor", config.rescale_factor);
  }
  if (config.do_resize !== undefined) {
    if (typeof config.do_resize !== "boolean") {
      throw new TypeError(`${owner}: do_resize must be a boolean`);
    }
    out.doResize = config.do_resize;
  }
  // Check the whole set now, so a bad config fails here and not at the first image.
  resolveOptions(owner, out);
  return out;
}
