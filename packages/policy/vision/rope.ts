/**
 * Rotary positions of Qwen2-VL: the vision tower's 2-D RoPE (each patch rotated by its row in
 * the first half of the rotary frequencies and by its column in the second half) and the
 * decoder's multimodal RoPE (M-RoPE: three position streams, temporal, height and width, each
 * owning a section of the frequencies; text tokens have the same position in all three, so a
 * text-only sequence gets ordinary RoPE). Positions follow transformers' `rot_pos_emb` and
 * `get_rope_index`; angles are rounded to float32 as PyTorch computes them (`inv_freq` and each
 * `position · inv_freq` in f32), cos and sin taken in float64 and stored in f32, as
 * `ropeTables` of `@rlvr/tensor` does, so the existing `rope` kernel applies them.
 *
 * @module
 */

import { type Backend, type RopeTables, tensor } from "@rlvr/tensor";

/** `[t, h, w]` of one image in patches (`image_grid_thw` in Hugging Face). */
export type GridThw = readonly [number, number, number];

function invFreq(dim: number, theta: number): number[] {
  const r = Math.fround;
  return Array.from({ length: dim / 2 }, (_, i) => r(1 / r(theta ** r((2 * i) / dim))));
}

function tables(
  angle: (row: number, col: number) => number,
  rows: number,
  half: number,
  lead: readonly number[],
  backend: Backend | undefined,
): RopeTables {
  const cos = new Float32Array(rows * half);
  const sin = new Float32Array(rows * half);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < half; i++) {
      const a = angle(r, i);
      cos[r * half + i] = Math.cos(a);
      sin[r * half + i] = Math.sin(a);
    }
  }
  const shape = [...lead, half];
  const where = backend === undefined ? {} : { backend };
  return { cos: tensor(cos, { shape, ...where }), sin: tensor(sin, { shape, ...where }) };
}

/**
 * Throws a RangeError naming `owner` and the entry unless every grid is `[t, h, w]` of integers
 * >= 1 with `h` and `w` multiples of `mergeSize` (internal: shared with `window.ts`).
 *
 * @example Usage
 * ```ts
 * import { checkGrid } from "./rope.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => checkGrid([[1, 3, 2]], 2, "f"), /f: gridThw\[0\]/);
 * ```
 */
export function checkGrid(grid: readonly GridThw[], mergeSize: number, owner: string): void {
  grid.forEach((g, i) => {
    const ok = Array.isArray(g) && g.length === 3 &&
      g.every((v) => Number.isInteger(v) && v >= 1) && g[1] % mergeSize === 0 &&
      g[2] % mergeSize === 0;
    if (!ok) {
      throw new RangeError(
        `${owner}: gridThw[${i}] must be [t, h, w], integers >= 1 with h and w multiples of ` +
          `the merge size ${mergeSize}, got ${JSON.stringify(g)}; use the processor's gridThw`,
      );
    }
  });
}

/**
 * The (row, column) of every patch in the order the processor emits them: image by image,
 * frame by frame, merge window by merge window (row-major), and row-major inside a window.
 *
 * @example Usage
 * ```ts
 * import { visionPatchPositions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * // One 2×4 grid with 2×2 windows: the left window's four patches first, then the right one's.
 * assert.deepEqual(visionPatchPositions([[1, 2, 4]], 2).map(([r, c]) => `${r}${c}`),
 *   ["00", "01", "10", "11", "02", "03", "12", "13"]);
 * ```
 */
export function visionPatchPositions(
  gridThw: readonly GridThw[],
  mergeSize: number,
): [number, number][] {
  checkGrid(gridThw, mergeSize, "visionPatchPositions");
  const out: [number, number][] = [];
  for (const [t, h, w] of gridThw) {
    for (let f = 0; f < t; f++) {
      for (let bh = 0; bh < h / mergeSize; bh++) {
        for (let bw = 0; bw < w / mergeSize; bw++) {
          for (let i = 0; i < mergeSize; i++) {
            for (let j = 0; j < mergeSize; j++) out.push([bh * mergeSize + i, bw * mergeSize + j]);
          }
        }
      }
    }
  }
  return out;
}

/**
 * RoPE tables `[patches, headDim/2]` of the vision tower: with `q = headDim / 4` frequencies
 * `inv_j = 10000^(−2j / (headDim/2))`, column `j < q` has angle `row · inv_j` and column `q + j`
 * has `column · inv_j` (transformers' `VisionRotaryEmbedding` and `rot_pos_emb`).
 *
 * @example Usage
 * ```ts
 * import { visionRopeTables } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const { cos, sin } = visionRopeTables([[1, 2, 2]], { headDim: 8, mergeSize: 2 });
 * assert.deepEqual(cos.shape, [4, 4]);
 * // Patch (0, 0) is not rotated.
 * assert.deepEqual((await sin.toArray() as number[][])[0], [0, 0, 0, 0]);
 * cos.dispose();
 * sin.dispose();
 * ```
 */
export function visionRopeTables(
  gridThw: readonly GridThw[],
  options: { headDim: number; mergeSize: number; theta?: number; backend?: Backend },
): RopeTables {
  const { headDim, mergeSize } = options;
  if (!Number.isInteger(headDim) || headDim < 4 || headDim % 4 !== 0) {
    throw new RangeError(
      `visionRopeTables: headDim must be a multiple of 4, got ${headDim} (2-D RoPE halves it twice)`,
    );
  }
  const pos = visionPatchPositions(gridThw, mergeSize);
  const inv = invFreq(headDim / 2, options.theta ?? 10000);
  const q = headDim / 4;
  const backend = options.backend;
  return tables(
    (r, i) => {
      const p = pos[r]!;
      return i < q ? Math.fround(p[0] * inv[i]!) : Math.fround(p[1] * inv[i - q]!);
    },
    pos.length,
    headDim / 2,
    [pos.length],
    backend,
  );
}

/** What {@link mropePositions} needs to know of the model. */
export interface MropeTokens {
  /** `image_token_id`. */
  imageTokenId: number;
  /** `vision_start_token_id`. */
  visionStartTokenId: number;
  /** `spatial_merge_size`. */
  mergeSize: number;
}

/** Multimodal positions of a batch: `[3][batch][t]` and each row's `delta`. */
export interface MropePositions {
  /**
   * `[batch][t]`: 1 where the token is one of an image's tokens (it takes that image's
   * features), 0 elsewhere; an image token outside every image span is a text token.
   */
  imageMask: number[][];
  /** Temporal, height and width position of every token, `[3][batch][t]`. */
  positions: number[][][];
  /**
   * Per row, `max position + 1 − t`: a token decoded later at cache index `i` has position
   * `i + delta` in all three streams (transformers' `rope_deltas`).
   */
  deltas: number[];
}

/**
 * Hugging Face's `get_rope_index` for images: text tokens count up from the last position + 1
 * (the same value in all three streams); the `llmT × llmH × llmW` image tokens after a
 * `<|vision_start|>` get `(t, row, column)` offsets (`llmH = h / mergeSize`) added to the
 * position where the image starts. Images are consumed in order from `gridThw` across the batch.
 * With `mask` (1 = real token, left padding 0), positions are computed over the real tokens and
 * padded tokens get 1, as transformers does.
 *
 * With `imagesPerRow`, row `b` holds exactly `imagesPerRow[b]` images: its first that many
 * `<|vision_start|>` + image-token spans are images and any later one is text. That is where
 * this departs from transformers (which takes every such span as an image and fails when a
 * completion holds one): a policy can sample `<|image_pad|>`, which has no pixels behind it, and
 * the learner must then see the text token the sampler saw.
 *
 * @example Usage
 * ```ts
 * import { mropePositions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * // text, <|vision_start|>(9), 4 image tokens (8) of a 1×4×4 grid, <|vision_end|>(7), text
 * const ids = [[1, 9, 8, 8, 8, 8, 7, 2]];
 * const { positions, deltas } = mropePositions(ids, [[1, 4, 4]], {
 *   imageTokenId: 8, visionStartTokenId: 9, mergeSize: 2,
 * });
 * assert.deepEqual(positions[0]![0], [0, 1, 2, 2, 2, 2, 4, 5]); // temporal
 * assert.deepEqual(positions[1]![0], [0, 1, 2, 2, 3, 3, 4, 5]); // height
 * assert.deepEqual(positions[2]![0], [0, 1, 2, 3, 2, 3, 4, 5]); // width
 * assert.deepEqual(deltas, [-2]);
 * ```
 */
export function mropePositions(
  ids: readonly (readonly number[])[],
  gridThw: readonly GridThw[],
  tokens: MropeTokens,
  mask?: readonly (readonly number[])[],
  imagesPerRow?: readonly number[],
): MropePositions {
  const owner = "mropePositions";
  const { imageTokenId, visionStartTokenId, mergeSize } = tokens;
  checkGrid(gridThw, mergeSize, owner);
  const t = ids[0]?.length ?? 0;
  const positions = [0, 1, 2].map(() => ids.map(() => new Array<number>(t).fill(1)));
  const imageMask = ids.map(() => new Array<number>(t).fill(0));
  const deltas: number[] = [];
  if (imagesPerRow !== undefined && imagesPerRow.length !== ids.length) {
    throw new RangeError(
      `${owner}: imagesPerRow has ${imagesPerRow.length} entries for ${ids.length} rows`,
    );
  }
  let image = 0;
  ids.forEach((row, b) => {
    if (row.length !== t) {
      throw new RangeError(
        `${owner}: ids rows must have equal length; row 0 has ${t}, row ${b} has ${row.length}`,
      );
    }
    const keep = row.map((_, i) => mask === undefined || mask[b]?.[i] === 1);
    const real = row.filter((_, i) => keep[i]);
    const out: [number, number, number][] = [];
    const isImage: boolean[] = [];
    let next = 0; // the next text position
    let i = 0;
    let rowImages = 0;
    const allowed = imagesPerRow?.[b] ?? Infinity;
    while (i < real.length) {
      if (
        real[i] === imageTokenId && i > 0 && real[i - 1] === visionStartTokenId &&
        rowImages < allowed
      ) {
        const g = gridThw[image];
        if (g === undefined) {
          throw new RangeError(
            `${owner}: row ${b} has more images than gridThw lists (${gridThw.length}); pass one ` +
              `[t, h, w] per image, in order`,
          );
        }
        image++;
        rowImages++;
        const [gt, gh, gw] = [g[0], g[1] / mergeSize, g[2] / mergeSize];
        const n = gt * gh * gw;
        for (let k = 0; k < n; k++) {
          if (real[i + k] !== imageTokenId) {
            throw new RangeError(
              `${owner}: row ${b}: image ${image - 1} (grid ${JSON.stringify(g)}) needs ${n} ` +
                `image tokens after <|vision_start|>, found ${k}; expand each image to ` +
                `t·h·w / mergeSize² tokens`,
            );
          }
          const f = Math.floor(k / (gh * gw));
          const r = Math.floor((k % (gh * gw)) / gw);
          const c = k % gw;
          out.push([next + f, next + r, next + c]);
          isImage.push(true);
        }
        next += Math.max(gt, gh, gw);
        i += n;
      } else {
        out.push([next, next, next]);
        isImage.push(false);
        next++;
        i++;
      }
    }
    if (imagesPerRow !== undefined && rowImages !== allowed) {
      throw new RangeError(
        `${owner}: row ${b} should hold ${allowed} image(s) but has ${rowImages} ` +
          `<|vision_start|> + image-token spans`,
      );
    }
    let j = 0;
    row.forEach((_, k) => {
      if (!keep[k]) return;
      imageMask[b]![k] = isImage[j] ? 1 : 0;
      const p = out[j++]!;
      positions[0]![b]![k] = p[0];
      positions[1]![b]![k] = p[1];
      positions[2]![b]![k] = p[2];
    });
    const max = out.reduce((m, p) => Math.max(m, p[0], p[1], p[2]), -1);
    deltas.push(max + 1 - t);
  });
  if (image !== gridThw.length) {
    throw new RangeError(
      `${owner}: gridThw lists ${gridThw.length} images but the ids hold ${image}; every image ` +
        `needs <|vision_start|> followed by its image tokens`,
    );
  }
  return { positions, deltas, imageMask };
}

/**
 * M-RoPE tables `[batch, t, headDim/2]`: rotary frequency `i` (of `inv_i = theta^(−2i/headDim)`)
 * follows the temporal stream for `i < section[0]`, the height stream for the next `section[1]`
 * and the width stream for the last `section[2]` (transformers' `apply_multimodal_rotary_pos_emb`
 * with `mrope_section`).
 *
 * @example Usage
 * ```ts
 * import { mropeTables } from "@rlvr/policy";
 * import { ropeTables } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // Equal streams (text only) give ordinary RoPE.
 * const p = [[0, 1, 2]];
 * const m = mropeTables([p, p, p], { headDim: 8, theta: 1e6, section: [2, 1, 1] });
 * const r = ropeTables(p, { dim: 8, theta: 1e6 });
 * assert.deepEqual(await m.cos.toArray(), await r.cos.toArray());
 * ```
 */
export function mropeTables(
  positions: readonly (readonly (readonly number[])[])[],
  options: {
    headDim: number;
    theta: number;
    section: readonly [number, number, number];
    backend?: Backend;
  },
): RopeTables {
  const { headDim, theta, section } = options;
  const half = headDim / 2;
  if (section[0] + section[1] + section[2] !== half) {
    throw new RangeError(
      `mropeTables: section ${JSON.stringify(section)} must sum to headDim / 2 = ${half}`,
    );
  }
  if (positions.length !== 3) {
    throw new RangeError(
      `mropeTables: positions must be [3][batch][t] (temporal, height, width), got ${positions.length} streams`,
    );
  }
  const inv = invFreq(headDim, theta);
  const stream = Array.from(
    { length: half },
    (_, i) => (i < section[0] ? 0 : i < section[0] + section[1] ? 1 : 2),
  );
  const batch = positions[0]!.length;
  const t = positions[0]![0]?.length ?? 0;
  return tables(
    (r, i) => {
      const p = positions[stream[i]!]![Math.floor(r / t)]![r % t]!;
      return Math.fround(Math.fround(p) * inv[i]!);
    },
    batch * t,
    half,
    [batch, t],
    options.backend,
  );
}
