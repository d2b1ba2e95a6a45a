/**
 * Matmul variant 2: register-blocked, 64×64 output tile per workgroup, a 4×4 micro-tile per
 * invocation, k-tiles of 16 staged in workgroup memory, `vec4` loads where the layout allows.
 *
 * Design decisions:
 * - **Register blocking**: 256 invocations (16×16) each accumulate a 4×4 block of `c` in four
 *   `vec4` registers. Per k step an invocation reads one `vec4` of `op(a)` (4 rows) and one of
 *   `op(b)` (4 columns) from workgroup memory and does 16 multiply-adds, against 2 loads per
 *   multiply-add in variant 1. Workgroup memory holds `op(a)` k-major (`As[kk][row/4]` as
 *   `vec4`) and `op(b)` k-major (`Bs[kk][col/4]`), 8 KiB in all.
 * - **Layouts are compiled in**: the transpose flags pick which dimension of a stored matrix is
 *   contiguous, so they are part of the shader (as are the vector-load flags); geometry stays
 *   in the params uniform, so at most 32 pipelines exist (NN/NT/TN/TT × vector A × vector B ×
 *   vector C) and each serves every size. Each operand's tile is loaded along its contiguous
 *   dimension: one `vec4` per invocation when {@link canVec4} holds, else four guarded scalar
 *   loads with the same mapping (ragged edges, odd strides), so NN, NT, TN and TT all read
 *   memory in order and backward passes need no transpose copies.
 * - **Zero skip at no cost in the common case**: the CPU oracle skips a zero of `op(a)`, so
 *   `0 · ∞` adds nothing instead of NaN. Testing every multiply-add would triple the inner
 *   loop, so while loading a tile of `op(b)` the workgroup records (in a workgroup atomic, as
 *   the tile's index + 1) whether it holds any infinity or NaN; only such tiles take the
 *   checked loop. Finite tiles give the same result either way.
 * - **Edges**: out-of-range tile entries load as 0 and out-of-range outputs are not stored, so
 *   any `m, n, k` (including 0) is valid; small or skinny shapes are still better served by
 *   variant 1 or 3 (see `pickMatmulVariant`).
 *
 * @module
 */

import type { BindingDecl, DispatchSpec, GpuBinding } from "./_wgsl.ts";
import { memo, shader } from "./_wgsl.ts";
import { canVec4, matmulParams } from "./matmul_params.ts";
import type { KernelParams } from "../../types.ts";

const BM = 64;
const BN = 64;
const BK = 16;

/** Loads 4 elements of `op(a)` into `v` and stores them in `As` (`transA`: rows contiguous). */
function loadA(transA: boolean, vec: boolean): string {
  if (!transA) {
    // Stored [m, k]: invocation li reads row r, k-offsets kq..kq+3 (contiguous along k).
    const load = vec ? `if (i < m && kk < k) { v = A[(a0 + i * k + kk) / 4u]; }` : `if (i < m) {
      let base = a0 + i * k;
      if (kk < k) { v.x = A[base + kk]; }
      if (kk + 1u < k) { v.y = A[base + kk + 1u]; }
      if (kk + 2u < k) { v.z = A[base + kk + 2u]; }
      if (kk + 3u < k) { v.w = A[base + kk + 3u]; }
    }`;
    return `{
    let r = li / 4u;
    let kq = (li % 4u) * 4u;
    let i = row0 + r;
    let kk = k0 + kq;
    var v = vec4<f32>();
    ${load}
    let s = kq * 16u + r / 4u;
    let c = r % 4u;
    As[s][c] = v.x;
    As[s + 16u][c] = v.y;
    As[s + 32u][c] = v.z;
    As[s + 48u][c] = v.w;
  }`;
  }
  // Stored [k, m]: invocation li reads k-row kr, rows r4..r4+3 (contiguous along m).
  const load = vec ? `if (kk < k && i < m) { v = A[(a0 + kk * m + i) / 4u]; }` : `if (kk < k) {
      let base = a0 + kk * m;
      if (i < m) { v.x = A[base + i]; }
      if (i + 1u < m) { v.y = A[base + i + 1u]; }
      if (i + 2u < m) { v.z = A[base + i + 2u]; }
      if (i + 3u < m) { v.w = A[base + i + 3u]; }
    }`;
  return `{
    let kr = li / 16u;
    let r4 = (li % 16u) * 4u;
    let kk = k0 + kr;
    let i = row0 + r4;
    var v = vec4<f32>();
    ${load}
    As[kr * 16u + r4 / 4u] = v;
  }`;
}

const NON_FINITE =
  `if (any((bitcast<vec4<u32>>(v) & vec4<u32>(0x7f800000u)) == vec4<u32>(0x7f800000u))) {
      atomicMax(&bad, tile + 1u);
    }`;

/** Loads 4 elements of `op(b)` into `v`, flags non-finite ones and stores them in `Bs`. */
function loadB(transB: boolean, vec: boolean): string {
  if (!transB) {
    // Stored [k, n]: invocation li reads k-row kr, columns c4..c4+3 (contiguous along n).
    const load = vec ? `if (kk < k && j < n) { v = B[(b0 + kk * n + j) / 4u]; }` : `if (kk < k) {
      let base = b0 + kk * n;
      if (j < n) { v.x = B[base + j]; }
      if (j + 1u < n) { v.y = B[base + j + 1u]; }
      if (j + 2u < n) { v.z = B[base + j + 2u]; }
      if (j + 3u < n) { v.w = B[base + j + 3u]; }
    }`;
    return `{
    let kr = li / 16u;
    let c4 = (li % 16u) * 4u;
    let kk = k0 + kr;
    let j = col0 + c4;
    var v = vec4<f32>();
    ${load}
    ${NON_FINITE}
    Bs[kr * 16u + c4 / 4u] = v;
  }`;
  }
  // Stored [n, k]: invocation li reads column cj, k-offsets kq..kq+3 (contiguous along k).
  const load = vec ? `if (j < n && kk < k) { v = B[(b0 + j * k + kk) / 4u]; }` : `if (j < n) {
      let base = b0 + j * k;
      if (kk < k) { v.x = B[base + kk]; }
      if (kk + 1u < k) { v.y = B[base + kk + 1u]; }
      if (kk + 2u < k) { v.z = B[base + kk + 2u]; }
      if (kk + 3u < k) { v.w = B[base + kk + 3u]; }
    }`;
  return `{
    let cj = li / 4u;
    let kq = (li % 4u) * 4u;
    let j = col0 + cj;
    let kk = k0 + kq;
    var v = vec4<f32>();
    ${load}
    ${NON_FINITE}
    let s = kq * 16u + cj / 4u;
    let c = cj % 4u;
    Bs[s][c] = v.x;
    Bs[s + 16u][c] = v.y;
    Bs[s + 32u][c] = v.z;
    Bs[s + 48u][c] = v.w;
  }`;
}

function storeC(vec: boolean): string {
  const row = (r: number) => {
    const store = vec
      ? `if (j < n) { C[(c0 + i * n + j) / 4u] = acc${r}; }`
      : `let base = c0 + i * n;
      if (j < n) { C[base + j] = acc${r}.x; }
      if (j + 1u < n) { C[base + j + 1u] = acc${r}.y; }
      if (j + 2u < n) { C[base + j + 2u] = acc${r}.z; }
      if (j + 3u < n) { C[base + j + 3u] = acc${r}.w; }`;
    return `  {
    let i = row0 + ty * 4u + ${r}u;
    if (i < m) {
      ${store}
    }
  }`;
  };
  return `  let c0 = bt * m * n;
  let j = col0 + tx * 4u;
${[0, 1, 2, 3].map(row).join("\n")}`;
}

const f32s = (vec: boolean) => (vec ? "vec4<f32>" : "f32");

const matmulV2Shader = memo((
  transA: boolean,
  transB: boolean,
  vecA: boolean,
  vecB: boolean,
  vecC: boolean,
) => {
  const bindings: BindingDecl[] = [
    { name: "A", access: "read", type: f32s(vecA) },
    { name: "B", access: "read", type: f32s(vecB) },
    { name: "C", access: "read_write", type: f32s(vecC) },
  ];
  const label = `matmul_v2_${transA ? "T" : "N"}${transB ? "T" : "N"}` +
    `_${vecA ? "v" : "s"}${vecB ? "v" : "s"}${vecC ? "v" : "s"}`;
  return shader(
    label,
    bindings,
    256,
    `  let m = pu(0);
  let n = pu(1);
  let k = pu(2);
  let tilesM = pu(9);
  let tilesN = pu(10);
  let perBatch = tilesM * tilesN;
  if (wid >= perBatch * pu(11)) { return; }
  let bt = wid / perBatch;
  let t = wid % perBatch;
  let row0 = (t / tilesN) * ${BM}u;
  let col0 = (t % tilesN) * ${BN}u;
  let a0 = bt * pu(7);
  let b0 = bt * pu(8);
  let ty = li / 16u;
  let tx = li % 16u;
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  let nTiles = (k + ${BK - 1}u) / ${BK}u;
  for (var tile = 0u; tile < nTiles; tile++) {
    let k0 = tile * ${BK}u;
  ${loadA(transA, vecA)}
  ${loadB(transB, vecB)}
    workgroupBarrier();
    if (atomicLoad(&bad) == tile + 1u) {
      // This tile of op(b) holds an infinity or NaN: skip zeros of op(a) like the CPU oracle.
      for (var kk = 0u; kk < ${BK}u; kk++) {
        let a = As[kk * 16u + ty];
        let b = Bs[kk * 16u + tx];
        if (!is_zero(a.x)) { acc0 += a.x * b; }
        if (!is_zero(a.y)) { acc1 += a.y * b; }
        if (!is_zero(a.z)) { acc2 += a.z * b; }
        if (!is_zero(a.w)) { acc3 += a.w * b; }
      }
    } else {
      for (var kk = 0u; kk < ${BK}u; kk++) {
        let a = As[kk * 16u + ty];
        let b = Bs[kk * 16u + tx];
        acc0 += a.x * b;
        acc1 += a.y * b;
        acc2 += a.z * b;
        acc3 += a.w * b;
      }
    }
    workgroupBarrier();
  }
${storeC(vecC)}`,
    `var<workgroup> As: array<vec4<f32>, ${(BK * BM) / 4}>;
var<workgroup> Bs: array<vec4<f32>, ${(BK * BN) / 4}>;
var<workgroup> bad: atomic<u32>;`,
  );
});

/** Variant 2 of `matmul`: 64×64 output tiles, 4×4 per invocation, `vec4` loads where valid. */
export function matmulV2(
  a: GpuBinding,
  b: GpuBinding,
  c: GpuBinding,
  p: KernelParams["matmul"],
): DispatchSpec {
  const { m, n, k, transA, transB } = p;
  const vecA = transA ? canVec4(m, m, p.aBatchStride, a) : canVec4(k, k, p.aBatchStride, a);
  const vecB = transB ? canVec4(k, k, p.bBatchStride, b) : canVec4(n, n, p.bBatchStride, b);
  const vecC = canVec4(n, n, m * n, c);
  const tilesM = Math.ceil(m / BM);
  const tilesN = Math.ceil(n / BN);
  return {
    shader: matmulV2Shader(transA, transB, vecA, vecB, vecC),
    bindings: [a, b, c],
    params: matmulParams(p, tilesM, tilesN),
    groups: p.batch * tilesM * tilesN,
  };
}
