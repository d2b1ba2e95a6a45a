/**
 * CPU kernels for RMSNorm and LayerNorm over the last axis, forward and backward.
 *
 * The forward passes save the per-row statistics (`rstd`, and `mean` for LayerNorm) so the
 * backward passes never recompute a reduction over the row before using it; this mirrors the
 * fused GPU kernels (llm.c, Apex) so the two backends agree on what is saved. Sums run in float64
 * locals whatever the storage precision, and the weight/bias gradients, which sum over every row,
 * accumulate in a Float64Array before being written out so f32 storage rounds them only once.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";

/** `rms_norm`: `y = x · rsqrt(mean(x²) + eps) · w`, saving `rstd` per row. */
export function rmsNorm(
  [x, w]: HostArray[],
  [y, rstd]: HostArray[],
  p: KernelParams["rms_norm"],
): void {
  const X = x!;
  const W = w!;
  const Y = y!;
  const R = rstd!;
  const { rows, cols, eps } = p;
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let ss = 0;
    for (let c = 0; c < cols; c++) {
      const v = X[base + c]!;
      ss += v * v;
    }
    const rs = 1 / Math.sqrt(ss / cols + eps);
    R[r] = rs;
    for (let c = 0; c < cols; c++) Y[base + c] = X[base + c]! * rs * W[c]!;
  }
}

/**
 * `rms_norm_backward`: with `x̂ = x · rstd` and `g = dy · w`,
 * `dx = rstd · (g − x̂ · mean(g · x̂))` and `dw = Σ_rows dy · x̂`.
 */
export function rmsNormBackward(
  [x, w, rstd, dy]: HostArray[],
  [dx, dw]: HostArray[],
  p: KernelParams["rms_norm_backward"],
): void {
  const X = x!;
  const W = w!;
  const R = rstd!;
  const DY = dy!;
  const DX = dx!;
  const { rows, cols } = p;
  const dwAcc = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    const rs = R[r]!;
    let dot = 0;
    for (let c = 0; c < cols; c++) {
      const xh = X[base + c]! * rs;
      const d = DY[base + c]!;
      dot += d * W[c]! * xh;
      dwAcc[c]! += d * xh;
    }
    const m = dot / cols;
    for (let c = 0; c < cols; c++) {
      const xh = X[base + c]! * rs;
      DX[base + c] = rs * (DY[base + c]! * W[c]! - xh * m);
    }
  }
  dw!.set(dwAcc);
}

/** `layer_norm`: `y = (x − mean) · rstd · w + b` with the biased variance, saving mean and rstd. */
export function layerNorm(
  [x, w, b]: HostArray[],
  [y, mean, rstd]: HostArray[],
  p: KernelParams["layer_norm"],
): void {
  const X = x!;
  const W = w!;
  const B = b!;
  const Y = y!;
  const { rows, cols, eps } = p;
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let s = 0;
    for (let c = 0; c < cols; c++) s += X[base + c]!;
    const mu = s / cols;
    // Two passes (mean, then squared deviations) rather than E[x²] − E[x]², which cancels
    // catastrophically when the mean is large compared with the spread.
    let ss = 0;
    for (let c = 0; c < cols; c++) {
      const dv = X[base + c]! - mu;
      ss += dv * dv;
    }
    const rs = 1 / Math.sqrt(ss / cols + eps);
    mean![r] = mu;
    rstd![r] = rs;
    for (let c = 0; c < cols; c++) Y[base + c] = (X[base + c]! - mu) * rs * W[c]! + B[c]!;
  }
}

/**
 * `layer_norm_backward`: with `x̂ = (x − mean) · rstd` and `g = dy · w`,
 * `dx = rstd · (g − mean(g) − x̂ · mean(g · x̂))`, `dw = Σ_rows dy · x̂`, `db = Σ_rows dy`.
 */
export function layerNormBackward(
  [x, w, mean, rstd, dy]: HostArray[],
  [dx, dw, db]: HostArray[],
  p: KernelParams["layer_norm_backward"],
): void {
  const X = x!;
  const W = w!;
  const DY = dy!;
  const DX = dx!;
  const { rows, cols } = p;
  const dwAcc = new Float64Array(cols);
  const dbAcc = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    const mu = mean![r]!;
    const rs = rstd![r]!;
    let sg = 0;
    let sgx = 0;
    for (let c = 0; c < cols; c++) {
      const xh = (X[base + c]! - mu) * rs;
      const d = DY[base + c]!;
      const g = d * W[c]!;
      sg += g;
      sgx += g * xh;
      dwAcc[c]! += d * xh;
      dbAcc[c]! += d;
    }
    const mg = sg / cols;
    const mgx = sgx / cols;
    for (let c = 0; c < cols; c++) {
      const xh = (X[base + c]! - mu) * rs;
      DX[base + c] = rs * (DY[base + c]! * W[c]! - mg - xh * mgx);
    }
  }
  dw!.set(dwAcc);
  db!.set(dbAcc);
}
