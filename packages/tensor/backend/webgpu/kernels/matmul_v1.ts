/**
 * Matmul variant 1, the reference: textbook shared-memory tiling, one output element per
 * invocation.
 *
 * Design: each workgroup of 16×16 invocations computes one 16×16 tile of `c[bt]`, staging 16×16
 * tiles of `op(a)` and `op(b)` in workgroup memory. The transpose flags and batch strides only
 * change how the tiles are loaded (element `(i, kk)` of `op(a)` is `a[a0 + i·aRow + kk·aCol]`), so
 * backward passes multiply by transposes without copying them. Out-of-range tile entries load as
 * 0, so ragged sizes need no special path. As in the CPU oracle, a zero entry of `op(a)`
 * contributes nothing even when the matching entry of `op(b)` is infinite or NaN, while a NaN of
 * `op(a)` propagates (the zero test is on the bits: `x != 0.0` can be compiled as an ordered
 * compare, which is false for NaN, and then silently dropped NaNs). Accumulation
 * is in f32 (the CPU oracle accumulates in float64), so results differ by rounding that grows
 * with `k`. Every other variant is checked against the same CPU oracle; this one stays simple so
 * that a disagreement between variants points at the faster one.
 *
 * @module
 */

import { bind, type DispatchSpec, type GpuBinding, memo, shader } from "./_wgsl.ts";
import { matmulParams } from "./matmul_params.ts";
import type { KernelParams } from "../../types.ts";

const T = 16;

// Params: see matmul_params.ts (tilesM, tilesN count 16×16 tiles).
const matmulV1Shader = memo(() =>
  shader(
    "matmul_v1",
    [bind("A", "read", "f32"), bind("B", "read", "f32"), bind("C", "read_write", "f32")],
    T * T,
    `  let m = pu(0);
  let n = pu(1);
  let k = pu(2);
  let tilesM = pu(9);
  let tilesN = pu(10);
  let perBatch = tilesM * tilesN;
  if (wid >= perBatch * pu(11)) { return; }
  let bt = wid / perBatch;
  let t = wid % perBatch;
  let row0 = (t / tilesN) * TILE;
  let col0 = (t % tilesN) * TILE;
  let ly = li / TILE;
  let lx = li % TILE;
  let a0 = bt * pu(7);
  let b0 = bt * pu(8);
  let i = row0 + ly;
  let j = col0 + lx;
  var acc = 0.0;
  for (var k0 = 0u; k0 < k; k0 += TILE) {
    // As[ly][lx] = op(a)[i, k0 + lx]; Bs[ly][lx] = op(b)[k0 + ly, j]
    let ka = k0 + lx;
    var av = 0.0;
    if (i < m && ka < k) { av = A[a0 + i * pu(3) + ka * pu(4)]; }
    As[li] = av;
    let kb = k0 + ly;
    var bv = 0.0;
    if (kb < k && j < n) { bv = B[b0 + kb * pu(5) + j * pu(6)]; }
    Bs[li] = bv;
    workgroupBarrier();
    for (var kk = 0u; kk < TILE; kk++) {
      let x = As[ly * TILE + kk];
      if (!is_zero(x)) { acc += x * Bs[kk * TILE + lx]; }
    }
    workgroupBarrier();
  }
  if (i < m && j < n) { C[bt * m * n + i * n + j] = acc; }`,
    `const TILE: u32 = ${T}u;
var<workgroup> As: array<f32, ${T * T}>;
var<workgroup> Bs: array<f32, ${T * T}>;`,
  )
);

/** Variant 1 of `matmul`: 16×16 output tiles, one element per invocation. */
export function matmulV1(
  a: GpuBinding,
  b: GpuBinding,
  c: GpuBinding,
  p: KernelParams["matmul"],
): DispatchSpec {
  const tilesM = Math.ceil(p.m / T);
  const tilesN = Math.ceil(p.n / T);
  return {
    shader: matmulV1Shader(),
    bindings: [a, b, c],
    params: matmulParams(p, tilesM, tilesN),
    groups: p.batch * tilesM * tilesN,
  };
}
