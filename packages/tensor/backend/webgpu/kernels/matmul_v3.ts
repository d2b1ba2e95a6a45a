/**
 * Matmul variant 3: GEMV-style, for a tiny `m` (decoding multiplies one token's row by a weight
 * matrix, so `m = 1` per batch entry).
 *
 * Design: with one output row, a 64×64 or 16×16 output tile wastes all but one of its rows, so
 * this variant parallelises over columns and `k` instead, one workgroup per (batch, row, column
 * block), and reduces partial sums in workgroup memory. The two layouts of `b` read memory in
 * order in different ways, so they are two shaders:
 * - **`op(b)` stored `[k, n]`** (NN, TN): 16 k-slices × 16 lanes; a lane owns 4 adjacent columns
 *   (`vec4` loads when {@link canVec4} holds) and a slice walks every 16th k; 64 columns per
 *   workgroup, then the 16 slices are summed.
 * - **`op(b)` stored `[n, k]`** (NT, TT; the usual `x · Wᵀ` of a linear layer): 8 columns × 32
 *   lanes; the lanes of a column stride through its row of `b` (and the row of `op(a)`) 4 at a
 *   time, then a tree reduction sums the 32 lanes.
 * Zeros of `op(a)` are skipped as in the CPU oracle (the kernel is memory-bound, so the test
 * costs nothing measurable). Any `m` is valid, but each row re-reads `b`: the dispatcher uses
 * this variant only for tiny `m`.
 *
 * @module
 */

import type { BindingDecl, DispatchSpec, GpuBinding } from "./_wgsl.ts";
import { memo, shader } from "./_wgsl.ts";
import { canVec4, matmulParams } from "./matmul_params.ts";
import type { KernelParams } from "../../types.ts";

const COLS_N = 64; // columns per workgroup, b stored [k, n]
const COLS_T = 8; // columns per workgroup, b stored [n, k]

const f32s = (vec: boolean) => (vec ? "vec4<f32>" : "f32");

const HEAD = `  let m = pu(0);
  let n = pu(1);
  let k = pu(2);
  let tilesN = pu(10);
  let perBatch = m * tilesN;
  if (wid >= perBatch * pu(11)) { return; }
  let bt = wid / perBatch;
  let t = wid % perBatch;
  let i = t / tilesN;
  let a0 = bt * pu(7) + i * pu(3);
  let b0 = bt * pu(8);
  let c0 = bt * m * n + i * n;
`;

/** `b` stored `[k, n]`: lanes own 4 columns each, slices split k. */
const gemvKnShader = memo((vecB: boolean, vecC: boolean) => {
  const bindings: BindingDecl[] = [
    { name: "A", access: "read", type: "f32" },
    { name: "B", access: "read", type: f32s(vecB) },
    { name: "C", access: "read_write", type: f32s(vecC) },
  ];
  const loadB = vecB ? `if (j < n) { b = B[(b0 + kk * n + j) / 4u]; }` : `let base = b0 + kk * n;
        if (j < n) { b.x = B[base + j]; }
        if (j + 1u < n) { b.y = B[base + j + 1u]; }
        if (j + 2u < n) { b.z = B[base + j + 2u]; }
        if (j + 3u < n) { b.w = B[base + j + 3u]; }`;
  const store = vecC ? `if (j < n) { C[(c0 + j) / 4u] = sum; }` : `if (j < n) { C[c0 + j] = sum.x; }
    if (j + 1u < n) { C[c0 + j + 1u] = sum.y; }
    if (j + 2u < n) { C[c0 + j + 2u] = sum.z; }
    if (j + 3u < n) { C[c0 + j + 3u] = sum.w; }`;
  return shader(
    `matmul_v3_kn_${vecB ? "v" : "s"}${vecC ? "v" : "s"}`,
    bindings,
    256,
    HEAD + `  let s = li / 16u;
  let lane = li % 16u;
  let j = (t % tilesN) * ${COLS_N}u + lane * 4u;
  let aCol = pu(4);
  var acc = vec4<f32>();
  for (var kk = s; kk < k; kk += 16u) {
    let av = A[a0 + kk * aCol];
    if (!is_zero(av)) {
      var b = vec4<f32>();
      ${loadB}
      acc += av * b;
    }
  }
  red[li] = acc;
  workgroupBarrier();
  if (s == 0u) {
    var sum = red[lane];
    for (var q = 1u; q < 16u; q++) { sum += red[q * 16u + lane]; }
    ${store}
  }`,
    `var<workgroup> red: array<vec4<f32>, 256>;`,
  );
});

/** `b` stored `[n, k]`: 32 lanes per column stride through k. */
const gemvNkShader = memo((vecA: boolean, vecB: boolean) => {
  const bindings: BindingDecl[] = [
    { name: "A", access: "read", type: f32s(vecA) },
    { name: "B", access: "read", type: f32s(vecB) },
    { name: "C", access: "read_write", type: "f32" },
  ];
  const loadA = vecA ? `a = A[(a0 + kk) / 4u];` : `let aCol = pu(4);
      a.x = A[a0 + kk * aCol];
      if (kk + 1u < k) { a.y = A[a0 + (kk + 1u) * aCol]; }
      if (kk + 2u < k) { a.z = A[a0 + (kk + 2u) * aCol]; }
      if (kk + 3u < k) { a.w = A[a0 + (kk + 3u) * aCol]; }`;
  const loadB = vecB ? `b = B[(bRow + kk) / 4u];` : `b.x = B[bRow + kk];
      if (kk + 1u < k) { b.y = B[bRow + kk + 1u]; }
      if (kk + 2u < k) { b.z = B[bRow + kk + 2u]; }
      if (kk + 3u < k) { b.w = B[bRow + kk + 3u]; }`;
  return shader(
    `matmul_v3_nk_${vecA ? "v" : "s"}${vecB ? "v" : "s"}`,
    bindings,
    256,
    HEAD + `  let col = li / 32u;
  let lane = li % 32u;
  let j = (t % tilesN) * ${COLS_T}u + col;
  var acc = vec4<f32>();
  if (j < n) {
    let bRow = b0 + j * k;
    for (var kk = lane * 4u; kk < k; kk += 128u) {
      var a = vec4<f32>();
      var b = vec4<f32>();
      ${loadA}
      ${loadB}
      let zero = (bitcast<vec4<u32>>(a) & vec4<u32>(0x7fffffffu)) == vec4<u32>();
      acc += select(a * b, vec4<f32>(), zero);
    }
  }
  red[li] = (acc.x + acc.y) + (acc.z + acc.w);
  workgroupBarrier();
  for (var w = 16u; w > 0u; w = w >> 1u) {
    if (lane < w) { red[li] = red[li] + red[li + w]; }
    workgroupBarrier();
  }
  if (lane == 0u && j < n) { C[c0 + j] = red[li]; }`,
    `var<workgroup> red: array<f32, 256>;`,
  );
});

/** Variant 3 of `matmul`: column-parallel GEMV with a k reduction in workgroup memory. */
export function matmulV3(
  a: GpuBinding,
  b: GpuBinding,
  c: GpuBinding,
  p: KernelParams["matmul"],
): DispatchSpec {
  const { m, n, k, transA, transB } = p;
  if (!transB) {
    const tilesN = Math.ceil(n / COLS_N);
    return {
      shader: gemvKnShader(canVec4(n, n, p.bBatchStride, b), canVec4(n, n, m * n, c)),
      bindings: [a, b, c],
      params: matmulParams(p, m, tilesN),
      groups: p.batch * m * tilesN,
    };
  }
  // op(a) rows are contiguous along k unless a is stored transposed (then only when m = 1).
  const aContiguous = !transA || m === 1;
  const vecA = aContiguous && canVec4(k, transA ? 4 : k, p.aBatchStride, a);
  const tilesN = Math.ceil(n / COLS_T);
  return {
    shader: gemvNkShader(vecA, canVec4(k, k, p.bBatchStride, b)),
    bindings: [a, b, c],
    params: matmulParams(p, m, tilesN),
    groups: p.batch * m * tilesN,
  };
}
