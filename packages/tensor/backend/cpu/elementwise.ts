/**
 * CPU kernels for fill, cast, elementwise unary/binary ops, `where` and strided copy.
 *
 * Broadcasting is handled by stride vectors (0 on stretched dimensions) walked with an odometer,
 * so one loop serves every shape. The odometer steps over rows (all axes but the last) and a
 * plain loop walks each row with the operands' last-axis strides, so the per-element cost is an
 * indexed load and store, not an odometer step and a callback; `+ - * /` get their own row loops.
 *
 * @module
 */

import type { BinaryOp, HostArray, KernelParams, UnaryOp } from "../types.ts";

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
const GELU_C = 0.044715;

function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

const UNARY: Record<UnaryOp, (x: number) => number> = {
  neg: (x) => -x,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  abs: Math.abs,
  sign: (x) => (x > 0 ? 1 : x < 0 ? -1 : x === 0 ? 0 : NaN),
  tanh: Math.tanh,
  sigmoid,
  relu: (x) => (x > 0 ? x : 0),
  silu: (x) => x * sigmoid(x),
  gelu: (x) => 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + GELU_C * x * x * x))),
  square: (x) => x * x,
  reciprocal: (x) => 1 / x,
  not: (x) => (x ? 0 : 1),
};

const BINARY: Record<BinaryOp, (a: number, b: number) => number> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  pow: Math.pow,
  minimum: (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b)),
  maximum: (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b)),
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
  and: (a, b) => (a && b ? 1 : 0),
  or: (a, b) => (a || b ? 1 : 0),
  relu_backward: (x, dy) => (x > 0 ? dy : 0),
  silu_backward: (x, dy) => {
    const s = sigmoid(x);
    return dy * s * (1 + x * (1 - s));
  },
  gelu_backward: (x, dy) => {
    const u = SQRT_2_OVER_PI * (x + GELU_C * x * x * x);
    const t = Math.tanh(u);
    const du = SQRT_2_OVER_PI * (1 + 3 * GELU_C * x * x);
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du);
  },
  tanh_backward: (y, dy) => dy * (1 - y * y),
  sigmoid_backward: (y, dy) => dy * y * (1 - y),
};

/**
 * Calls `visit(outIndex, offsets)` for every index of `shape`, where `offsets[j]` is the flat
 * offset into operand j under its strides. Offsets start at `starts`.
 */
export function forEachStrided(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
  starts: readonly number[],
  visit: (i: number, offsets: number[]) => void,
): void {
  let total = 1;
  for (const d of shape) total *= d;
  if (total === 0) return;
  const nd = shape.length;
  const idx = new Array<number>(nd).fill(0);
  const offs = [...starts];
  for (let i = 0; i < total; i++) {
    visit(i, offs);
    for (let ax = nd - 1; ax >= 0; ax--) {
      idx[ax]!++;
      for (let j = 0; j < offs.length; j++) offs[j]! += strides[j]![ax]!;
      if (idx[ax]! < shape[ax]!) break;
      for (let j = 0; j < offs.length; j++) offs[j]! -= strides[j]![ax]! * shape[ax]!;
      idx[ax] = 0;
    }
  }
}

/**
 * Calls `visit(outIndex, offsets, length, innerStrides)` once per row of `shape` (every index of
 * all axes but the last; one call for a 0-d shape), where `offsets[j]` is operand j's flat offset
 * of the row's first element and `innerStrides[j]` its stride along the last axis.
 */
export function forEachRow(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
  starts: readonly number[],
  visit: (
    i: number,
    offsets: readonly number[],
    length: number,
    innerStrides: readonly number[],
  ) => void,
): void {
  const nd = shape.length;
  if (nd === 0) {
    visit(0, starts, 1, strides.map(() => 0));
    return;
  }
  const len = shape[nd - 1]!;
  let rows = 1;
  for (let ax = 0; ax < nd - 1; ax++) rows *= shape[ax]!;
  if (rows === 0 || len === 0) return;
  const inner = strides.map((s) => s[nd - 1]!);
  const idx = new Array<number>(nd).fill(0);
  const offs = [...starts];
  for (let r = 0; r < rows; r++) {
    visit(r * len, offs, len, inner);
    for (let ax = nd - 2; ax >= 0; ax--) {
      idx[ax]!++;
      for (let j = 0; j < offs.length; j++) offs[j]! += strides[j]![ax]!;
      if (idx[ax]! < shape[ax]!) break;
      for (let j = 0; j < offs.length; j++) offs[j]! -= strides[j]![ax]! * shape[ax]!;
      idx[ax] = 0;
    }
  }
}

/** `fill`: every element set to a value. */
export function fill(_: HostArray[], [out]: HostArray[], p: KernelParams["fill"]): void {
  out!.fill(p.value);
}

/** `cast`: dtype conversion, truncating toward zero into integers. */
export function cast([x]: HostArray[], [y]: HostArray[]): void {
  const src = x!;
  const dst = y!;
  if (dst instanceof Uint8Array) {
    for (let i = 0; i < src.length; i++) dst[i] = src[i] ? 1 : 0;
  } else {
    // Int32Array assignment truncates toward zero, float arrays copy.
    for (let i = 0; i < src.length; i++) dst[i] = src[i]!;
  }
}

/** `unary`: elementwise op. */
export function unary([x]: HostArray[], [y]: HostArray[], p: KernelParams["unary"]): void {
  const f = UNARY[p.op];
  const src = x!;
  const dst = y!;
  for (let i = 0; i < src.length; i++) dst[i] = f(src[i]!);
}

/** `binary`: elementwise op with broadcasting strides. */
export function binary([a, b]: HostArray[], [out]: HostArray[], p: KernelParams["binary"]): void {
  const f = BINARY[p.op];
  const A = a!;
  const B = b!;
  const O = out!;
  const op = p.op;
  forEachRow(p.shape, [p.aStrides, p.bStrides], [0, 0], (i, offs, len, inner) => {
    let ia = offs[0]!;
    let ib = offs[1]!;
    const sa = inner[0]!;
    const sb = inner[1]!;
    const end = i + len;
    if (op === "add") { for (; i < end; i++, ia += sa, ib += sb) O[i] = A[ia]! + B[ib]!; }
    else if (op === "mul") { for (; i < end; i++, ia += sa, ib += sb) O[i] = A[ia]! * B[ib]!; }
    else if (op === "sub") { for (; i < end; i++, ia += sa, ib += sb) O[i] = A[ia]! - B[ib]!; }
    else if (op === "div") { for (; i < end; i++, ia += sa, ib += sb) O[i] = A[ia]! / B[ib]!; }
    else for (; i < end; i++, ia += sa, ib += sb) O[i] = f(A[ia]!, B[ib]!);
  });
}

/** `accumulate`: `y[i] += src[i]` in place (one f32 rounding, as `binary` add gives). */
export function accumulate(
  [src]: HostArray[],
  [y]: HostArray[],
  p: KernelParams["accumulate"],
): void {
  if (src instanceof Float32Array && y instanceof Float32Array) accumulateF32(src, y, p.n);
  else {
    const S = src!, Y = y!;
    for (let i = 0; i < p.n; i++) Y[i] = Y[i]! + S[i]!;
  }
}

// Its own function so that its element accesses only ever see Float32Arrays (monomorphic).
function accumulateF32(src: Float32Array, y: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) y[i] = y[i]! + src[i]!;
}

/** `where`: `cond ? a : b` with broadcasting strides. */
export function where([c, a, b]: HostArray[], [out]: HostArray[], p: KernelParams["where"]): void {
  const C = c!;
  const A = a!;
  const B = b!;
  const O = out!;
  forEachStrided(p.shape, [p.condStrides, p.aStrides, p.bStrides], [0, 0, 0], (i, [ic, ia, ib]) => {
    O[i] = C[ic!] ? A[ia!]! : B[ib!]!;
  });
}

/** `copy`: strided read, strided write. */
export function copy([x]: HostArray[], [y]: HostArray[], p: KernelParams["copy"]): void {
  const X = x!;
  const Y = y!;
  forEachRow(
    p.shape,
    [p.inStrides, p.outStrides],
    [p.inOffset, p.outOffset],
    (_, offs, len, inner) => {
      let ix = offs[0]!;
      let iy = offs[1]!;
      const sx = inner[0]!;
      const sy = inner[1]!;
      for (let t = 0; t < len; t++, ix += sx, iy += sy) Y[iy] = X[ix]!;
    },
  );
}
