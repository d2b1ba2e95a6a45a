/**
 * WGSL kernels for RMSNorm and LayerNorm over the last axis, forward and backward.
 *
 * Design: one workgroup of 64 invocations per row computes the row statistics with
 * shared-memory tree sums (LayerNorm in two passes, mean then squared deviations, as the CPU
 * oracle does) and writes the row and its saved `rstd` (and `mean`). The backward pass is two
 * dispatches: one workgroup per row for `dx`, then one invocation per column that sums the
 * weight (and bias) gradients over all rows sequentially. Every output element has exactly one
 * writer, so there are no atomics and the result is deterministic. Sums are in f32 (the CPU
 * oracle uses float64 accumulators), so results differ by rounding.
 *
 * @module
 */

import { bind, type GpuKernel, groupsFor, memo, Params, shader, wgReduce } from "./_wgsl.ts";

const WG = 64;
const ROW = "  let row = wid;\n  if (row >= pu(0)) { return; }\n  let cols = pu(1);\n" +
  "  let base = row * cols;\n";
const COL = "  let c = wid * WG + li;\n  let cols = pu(1);\n  if (c >= cols) { return; }\n" +
  "  let rows = pu(0);\n";
const SUM = wgReduce("sum", "a + b");

// Params: rows, cols, eps.
const rmsShader = memo(() =>
  shader(
    "rms_norm",
    [
      bind("X", "read", "f32"),
      bind("W", "read", "f32"),
      bind("Y", "read_write", "f32"),
      bind("R", "read_write", "f32"),
    ],
    WG,
    ROW + `  var ss = 0.0;
  for (var c = li; c < cols; c += WG) { let v = X[base + c]; ss += v * v; }
  ss = wg_sum(ss, li);
  let rs = 1.0 / sqrt(ss / f32(cols) + pf(2));
  if (li == 0u) { R[row] = rs; }
  for (var c = li; c < cols; c += WG) { Y[base + c] = X[base + c] * rs * W[c]; }`,
    SUM,
  )
);

/** `rms_norm`: `y = x · rsqrt(mean(x²) + eps) · w`, saving `rstd`. */
export const rmsNorm: GpuKernel<"rms_norm"> = ([x, w], [y, rstd], p) => [{
  shader: rmsShader(),
  bindings: [x!, w!, y!, rstd!],
  params: new Params().u32(p.rows).u32(p.cols).f32(p.eps).finish(),
  groups: p.rows,
}];

const RMS_BW = [
  bind("X", "read", "f32"),
  bind("W", "read", "f32"),
  bind("R", "read", "f32"),
  bind("DY", "read", "f32"),
];

// Params: rows, cols.
const rmsBackwardDx = memo(() =>
  shader(
    "rms_norm_backward_dx",
    [...RMS_BW, bind("DX", "read_write", "f32")],
    WG,
    ROW + `  let rs = R[row];
  var dot = 0.0;
  for (var c = li; c < cols; c += WG) { dot += DY[base + c] * W[c] * X[base + c] * rs; }
  dot = wg_sum(dot, li);
  let mg = dot / f32(cols);
  for (var c = li; c < cols; c += WG) {
    let xh = X[base + c] * rs;
    DX[base + c] = rs * (DY[base + c] * W[c] - xh * mg);
  }`,
    SUM,
  )
);

const rmsBackwardDw = memo(() =>
  shader(
    "rms_norm_backward_dw",
    [...RMS_BW, bind("DW", "read_write", "f32")],
    WG,
    COL + `  var acc = 0.0;
  for (var r = 0u; r < rows; r++) { acc += DY[r * cols + c] * X[r * cols + c] * R[r]; }
  DW[c] = acc;`,
  )
);

/** `rms_norm_backward`: `dx` per row, then `dw` per column. */
export const rmsNormBackward: GpuKernel<"rms_norm_backward"> = ([x, w, r, dy], [dx, dw], p) => {
  const params = new Params().u32(p.rows).u32(p.cols).finish();
  const ins = [x!, w!, r!, dy!];
  return [
    { shader: rmsBackwardDx(), bindings: [...ins, dx!], params, groups: p.rows },
    { shader: rmsBackwardDw(), bindings: [...ins, dw!], params, groups: groupsFor(p.cols, WG) },
  ];
};

// Params: rows, cols, eps.
const layerShader = memo(() =>
  shader(
    "layer_norm",
    [
      bind("X", "read", "f32"),
      bind("W", "read", "f32"),
      bind("Bv", "read", "f32"),
      bind("Y", "read_write", "f32"),
      bind("MU", "read_write", "f32"),
      bind("R", "read_write", "f32"),
    ],
    WG,
    ROW + `  var s = 0.0;
  for (var c = li; c < cols; c += WG) { s += X[base + c]; }
  s = wg_sum(s, li);
  let mu = s / f32(cols);
  var ss = 0.0;
  for (var c = li; c < cols; c += WG) { let d = X[base + c] - mu; ss += d * d; }
  ss = wg_sum(ss, li);
  let rs = 1.0 / sqrt(ss / f32(cols) + pf(2));
  if (li == 0u) { MU[row] = mu; R[row] = rs; }
  for (var c = li; c < cols; c += WG) { Y[base + c] = (X[base + c] - mu) * rs * W[c] + Bv[c]; }`,
    SUM,
  )
);

/** `layer_norm`: `y = (x − mean) · rstd · w + b`, saving mean and rstd. */
export const layerNorm: GpuKernel<"layer_norm"> = ([x, w, b], [y, mean, rstd], p) => [{
  shader: layerShader(),
  bindings: [x!, w!, b!, y!, mean!, rstd!],
  params: new Params().u32(p.rows).u32(p.cols).f32(p.eps).finish(),
  groups: p.rows,
}];

const LN_BW = [
  bind("X", "read", "f32"),
  bind("W", "read", "f32"),
  bind("MU", "read", "f32"),
  bind("R", "read", "f32"),
  bind("DY", "read", "f32"),
];

// Params: rows, cols.
const layerBackwardDx = memo(() =>
  shader(
    "layer_norm_backward_dx",
    [...LN_BW, bind("DX", "read_write", "f32")],
    WG,
    ROW + `  let mu = MU[row];
  let rs = R[row];
  var sg = 0.0;
  var sgx = 0.0;
  for (var c = li; c < cols; c += WG) {
    let g = DY[base + c] * W[c];
    sg += g;
    sgx += g * (X[base + c] - mu) * rs;
  }
  sg = wg_sum(sg, li);
  sgx = wg_sum(sgx, li);
  let mg = sg / f32(cols);
  let mgx = sgx / f32(cols);
  for (var c = li; c < cols; c += WG) {
    let xh = (X[base + c] - mu) * rs;
    DX[base + c] = rs * (DY[base + c] * W[c] - mg - xh * mgx);
  }`,
    SUM,
  )
);

const layerBackwardDwDb = memo(() =>
  shader(
    "layer_norm_backward_dw_db",
    [...LN_BW, bind("DW", "read_write", "f32"), bind("DB", "read_write", "f32")],
    WG,
    COL + `  var aw = 0.0;
  var ab = 0.0;
  for (var r = 0u; r < rows; r++) {
    let d = DY[r * cols + c];
    aw += d * (X[r * cols + c] - MU[r]) * R[r];
    ab += d;
  }
  DW[c] = aw;
  DB[c] = ab;`,
  )
);

/** `layer_norm_backward`: `dx` per row, then `dw` and `db` per column. */
export const layerNormBackward: GpuKernel<"layer_norm_backward"> = (
  [x, w, mean, rstd, dy],
  [dx, dw, db],
  p,
) => {
  const params = new Params().u32(p.rows).u32(p.cols).finish();
  const ins = [x!, w!, mean!, rstd!, dy!];
  return [
    { shader: layerBackwardDx(), bindings: [...ins, dx!], params, groups: p.rows },
    {
      shader: layerBackwardDwDb(),
      bindings: [...ins, dw!, db!],
      params,
      groups: groupsFor(p.cols, WG),
    },
  ];
};
