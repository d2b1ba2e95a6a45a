/**
 * WGSL kernel for batched matmul with transposed-operand flags and batch strides.
 *
 * Design: the textbook shared-memory tiling, a plain first version (register blocking, vec4
 * loads and shape-specialised variants are later work): each workgroup of 16×16 invocations
 * computes one 16×16 tile of `c[bt]`, staging 16×16 tiles of `op(a)` and `op(b)` in workgroup
 * memory. The transpose flags and batch strides only change how the tiles are loaded (element
 * `(i, kk)` of `op(a)` is `a[a0 + i·aRow + kk·aCol]`), so backward passes multiply by transposes
 * without copying them. Out-of-range tile entries load as 0, so ragged sizes need no special
 * path. As in the CPU oracle, a zero entry of `op(a)` contributes nothing even when the matching
 * entry of `op(b)` is infinite or NaN. Accumulation is in f32 (the CPU oracle accumulates in
 * float64), so results differ by rounding that grows with `k`.
 *
 * @module
 */

import { bind, type GpuKernel, memo, Params, shader } from "./_wgsl.ts";

const T = 16;

// Params: m, n, k, aRow, aCol, bRow, bCol, aBatchStride, bBatchStride, tilesM, tilesN, batch.
const matmulShader = memo(() =>
  shader(
    "matmul",
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
      if (x != 0.0) { acc += x * Bs[kk * TILE + lx]; }
    }
    workgroupBarrier();
  }
  if (i < m && j < n) { C[bt * m * n + i * n + j] = acc; }`,
    `const TILE: u32 = ${T}u;
var<workgroup> As: array<f32, ${T * T}>;
var<workgroup> Bs: array<f32, ${T * T}>;`,
  )
);

/** `matmul`: `c[bt] = op(a[bt]) · op(b[bt])`. */
export const matmul: GpuKernel<"matmul"> = ([a, b], [c], p) => {
  const { batch, m, n, k, transA, transB } = p;
  const tilesM = Math.ceil(m / T);
  const tilesN = Math.ceil(n / T);
  const params = new Params()
    .u32(m).u32(n).u32(k)
    .u32(transA ? 1 : k).u32(transA ? m : 1)
    .u32(transB ? 1 : n).u32(transB ? k : 1)
    .u32(p.aBatchStride).u32(p.bBatchStride)
    .u32(tilesM).u32(tilesN).u32(batch)
    .finish();
  return [{
    shader: matmulShader(),
    bindings: [a!, b!, c!],
    params,
    groups: batch * tilesM * tilesN,
  }];
};
