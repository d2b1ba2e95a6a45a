/**
 * WebAssembly SIMD versions of CPU pointwise kernels that give the TypeScript kernels' bits:
 * AdamW (`../cpu/adamw.ts`) and the activations `silu`, `sigmoid` (unary) and `silu_backward`
 * (binary) of `../cpu/elementwise.ts`.
 *
 * Design decisions:
 * - **Same bits, not "close"**: `pointwise.wat` computes each element with the TypeScript
 *   kernel's float64 operations in its order (JavaScript numbers are float64), two lanes at a
 *   time; IEEE add, mul, div and sqrt are exactly rounded, so nothing a run computes changes when
 *   this path is taken or not (checkpoints, records and tests stay bit for bit). The gain is the
 *   SIMD divide and square root: AdamW is bound by them, not by memory.
 * - **exp by correct rounding, with a fallback**: the activations need `Math.exp`, which is not an
 *   IEEE operation. In the V8 this runs on (15.0, Deno 2.9.6) it is LLVM libc's exp, which rounds
 *   correctly, so any correctly rounded exp has its bits: the wasm one computes e^x with ~2^-67
 *   error and proves, lane by lane, that its double is the correctly rounded one (Ziv's test). The
 *   few elements it cannot vouch for (2 to 5 in 10^4, and |x| > 708, ±inf, NaN) are listed by
 *   the wasm and computed again by the TypeScript kernel. Older engines' `Math.exp` (fdlibm, not
 *   correctly rounded) would not match, so {@link WasmPointwise.create} probes `Math.exp` and,
 *   where it differs, leaves the activations to the TypeScript kernels
 *   ({@link WasmPointwise.exactExp}).
 * - **Blocks through a small private memory**: the backend's buffers are JavaScript typed arrays,
 *   so each block of {@link POINTWISE_BLOCK} values is copied in (`TypedArray.set`, a memcpy),
 *   updated, and copied out while it is still in cache; the memory stays at a few pages.
 * - **Everything else falls back**: other ops, dtypes and broadcast strides run the TypeScript
 *   kernels, so the backend can route every `unary`/`binary` call through this class.
 * - **One thread**: the copies are on the calling thread anyway, and splitting the arithmetic of
 *   a block over the matmul's workers would cost a wake-up per block.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";
import { adamw as adamwTs } from "../cpu/adamw.ts";
import { binary as binaryTs, unary as unaryTs } from "../cpu/elementwise.ts";
import { POINTWISE_WASM } from "./pointwise_wasm_bytes.ts";

/**
 * Values per array in one block (four arrays of 32-bit values are in the memory at once: 128 KiB,
 * which stays in L2 from copy-in to copy-out).
 *
 * @example Usage
 * ```ts
 * import { POINTWISE_BLOCK } from "./pointwise.ts";
 * import assert from "node:assert/strict";
 * assert.equal(POINTWISE_BLOCK % 2, 0);
 * ```
 */
export const POINTWISE_BLOCK = 8192;

interface Exports {
  adamw: (
    g: number,
    p: number,
    m: number,
    v: number,
    n: number,
    b1: number,
    c1: number,
    b2: number,
    c2: number,
    bc1: number,
    bc2: number,
    eps: number,
    lr: number,
    wd: number,
  ) => void;
  /** Each returns how many element indices it listed at `bad` (outputs to compute again). */
  exp: (x: number, y: number, bad: number, n: number) => number;
  sigmoid: (x: number, y: number, bad: number, n: number) => number;
  silu: (x: number, y: number, bad: number, n: number) => number;
  silu_backward: (x: number, dy: number, dx: number, bad: number, n: number) => number;
  /** First byte after the module's table of 2^(j/128): the arrays start there. */
  heap_base: WebAssembly.Global;
}

/** Whether `strides` address a row-major array of `shape` (size-1 axes may have any stride). */
function contiguous(shape: readonly number[], strides: readonly number[]): boolean {
  let stride = 1;
  for (let ax = shape.length - 1; ax >= 0; ax--) {
    const d = shape[ax]!;
    if (d !== 1 && strides[ax] !== stride) return false;
    stride *= d;
  }
  return true;
}

/**
 * Whether the module's exp gives `Math.exp`'s bits here: compared on three values where fdlibm's
 * exp (V8 before LLVM libc) is an ulp off, and on 4096 values spread over [-708, 708] of which it
 * gets 432 wrong.
 */
function probeExp(wp: WasmPointwise): boolean {
  const x = new Float64Array(4096 + 3);
  x.set([0.3465735912322998, -0.34657359123229986, -1.0397205352783205]);
  let s = 0x2545f491;
  for (let i = 3; i < x.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    x[i] = (s / 2 ** 32 - 0.5) * 1416 * (i & 1 ? 1 : 2 ** -(i % 12));
  }
  const y = new Float64Array(x.length);
  wp.exp(x, y);
  return x.every((v, i) => Object.is(y[i], Math.exp(v)));
}

/** {@link WasmPointwise.shared}'s instance (null: no SIMD), made on first use. */
let shared: WasmPointwise | null | undefined;

/**
 * The compiled `pointwise.wat` with its memory.
 *
 * @example Usage
 * ```ts
 * import { WasmPointwise } from "./pointwise.ts";
 * import { adamw } from "../cpu/adamw.ts";
 * import assert from "node:assert/strict";
 * const wp = WasmPointwise.create();
 * if (wp !== null) {
 *   const p = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, bc1: 0.1, bc2: 0.001 };
 *   const g = new Float32Array([0.5, -1, 2]);
 *   const a = [new Float32Array([1, 2, 3]), new Float32Array(3), new Float32Array(3)];
 *   const b = a.map((x) => x.slice());
 *   wp.adamw([g], a, p);
 *   adamw([g], b, p);
 *   assert.deepEqual(a, b); // the TypeScript kernel's bits
 * }
 * ```
 */
export class WasmPointwise {
  readonly #exports: Exports;
  readonly #f32: Float32Array;
  readonly #f64: Float64Array;
  readonly #i32: Int32Array;
  /** Byte address of the first array. */
  readonly #base: number;
  /**
   * Whether `Math.exp` here is the correctly rounded exp the wasm one reproduces, so that `silu`,
   * `sigmoid` and `silu_backward` run in wasm (they run the TypeScript kernels otherwise).
   */
  readonly exactExp: boolean;

  private constructor(exports: Exports, memory: WebAssembly.Memory) {
    this.#exports = exports;
    this.#base = exports.heap_base.value as number;
    const pages = Math.ceil((this.#base + 4 * 4 * POINTWISE_BLOCK) / 65536);
    if (memory.buffer.byteLength < pages * 65536) {
      memory.grow(pages - memory.buffer.byteLength / 65536);
    }
    this.#f32 = new Float32Array(memory.buffer);
    this.#f64 = new Float64Array(memory.buffer);
    this.#i32 = new Int32Array(memory.buffer);
    this.exactExp = probeExp(this);
  }

  /**
   * The one instance of this thread, made on first use ({@link WasmPointwise.create}): it holds
   * no state between calls (every kernel copies its blocks in and out), so CPU backends share it
   * instead of each compiling the module and probing `Math.exp` again.
   *
   * @returns The kernels, or null where the engine has no WebAssembly SIMD.
   *
   * @example Usage
   * ```ts
   * import { WasmPointwise } from "./pointwise.ts";
   * import assert from "node:assert/strict";
   * assert.equal(WasmPointwise.shared(), WasmPointwise.shared());
   * ```
   */
  static shared(): WasmPointwise | null {
    if (shared === undefined) shared = WasmPointwise.create();
    return shared;
  }

  /**
   * Instantiates the module, or returns null where the engine has no WebAssembly SIMD.
   *
   * @returns The kernels, or null.
   */
  static create(): WasmPointwise | null {
    if (typeof WebAssembly !== "object") return null;
    const bytes = Uint8Array.from(atob(POINTWISE_WASM), (c) => c.charCodeAt(0));
    if (!WebAssembly.validate(bytes)) return null;
    // One page for the module's table; the constructor grows it for the arrays.
    const memory = new WebAssembly.Memory({ initial: 1 });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
      env: { memory },
    });
    return new WasmPointwise(instance.exports as unknown as Exports, memory);
  }

  /**
   * The `adamw` kernel (`[grad] -> [param, m, v]`, in place), with the bits of `../cpu/adamw.ts`.
   * Arrays other than Float32Array run that kernel.
   *
   * @param inputs `[grad]`.
   * @param outputs `[param, m, v]`, updated in place.
   * @param p Kernel parameters.
   */
  adamw(inputs: HostArray[], outputs: HostArray[], p: KernelParams["adamw"]): void {
    const [G] = inputs, [P, M, V] = outputs;
    if (
      !(G instanceof Float32Array && P instanceof Float32Array && M instanceof Float32Array &&
        V instanceof Float32Array)
    ) {
      adamwTs(inputs, outputs, p);
      return;
    }
    const f = this.#f32;
    const B = POINTWISE_BLOCK;
    const og = this.#base / 4, op = og + B, om = op + B, ov = om + B;
    const { lr, beta1, beta2, eps, weightDecay, bc1, bc2 } = p;
    const n = P.length;
    for (let i = 0; i < n; i += B) {
      const len = Math.min(B, n - i);
      f.set(G.subarray(i, i + len), og);
      f.set(P.subarray(i, i + len), op);
      f.set(M.subarray(i, i + len), om);
      f.set(V.subarray(i, i + len), ov);
      // An odd last block: the padding lane computes on whatever is there and is not copied out.
      this.#exports.adamw(
        4 * og,
        4 * op,
        4 * om,
        4 * ov,
        len + (len & 1),
        beta1,
        1 - beta1,
        beta2,
        1 - beta2,
        bc1,
        bc2,
        eps,
        lr,
        weightDecay,
      );
      P.set(f.subarray(op, op + len), i);
      M.set(f.subarray(om, om + len), i);
      V.set(f.subarray(ov, ov + len), i);
    }
  }
  /**
   * The `unary` kernel (`[x] -> [y]`) with the bits of `../cpu/elementwise.ts`: `silu` and
   * `sigmoid` on Float32Arrays in wasm (where {@link WasmPointwise.exactExp}), every other op and
   * dtype by that kernel.
   *
   * @param inputs `[x]`.
   * @param outputs `[y]`, same length.
   * @param p Kernel parameters.
   *
   * @example Usage
   * ```ts
   * import { WasmPointwise } from "./pointwise.ts";
   * import { unary } from "../cpu/elementwise.ts";
   * import assert from "node:assert/strict";
   * const wp = WasmPointwise.create();
   * if (wp !== null) {
   *   const x = new Float32Array([-3, -0.5, 0, 0.25, 7]);
   *   const a = new Float32Array(5), b = new Float32Array(5);
   *   wp.unary([x], [a], { op: "silu" });
   *   unary([x], [b], { op: "silu" });
   *   assert.deepEqual(a, b);
   * }
   * ```
   */
  unary(inputs: HostArray[], outputs: HostArray[], p: KernelParams["unary"]): void {
    const op = p.op, X = inputs[0], Y = outputs[0];
    // Most calls are other ops: one comparison and on to the TypeScript kernel.
    if (
      (op !== "silu" && op !== "sigmoid") || !this.exactExp || !(X instanceof Float32Array) ||
      !(Y instanceof Float32Array)
    ) {
      unaryTs(inputs, outputs, p);
      return;
    }
    const f = this.#f32, idx = this.#i32;
    const B = POINTWISE_BLOCK;
    const ox = this.#base / 4, oy = ox + B, ob = oy + B;
    const kernel = op === "silu" ? this.#exports.silu : this.#exports.sigmoid;
    const n = Y.length;
    for (let i = 0; i < n; i += B) {
      const len = Math.min(B, n - i);
      f.set(X.subarray(i, i + len), ox);
      // An odd last block: the padding lane computes on whatever is there and is not copied out.
      const nb = kernel(4 * ox, 4 * oy, 4 * ob, len + (len & 1));
      Y.set(f.subarray(oy, oy + len), i);
      if (nb === 0) continue;
      // Elements whose exp the wasm could not vouch for: the TypeScript kernel on their x.
      const at = Array.from(idx.subarray(ob, ob + nb)).filter((k) => k < len);
      const xs = Float32Array.from(at, (k) => f[ox + k]!), ys = new Float32Array(at.length);
      unaryTs([xs], [ys], p);
      at.forEach((k, t) => Y[i + k] = ys[t]!);
    }
  }

  /**
   * The `binary` kernel (`[a, b] -> [out]`) with the bits of `../cpu/elementwise.ts`:
   * `silu_backward` (`[x, dy] -> [dx]`) on Float32Arrays of one row-major shape in wasm (where
   * {@link WasmPointwise.exactExp}), every other op, dtype and broadcast by that kernel.
   *
   * @param inputs `[a, b]`.
   * @param outputs `[out]`, contiguous of `p.shape`.
   * @param p Kernel parameters.
   *
   * @example Usage
   * ```ts
   * import { WasmPointwise } from "./pointwise.ts";
   * import { binary } from "../cpu/elementwise.ts";
   * import assert from "node:assert/strict";
   * const wp = WasmPointwise.create();
   * if (wp !== null) {
   *   const x = new Float32Array([-3, -0.5, 0, 0.25, 7]), dy = new Float32Array([1, 2, 3, 4, 5]);
   *   const p = { op: "silu_backward" as const, shape: [5], aStrides: [1], bStrides: [1] };
   *   const a = new Float32Array(5), b = new Float32Array(5);
   *   wp.binary([x, dy], [a], p);
   *   binary([x, dy], [b], p);
   *   assert.deepEqual(a, b);
   * }
   * ```
   */
  binary(inputs: HostArray[], outputs: HostArray[], p: KernelParams["binary"]): void {
    const X = inputs[0], DY = inputs[1], DX = outputs[0];
    if (
      p.op !== "silu_backward" || !this.exactExp || !(X instanceof Float32Array) ||
      !(DY instanceof Float32Array) || !(DX instanceof Float32Array) ||
      !contiguous(p.shape, p.aStrides) || !contiguous(p.shape, p.bStrides)
    ) {
      binaryTs(inputs, outputs, p);
      return;
    }
    const f = this.#f32, idx = this.#i32;
    const B = POINTWISE_BLOCK;
    const ox = this.#base / 4, ody = ox + B, odx = ody + B, ob = odx + B;
    let n = 1;
    for (const d of p.shape) n *= d;
    for (let i = 0; i < n; i += B) {
      const len = Math.min(B, n - i);
      f.set(X.subarray(i, i + len), ox);
      f.set(DY.subarray(i, i + len), ody);
      const nb = this.#exports.silu_backward(4 * ox, 4 * ody, 4 * odx, 4 * ob, len + (len & 1));
      DX.set(f.subarray(odx, odx + len), i);
      if (nb === 0) continue;
      const at = Array.from(idx.subarray(ob, ob + nb)).filter((k) => k < len);
      const xs = Float32Array.from(at, (k) => f[ox + k]!);
      const dys = Float32Array.from(at, (k) => f[ody + k]!);
      const dxs = new Float32Array(at.length);
      binaryTs([xs, dys], [dxs], { ...p, shape: [at.length], aStrides: [1], bStrides: [1] });
      at.forEach((k, t) => DX[i + k] = dxs[t]!);
    }
  }

  /**
   * `y[i] = Math.exp(x[i])`, bit for bit, through the module's exp (see {@link exactExp}): what
   * the activations rely on, exposed for tests and measurements.
   *
   * @param x Arguments.
   * @param y Results, same length.
   * @returns How many elements the wasm flagged (and `Math.exp` computed).
   *
   * @example Usage
   * ```ts
   * import { WasmPointwise } from "./pointwise.ts";
   * import assert from "node:assert/strict";
   * const wp = WasmPointwise.create();
   * if (wp !== null && wp.exactExp) {
   *   const x = new Float64Array([-1, 0, 0.5, 700]), y = new Float64Array(4);
   *   wp.exp(x, y);
   *   assert.deepEqual(y, x.map(Math.exp));
   * }
   * ```
   */
  exp(x: Float64Array, y: Float64Array): number {
    const f = this.#f64, idx = this.#i32;
    const B = POINTWISE_BLOCK / 2;
    const ox = this.#base / 8, oy = ox + B, ob = 2 * (oy + B);
    let flagged = 0;
    for (let i = 0; i < x.length; i += B) {
      const len = Math.min(B, x.length - i);
      f.set(x.subarray(i, i + len), ox);
      const nb = this.#exports.exp(8 * ox, 8 * oy, 4 * ob, len + (len & 1));
      y.set(f.subarray(oy, oy + len), i);
      for (let t = 0; t < nb; t++) {
        const k = idx[ob + t]!;
        if (k >= len) continue;
        flagged++;
        y[i + k] = Math.exp(x[i + k]!);
      }
    }
    return flagged;
  }
}
