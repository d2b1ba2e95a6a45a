/**
 * Helpers shared by the op files: allocation, scalar wrapping, dtype promotion and reducing a
 * broadcast gradient back to an input's shape.
 *
 * @module
 */

import type { Backend } from "../backend/types.ts";
import type { DType } from "../dtype.ts";
import { fmtShape, sameShape, type Shape, sizeOf } from "../shape.ts";
import { Tensor } from "../tensor.ts";

/** Allocates an uninitialised (zero-filled) result tensor. */
export function empty(backend: Backend, shape: Shape, dtype: DType): Tensor {
  return new Tensor({ backend, buffer: backend.alloc(sizeOf(shape), dtype), shape });
}

/** Throws unless every tensor lives on the same backend; returns that backend. */
export function backendOf(op: string, ...ts: Tensor[]): Backend {
  const b = ts[0]!.backend;
  for (const t of ts) {
    if (t.backend !== b) {
      throw new Error(
        `${op}: tensors live on different backends (${b.name} and ${t.backend.name}); move them to one`,
      );
    }
  }
  return b;
}

/** Throws unless `t` is f32. */
export function requireFloat(op: string, t: Tensor, what = "input"): void {
  if (t.dtype !== "f32") throw new TypeError(`${op}: ${what} must be f32, got ${t.dtype}`);
}

/** Throws unless `t` has integer (i32) dtype. */
export function requireIndex(op: string, t: Tensor, what = "index"): void {
  if (t.dtype !== "i32") throw new TypeError(`${op}: ${what} must be i32, got ${t.dtype}`);
}

const RANK: Record<DType, number> = { bool: 0, i32: 1, f32: 2 };

/** The wider of two dtypes (bool < i32 < f32). */
export function promoteTypes(a: DType, b: DType): DType {
  return RANK[a] >= RANK[b] ? a : b;
}

/** Converts `t` to `dtype` through the cast kernel (no gradient), or returns it unchanged. */
export function castTo(t: Tensor, dtype: DType): Tensor {
  if (t.dtype === dtype) return t;
  const out = empty(t.backend, t.shape, dtype);
  t.backend.run("cast", [t.buffer], [out.buffer], {});
  return out;
}

/** A 0-d tensor on `like`'s backend. */
export function scalarLike(value: number, like: Tensor, dtype: DType): Tensor {
  const out = empty(like.backend, [], dtype);
  if (value !== 0) like.backend.run("fill", [], [out.buffer], { value });
  return out;
}

/** Sums `g` over the axes that broadcasting stretched, giving a tensor of `shape`. */
export function unbroadcast(g: Tensor, shape: Shape): Tensor {
  if (sameShape(g.shape, shape)) return g.share();
  const lead = g.ndim - shape.length;
  if (lead < 0) {
    throw new Error(
      `unbroadcast: gradient ${fmtShape(g.shape)} has fewer dims than ${fmtShape(shape)}`,
    );
  }
  const axes: number[] = [];
  for (let i = 0; i < g.ndim; i++) {
    if (i < lead || (shape[i - lead] === 1 && g.shape[i] !== 1)) axes.push(i);
  }
  const summed = g.sum(axes, true);
  const out = summed.reshape(...shape);
  summed.dispose();
  return out;
}
