/**
 * The params words shared by every matmul variant, and the vector-load eligibility test.
 *
 * Design: all variants read the same twelve words, so the dispatcher can switch variants without
 * any variant re-deriving strides: `m, n, k`, the strides `aRow, aCol, bRow, bCol` of element
 * `(i, kk)` of `op(a)` and `(kk, j)` of `op(b)` in the stored matrices (which encode the
 * transpose flags), the two batch strides, the variant's tile counts along m and n, and `batch`.
 *
 * @module
 */

import { Params } from "./_wgsl.ts";
import type { GpuBinding } from "./_wgsl.ts";
import type { KernelParams } from "../../types.ts";

/** Params words of a matmul dispatch (layout in the module doc). */
export function matmulParams(
  p: KernelParams["matmul"],
  tilesM: number,
  tilesN: number,
): Uint32Array<ArrayBuffer> {
  const { m, n, k, transA, transB } = p;
  return new Params()
    .u32(m).u32(n).u32(k)
    .u32(transA ? 1 : k).u32(transA ? m : 1)
    .u32(transB ? 1 : n).u32(transB ? k : 1)
    .u32(p.aBatchStride).u32(p.bBatchStride)
    .u32(tilesM).u32(tilesN).u32(p.batch)
    .finish();
}

/**
 * Whether a matrix can be read as `vec4<f32>` along its contiguous dimension: that dimension's
 * length and every other offset (row stride, batch stride) must be multiples of 4, so that a
 * 4-aligned group of 4 elements is either wholly inside the matrix or wholly outside; the buffer
 * must hold a non-zero multiple of 4 elements so that the `array<vec4<f32>>` binding covers it.
 */
export function canVec4(
  contiguous: number,
  rowStride: number,
  batchStride: number,
  buf: GpuBinding,
): boolean {
  return contiguous % 4 === 0 && rowStride % 4 === 0 && batchStride % 4 === 0 &&
    buf.size > 0 && buf.size % 4 === 0;
}
