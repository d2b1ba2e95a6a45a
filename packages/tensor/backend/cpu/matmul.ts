/**
 * CPU kernel for batched matmul with transposed-operand flags (NN, NT, TN, TT).
 *
 * The flags let backward passes multiply by a transpose without copying it. Loops run i-k-j so
 * the inner loop walks both `b` and `c` rows contiguously in the common NN case.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";

/** `matmul`: `c[bt] = op(a[bt]) · op(b[bt])`. */
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
