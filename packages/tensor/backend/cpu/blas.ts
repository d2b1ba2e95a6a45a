/**
 * A native BLAS for the CPU backend's f32 matmul: OpenBLAS's `cblas_sgemm` through Deno's FFI,
 * checked against the TypeScript oracle of `./matmul.ts`.
 *
 * Design decisions:
 * - **Where it runs.** OpenBLAS rounds differently for different `m` (its edge kernels sum in
 *   another order than its full tiles; measured with 0.3.21: a row of a 64-row product differs in
 *   ~5% of its elements from the same row computed alone, and differs again with another thread
 *   count). The WebAssembly kernel gives a row the same bits whatever `m` is, which is what makes
 *   KV-cached decoding equal a full recomputation and the sampler's log-probs equal the
 *   learner's. So by default (`auto`) only *gradient* products take the BLAS: those the backward
 *   pass of `matmul` makes (`gradient: true` in the kernel params), and those a hand-written
 *   backward marks with `matmul`'s `gradient` option (`@rlvr/policy`'s LM-head node recomputes
 *   the logits and multiplies by the head there), whose bits only feed the optimizer: about two
 *   thirds of a training step's multiply-adds. `openblas` sends every f32 product there:
 *   fastest, and decode then agrees with recomputation within rounding only.
 * - **No copies.** The operands are passed to `cblas_sgemm` as the backend's own Float32Arrays
 *   (FFI `buffer` arguments point into them), the transposes as CBLAS flags; a batch is a loop of
 *   calls over subarray views, so a broadcast operand (batch stride 0) is never materialised.
 * - **Same semantics as the oracle** where it matters: an `op(b)` holding an infinity or NaN
 *   goes to the TypeScript kernel (the oracle skips zero elements of `op(a)`, so `0·∞` adds
 *   nothing; a BLAS would give NaN); empty dimensions never reach the library (OpenBLAS rejects
 *   a leading dimension of 0 with a message on stderr).
 * - **Where it is found**: env `RLVR_BLAS_LIB` (a path or name, e.g. MKL's `libmkl_rt.so`, any
 *   library exporting `cblas_sgemm`), else the usual OpenBLAS names. Without `Deno.dlopen` (a
 *   browser), without the `ffi` permission or without the library, `auto` quietly keeps the
 *   WebAssembly kernel and `openblas` throws with the reason and the fix.
 * - **Threads** are process-wide in OpenBLAS, so they are set once, when the library is loaded:
 *   env `RLVR_CPU_THREADS`, else the core count (at most 16). A backend's `threads` option (one
 *   per rollout worker, say) would otherwise change the trainer's from another thread.
 *
 * @module
 */

import type { KernelParams } from "../types.ts";
import { allFinite, matmul as matmulTs } from "./matmul.ts";
import { envVar } from "./env.ts";
import { defaultMatmulThreads, type MatmulKernel } from "../wasm/matmul_wasm.ts";

/**
 * Which kernels f32 products take: `"auto"` (OpenBLAS for gradient products when it loads, the
 * WebAssembly kernel for the rest), `"openblas"` (every product; throws when it cannot load),
 * `"wasm"` (no BLAS) or `"ts"` (the TypeScript oracle for every product).
 */
export type BlasChoice = "auto" | "openblas" | "wasm" | "ts";

/**
 * The choices, for validation messages and config schemas.
 *
 * @example Usage
 * ```ts
 * import { BLAS_CHOICES } from "./blas.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(BLAS_CHOICES, ["auto", "openblas", "wasm", "ts"]);
 * ```
 */
export const BLAS_CHOICES: readonly BlasChoice[] = Object.freeze([
  "auto",
  "openblas",
  "wasm",
  "ts",
]);

/**
 * Tuning of the BLAS path (mutable, for the bench): products of fewer than `minMacs`
 * multiply-adds (`batch·m·n·k`) or fewer than `minRows` rows (`m`) take the fallback kernel,
 * where the library's call, its packing of `b` and its thread hand-off cost more than its faster
 * inner loop saves. Measured on the 2-core AMD EPYC VM
 * (`deno task bench --backend cpu`, OpenBLAS 0.3.21, 2 threads): at 64³ (2^18 multiply-adds)
 * OpenBLAS ran 18.7 GFLOP/s against the WebAssembly kernel's 7.6 (10.5 on one thread), at 1024³
 * 120.7 against 29.4; the bound sits at 2^18, where it was still faster. By rows, at the
 * Qwen2.5-0.5B shapes (`x·Wᵀ`, W 4864×896, 896×4864 and 151936×896): OpenBLAS took 10.0 / 10.2 /
 * 277 ms at m = 4 against the WebAssembly kernel's 6.4 / 6.8 / 209, about even at m = 8, and
 * 9.4 / 9.3 / 267 against 14.9 / 13.5 / 432 at m = 16: decode steps of small batches stay off it.
 *
 * @example Usage
 * ```ts
 * import { BLAS_TUNING } from "./blas.ts";
 * import assert from "node:assert/strict";
 * assert.ok(BLAS_TUNING.minMacs > 0);
 * ```
 */
export const BLAS_TUNING = { minMacs: 1 << 18, minRows: 16 };

/**
 * Library names tried in order when env `RLVR_BLAS_LIB` is unset.
 *
 * @example Usage
 * ```ts
 * import { OPENBLAS_NAMES } from "./blas.ts";
 * import assert from "node:assert/strict";
 * assert.equal(OPENBLAS_NAMES[0], "libopenblas.so.0");
 * ```
 */
export const OPENBLAS_NAMES: readonly string[] = Object.freeze([
  "libopenblas.so.0",
  "libopenblas.so",
  "libopenblas.dylib",
  "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
  "/usr/local/opt/openblas/lib/libopenblas.dylib",
  "libopenblas.dll",
]);

const ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112;

const SYMBOLS = {
  cblas_sgemm: {
    parameters: [
      "i32", // order
      "i32", // transA
      "i32", // transB
      "i32", // m
      "i32", // n
      "i32", // k
      "f32", // alpha
      "buffer", // a
      "i32", // lda
      "buffer", // b
      "i32", // ldb
      "f32", // beta
      "buffer", // c
      "i32", // ldc
    ],
    result: "void",
  },
  openblas_set_num_threads: { parameters: ["i32"], result: "void", optional: true },
  openblas_get_config: { parameters: [], result: "pointer", optional: true },
} as const;

type Sgemm = (
  order: number,
  transA: number,
  transB: number,
  m: number,
  n: number,
  k: number,
  alpha: number,
  a: Float32Array,
  lda: number,
  b: Float32Array,
  ldb: number,
  beta: number,
  c: Float32Array,
  ldc: number,
) => void;

/** A loaded native BLAS. */
export interface NativeBlas {
  /** The name or path it was opened by. */
  readonly library: string;
  /** What the library says of itself (`openblas_get_config`), or `""`. */
  readonly config: string;
  /**
   * `c[bt] = op(a[bt]) · op(b[bt])` for Float32Array operands (the `matmul` kernel's contract),
   * rounded as the library rounds.
   */
  sgemm(a: Float32Array, b: Float32Array, c: Float32Array, p: KernelParams["matmul"]): void;
  /** Threads the library was set to when loaded (see the module doc), or null if it cannot say. */
  readonly threads: number | null;
}

let cached: { lib: NativeBlas | null; error: string } | undefined;

/**
 * Opens the native BLAS once per process (later calls return the same result): env
 * `RLVR_BLAS_LIB`, else each of {@link OPENBLAS_NAMES}.
 *
 * @returns The library, or `{ lib: null, error }` saying why none could be opened.
 *
 * @example Usage
 * ```ts
 * import { loadNativeBlas } from "./blas.ts";
 * import assert from "node:assert/strict";
 * const { lib, error } = loadNativeBlas();
 * if (lib !== null) {
 *   const c = new Float32Array(1);
 *   const p = { batch: 1, m: 1, n: 1, k: 2, transA: false, transB: false, aBatchStride: 0, bBatchStride: 0 };
 *   lib.sgemm(new Float32Array([1, 2]), new Float32Array([3, 4]), c, p);
 *   assert.equal(c[0], 11);
 * } else {
 *   assert.ok(error.length > 0);
 * }
 * ```
 */
export function loadNativeBlas(): { lib: NativeBlas | null; error: string } {
  if (cached !== undefined) return cached;
  const dlopen = (globalThis as { Deno?: { dlopen?: typeof Deno.dlopen } }).Deno?.dlopen;
  if (typeof dlopen !== "function") {
    return cached = { lib: null, error: "this runtime has no Deno.dlopen (FFI)" };
  }
  const fromEnv = envVar("RLVR_BLAS_LIB");
  const names = fromEnv !== undefined && fromEnv !== "" ? [fromEnv] : OPENBLAS_NAMES;
  const failures: string[] = [];
  for (const name of names) {
    let opened: Deno.DynamicLibrary<typeof SYMBOLS>;
    try {
      opened = Deno.dlopen(name, SYMBOLS);
    } catch (e) {
      failures.push(`${name}: ${(e as Error).message.split("\n")[0]}`);
      if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) break;
      continue;
    }
    const s = opened.symbols;
    const sgemm = s.cblas_sgemm as unknown as Sgemm;
    const setThreads = s.openblas_set_num_threads as ((n: number) => void) | null;
    const getConfig = s.openblas_get_config as (() => Deno.PointerValue) | null;
    const ptr = getConfig?.() ?? null;
    const config = ptr === null ? "" : Deno.UnsafePointerView.getCString(ptr);
    const fromEnvThreads = Number(envVar("RLVR_CPU_THREADS"));
    const threads = Number.isInteger(fromEnvThreads) && fromEnvThreads >= 1
      ? fromEnvThreads
      : defaultMatmulThreads();
    setThreads?.(threads);
    return cached = {
      lib: {
        library: name,
        config,
        threads: setThreads === null ? null : threads,
        sgemm: (a, b, c, p) => runSgemm(sgemm, a, b, c, p),
      },
      error: "",
    };
  }
  return cached = { lib: null, error: failures.join("; ") };
}

function runSgemm(
  sgemm: Sgemm,
  A: Float32Array,
  B: Float32Array,
  C: Float32Array,
  p: KernelParams["matmul"],
): void {
  const { batch, m, n, k, transA, transB, aBatchStride, bBatchStride } = p;
  if (m === 0 || n === 0) return;
  if (k === 0) {
    C.fill(0, 0, batch * m * n);
    return;
  }
  const lda = transA ? m : k;
  const ldb = transB ? k : n;
  const ta = transA ? TRANS : NO_TRANS;
  const tb = transB ? TRANS : NO_TRANS;
  for (let bt = 0; bt < batch; bt++) {
    const a = bt === 0 ? A : A.subarray(bt * aBatchStride);
    const b = bt === 0 ? B : B.subarray(bt * bBatchStride);
    const c = bt === 0 ? C : C.subarray(bt * m * n);
    sgemm(ROW_MAJOR, ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, n);
  }
}

/**
 * A `matmul` kernel that runs the products `useBlas(p)` picks (of at least
 * {@link BLAS_TUNING}`.minMacs` multiply-adds and `.minRows` rows) through `lib` and every other one through
 * `fallback`. A batch whose `op(b)` holds an infinity or NaN, and non-f32 operands, go
 * to the TypeScript oracle instead of the BLAS (see the module doc).
 *
 * @param lib The native BLAS.
 * @param fallback The kernel for products the BLAS does not take.
 * @param useBlas Which products the BLAS takes.
 * @returns The kernel.
 *
 * @example Usage
 * ```ts
 * import { blasMatmul, loadNativeBlas } from "./blas.ts";
 * import { matmul } from "./matmul.ts";
 * import assert from "node:assert/strict";
 * const { lib } = loadNativeBlas();
 * if (lib !== null) {
 *   const kernel = blasMatmul(lib, matmul, (p) => p.gradient === true);
 *   const c = new Float32Array(1);
 *   const p = { batch: 1, m: 1, n: 1, k: 2, transA: false, transB: false, aBatchStride: 0, bBatchStride: 0, gradient: true };
 *   kernel([new Float32Array([0, 2]), new Float32Array([Infinity, 4])], [c], p);
 *   assert.equal(c[0], 8); // b holds ∞: the oracle ran, skipping 0·∞
 * }
 * ```
 */
export function blasMatmul(
  lib: NativeBlas,
  fallback: MatmulKernel,
  useBlas: (p: KernelParams["matmul"]) => boolean,
): MatmulKernel {
  return (inputs, outputs, p, bKey) => {
    const [a, b] = inputs, [c] = outputs;
    if (
      !useBlas(p) || p.m < BLAS_TUNING.minRows ||
      p.batch * p.m * p.n * p.k < BLAS_TUNING.minMacs ||
      !(a instanceof Float32Array) || !(b instanceof Float32Array) || !(c instanceof Float32Array)
    ) {
      fallback(inputs, outputs, p, bKey);
      return;
    }
    // A broadcast b (stride 0) is one matrix: scan it once.
    const distinct = p.bBatchStride === 0 ? 1 : p.batch;
    for (let bt = 0; bt < distinct; bt++) {
      if (!allFinite(b, bt * p.bBatchStride, p.k * p.n)) return matmulTs(inputs, outputs, p);
    }
    lib.sgemm(a, b, c, p);
  };
}
