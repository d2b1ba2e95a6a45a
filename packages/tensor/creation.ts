/**
 * Creating tensors: from host data, constants, ranges and seeded random draws.
 *
 * @module
 */

import type { Backend } from "./backend/types.ts";
import { assertDType, type DType } from "./dtype.ts";
import { defaultRng, Rng } from "./random.ts";
import { getBackend } from "./runtime.ts";
import { assertShape, fmtShape, type Shape, sizeOf } from "./shape.ts";
import { type NestedArray, Tensor } from "./tensor.ts";

/** Options shared by the creation functions. */
export interface CreateOptions {
  /** Element type (default f32; `tensor()` infers bool from booleans). */
  dtype?: DType;
  /** Mark the result as a leaf that receives gradients. */
  requiresGrad?: boolean;
  /** Backend to allocate on (default: `getBackend()`). */
  backend?: Backend;
}

/** Options of {@link tensor}. */
export interface TensorOptions extends CreateOptions {
  /** Shape of flat `data`; inferred from nesting when omitted. */
  shape?: Shape;
}

/** Options of the random creation functions. */
export interface RandomOptions extends CreateOptions {
  /** Seed for this draw alone; without it the global generator (`manualSeed`) advances. */
  seed?: number;
}

/** Host values accepted by {@link tensor}: nested arrays, a flat (typed) array, or a number. */
export type HostData = NestedArray | ArrayLike<number>;

function inferShape(data: HostData): number[] {
  const shape: number[] = [];
  let cur: unknown = data;
  while (Array.isArray(cur) || ArrayBuffer.isView(cur)) {
    const arr = cur as ArrayLike<unknown>;
    shape.push(arr.length);
    if (!Array.isArray(cur)) break;
    cur = arr[0];
  }
  return shape;
}

function flatten(
  data: HostData,
  shape: readonly number[],
  out: number[],
  dim = 0,
  path = "data",
): void {
  if (dim === shape.length) {
    if (typeof data === "number") out.push(data);
    else if (typeof data === "boolean") out.push(data ? 1 : 0);
    else throw new TypeError(`tensor: ${path} should be a number, got ${JSON.stringify(data)}`);
    return;
  }
  if (ArrayBuffer.isView(data) && dim === shape.length - 1) {
    for (const v of Array.from(data as ArrayLike<number>)) out.push(Number(v));
    return;
  }
  if (!Array.isArray(data) || data.length !== shape[dim]) {
    throw new RangeError(
      `tensor: ragged nested array at ${path}: expected ${shape[dim]} entries to match shape ${
        fmtShape(shape)
      }`,
    );
  }
  data.forEach((v, i) => flatten(v as HostData, shape, out, dim + 1, `${path}[${i}]`));
}

function firstLeaf(data: HostData): unknown {
  let cur: unknown = data;
  while (Array.isArray(cur)) cur = cur[0];
  return cur;
}

function fromValues(
  values: ArrayLike<number>,
  shape: Shape,
  options: CreateOptions,
  dtype: DType,
): Tensor {
  const backend = options.backend ?? getBackend();
  const buffer = backend.alloc(sizeOf(shape), dtype);
  backend.write(buffer, values);
  const t = new Tensor({ backend, buffer, shape });
  if (options.requiresGrad) setRequiresGrad(t, "tensor");
  return t;
}

function setRequiresGrad(t: Tensor, op: string): void {
  if (t.dtype !== "f32") {
    throw new TypeError(
      `${op}: requiresGrad needs dtype f32, got ${t.dtype}; only float tensors have gradients`,
    );
  }
  t.requiresGrad = true;
}

/**
 * Creates a tensor from nested arrays, a flat array or typed array plus `shape`, or a number.
 *
 * @example Usage
 * ```ts
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const t = tensor([1, 2, 3, 4, 5, 6], { shape: [2, 3], dtype: "i32" });
 * assert.deepEqual(t.shape, [2, 3]);
 * assert.deepEqual(await t.toArray(), [[1, 2, 3], [4, 5, 6]]);
 * ```
 */
export function tensor(data: HostData, options: TensorOptions = {}): Tensor {
  const dtype = options.dtype ??
    (typeof firstLeaf(data) === "boolean"
      ? "bool"
      : ArrayBuffer.isView(data) && data instanceof Int32Array
      ? "i32"
      : "f32");
  assertDType(dtype, "tensor: options.dtype");
  let values: ArrayLike<number>;
  let shape: Shape;
  if (options.shape !== undefined) {
    assertShape(options.shape, "tensor");
    const flat: number[] = [];
    if (typeof data === "number" || typeof data === "boolean") flat.push(Number(data));
    else if (ArrayBuffer.isView(data)) values = data as ArrayLike<number>;
    else flatten(data as NestedArray, inferShape(data), flat);
    values ??= flat;
    shape = options.shape;
    if (values.length !== sizeOf(shape)) {
      throw new RangeError(
        `tensor: ${values.length} values cannot fill shape ${fmtShape(shape)} (${
          sizeOf(shape)
        } elements)`,
      );
    }
  } else {
    shape = inferShape(data);
    const flat: number[] = [];
    flatten(data, shape, flat);
    values = flat;
  }
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (dtype === "i32" && !Number.isInteger(v)) {
      throw new TypeError(
        `tensor: value ${v} at flat index ${i} is not an integer, but dtype is i32`,
      );
    }
  }
  return fromValues(values, shape, options, dtype);
}

/**
 * A tensor of `shape` filled with `value`.
 *
 * @example Usage
 * ```ts
 * import { full } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await full([2], 7).toArray(), [7, 7]);
 * ```
 */
export function full(shape: Shape, value: number, options: CreateOptions = {}): Tensor {
  assertShape(shape, "full");
  const dtype = options.dtype ?? "f32";
  assertDType(dtype, "full: options.dtype");
  const backend = options.backend ?? getBackend();
  const buffer = backend.alloc(sizeOf(shape), dtype);
  if (value !== 0) backend.run("fill", [], [buffer], { value });
  const t = new Tensor({ backend, buffer, shape });
  if (options.requiresGrad) setRequiresGrad(t, "full");
  return t;
}

/**
 * A tensor of zeros.
 *
 * @example Usage
 * ```ts
 * import { zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await zeros([2, 1]).toArray(), [[0], [0]]);
 * ```
 */
export function zeros(shape: Shape, options: CreateOptions = {}): Tensor {
  assertShape(shape, "zeros");
  return full(shape, 0, options);
}

/**
 * A tensor of ones.
 *
 * @example Usage
 * ```ts
 * import { ones } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await ones([3]).toArray(), [1, 1, 1]);
 * ```
 */
export function ones(shape: Shape, options: CreateOptions = {}): Tensor {
  assertShape(shape, "ones");
  return full(shape, 1, options);
}

/**
 * A tensor like `t` (shape, dtype, backend) filled with `value`.
 *
 * @example Usage
 * ```ts
 * import { fullLike, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await fullLike(tensor([1, 2]), 5).toArray(), [5, 5]);
 * ```
 */
export function fullLike(t: Tensor, value: number, options: CreateOptions = {}): Tensor {
  return full(t.shape, value, { dtype: t.dtype, backend: t.backend, ...options });
}

/**
 * `[start, start+step, ...)` up to `end` (exclusive); `arange(n)` is `0..n-1`.
 *
 * @example Usage
 * ```ts
 * import { arange } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await arange(4).toArray(), [0, 1, 2, 3]);
 * assert.deepEqual(await arange(1, 2, 0.25).toArray(), [1, 1.25, 1.5, 1.75]);
 * ```
 */
export function arange(start: number, end?: number, step = 1, options: CreateOptions = {}): Tensor {
  if (end === undefined) [start, end] = [0, start];
  if (step === 0 || !Number.isFinite(step)) {
    throw new RangeError(`arange: step must be finite and non-zero, got ${step}`);
  }
  const n = Math.max(0, Math.ceil((end - start) / step));
  const values = Array.from({ length: n }, (_, i) => start + i * step);
  const dtype = options.dtype ??
    (values.every(Number.isInteger) && Number.isInteger(step) ? "i32" : "f32");
  return fromValues(values, [n], options, dtype);
}

function randomTensor(
  shape: Shape,
  options: RandomOptions,
  op: string,
  draw: (r: Rng) => number,
): Tensor {
  assertShape(shape, op);
  const rng = options.seed !== undefined ? new Rng(options.seed) : defaultRng();
  const values = new Float64Array(sizeOf(shape));
  for (let i = 0; i < values.length; i++) values[i] = draw(rng);
  return fromValues(values, shape, options, options.dtype ?? "f32");
}

/**
 * Standard-normal samples, reproducible under `seed` or `manualSeed`.
 *
 * @example Usage
 * ```ts
 * import { randn } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const a = await randn([4], { seed: 3 }).toArray();
 * assert.deepEqual(await randn([4], { seed: 3 }).toArray(), a);
 * ```
 */
export function randn(shape: Shape, options: RandomOptions = {}): Tensor {
  return randomTensor(shape, options, "randn", (r) => r.normal());
}

/**
 * Uniform samples in `[low, high)` (default `[0, 1)`).
 *
 * @example Usage
 * ```ts
 * import { rand } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const v = (await rand([100], { seed: 1, low: -1, high: 1 }).data());
 * assert.ok(v.every((x) => x >= -1 && x < 1));
 * ```
 */
export function rand(
  shape: Shape,
  options: RandomOptions & { low?: number; high?: number } = {},
): Tensor {
  const low = options.low ?? 0;
  const high = options.high ?? 1;
  return randomTensor(shape, options, "rand", (r) => low + (high - low) * r.uniform());
}

/**
 * Uniform integers in `[low, high)` as i32.
 *
 * @example Usage
 * ```ts
 * import { randint } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const t = randint(0, 5, [10], { seed: 2 });
 * assert.equal(t.dtype, "i32");
 * ```
 */
export function randint(
  low: number,
  high: number,
  shape: Shape,
  options: RandomOptions = {},
): Tensor {
  if (!Number.isInteger(low) || !Number.isInteger(high) || high <= low) {
    throw new RangeError(`randint: need integers low < high, got low=${low} high=${high}`);
  }
  return randomTensor(
    shape,
    { ...options, dtype: "i32" },
    "randint",
    (r) => low + r.int(high - low),
  );
}
