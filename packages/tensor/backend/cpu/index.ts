/**
 * CPU kernels for index ops: gather/scatter-add along the last axis (token log-probs, top-k) and
 * index-select/index-add along a middle axis (embedding lookup and its backward).
 *
 * Indices are validated here, the one place that sees their values, so an out-of-range token id
 * fails loudly instead of reading garbage on a GPU later.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";

function checkIndex(kernel: string, v: number, n: number, at: number): void {
  if (!(v >= 0 && v < n)) {
    throw new RangeError(
      `${kernel}: index ${v} at position ${at} is out of range for a dimension of size ${n}`,
    );
  }
}

/** `gather`: `y[o, j] = x[o, idx[o, j]]`. */
export function gather([x, idx]: HostArray[], [y]: HostArray[], p: KernelParams["gather"]): void {
  const X = x!;
  const I = idx!;
  const Y = y!;
  for (let o = 0; o < p.outer; o++) {
    for (let j = 0; j < p.m; j++) {
      const at = o * p.m + j;
      const v = I[at]!;
      checkIndex("gather", v, p.n, at);
      Y[at] = X[o * p.n + v]!;
    }
  }
}

/** `scatter_add`: `y[o, idx[o, j]] += src[o, j]`. */
export function scatterAdd(
  [idx, src]: HostArray[],
  [y]: HostArray[],
  p: KernelParams["scatter_add"],
): void {
  const I = idx!;
  const S = src!;
  const Y = y!;
  for (let o = 0; o < p.outer; o++) {
    for (let j = 0; j < p.m; j++) {
      const at = o * p.m + j;
      const v = I[at]!;
      checkIndex("scatter_add", v, p.n, at);
      Y[o * p.n + v]! += S[at]!;
    }
  }
}

/** `index_select`: `y[o, j, :] = x[o, idx[j], :]`. */
export function indexSelect(
  [x, idx]: HostArray[],
  [y]: HostArray[],
  p: KernelParams["index_select"],
): void {
  const X = x!;
  const I = idx!;
  const Y = y!;
  const { outer, n, inner, m } = p;
  for (let j = 0; j < m; j++) checkIndex("index_select", I[j]!, n, j);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < m; j++) {
      const src = (o * n + I[j]!) * inner;
      const dst = (o * m + j) * inner;
      for (let i = 0; i < inner; i++) Y[dst + i] = X[src + i]!;
    }
  }
}

/**
 * `index_select` from a table stored as bfloat16 bit patterns (a bf16-stored embedding): widens
 * only the rows it copies, exactly (`bits << 16`), into an f32 `y`.
 *
 * @example Usage
 * ```ts
 * import { indexSelectBf16 } from "./index.ts";
 * import assert from "node:assert/strict";
 * const y = new Float32Array(2);
 * indexSelectBf16(new Uint16Array([0x3f80, 0xc040]), new Int32Array([1, 0]), y, { outer: 1, n: 2, inner: 1, m: 2 });
 * assert.deepEqual([...y], [-3, 1]);
 * ```
 */
export function indexSelectBf16(
  x: Uint16Array,
  idx: HostArray,
  y: HostArray,
  p: KernelParams["index_select"],
): void {
  const { outer, n, inner, m } = p;
  if (!(y instanceof Float32Array)) {
    throw new TypeError("index_select: a bf16-stored table needs an f32 output");
  }
  const Y = new Uint32Array(y.buffer, y.byteOffset, y.length);
  for (let j = 0; j < m; j++) checkIndex("index_select", idx[j]!, n, j);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < m; j++) {
      const src = (o * n + idx[j]!) * inner;
      const dst = (o * m + j) * inner;
      for (let i = 0; i < inner; i++) Y[dst + i] = x[src + i]! << 16;
    }
  }
}

/** `index_add`: `y[o, idx[j], :] += src[o, j, :]` (repeated indices accumulate). */
export function indexAdd(
  [idx, src]: HostArray[],
  [y]: HostArray[],
  p: KernelParams["index_add"],
): void {
  const I = idx!;
  const S = src!;
  const Y = y!;
  const { outer, n, inner, m } = p;
  for (let j = 0; j < m; j++) checkIndex("index_add", I[j]!, n, j);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < m; j++) {
      const dst = (o * n + I[j]!) * inner;
      const s = (o * m + j) * inner;
      for (let i = 0; i < inner; i++) Y[dst + i]! += S[s + i]!;
    }
  }
}
