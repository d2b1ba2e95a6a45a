/**
 * WGSL kernels for last-axis reductions, softmax / log-softmax (and backward), log-sum-exp and
 * cumulative sums.
 *
 * Design: one workgroup of 64 invocations per row; each invocation strides over the row and a
 * shared-memory tree combines the 64 partial results. `max`/`min`/`argmax`/`argmin` combine
 * `(value, index)` pairs under a total order (NaN first, then the larger/smaller value, ties to
 * the lower index), which returns exactly what the CPU oracle's left-to-right scan returns: the
 * first NaN if there is one, else the first extremum. Sums accumulate in f32 in a different
 * order from the CPU oracle (which sums in float64), so sums differ by rounding only. `cumsum`
 * is one invocation per row scanning sequentially: obviously correct, slow for long rows.
 *
 * @module
 */

import type { DType } from "../../../dtype.ts";
import type { ReduceOp } from "../../types.ts";
import {
  bind,
  type GpuKernel,
  groupsFor,
  LSE_REDUCTIONS,
  memo,
  Params,
  ROW_LSE,
  shader,
  wgReduce,
} from "./_wgsl.ts";

const WG = 64;
const ROW = "  let row = wid;\n  if (row >= pu(0)) { return; }\n";

function load(from: DType, compute: "f32" | "i32", v: string): string {
  if (compute === "f32") return from === "f32" ? v : `f32(${v})`;
  return from === "i32" ? v : `i32(${v})`;
}

function store(compute: "f32" | "i32", to: DType, v: string): string {
  if (to === "f32") return compute === "f32" ? v : `f32(${v})`;
  if (to === "i32") return compute === "f32" ? `to_i32(${v})` : v;
  return compute === "f32" ? `(u32(to_i32(${v})) & 0xffu)` : `(u32(${v}) & 0xffu)`;
}

// Params: outer, inner.
const reduceShader = memo((op: ReduceOp, from: DType, to: DType) => {
  const c = from === "f32" ? "f32" : "i32";
  const bindings = [bind("X", "read", from), bind("Y", "read_write", to)];
  if (op === "sum") {
    const zero = c === "f32" ? "0.0" : "0";
    return shader(
      `reduce_sum_${from}_${to}`,
      bindings,
      WG,
      ROW + `  let inner = pu(1);
  let base = row * inner;
  var acc = ${zero};
  for (var j = li; j < inner; j += WG) { acc += ${load(from, c, "X[base + j]")}; }
  acc = wg_sum(acc, li);
  if (li == 0u) { Y[row] = ${store(c, to, "acc")}; }`,
      wgReduce("sum", "a + b", c),
    );
  }
  const wantMax = op === "max" || op === "argmax";
  const arg = op === "argmax" || op === "argmin";
  const cmp = wantMax ? ">" : "<";
  const nanRule = c === "f32"
    ? `  let vn = is_nan(v);
  let bn = is_nan(b);
  if (vn || bn) {
    if (vn && bn) { return vi < bi; }
    return vn;
  }
`
    : "";
  const body = `
const EMPTY: u32 = 0xffffffffu;
// True when (v, vi) should replace (b, bi) in a left-to-right scan's result.
fn better(v: ${c}, vi: u32, b: ${c}, bi: u32) -> bool {
  if (vi == EMPTY) { return false; }
  if (bi == EMPTY) { return true; }
${nanRule}  if (v ${cmp} b) { return true; }
  if (v == b) { return vi < bi; }
  return false;
}
var<workgroup> rv: array<${c}, WG>;
var<workgroup> ri: array<u32, WG>;
`;
  const empty = wantMax ? "neg_inf_f()" : "inf_f()";
  const result = arg
    ? `Y[row] = ${store("i32", to, "select(i32(ri[0]), 0, ri[0] == EMPTY)")};`
    : `if (ri[0] == EMPTY) { Y[row] = ${store("f32", to, empty)}; } else { Y[row] = ${
      store(c, to, "rv[0]")
    }; }`;
  return shader(
    `reduce_${op}_${from}_${to}`,
    bindings,
    WG,
    ROW + `  let inner = pu(1);
  let base = row * inner;
  var bv: ${c};
  var bi = EMPTY;
  for (var j = li; j < inner; j += WG) {
    let v = ${load(from, c, "X[base + j]")};
    if (better(v, j, bv, bi)) { bv = v; bi = j; }
  }
  rv[li] = bv;
  ri[li] = bi;
  workgroupBarrier();
  var s = WG / 2u;
  loop {
    if (s == 0u) { break; }
    if (li < s && better(rv[li + s], ri[li + s], rv[li], ri[li])) {
      rv[li] = rv[li + s];
      ri[li] = ri[li + s];
    }
    workgroupBarrier();
    s = s >> 1u;
  }
  if (li == 0u) { ${result} }`,
    body,
  );
});

/** `reduce`: sum/max/min/argmax/argmin of each row of `[outer, inner]`. */
export const reduce: GpuKernel<"reduce"> = ([x], [y], p) => [{
  shader: reduceShader(p.op, x!.dtype, y!.dtype),
  bindings: [x!, y!],
  params: new Params().u32(p.outer).u32(p.inner).finish(),
  groups: p.outer,
}];

// Params: rows, cols.
const softmaxShader = memo((log: boolean) =>
  shader(
    `softmax_${log ? "log" : "exp"}`,
    [bind("X", "read", "f32"), bind("Y", "read_write", "f32")],
    WG,
    ROW + `  let cols = pu(1);
  let base = row * cols;
  let lse = row_lse(base, cols, li);
  for (var j = li; j < cols; j += WG) {
    let l = X[base + j] - lse;
    Y[base + j] = ${log ? "l" : "exp(l)"};
  }`,
    LSE_REDUCTIONS + ROW_LSE,
  )
);

/** `softmax`: row-wise softmax or log-softmax. */
export const softmax: GpuKernel<"softmax"> = ([x], [y], p) => [{
  shader: softmaxShader(p.log),
  bindings: [x!, y!],
  params: new Params().u32(p.rows).u32(p.cols).finish(),
  groups: p.rows,
}];

const softmaxBackwardShader = memo((log: boolean) =>
  shader(
    `softmax_backward_${log ? "log" : "exp"}`,
    [bind("Yv", "read", "f32"), bind("DY", "read", "f32"), bind("DX", "read_write", "f32")],
    WG,
    ROW + `  let cols = pu(1);
  let base = row * cols;
  var s = 0.0;
  for (var j = li; j < cols; j += WG) { s += ${
      log ? "DY[base + j]" : "DY[base + j] * Yv[base + j]"
    }; }
  s = wg_sum(s, li);
  for (var j = li; j < cols; j += WG) {
    let y = Yv[base + j];
    DX[base + j] = ${log ? "DY[base + j] - exp(y) * s" : "y * (DY[base + j] - s)"};
  }`,
    wgReduce("sum", "a + b"),
  )
);

/** `softmax_backward`: from the forward output and the upstream gradient. */
export const softmaxBackward: GpuKernel<"softmax_backward"> = ([y, dy], [dx], p) => [{
  shader: softmaxBackwardShader(p.log),
  bindings: [y!, dy!, dx!],
  params: new Params().u32(p.rows).u32(p.cols).finish(),
  groups: p.rows,
}];

const logsumexpShader = memo(() =>
  shader(
    "logsumexp",
    [bind("X", "read", "f32"), bind("L", "read_write", "f32")],
    WG,
    ROW + `  let cols = pu(1);
  let lse = row_lse(row * cols, cols, li);
  if (li == 0u) { L[row] = lse; }`,
    LSE_REDUCTIONS + ROW_LSE,
  )
);

/** `logsumexp`: row-wise log-sum-exp. */
export const logsumexp: GpuKernel<"logsumexp"> = ([x], [y], p) => [{
  shader: logsumexpShader(),
  bindings: [x!, y!],
  params: new Params().u32(p.rows).u32(p.cols).finish(),
  groups: p.rows,
}];

// Params: outer, inner, reverse.
const cumsumShader = memo((from: DType, to: DType) => {
  const c = from === "f32" ? "f32" : "i32";
  return shader(
    `cumsum_${from}_${to}`,
    [bind("X", "read", from), bind("Y", "read_write", to)],
    WG,
    `  let row = wid * WG + li;
  if (row >= pu(0)) { return; }
  let inner = pu(1);
  let base = row * inner;
  var s = ${c === "f32" ? "0.0" : "0"};
  for (var k = 0u; k < inner; k++) {
    let i = select(k, inner - 1u - k, pu(2) != 0u);
    s += ${load(from, c, "X[base + i]")};
    Y[base + i] = ${store(c, to, "s")};
  }`,
  );
});

/** `cumsum`: inclusive prefix sums of each row, optionally from the end. */
export const cumsum: GpuKernel<"cumsum"> = ([x], [y], p) => [{
  shader: cumsumShader(x!.dtype, y!.dtype),
  bindings: [x!, y!],
  params: new Params().u32(p.outer).u32(p.inner).u32(p.reverse ? 1 : 0).finish(),
  groups: groupsFor(p.outer, WG),
}];
