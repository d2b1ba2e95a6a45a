/**
 * WebAssembly SIMD versions of CPU pointwise kernels that give the TypeScript kernels' bits:
 * AdamW (`../cpu/adamw.ts`) for now.
 *
 * Design decisions:
 * - **Same bits, not "close"**: `pointwise.wat` computes each element with the TypeScript
 *   kernel's float64 operations in its order (JavaScript numbers are float64), two lanes at a
 *   time; IEEE add, mul, div and sqrt are exactly rounded, so nothing a run computes changes when
 *   this path is taken or not (checkpoints, records and tests stay bit for bit). The gain is the
 *   SIMD divide and square root: AdamW is bound by them, not by memory.
 * - **Blocks through a small private memory**: the backend's buffers are JavaScript typed arrays,
 *   so each block of {@link POINTWISE_BLOCK} values is copied in (`TypedArray.set`, a memcpy),
 *   updated, and copied out while it is still in cache; the memory stays at a few pages.
 * - **One thread**: the copies are on the calling thread anyway, and splitting the arithmetic of
 *   a block over the matmul's workers would cost a wake-up per block.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";
import { adamw as adamwTs } from "../cpu/adamw.ts";
import { POINTWISE_WASM } from "./pointwise_wasm_bytes.ts";

/**
 * Values per array in one block (four arrays of f32 are in the memory at once: 128 KiB, which
 * stays in L2 from copy-in to copy-out).
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
}

/** Byte offset of the first array in the memory (room for future scalars). */
const BASE = 64;

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

  private constructor(exports: Exports, memory: WebAssembly.Memory) {
    this.#exports = exports;
    this.#f32 = new Float32Array(memory.buffer);
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
    const pages = Math.ceil((BASE + 4 * 4 * POINTWISE_BLOCK) / 65536);
    const memory = new WebAssembly.Memory({ initial: pages });
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
    const og = BASE / 4, op = og + B, om = op + B, ov = om + B;
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
}
