/**
 * The error bound of the WebAssembly SIMD matmul against the oracle, per element, for the product
 * and for both gradients, as `backend/wasm/matmul_wasm_test.ts` of `@rlvr/tensor` states it:
 * every element is an f32 sum of K products, so its error is at most about K·2⁻²⁴·Σ|a·b| (γ_K),
 * plus 2⁻²⁴·|c| for the oracle's own rounding to f32; the tests allow `(K + 1)·2⁻²³·Σ|a·b|`,
 * twice that. A gradient is a product too: `dA = G·op(B)ᵀ` sums K = n products (times the
 * batches that share `a`), `dB = op(A)ᵀ·G` sums K = m (times the batches that share `b`), where
 * `G` is the upstream gradient.
 *
 * @module
 */

/** A matmul `op(a) · op(b)` as the parity check runs it, with `a`, `b` in storage layout. */
export interface MatmulGeometry {
  /** Batches of `a` (1 when 2-D or broadcast). */
  batchA: number;
  /** Batches of `b` (1 when 2-D or broadcast). */
  batchB: number;
  /** Rows of `op(a)` and of the output. */
  m: number;
  /** Columns of `op(b)` and of the output. */
  n: number;
  /** The contracted size. */
  k: number;
  /** `a` is stored `[k, m]`. */
  transA: boolean;
  /** `b` is stored `[n, k]`. */
  transB: boolean;
}

/** Per-element limits for the output and the two gradients (storage layout of `a` and `b`). */
export interface MatmulLimits {
  /** `[batch, m, n]`. */
  out: Float64Array;
  /** Shaped like `a`. */
  gradA: Float64Array;
  /** Shaped like `b`. */
  gradB: Float64Array;
}

/** The bound's formula in words, for reports. */
export const MATMUL_BOUND_FORMULA = "|Δ| <= (K + 1)·2⁻²³·Σ|x·y| (K: products summed)";

/**
 * The limits of {@link MATMUL_BOUND_FORMULA} for the product `op(a)·op(b)` and its gradients
 * under the upstream gradient `g` (`[batch, m, n]`).
 *
 * @param geo The geometry.
 * @param a The values of `a` (storage layout).
 * @param b The values of `b` (storage layout).
 * @param g The upstream gradient of the output.
 * @returns The limits.
 *
 * @example Usage
 * ```ts
 * import { matmulLimits } from "./matmul_bound.ts";
 * import assert from "node:assert/strict";
 * const geo = { batchA: 1, batchB: 1, m: 1, n: 1, k: 2, transA: false, transB: false };
 * const lim = matmulLimits(geo, [1, -2], [3, 4], [1]);
 * assert.equal(lim.out[0], 3 * 2 ** -23 * (3 + 8)); // K = 2: (2 + 1)·2⁻²³·(|1·3| + |−2·4|)
 * assert.equal(lim.gradA[1], 2 * 2 ** -23 * 4); // dA[0][1] = g·b[1]: K = 1
 * ```
 */
export function matmulLimits(
  geo: MatmulGeometry,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  g: ArrayLike<number>,
): MatmulLimits {
  const { batchA, batchB, m, n, k, transA, transB } = geo;
  const batch = Math.max(batchA, batchB);
  for (const [name, x] of [["batchA", batchA], ["batchB", batchB]] as const) {
    if (x !== 1 && x !== batch) {
      throw new RangeError(`matmulLimits: ${name} must be 1 or ${batch}, got ${x}`);
    }
  }
  const want = [["a", a, batchA * m * k], ["b", b, batchB * k * n], [
    "g",
    g,
    batch * m * n,
  ]] as const;
  for (const [name, x, len] of want) {
    if (x.length !== len) {
      throw new RangeError(`matmulLimits: ${name} has ${x.length} elements, expected ${len}`);
    }
  }
  const ia = (bi: number, i: number, kk: number) =>
    (batchA === 1 ? 0 : bi) * m * k + (transA ? kk * m + i : i * k + kk);
  const ib = (bi: number, kk: number, j: number) =>
    (batchB === 1 ? 0 : bi) * k * n + (transB ? j * k + kk : kk * n + j);
  const unit = 2 ** -23;
  const out = new Float64Array(batch * m * n);
  const gradA = new Float64Array(batchA * m * k);
  const gradB = new Float64Array(batchB * k * n);
  for (let bi = 0; bi < batch; bi++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let kk = 0; kk < k; kk++) s += Math.abs(a[ia(bi, i, kk)]! * b[ib(bi, kk, j)]!);
        out[(bi * m + i) * n + j] = (k + 1) * unit * s;
      }
    }
  }
  // Magnitudes of the gradient sums, accumulated over the batches that share an operand.
  for (let bi = 0; bi < batch; bi++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        const gv = Math.abs(g[(bi * m + i) * n + j]!);
        if (gv === 0) continue;
        for (let kk = 0; kk < k; kk++) {
          gradA[ia(bi, i, kk)]! += gv * Math.abs(b[ib(bi, kk, j)]!);
          gradB[ib(bi, kk, j)]! += gv * Math.abs(a[ia(bi, i, kk)]!);
        }
      }
    }
  }
  const kA = n * (batch / batchA);
  const kB = m * (batch / batchB);
  for (let e = 0; e < gradA.length; e++) gradA[e] = (kA + 1) * unit * gradA[e]!;
  for (let e = 0; e < gradB.length; e++) gradB[e] = (kB + 1) * unit * gradB[e]!;
  return { out, gradA, gradB };
}
