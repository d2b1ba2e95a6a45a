/**
 * Shared pieces of every WGSL kernel: the kernel-builder types, the storage type of each dtype,
 * the binding and params declarations, the entry-point signature, and a small library of math
 * helpers that reproduce the CPU oracle's JavaScript semantics.
 *
 * Design decisions:
 * - **Every dtype is stored as one 32-bit word**: f32 as `f32`, i32 as `i32`, bool as `u32`
 *   holding 0/1 (WGSL has no 8-bit storage type, and packing four bools per word would make
 *   every bool write a read-modify-write race). `read()` converts bool back to a `Uint8Array`.
 * - **Geometry goes in a params uniform**, not into the shader source: a shader is specialised
 *   only on the op and the dtypes, so one compiled pipeline serves every shape. Params are 32-bit
 *   words (`pu`/`pi`/`pf` read a word as u32/i32/f32) in a `array<vec4<u32>, 32>` uniform (128
 *   words; the largest kernel, `where` on 8 dims, needs 34).
 * - **Workgroup grids are flat**: a kernel asks for `groups` workgroups and the runtime folds
 *   that count into a 2-D grid under `maxComputeWorkgroupsPerDimension`; shaders rebuild the flat
 *   id as `wid = wg.x + wg.y * nwg.x` and guard against the few spare workgroups of the fold.
 * - **NaN and infinity are handled with bit tests**, never `x != x` or `max()`: the software
 *   adapter's shader compiler (and WGSL itself) may assume finite math, and the CPU oracle's
 *   NaN rules (NaN propagates through max/min, `0 · ∞` skipped in matmul) must hold on the GPU.
 *   NaN and ±Infinity constants come from `var<private>` bit patterns, which are not
 *   const-expressions (a const NaN is a shader-creation error).
 *
 * @module
 */

import type { DType } from "../../../dtype.ts";
import type { KernelName, KernelParams } from "../../types.ts";
import type { MatmulVariant } from "./matmul.ts";

/** How a kernel binds a storage buffer. */
export type Access = "read" | "read_write";

/** A compiled-once WGSL program: bindings `0..access.length−1` are storage, the next is params. */
export interface ShaderSpec {
  /** Short name for debug output and error messages. */
  readonly label: string;
  /** Complete WGSL source with a `main` entry point. */
  readonly code: string;
  /** Access mode of each storage binding, in binding order. */
  readonly access: readonly Access[];
}

/** A buffer as a kernel sees it. */
export interface GpuBinding {
  /** The GPU buffer (its capacity may exceed `bytes`). */
  readonly buffer: GPUBuffer;
  /** Elements of the tensor. */
  readonly size: number;
  /** Element type. */
  readonly dtype: DType;
  /** Bytes bound: `max(4, 4 · size)`. */
  readonly bytes: number;
}

/** One dispatch a kernel asks the runtime to encode. */
export interface DispatchSpec {
  /** Program to run. */
  readonly shader: ShaderSpec;
  /** Buffers for the storage bindings, in binding order. */
  readonly bindings: readonly GpuBinding[];
  /** Words of the params uniform. */
  readonly params: Uint32Array<ArrayBuffer>;
  /** Number of workgroups (flat; 0 skips the dispatch). */
  readonly groups: number;
}

/** Backend settings a kernel builder may consult (so far only the forced matmul variant). */
export interface KernelContext {
  /** The matmul variant to run, or `"auto"` to choose by shape. */
  readonly matmulVariant: MatmulVariant | "auto";
}

/** A GPU kernel: turns buffers and catalogue params into dispatches. */
export type GpuKernel<K extends KernelName> = (
  inputs: readonly GpuBinding[],
  outputs: readonly GpuBinding[],
  params: KernelParams[K],
  ctx?: KernelContext,
) => DispatchSpec[];

/** Maximum number of params words (the uniform is `array<vec4<u32>, 32>`). */
export const MAX_PARAM_WORDS = 128;

/** Bytes of the params uniform buffer. */
export const PARAM_BYTES = MAX_PARAM_WORDS * 4;

/** WGSL storage element type of a dtype. */
export function storageType(dtype: DType): "f32" | "i32" | "u32" {
  return dtype === "f32" ? "f32" : dtype === "i32" ? "i32" : "u32";
}

const f32Scratch = new Float32Array(1);
const u32OfF32 = new Uint32Array(f32Scratch.buffer);

/** Builds the params words of one dispatch. */
export class Params {
  readonly #words: number[] = [];

  /** Appends an unsigned integer (must be in `[0, 2³²)`). */
  u32(v: number): this {
    if (!(Number.isInteger(v) && v >= 0 && v < 2 ** 32)) {
      throw new RangeError(`webgpu params: ${v} is not a u32`);
    }
    this.#words.push(v);
    return this;
  }

  /** Appends a signed integer (must be in `[−2³¹, 2³¹)`). */
  i32(v: number): this {
    if (!(Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31)) {
      throw new RangeError(`webgpu params: ${v} is not an i32`);
    }
    this.#words.push(v >>> 0);
    return this;
  }

  /** Appends a float, rounded to f32. */
  f32(v: number): this {
    f32Scratch[0] = v;
    this.#words.push(u32OfF32[0]!);
    return this;
  }

  /** Appends a raw 32-bit word. */
  bits(v: number): this {
    this.#words.push(v >>> 0);
    return this;
  }

  /** Appends `values`, padded with zeros to `length` words, as i32. */
  i32s(values: readonly number[], length: number): this {
    for (let i = 0; i < length; i++) this.i32(values[i] ?? 0);
    return this;
  }

  /** The words, checked against the uniform's size. */
  finish(): Uint32Array<ArrayBuffer> {
    if (this.#words.length > MAX_PARAM_WORDS) {
      throw new RangeError(`webgpu params: ${this.#words.length} words exceed ${MAX_PARAM_WORDS}`);
    }
    return Uint32Array.from(this.#words);
  }
}

/** A storage binding declaration: name, access and WGSL element type. */
export interface BindingDecl {
  /** WGSL variable name. */
  readonly name: string;
  /** Access mode. */
  readonly access: Access;
  /** Element type (`f32`, `i32` or `u32`). */
  readonly type: string;
}

/** Math helpers with the CPU oracle's semantics (see the module doc). */
export const HELPERS = /* wgsl */ `
var<private> NAN_BITS: u32 = 0x7fc00000u;
var<private> INF_BITS: u32 = 0x7f800000u;
var<private> NEG_INF_BITS: u32 = 0xff800000u;
fn nan_f() -> f32 { return bitcast<f32>(NAN_BITS); }
fn inf_f() -> f32 { return bitcast<f32>(INF_BITS); }
fn neg_inf_f() -> f32 { return bitcast<f32>(NEG_INF_BITS); }
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_neg_inf(x: f32) -> bool { return bitcast<u32>(x) == 0xff800000u; }
fn is_pos_inf(x: f32) -> bool { return bitcast<u32>(x) == 0x7f800000u; }
// ±0 by its bits: x != 0.0 may compile to an ordered compare, which is false for NaN.
fn is_zero(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0u; }
// JavaScript truthiness of a number: not 0, -0 or NaN.
fn truthy_f(x: f32) -> bool {
  let b = bitcast<u32>(x) & 0x7fffffffu;
  return b != 0u && b <= 0x7f800000u;
}
// JavaScript ToInt32 (what an Int32Array store does): truncate, NaN/±Inf -> 0, wrap mod 2^32.
fn to_i32(x: f32) -> i32 {
  let bits = bitcast<u32>(x);
  let e = i32((bits >> 23u) & 0xffu) - 127;
  if (e < 31) { return i32(x); }
  if (e == 128) { return 0; }
  let m = (bits & 0x7fffffu) | 0x800000u;
  let sh = e - 23;
  var u = 0u;
  if (sh < 32) { u = m << u32(sh); }
  if ((bits >> 31u) == 1u) { u = ~u + 1u; }
  return bitcast<i32>(u);
}
// Math.max / Math.min with NaN propagation.
fn max_nan(a: f32, b: f32) -> f32 {
  if (is_nan(a) || is_nan(b)) { return nan_f(); }
  return select(b, a, a > b);
}
fn min_nan(a: f32, b: f32) -> f32 {
  if (is_nan(a) || is_nan(b)) { return nan_f(); }
  return select(b, a, a < b);
}
// tanh without inf/inf for large |x| and without cancellation near 0.
fn tanh_s(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let a = abs(x);
  if (a < 0.125) {
    let x2 = x * x;
    return x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0 + x2 * (62.0 / 2835.0)))));
  }
  let e = exp(-2.0 * a);
  let t = (1.0 - e) / (1.0 + e);
  return select(t, -t, x < 0.0);
}
fn sigmoid_s(x: f32) -> f32 {
  if (x >= 0.0) { return 1.0 / (1.0 + exp(-x)); }
  let e = exp(x);
  return e / (1.0 + e);
}
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const GELU_C: f32 = 0.044715;
fn gelu_s(x: f32) -> f32 {
  return 0.5 * x * (1.0 + tanh_s(SQRT_2_OVER_PI * (x + GELU_C * x * x * x)));
}
// Math.pow: negative bases with integer exponents, x^0 = 1, NaN rules of JavaScript.
fn pow_js(x: f32, y: f32) -> f32 {
  if (y == 0.0) { return 1.0; }
  if (is_nan(x) || is_nan(y)) { return nan_f(); }
  if (x == 0.0) {
    if (y > 0.0) { return 0.0; }
    return inf_f();
  }
  let r = exp2(y * log2(abs(x)));
  if (x > 0.0) { return r; }
  if (fract(y) != 0.0) { return nan_f(); }
  let ay = abs(y);
  if (ay < 16777216.0 && (u32(ay) & 1u) == 1u) { return -r; }
  return r;
}
// Integer Math.pow, as an Int32Array stores it (wrapping).
fn pow_i(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(1, -1, (b & 1) != 0); }
    return 0;
  }
  var r = 1;
  var base = a;
  var e = b;
  loop {
    if (e == 0) { break; }
    if ((e & 1) != 0) { r = r * base; }
    base = base * base;
    e = e >> 1;
  }
  return r;
}
`;

/**
 * A complete shader: storage bindings, the params uniform, the helpers, `body` (module-scope
 * declarations and functions) and a `main` entry point of workgroup size `wg` whose code is
 * `main`. Inside `main`: `wid` (flat workgroup id), `li` (local invocation index), and
 * `pu(i)`/`pi(i)`/`pf(i)` read params word i.
 */
export function shader(
  label: string,
  bindings: readonly BindingDecl[],
  wg: number,
  main: string,
  body = "",
): ShaderSpec {
  const decls = bindings.map((b, i) =>
    `@group(0) @binding(${i}) var<storage, ${b.access}> ${b.name}: array<${b.type}>;`
  );
  const code = `// kernel ${label}
${decls.join("\n")}
@group(0) @binding(${bindings.length}) var<uniform> P: array<vec4<u32>, ${MAX_PARAM_WORDS / 4}>;
fn pu(i: u32) -> u32 { return P[i >> 2u][i & 3u]; }
fn pi(i: u32) -> i32 { return bitcast<i32>(pu(i)); }
fn pf(i: u32) -> f32 { return bitcast<f32>(pu(i)); }
${HELPERS}
const WG: u32 = ${wg}u;
${body}
@compute @workgroup_size(${wg})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let wid = wg.x + wg.y * nwg.x;
${main}
}
`;
  return { label, code, access: bindings.map((b) => b.access) };
}

/** Memoises shader builders by key, so each variant's source is built once. */
export function memo<A extends unknown[]>(
  build: (...args: A) => ShaderSpec,
): (...args: A) => ShaderSpec {
  const cache = new Map<string, ShaderSpec>();
  return (...args: A) => {
    const key = JSON.stringify(args);
    let s = cache.get(key);
    if (s === undefined) {
      s = build(...args);
      cache.set(key, s);
    }
    return s;
  };
}

/** Workgroups needed for `n` invocations at `wg` per workgroup. */
export function groupsFor(n: number, wg: number): number {
  return Math.ceil(n / wg);
}

/** Declares a storage binding. */
export function bind(name: string, access: Access, dtype: DType | "u32"): BindingDecl {
  return { name, access, type: dtype === "u32" ? "u32" : storageType(dtype) };
}

/**
 * WGSL for a workgroup tree reduction of `f32` over `WG` lanes with combine expression
 * `combine` (in terms of `a` and `b`). Declares `red_<name>` shared memory and
 * `fn wg_<name>(v: f32, li: u32) -> f32`; call it from uniform control flow only.
 */
export function wgReduce(name: string, combine: string, type = "f32"): string {
  return `
var<workgroup> red_${name}: array<${type}, WG>;
fn wg_${name}(v: ${type}, li: u32) -> ${type} {
  red_${name}[li] = v;
  workgroupBarrier();
  var s = WG / 2u;
  loop {
    if (s == 0u) { break; }
    if (li < s) {
      let a = red_${name}[li];
      let b = red_${name}[li + s];
      red_${name}[li] = ${combine};
    }
    workgroupBarrier();
    s = s >> 1u;
  }
  let r = red_${name}[0];
  workgroupBarrier();
  return r;
}
`;
}

/**
 * WGSL of `fn row_lse(base: u32, n: u32, li: u32) -> f32`, the CPU oracle's `lseRow` over
 * `X[base .. base + n)`: max with NaN propagation, then `m + log Σ exp(x − m)`, returning `m`
 * itself when it is −Infinity or NaN and +Infinity when it is +Infinity. Needs the binding `X`
 * and the reductions `wg_max` and `wg_sum` (see {@link LSE_REDUCTIONS}).
 */
export const ROW_LSE = `
fn row_lse(base: u32, n: u32, li: u32) -> f32 {
  var m = neg_inf_f();
  for (var j = li; j < n; j += WG) { m = max_nan(m, X[base + j]); }
  m = wg_max(m, li);
  var s = 0.0;
  let finite = !(is_nan(m) || is_neg_inf(m) || is_pos_inf(m));
  if (finite) {
    for (var j = li; j < n; j += WG) { s += exp(X[base + j] - m); }
  }
  s = wg_sum(s, li);
  return select(m, m + log(s), finite);
}
`;

/** The two reductions {@link ROW_LSE} needs. */
export const LSE_REDUCTIONS = wgReduce("max", "max_nan(a, b)") + wgReduce("sum", "a + b");
