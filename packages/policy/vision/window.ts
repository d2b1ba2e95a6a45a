/**
 * The attention windows of the Qwen2.5-VL vision tower (transformers' `get_window_index`): each
 * image's grid of merged tokens (`h / mergeSize × w / mergeSize` per frame) is cut into windows
 * of `ws × ws` merged tokens, `ws = windowSize // mergeSize // patchSize` (4 for 112-pixel
 * windows, 2×2 merge and 14-pixel patches). The grid is padded at the bottom and right up to
 * `ws − H mod ws` rows and `ws − W mod ws` columns (a whole `ws` when it already divides, which
 * only adds empty windows); windows are taken frame by frame, row-major, and row-major inside a
 * window; padding is dropped and so are empty windows.
 *
 * @module
 */

import { checkGrid, type GridThw } from "./rope.ts";

/** Where {@link visionWindowIndex} cuts: the tower's sizes (`vision_config` keys). */
export interface VisionWindowSizes {
  /** `spatial_merge_size` (2). */
  readonly mergeSize: number;
  /** `patch_size` in pixels (14). */
  readonly patchSize: number;
  /** `window_size` in pixels (112). */
  readonly windowSize: number;
}

/** The windows of a batch of images, in window order. */
export interface VisionWindows {
  /**
   * `window_index`: position `j` in window order holds merged token `index[j]`, merged tokens
   * numbered row-major `(frame, row, column)` image after image (an image's numbers start after
   * all merged tokens of the images before it).
   */
  readonly index: number[];
  /** Patches in each non-empty window, in window order (`mergeSize²` per merged token). */
  readonly lengths: number[];
}

/**
 * The side of a window in merged tokens: `windowSize // mergeSize // patchSize` (Python's floor
 * division, as transformers computes it). A RangeError when it is below 1.
 *
 * @example Usage
 * ```ts
 * import { visionWindowTokens } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * assert.equal(visionWindowTokens({ mergeSize: 2, patchSize: 14, windowSize: 112 }), 4);
 * assert.throws(() => visionWindowTokens({ mergeSize: 2, patchSize: 14, windowSize: 20 }));
 * ```
 */
export function visionWindowTokens(sizes: VisionWindowSizes): number {
  const { mergeSize, patchSize, windowSize } = sizes;
  const ws = Math.floor(Math.floor(windowSize / mergeSize) / patchSize);
  if (!Number.isInteger(ws) || ws < 1) {
    throw new RangeError(
      `visionWindowTokens: windowSize ${windowSize} is smaller than one merged token ` +
        `(patchSize ${patchSize} · mergeSize ${mergeSize} = ${patchSize * mergeSize} pixels); ` +
        `use a windowSize of at least ${patchSize * mergeSize} (Qwen2.5-VL: 112)`,
    );
  }
  return ws;
}

/**
 * The window order of the merged tokens of `gridThw` and each window's length in patches
 * (transformers' `window_index` and the differences of `cu_window_seqlens`, empty windows
 * dropped).
 *
 * @example Usage
 * ```ts
 * import { visionWindowIndex } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * // A 1×12×12-patch image with 2×2 merge is a 6×6 grid of merged tokens; 56-pixel windows of
 * // 14-pixel patches are 2×2 merged tokens, so 9 windows of 4 tokens (16 patches) each.
 * const w = visionWindowIndex([[1, 12, 12]], { mergeSize: 2, patchSize: 14, windowSize: 56 });
 * assert.deepEqual(w.index.slice(0, 8), [0, 1, 6, 7, 2, 3, 8, 9]);
 * assert.deepEqual(w.lengths, new Array(9).fill(16));
 * ```
 */
export function visionWindowIndex(
  gridThw: readonly GridThw[],
  sizes: VisionWindowSizes,
): VisionWindows {
  const { mergeSize } = sizes;
  checkGrid(gridThw, mergeSize, "visionWindowIndex");
  const ws = visionWindowTokens(sizes);
  const index: number[] = [];
  const lengths: number[] = [];
  let offset = 0;
  for (const [t, h, w] of gridThw) {
    const rows = h / mergeSize;
    const cols = w / mergeSize;
    // Padded up by ws − (n mod ws): ceil-divided plus one more when n divides evenly.
    const winRows = Math.floor(rows / ws) + 1;
    const winCols = Math.floor(cols / ws) + 1;
    for (let f = 0; f < t; f++) {
      for (let wr = 0; wr < winRows; wr++) {
        for (let wc = 0; wc < winCols; wc++) {
          let count = 0;
          for (let r = wr * ws; r < Math.min((wr + 1) * ws, rows); r++) {
            for (let c = wc * ws; c < Math.min((wc + 1) * ws, cols); c++) {
              index.push(offset + (f * rows + r) * cols + c);
              count++;
            }
          }
          if (count > 0) lengths.push(count * mergeSize * mergeSize);
        }
      }
    }
    offset += t * rows * cols;
  }
  return { index, lengths };
}
