/**
 * Bicubic resampling as Pillow's `Image.resize(size, Image.BICUBIC)` does it, the resize of the
 * Hugging Face image processors (`Qwen2VLImageProcessor` included).
 *
 * The filter is the cubic convolution kernel with a = -0.5, antialiased: when shrinking by a
 * factor s > 1 its support widens from 2 to 2·s input pixels (the kernel is evaluated at
 * distance / s), so every input pixel contributes. Output pixel i samples around input
 * coordinate (i + 0.5) · in/out (half-pixel centres, `align_corners=False`); the weights of
 * each output pixel are normalised to sum 1, edge pixels are not replicated (the window is
 * clipped to the image and renormalised). This is the filter of torch's
 * `F.interpolate(mode="bicubic", antialias=True, align_corners=False)` too.
 *
 * The arithmetic is Pillow's, to the bit: weights in float64, then fixed point with 22
 * fractional bits (rounded half away from zero), sums of `pixel · weight` in integers with a
 * half added, shifted right and clamped to 0..255; the horizontal pass runs first and its
 * result is stored as 8-bit before the vertical pass (a pass whose size does not change is
 * skipped, as it is an identity). torch's float version differs from it by at most one level
 * (see `resize_test.ts` and `testdata/`).
 *
 * @module
 */

import { checkImage, createImage, type RgbImage } from "./image.ts";

/** Fractional bits of Pillow's fixed-point weights (`PRECISION_BITS = 32 - 8 - 2`). */
const PRECISION_BITS = 22;

function cubic(x: number): number {
  // Pillow's bicubic_filter, a = -0.5.
  const a = -0.5;
  if (x < 0) x = -x;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

interface Coefficients {
  /** Taps per output pixel (the stride of `weights`). */
  readonly taps: number;
  /** First input index of each output pixel. */
  readonly start: Int32Array;
  /** Number of input pixels of each output pixel. */
  readonly count: Int32Array;
  /** Fixed-point weights, `taps` per output pixel. */
  readonly weights: Int32Array;
}

/** Pillow's `precompute_coeffs` then `normalize_coeffs_8bpc`, for the box [0, inSize]. */
function coefficients(inSize: number, outSize: number): Coefficients {
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = 2 * filterScale;
  const taps = Math.ceil(support) * 2 + 1;
  const start = new Int32Array(outSize);
  const count = new Int32Array(outSize);
  const weights = new Int32Array(outSize * taps);
  const k = new Float64Array(taps);
  const inverse = 1 / filterScale;
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    // C's (int) truncates toward zero; both bounds are clamped to the image after.
    const xmin = Math.max(Math.trunc(center - support + 0.5), 0);
    const xmax = Math.min(Math.trunc(center + support + 0.5), inSize) - xmin;
    let sum = 0;
    for (let x = 0; x < xmax; x++) {
      const w = cubic((x + xmin - center + 0.5) * inverse);
      k[x] = w;
      sum += w;
    }
    for (let x = 0; x < xmax; x++) {
      const w = sum !== 0 ? (k[x] as number) / sum : (k[x] as number);
      const fixed = w * (1 << PRECISION_BITS);
      weights[xx * taps + x] = Math.trunc(w < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    start[xx] = xmin;
    count[xx] = xmax;
  }
  return { taps, start, count, weights };
}

const HALF = 1 << (PRECISION_BITS - 1);
const ONE = 2 ** PRECISION_BITS;

function clip8(sum: number): number {
  const v = Math.floor(sum / ONE);
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

function horizontal(src: Uint8Array, inW: number, h: number, outW: number): Uint8Array {
  const { taps, start, count, weights } = coefficients(inW, outW);
  const dst = new Uint8Array(outW * h * 3);
  for (let y = 0; y < h; y++) {
    const row = y * inW * 3;
    const outRow = y * outW * 3;
    for (let x = 0; x < outW; x++) {
      const x0 = start[x] as number;
      const n = count[x] as number;
      const k = x * taps;
      let r = HALF, g = HALF, b = HALF;
      for (let i = 0; i < n; i++) {
        const w = weights[k + i] as number;
        const p = row + (x0 + i) * 3;
        r += (src[p] as number) * w;
        g += (src[p + 1] as number) * w;
        b += (src[p + 2] as number) * w;
      }
      const o = outRow + x * 3;
      dst[o] = clip8(r);
      dst[o + 1] = clip8(g);
      dst[o + 2] = clip8(b);
    }
  }
  return dst;
}

function vertical(src: Uint8Array, w: number, inH: number, outH: number): Uint8Array {
  const { taps, start, count, weights } = coefficients(inH, outH);
  const stride = w * 3;
  const dst = new Uint8Array(stride * outH);
  const acc = new Float64Array(stride);
  for (let y = 0; y < outH; y++) {
    const y0 = start[y] as number;
    const n = count[y] as number;
    const k = y * taps;
    acc.fill(HALF);
    for (let i = 0; i < n; i++) {
      const wgt = weights[k + i] as number;
      const row = (y0 + i) * stride;
      for (let j = 0; j < stride; j++) acc[j] = (acc[j] as number) + (src[row + j] as number) * wgt;
    }
    const o = y * stride;
    for (let j = 0; j < stride; j++) dst[o + j] = clip8(acc[j] as number);
  }
  return dst;
}

/**
 * `image` resized to `width × height` with Pillow's antialiased bicubic filter, bit for bit what
 * `PIL.Image.resize((width, height), Image.BICUBIC)` gives on an RGB image (see the module notes).
 * The same size returns a copy.
 *
 * @example Usage
 * ```ts
 * import { createImage, resizeBicubic } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const gray = createImage(8, 6, { fill: [128, 128, 128] });
 * const small = resizeBicubic(gray, 3, 2);
 * assert.equal(small.width, 3);
 * assert.ok(small.data.every((v) => v === 128)); // weights sum to one: flat stays flat
 * ```
 */
export function resizeBicubic(image: RgbImage, width: number, height: number): RgbImage {
  const owner = "resizeBicubic";
  const src = checkImage(owner, "image", image);
  // createImage checks the target size (integers >= 1, at most MAX_IMAGE_PIXELS).
  const target = createImage(width, height);
  let data = src.data;
  if (width !== src.width) data = horizontal(data, src.width, src.height, width);
  if (height !== src.height) data = vertical(data, width, src.height, height);
  target.data.set(data);
  return target;
}
