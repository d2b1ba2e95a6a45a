/**
 * The Tensor: a shape, a dtype and a reference-counted buffer on one backend, plus the autograd
 * fields `requiresGrad`, `grad` and `gradFn`.
 *
 * Tensors are immutable values: ops return new tensors (only optimizers update parameters in
 * place). Reads are async (`await t.toArray()`, `await t.item()`) because a GPU backend must
 * copy back; ops are synchronous and only enqueue work. Views share a buffer by reference count
 * so that `reshape` is free and a tensor saved for backward outlives the caller's handle.
 *
 * @module
 */

import type { Backend, BufferHandle, HostArray } from "./backend/types.ts";
import type { DType } from "./dtype.ts";
import { fmtShape, type Shape, sizeOf } from "./shape.ts";
import { track } from "./runtime.ts";
import type { GradNode } from "./autograd.ts";
import { backward as runBackward } from "./autograd.ts";
import * as ew from "./ops/elementwise.ts";
import * as red from "./ops/reduce.ts";
import * as sh from "./ops/shape.ts";
import * as sm from "./ops/softmax.ts";
import * as ix from "./ops/index.ts";
import { matmul, type MatmulOptions } from "./ops/matmul.ts";

/** A nested array of numbers or booleans, as `toArray()` returns and `tensor()` accepts. */
export type NestedArray = number | boolean | readonly NestedArray[];

/** A buffer shared by views; freed when the last view is disposed. */
class Storage {
  refs = 1;
  constructor(readonly backend: Backend, readonly buffer: BufferHandle) {}
  release(): void {
    if (--this.refs === 0) this.backend.free(this.buffer);
  }
}

/** Construction arguments of {@link Tensor} (low level: prefer `tensor()`, `zeros()` ...). */
export interface TensorInit {
  /** Backend that owns `buffer`. */
  backend: Backend;
  /** A buffer of `sizeOf(shape)` elements of `dtype`; the tensor takes ownership. */
  buffer: BufferHandle;
  /** Shape of the tensor. */
  shape: Shape;
}

/**
 * An n-dimensional array on a backend, with reverse-mode autograd.
 *
 * @example Usage
 * ```ts
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const x = tensor([[1, 2], [3, 4]], { requiresGrad: true });
 * const loss = x.mul(x).sum();
 * loss.backward();
 * assert.deepEqual(await x.grad!.toArray(), [[2, 4], [6, 8]]);
 * ```
 */
export class Tensor {
  /** Dimensions, outermost first; `[]` for a scalar. */
  readonly shape: readonly number[];
  /** Element type. */
  readonly dtype: DType;
  /** Backend whose buffer holds the values. */
  readonly backend: Backend;
  /** Whether gradients flow to this tensor. Set it on leaves (parameters) only. */
  requiresGrad = false;
  /** Accumulated gradient of a leaf after `backward()`; `null` before. */
  grad: Tensor | null = null;
  /** The autograd node that produced this tensor, or `null` for leaves and untracked results. */
  gradFn: GradNode | null = null;
  #storage: Storage | null;

  /**
   * Wraps a buffer; the tensor owns it from now on. With `sharing`, the new tensor is a view
   * of that tensor's buffer instead (reference counted).
   */
  constructor(init: TensorInit, sharing?: Tensor) {
    if (init.buffer.size !== sizeOf(init.shape)) {
      throw new RangeError(
        `Tensor: buffer of ${init.buffer.size} elements cannot have shape ${fmtShape(init.shape)}`,
      );
    }
    this.shape = Object.freeze([...init.shape]);
    this.dtype = init.buffer.dtype;
    this.backend = init.backend;
    if (sharing !== undefined) {
      const storage = sharing.#storage;
      if (storage === null || storage.buffer !== init.buffer) {
        throw new Error("Tensor: can only share the live buffer of the tensor passed as `sharing`");
      }
      storage.refs++;
      this.#storage = storage;
    } else {
      this.#storage = new Storage(init.backend, init.buffer);
    }
    track(this);
  }

  /** Number of elements. */
  get size(): number {
    return sizeOf(this.shape);
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  /** True once `dispose()` was called. */
  get isDisposed(): boolean {
    return this.#storage === null;
  }

  /**
   * True while another live tensor shares this one's buffer (a view made by `share`/`reshape`,
   * or a copy saved for backward), so writing the buffer in place would change that one too.
   *
   * @example Usage
   * ```ts
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const x = tensor([1, 2]);
   * assert.equal(x.isShared, false);
   * const v = x.reshape(2, 1);
   * assert.equal(x.isShared, true);
   * v.dispose();
   * assert.equal(x.isShared, false);
   * ```
   */
  get isShared(): boolean {
    return this.#storage !== null && this.#storage.refs > 1;
  }

  /** The backend buffer (shared with views); throws after `dispose()`. */
  get buffer(): BufferHandle {
    if (this.#storage === null) {
      throw new Error(`Tensor ${fmtShape(this.shape)} ${this.dtype} was used after dispose()`);
    }
    return this.#storage.buffer;
  }

  /**
   * A new tensor object over the same buffer with another shape of equal size (no copy).
   * Used by `reshape` and to save tensors for backward.
   */
  share(shape: Shape = this.shape): Tensor {
    return new Tensor({ backend: this.backend, buffer: this.buffer, shape }, this);
  }

  /** Releases this handle's reference to the buffer, its gradient and its autograd node. */
  dispose(): void {
    if (this.#storage === null) return;
    this.#storage.release();
    this.#storage = null;
    this.grad?.dispose();
    this.grad = null;
    this.gradFn?.release();
    this.gradFn = null;
  }

  /** `using t = ...` disposes at the end of the block. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /** Copies the values to the host as a flat typed array. */
  data(): Promise<HostArray> {
    return this.backend.read(this.buffer);
  }

  /** Copies the values to the host as nested arrays (booleans for `bool`). */
  async toArray(): Promise<NestedArray> {
    const flat = await this.data();
    const asValue = this.dtype === "bool" ? (v: number) => v !== 0 : (v: number) => v;
    const build = (dim: number, offset: number): NestedArray => {
      if (dim === this.shape.length) return asValue(flat[offset]!);
      const inner = sizeOf(this.shape.slice(dim + 1));
      return Array.from({ length: this.shape[dim]! }, (_, i) => build(dim + 1, offset + i * inner));
    };
    return build(0, 0);
  }

  /** The single value of a one-element tensor. */
  async item(): Promise<number> {
    if (this.size !== 1) {
      throw new RangeError(
        `item: tensor of shape ${fmtShape(this.shape)} has ${this.size} elements, not 1`,
      );
    }
    return (await this.data())[0]!;
  }

  /**
   * Back-propagates from this tensor, accumulating into `.grad` of every leaf that requires grad.
   * A non-scalar tensor needs the upstream `gradient` of its shape.
   */
  backward(gradient?: Tensor): void {
    runBackward(this, gradient);
  }

  /** A tensor sharing the values but cut from the graph. */
  detach(): Tensor {
    return this.share();
  }

  /** Short description for logs. */
  toString(): string {
    return `Tensor(${fmtShape(this.shape)}, ${this.dtype}, ${this.backend.name}${
      this.requiresGrad ? ", requiresGrad" : ""
    })`;
  }

  // ---- elementwise (see ops/elementwise.ts) ----
  /** `this + other`, broadcasting. */
  add(other: Tensor | number): Tensor {
    return ew.add(this, other);
  }
  /** `this − other`, broadcasting. */
  sub(other: Tensor | number): Tensor {
    return ew.sub(this, other);
  }
  /** `this · other`, broadcasting. */
  mul(other: Tensor | number): Tensor {
    return ew.mul(this, other);
  }
  /** `this / other`, broadcasting. */
  div(other: Tensor | number): Tensor {
    return ew.div(this, other);
  }
  /** `this ^ other`, broadcasting. */
  pow(other: Tensor | number): Tensor {
    return ew.pow(this, other);
  }
  /** `−this`. */
  neg(): Tensor {
    return ew.neg(this);
  }
  /** `eˣ`. */
  exp(): Tensor {
    return ew.exp(this);
  }
  /** Natural log. */
  log(): Tensor {
    return ew.log(this);
  }
  /** Square root. */
  sqrt(): Tensor {
    return ew.sqrt(this);
  }
  /** `1/√x`. */
  rsqrt(): Tensor {
    return ew.rsqrt(this);
  }
  /** Absolute value. */
  abs(): Tensor {
    return ew.abs(this);
  }
  /** `x²`. */
  square(): Tensor {
    return ew.square(this);
  }
  /** Hyperbolic tangent. */
  tanh(): Tensor {
    return ew.tanh(this);
  }
  /** Logistic sigmoid. */
  sigmoid(): Tensor {
    return ew.sigmoid(this);
  }
  /** `max(x, 0)`. */
  relu(): Tensor {
    return ew.relu(this);
  }
  /** `x · sigmoid(x)`. */
  silu(): Tensor {
    return ew.silu(this);
  }
  /** GELU, tanh approximation. */
  gelu(): Tensor {
    return ew.gelu(this);
  }
  /** Clamps into `[min, max]` (either bound may be omitted). */
  clamp(min?: number | Tensor, max?: number | Tensor): Tensor {
    return ew.clamp(this, min, max);
  }
  /** Elementwise minimum. */
  minimum(other: Tensor | number): Tensor {
    return ew.minimum(this, other);
  }
  /** Elementwise maximum. */
  maximum(other: Tensor | number): Tensor {
    return ew.maximum(this, other);
  }
  /** `this == other` as bool. */
  eq(other: Tensor | number): Tensor {
    return ew.eq(this, other);
  }
  /** `this != other` as bool. */
  ne(other: Tensor | number): Tensor {
    return ew.ne(this, other);
  }
  /** `this < other` as bool. */
  lt(other: Tensor | number): Tensor {
    return ew.lt(this, other);
  }
  /** `this <= other` as bool. */
  le(other: Tensor | number): Tensor {
    return ew.le(this, other);
  }
  /** `this > other` as bool. */
  gt(other: Tensor | number): Tensor {
    return ew.gt(this, other);
  }
  /** `this >= other` as bool. */
  ge(other: Tensor | number): Tensor {
    return ew.ge(this, other);
  }
  /** Sets elements where `mask` is true to `value`. */
  maskedFill(mask: Tensor, value: number): Tensor {
    return ew.maskedFill(this, mask, value);
  }
  /** Converts to another dtype (no gradient through casts to i32/bool). */
  cast(dtype: DType): Tensor {
    return ew.cast(this, dtype);
  }

  // ---- reductions (see ops/reduce.ts) ----
  /** Sum over `axis` (all when omitted). */
  sum(axis?: number | readonly number[], keepdim = false): Tensor {
    return red.sum(this, axis, keepdim);
  }
  /** Mean over `axis` (all when omitted). */
  mean(axis?: number | readonly number[], keepdim = false): Tensor {
    return red.mean(this, axis, keepdim);
  }
  /** Maximum over `axis` (all when omitted). */
  max(axis?: number | readonly number[], keepdim = false): Tensor {
    return red.max(this, axis, keepdim);
  }
  /** Minimum over `axis` (all when omitted). */
  min(axis?: number | readonly number[], keepdim = false): Tensor {
    return red.min(this, axis, keepdim);
  }
  /** Variance over `axis` with `correction` (1 = unbiased, like torch). */
  var(axis?: number | readonly number[], options: red.VarOptions = {}): Tensor {
    return red.variance(this, axis, options);
  }
  /** Index of the maximum along `axis` (i32, no gradient). */
  argmax(axis = -1, keepdim = false): Tensor {
    return red.argmax(this, axis, keepdim);
  }
  /** Softmax along `axis`. */
  softmax(axis = -1): Tensor {
    return sm.softmax(this, axis);
  }
  /** Log-softmax along `axis`. */
  logSoftmax(axis = -1): Tensor {
    return sm.logSoftmax(this, axis);
  }
  /** Log-sum-exp along `axis`. */
  logsumexp(axis = -1, keepdim = false): Tensor {
    return sm.logsumexp(this, axis, keepdim);
  }
  /** Inclusive cumulative sum along `axis`. */
  cumsum(axis = -1): Tensor {
    return red.cumsum(this, axis);
  }

  // ---- linear algebra ----
  /** Batched matrix product (see {@link matmul}). */
  matmul(other: Tensor, options?: MatmulOptions): Tensor {
    return matmul(this, other, options);
  }

  // ---- shape (see ops/shape.ts) ----
  /** Same values, new shape (one dimension may be −1). No copy. */
  reshape(...shape: number[]): Tensor {
    return sh.reshape(this, shape);
  }
  /** Alias of {@link Tensor.reshape}. */
  view(...shape: number[]): Tensor {
    return sh.reshape(this, shape);
  }
  /** Swaps two axes (default: the last two). */
  transpose(a = -2, b = -1): Tensor {
    return sh.transpose(this, a, b);
  }
  /** Reorders axes. */
  permute(...axes: number[]): Tensor {
    return sh.permute(this, axes);
  }
  /** `length` elements from `start` along `axis`. */
  narrow(axis: number, start: number, length: number): Tensor {
    return sh.narrow(this, axis, start, length);
  }
  /** Python-style slices per axis: `[start, end]` pairs, `null` keeps an axis whole. */
  slice(...ranges: (readonly [number, number] | null)[]): Tensor {
    return sh.slice(this, ranges);
  }
  /** Removes an axis of size 1 (all of them when omitted). */
  squeeze(axis?: number): Tensor {
    return sh.squeeze(this, axis);
  }
  /** Inserts an axis of size 1. */
  unsqueeze(axis: number): Tensor {
    return sh.unsqueeze(this, axis);
  }
  /** Flattens axes `start..end` into one. */
  flatten(start = 0, end = -1): Tensor {
    return sh.flatten(this, start, end);
  }
  /** Broadcasts to `shape` (materialised copy). */
  expand(...shape: number[]): Tensor {
    return sh.expand(this, shape);
  }

  // ---- indexing (see ops/index.ts) ----
  /** `out[..., j] = this[..., index[..., j]]` along `axis` (default last). */
  gather(index: Tensor, axis = -1): Tensor {
    return ix.gather(this, index, axis);
  }
  /** Selects entries of `axis` by a 1-D i32 index. */
  indexSelect(axis: number, index: Tensor): Tensor {
    return ix.indexSelect(this, axis, index);
  }
}
