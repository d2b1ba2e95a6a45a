/**
 * CPU kernels for last-axis reductions, softmax, log-softmax, log-sum-exp and cumulative sums.
 *
 * Every kernel works on rows of an `[outer, inner]` view; the op layer moves the reduced axes
 * last. Row maxima are subtracted before exponentiating so large logits never overflow.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";

/** `reduce`: sum/max/min/argmax/argmin of each row. NaN propagates through max and min. */
export function reduce([x]: HostArray[], [y]: HostArray[], p: KernelParams["reduce"]): void {
  const X = x!;
  const Y = y!;
  const { outer, inner, op } = p;
  for (let o = 0; o < outer; o++) {
    const base = o * inner;
    if (op === "sum") {
      let s = 0;
      for (let i = 0; i < inner; i++) s += X[base + i]!;
      Y[o] = s;
      continue;
    }
    const wantMax = op === "max" || op === "argmax";
    let best = wantMax ? -Infinity : Infinity;
    let at = 0;
    for (let i = 0; i < inner; i++) {
      const v = X[base + i]!;
      if (Number.isNaN(v)) {
        best = NaN;
        at = i;
        break;
      }
      if (wantMax ? v > best : v < best) {
        best = v;
        at = i;
      }
    }
    Y[o] = op === "argmax" || op === "argmin" ? at : best;
  }
}

function rowMax(X: HostArray, base: number, n: number): number {
  let m = -Infinity;
  for (let i = 0; i < n; i++) m = Math.max(m, X[base + i]!);
  return m;
}

/** `logsumexp`: `log Σ exp(x)` of each row, shifted by the row max. */
export function logsumexp([x]: HostArray[], [y]: HostArray[], p: KernelParams["logsumexp"]): void {
  const X = x!;
  for (let r = 0; r < p.rows; r++) y![r] = lseRow(X, r * p.cols, p.cols);
}

/** Log-sum-exp of one row; −Infinity for an empty or all −Infinity row. */
export function lseRow(X: HostArray, base: number, n: number): number {
  const m = rowMax(X, base, n);
  if (m === -Infinity || Number.isNaN(m)) return m;
  if (m === Infinity) return Infinity;
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.exp(X[base + i]! - m);
  return m + Math.log(s);
}

/** `softmax`: softmax or log-softmax of each row. */
export function softmax([x]: HostArray[], [y]: HostArray[], p: KernelParams["softmax"]): void {
  const X = x!;
  const Y = y!;
  for (let r = 0; r < p.rows; r++) {
    const base = r * p.cols;
    const lse = lseRow(X, base, p.cols);
    for (let i = 0; i < p.cols; i++) {
      const l = X[base + i]! - lse;
      Y[base + i] = p.log ? l : Math.exp(l);
    }
  }
}

/** `softmax_backward`: from output y and upstream dy. */
export function softmaxBackward(
  [y, dy]: HostArray[],
  [dx]: HostArray[],
  p: KernelParams["softmax_backward"],
): void {
  const Y = y!;
  const DY = dy!;
  const DX = dx!;
  for (let r = 0; r < p.rows; r++) {
    const base = r * p.cols;
    let s = 0;
    for (let i = 0; i < p.cols; i++) s += p.log ? DY[base + i]! : DY[base + i]! * Y[base + i]!;
    for (let i = 0; i < p.cols; i++) {
      const yi = Y[base + i]!;
      DX[base + i] = p.log ? DY[base + i]! - Math.exp(yi) * s : yi * (DY[base + i]! - s);
    }
  }
}

/** `cumsum`: inclusive prefix sums of each row, optionally from the end. */
export function cumsum([x]: HostArray[], [y]: HostArray[], p: KernelParams["cumsum"]): void {
  const X = x!;
  const Y = y!;
  for (let o = 0; o < p.outer; o++) {
    const base = o * p.inner;
    let s = 0;
    for (let k = 0; k < p.inner; k++) {
      const i = p.reverse ? p.inner - 1 - k : k;
      s += X[base + i]!;
      Y[base + i] = s;
    }
  }
}
