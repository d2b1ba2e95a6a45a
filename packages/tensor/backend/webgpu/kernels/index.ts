/**
 * WGSL kernels for gather / scatter-add along the last axis and index-select / index-add along a
 * middle axis.
 *
 * Design:
 * - **Scatter-adds are race-free without atomics**: `scatter_add` runs one invocation per row
 *   `o`, and `index_add` one per `(o, i)` column; each walks its sources in ascending `j` and
 *   adds into destinations no other invocation touches. The additions therefore happen in the
 *   CPU oracle's order (bit-identical f32 results) and the kernels are deterministic, at the cost
 *   of parallelism limited to `outer` (scatter) or `outer · inner` (index-add) invocations.
 *   Float atomics (CAS loops on u32) would be nondeterministic in summation order.
 * - **Out-of-range indices** cannot be reported: the op layer never sees index values and the
 *   GPU cannot throw. The CPU oracle throws; here `gather`/`index_select` write 0 for such an
 *   entry and `scatter_add`/`index_add` skip it. Validate indices on the host (or run on the CPU
 *   backend) when they may be bad.
 * - Gathers move raw 32-bit words, so they serve every dtype.
 *
 * @module
 */

import type { DType } from "../../../dtype.ts";
import { bind, type GpuKernel, groupsFor, memo, Params, shader } from "./_wgsl.ts";

const WG = 64;

// Params: total, n, m.
const gatherShader = memo(() =>
  shader(
    "gather",
    [bind("X", "read", "u32"), bind("I", "read", "i32"), bind("Y", "read_write", "u32")],
    WG,
    `  let at = wid * WG + li;
  if (at >= pu(0)) { return; }
  let n = pu(1);
  let o = at / pu(2);
  let v = I[at];
  var r = 0u;
  if (v >= 0 && u32(v) < n) { r = X[o * n + u32(v)]; }
  Y[at] = r;`,
  )
);

/** `gather`: `y[o, j] = x[o, idx[o, j]]` (0 for an out-of-range index). */
export const gather: GpuKernel<"gather"> = ([x, idx], [y], p) => [{
  shader: gatherShader(),
  bindings: [x!, idx!, y!],
  params: new Params().u32(p.outer * p.m).u32(p.n).u32(p.m).finish(),
  groups: groupsFor(p.outer * p.m, WG),
}];

// Params: outer, n, m.
const scatterShader = memo((dtype: DType) =>
  shader(
    `scatter_add_${dtype}`,
    [bind("I", "read", "i32"), bind("S", "read", dtype), bind("Y", "read_write", dtype)],
    WG,
    `  let o = wid * WG + li;
  if (o >= pu(0)) { return; }
  let n = pu(1);
  let m = pu(2);
  for (var j = 0u; j < m; j++) {
    let v = I[o * m + j];
    if (v >= 0 && u32(v) < n) { Y[o * n + u32(v)] += S[o * m + j]; }
  }`,
  )
);

/** `scatter_add`: `y[o, idx[o, j]] += src[o, j]` (out-of-range indices skipped). */
export const scatterAdd: GpuKernel<"scatter_add"> = ([idx, src], [y], p) => [{
  shader: scatterShader(y!.dtype === "i32" ? "i32" : "f32"),
  bindings: [idx!, src!, y!],
  params: new Params().u32(p.outer).u32(p.n).u32(p.m).finish(),
  groups: groupsFor(p.outer, WG),
}];

// Params: total, n, inner, m.
const indexSelectShader = memo(() =>
  shader(
    "index_select",
    [bind("X", "read", "u32"), bind("I", "read", "i32"), bind("Y", "read_write", "u32")],
    WG,
    `  let at = wid * WG + li;
  if (at >= pu(0)) { return; }
  let n = pu(1);
  let inner = pu(2);
  let m = pu(3);
  let i = at % inner;
  let oj = at / inner;
  let j = oj % m;
  let o = oj / m;
  let v = I[j];
  var r = 0u;
  if (v >= 0 && u32(v) < n) { r = X[(o * n + u32(v)) * inner + i]; }
  Y[at] = r;`,
  )
);

/** `index_select`: `y[o, j, i] = x[o, idx[j], i]` (0 for an out-of-range index). */
export const indexSelect: GpuKernel<"index_select"> = ([x, idx], [y], p) => {
  const total = p.outer * p.m * p.inner;
  return [{
    shader: indexSelectShader(),
    bindings: [x!, idx!, y!],
    params: new Params().u32(total).u32(p.n).u32(p.inner).u32(p.m).finish(),
    groups: groupsFor(total, WG),
  }];
};

// Params: outer·inner, n, inner, m.
const indexAddShader = memo((dtype: DType) =>
  shader(
    `index_add_${dtype}`,
    [bind("I", "read", "i32"), bind("S", "read", dtype), bind("Y", "read_write", dtype)],
    WG,
    `  let col = wid * WG + li;
  if (col >= pu(0)) { return; }
  let n = pu(1);
  let inner = pu(2);
  let m = pu(3);
  let i = col % inner;
  let o = col / inner;
  for (var j = 0u; j < m; j++) {
    let v = I[j];
    if (v >= 0 && u32(v) < n) { Y[(o * n + u32(v)) * inner + i] += S[(o * m + j) * inner + i]; }
  }`,
  )
);

/** `index_add`: `y[o, idx[j], i] += src[o, j, i]` (out-of-range indices skipped). */
export const indexAdd: GpuKernel<"index_add"> = ([idx, src], [y], p) => [{
  shader: indexAddShader(y!.dtype === "i32" ? "i32" : "f32"),
  bindings: [idx!, src!, y!],
  params: new Params().u32(p.outer * p.inner).u32(p.n).u32(p.inner).u32(p.m).finish(),
  groups: groupsFor(p.outer * p.inner, WG),
}];
