/**
 * CPU kernel for batched matmul with transposed-operand flags (NN, NT, TN, TT), and the slow
 * obvious loop it must equal bit for bit.
 *
 * The flags let backward passes multiply by a transpose without copying it. The semantics, fixed
 * by {@link matmulReference}: every output element is the float64 sum over `k`, in ascending
 * order and starting from +0, of `a·b` products, where a zero element of `op(a)` is skipped (so
 * `0 · ∞` contributes nothing, as the WebGPU kernels also do). Because the order never depends
 * on `m` or on where an element falls in a tile, a one-row decode step gives bit for bit the row
 * of a full-sequence product, which the KV-cache tests rely on.
 *
 * {@link matmul} is faster by keeping a 4×4 block of `c` in locals (16 float64 accumulators, 8
 * loads per 16 multiply-adds, where the reference loop does a load and a store per
 * multiply-add). Its blocks do not test for zeros: adding a product `±0` to a sum that started
 * at +0 leaves it unchanged (such a sum is never −0), so skipping or not is the same bit for bit
 * unless `op(b)` holds an infinity or NaN; a block is used only after a scan found every entry of
 * that batch's `b` finite. Leftover rows run as 1×4 blocks and leftover columns one element at a
 * time, both with the zero skip.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";

/**
 * `matmul`: `c[bt] = op(a[bt]) · op(b[bt])`, bit for bit equal to {@link matmulReference}.
 *
 * @example Usage
 * ```ts
 * import { matmul } from "./matmul.ts";
 * import assert from "node:assert/strict";
 * const c = new Float32Array(1);
 * const p = { batch: 1, m: 1, n: 1, k: 2, transA: false, transB: false, aBatchStride: 0, bBatchStride: 0 };
 * matmul([new Float32Array([1, 2]), new Float32Array([3, 4])], [c], p);
 * assert.equal(c[0], 11);
 * ```
 */
export function matmul([a, b]: HostArray[], [c]: HostArray[], p: KernelParams["matmul"]): void {
  const A = a!;
  const B = b!;
  const C = c!;
  const { batch, m, n, k, transA, transB, aBatchStride, bBatchStride } = p;
  // Element (i, kk) of op(a) and (kk, j) of op(b), as strides into the stored matrices.
  const aRow = transA ? 1 : k;
  const aCol = transA ? m : 1;
  const bRow = transB ? 1 : n;
  const bCol = transB ? k : 1;
  const n4 = n - (n % 4);
  let finiteAt = -1; // the b offset last found all-finite
  for (let bt = 0; bt < batch; bt++) {
    const a0 = bt * aBatchStride;
    const b0 = bt * bBatchStride;
    const c0 = bt * m * n;
    let m4 = m - (m % 4);
    if (m4 > 0 && finiteAt !== b0) {
      if (allFinite(B, b0, k * n)) finiteAt = b0;
      else m4 = 0;
    }
    for (let i = 0; i < m4; i += 4) {
      const r0 = a0 + i * aRow, r1 = r0 + aRow, r2 = r1 + aRow, r3 = r2 + aRow;
      for (let j = 0; j < n4; j += 4) {
        const q0 = b0 + j * bCol, q1 = q0 + bCol, q2 = q1 + bCol, q3 = q2 + bCol;
        let c00 = 0, c01 = 0, c02 = 0, c03 = 0;
        let c10 = 0, c11 = 0, c12 = 0, c13 = 0;
        let c20 = 0, c21 = 0, c22 = 0, c23 = 0;
        let c30 = 0, c31 = 0, c32 = 0, c33 = 0;
        for (let kk = 0; kk < k; kk++) {
          const ak = kk * aCol, bk = kk * bRow;
          const x0 = A[r0 + ak]!, x1 = A[r1 + ak]!, x2 = A[r2 + ak]!, x3 = A[r3 + ak]!;
          const y0 = B[q0 + bk]!, y1 = B[q1 + bk]!, y2 = B[q2 + bk]!, y3 = B[q3 + bk]!;
          c00 += x0 * y0, c01 += x0 * y1, c02 += x0 * y2, c03 += x0 * y3;
          c10 += x1 * y0, c11 += x1 * y1, c12 += x1 * y2, c13 += x1 * y3;
          c20 += x2 * y0, c21 += x2 * y1, c22 += x2 * y2, c23 += x2 * y3;
          c30 += x3 * y0, c31 += x3 * y1, c32 += x3 * y2, c33 += x3 * y3;
        }
        const o0 = c0 + i * n + j, o1 = o0 + n, o2 = o1 + n, o3 = o2 + n;
        C[o0] = c00, C[o0 + 1] = c01, C[o0 + 2] = c02, C[o0 + 3] = c03;
        C[o1] = c10, C[o1 + 1] = c11, C[o1 + 2] = c12, C[o1 + 3] = c13;
        C[o2] = c20, C[o2 + 1] = c21, C[o2 + 2] = c22, C[o2 + 3] = c23;
        C[o3] = c30, C[o3 + 1] = c31, C[o3 + 2] = c32, C[o3 + 3] = c33;
      }
    }
    // Rows past m4: 1×4 blocks with the zero skip.
    for (let i = m4; i < m; i++) {
      const ri = a0 + i * aRow;
      const o = c0 + i * n;
      for (let j = 0; j < n4; j += 4) {
        const q0 = b0 + j * bCol, q1 = q0 + bCol, q2 = q1 + bCol, q3 = q2 + bCol;
        let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (let kk = 0; kk < k; kk++) {
          const x = A[ri + kk * aCol]!;
          if (x === 0) continue;
          const bk = kk * bRow;
          s0 += x * B[q0 + bk]!,
            s1 += x * B[q1 + bk]!,
            s2 += x * B[q2 + bk]!,
            s3 += x * B[q3 + bk]!;
        }
        C[o + j] = s0, C[o + j + 1] = s1, C[o + j + 2] = s2, C[o + j + 3] = s3;
      }
    }
    // Columns past n4, every row, one element at a time with the zero skip.
    for (let i = 0; i < m; i++) {
      const ri = a0 + i * aRow;
      for (let j = n4; j < n; j++) {
        const qj = b0 + j * bCol;
        let s = 0;
        for (let kk = 0; kk < k; kk++) {
          const x = A[ri + kk * aCol]!;
          if (x !== 0) s += x * B[qj + kk * bRow]!;
        }
        C[c0 + i * n + j] = s;
      }
    }
  }
}

/**
 * Whether `x[start, start + length)` holds no infinity or NaN: the test that lets a fast kernel
 * skip the oracle's zero check (see the module doc).
 *
 * @param x The array.
 * @param start First index.
 * @param length How many elements.
 * @returns True when every one is finite.
 *
 * @example Usage
 * ```ts
 * import { allFinite } from "./matmul.ts";
 * import assert from "node:assert/strict";
 * assert.equal(allFinite(new Float32Array([1, Infinity, 2]), 0, 1), true);
 * assert.equal(allFinite(new Float32Array([1, Infinity, 2]), 0, 2), false);
 * ```
 */
export function allFinite(x: HostArray, start: number, length: number): boolean {
  for (let i = start; i < start + length; i++) {
    const v = x[i]!;
    if (v - v !== 0) return false; // NaN and ±∞ give NaN
  }
  return true;
}

/**
 * The reference loop that fixes the semantics of {@link matmul} (see the module doc): i-k-j
 * order with a float64 accumulator row, zero elements of `op(a)` skipped.
 *
 * @example Usage
 * ```ts
 * import { matmulReference } from "./matmul.ts";
 * import assert from "node:assert/strict";
 * const c = new Float32Array(1);
 * const p = { batch: 1, m: 1, n: 1, k: 2, transA: false, transB: false, aBatchStride: 0, bBatchStride: 0 };
 * matmulReference([new Float32Array([0, 2]), new Float32Array([Infinity, 4])], [c], p);
 * assert.equal(c[0], 8); // 0 · ∞ is skipped
 * ```
 */
export function matmulReference(
  [a, b]: HostArray[],
  [c]: HostArray[],
  p: KernelParams["matmul"],
): void {
  const A = a!;
  const B = b!;
  const C = c!;
  const { batch, m, n, k, transA, transB, aBatchStride, bBatchStride } = p;
  const aRow = transA ? 1 : k;
  const aCol = transA ? m : 1;
  const bRow = transB ? 1 : n;
  const bCol = transB ? k : 1;
  const row = new Float64Array(n);
  for (let bt = 0; bt < batch; bt++) {
    const a0 = bt * aBatchStride;
    const b0 = bt * bBatchStride;
    const c0 = bt * m * n;
    for (let i = 0; i < m; i++) {
      row.fill(0);
      for (let kk = 0; kk < k; kk++) {
        const av = A[a0 + i * aRow + kk * aCol]!;
        if (av === 0) continue;
        const bb = b0 + kk * bRow;
        for (let j = 0; j < n; j++) row[j]! += av * B[bb + j * bCol]!;
      }
      for (let j = 0; j < n; j++) C[c0 + i * n + j] = row[j]!;
    }
  }
}
