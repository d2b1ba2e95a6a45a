/**
 * From a processor's output to the model's inputs: {@link imageInputs} puts the patches of a
 * prompt's images on the model's backend as {@link ImageInputs}, and {@link expandImageTokens}
 * turns each `<|image_pad|>` of a tokenized prompt into as many copies as its image has merged
 * patches, as Hugging Face's `Qwen2VLProcessor` does to the text before tokenizing.
 *
 * The processor itself (`processQwen2VLImages` of `@rlvr/image`) stays outside this package;
 * these functions take its output by shape.
 *
 * @module
 */

import { type Backend, tensor } from "@rlvr/tensor";
import type { ImageInputs } from "./model.ts";
import type { GridThw } from "./rope.ts";

/** What {@link imageInputs} needs of a processor's output (`processQwen2VLImages` gives it). */
export interface ProcessedPixels {
  /** Rows of `patchDim` values, every image's patches in order. */
  readonly pixelValues: Float32Array;
  /** Values per row. */
  readonly patchDim: number;
  /** `[t, h, w]` per image, in patches. */
  readonly gridThw: readonly GridThw[];
}

/**
 * The tower's inputs on `backend` (default the current one): `pixelValues` as an f32
 * `[patches, patchDim]` tensor (the caller owns it) and the grids.
 *
 * @example Usage
 * ```ts
 * import { imageInputs } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const inputs = imageInputs({ pixelValues: new Float32Array(4 * 24), patchDim: 24, gridThw: [[1, 2, 2]] });
 * assert.deepEqual(inputs.pixelValues.shape, [4, 24]);
 * inputs.pixelValues.dispose();
 * ```
 */
export function imageInputs(pixels: ProcessedPixels, backend?: Backend): ImageInputs {
  const owner = "imageInputs";
  const { pixelValues, patchDim, gridThw } = pixels;
  if (!(pixelValues instanceof Float32Array) || !Number.isInteger(patchDim) || patchDim < 1) {
    throw new TypeError(
      `${owner}: pixels must be {pixelValues: Float32Array, patchDim, gridThw} (the output of ` +
        `processQwen2VLImages), got patchDim ${JSON.stringify(patchDim)}`,
    );
  }
  const rows = gridThw.reduce((s, g) => s + g[0] * g[1] * g[2], 0);
  if (pixelValues.length !== rows * patchDim) {
    throw new RangeError(
      `${owner}: gridThw ${JSON.stringify(gridThw)} has ${rows} patches of ${patchDim} values, ` +
        `${rows * patchDim} in all, but pixelValues holds ${pixelValues.length}`,
    );
  }
  return {
    pixelValues: tensor(pixelValues, {
      shape: [rows, patchDim],
      ...(backend === undefined ? {} : { backend }),
    }),
    gridThw: gridThw.map((g) => [g[0], g[1], g[2]] as const),
  };
}

/**
 * Several processor outputs as one (images in order): the patches concatenated, one grid per
 * image. All must have the same `patchDim`.
 *
 * @example Usage
 * ```ts
 * import { concatPixels } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const a = { pixelValues: new Float32Array([1, 2]), patchDim: 2, gridThw: [[1, 1, 1]] as const };
 * const b = { pixelValues: new Float32Array([3, 4]), patchDim: 2, gridThw: [[1, 1, 1]] as const };
 * const both = concatPixels([a, b]);
 * assert.deepEqual([...both.pixelValues], [1, 2, 3, 4]);
 * assert.equal(both.gridThw.length, 2);
 * ```
 */
export function concatPixels(parts: readonly ProcessedPixels[]): ProcessedPixels {
  if (parts.length === 0) {
    throw new RangeError("concatPixels: parts is empty; pass at least one processor output");
  }
  const patchDim = parts[0]!.patchDim;
  const other = parts.find((p) => p.patchDim !== patchDim);
  if (other !== undefined) {
    throw new RangeError(
      `concatPixels: every part must have patchDim ${patchDim}, got ${other.patchDim}`,
    );
  }
  const pixelValues = new Float32Array(parts.reduce((n, p) => n + p.pixelValues.length, 0));
  let at = 0;
  for (const p of parts) {
    pixelValues.set(p.pixelValues, at);
    at += p.pixelValues.length;
  }
  return { pixelValues, patchDim, gridThw: parts.flatMap((p) => p.gridThw) };
}

/**
 * `ids` with the `k`-th `imageTokenId` repeated `counts[k]` times (the image's merged patches,
 * `imageTokenCounts` of the processor). The number of image tokens in `ids` must equal the
 * number of counts.
 *
 * @example Usage
 * ```ts
 * import { expandImageTokens } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * // <|vision_start|>=9 <|image_pad|>=8 <|vision_end|>=7
 * assert.deepEqual(expandImageTokens([1, 9, 8, 7, 2], 8, [3]), [1, 9, 8, 8, 8, 7, 2]);
 * ```
 */
export function expandImageTokens(
  ids: readonly number[],
  imageTokenId: number,
  counts: readonly number[],
): number[] {
  const found = ids.filter((id) => id === imageTokenId).length;
  if (found !== counts.length) {
    throw new RangeError(
      `expandImageTokens: the prompt holds ${found} image token(s) (id ${imageTokenId}) but ` +
        `${counts.length} image(s) were given; put one <|image_pad|> per image in the prompt`,
    );
  }
  const out: number[] = [];
  let k = 0;
  for (const id of ids) {
    if (id !== imageTokenId) {
      out.push(id);
      continue;
    }
    const n = counts[k++]!;
    if (!Number.isInteger(n) || n < 1) {
      throw new RangeError(
        `expandImageTokens: counts[${k - 1}] must be an integer >= 1, got ${JSON.stringify(n)}`,
      );
    }
    for (let i = 0; i < n; i++) out.push(id);
  }
  return out;
}
