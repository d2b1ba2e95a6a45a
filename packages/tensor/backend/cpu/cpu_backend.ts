/**
 * The CPU backend: plain TypeScript loops, slow on purpose and obviously correct, except for
 * f32 matmul, which runs a WebAssembly SIMD kernel where the engine has one.
 *
 * It is the numerical oracle that every other backend is tested against, and the fallback where
 * no GPU is present. `precision: "f64"` stores f32 tensors in Float64Array so that
 * finite-difference gradient checks see float64 arithmetic end to end; the default `"f32"`
 * rounds like a GPU does.
 *
 * Matmul is where a CPU run spends its time, so with f32 storage it goes to
 * `../wasm/matmul_wasm.ts` (about 10× the TypeScript kernel at 1024³; f32 sums instead of
 * float64 ones, still independent of `m`, so KV-cache decoding stays bit-exact), split over
 * `threads` (env `RLVR_CPU_THREADS`, default the core count) without changing a bit. The
 * TypeScript kernel stays the oracle: `kernels: "ts"` or env `RLVR_CPU_KERNELS=ts` selects it.
 * Where the wasm matmul runs, attention runs through it too (`./attention_matmul.ts`), and the
 * matmul is told which buffer `b` is and its write count, so a weight keeps its packed copy in
 * the wasm memory across products until it is written again.
 *
 * A native BLAS (`./blas.ts`: OpenBLAS through FFI, when the library and the `ffi` permission
 * are there) takes the backward pass's products by default, whose bits need not be independent
 * of `m`; `blas: "openblas"` (env `RLVR_BLAS=openblas`) sends it every f32 product, trading the
 * bit-exact decode for speed.
 *
 * @module
 */

import { bytesPerElement, type DType } from "../../dtype.ts";
import type {
  Backend,
  BufferHandle,
  HostArray,
  KernelName,
  KernelParams,
  MemoryInfo,
  StorageFormat,
} from "../types.ts";
import { bf16ToF32, f32ToBf16 } from "../../io/half.ts";
import { CPU_KERNELS } from "./kernels.ts";
import { indexSelectBf16 } from "./index.ts";
import { attentionBackwardViaMatmul, attentionViaMatmul } from "./attention_matmul.ts";
import { envVar } from "./env.ts";
import { BLAS_CHOICES, type BlasChoice, blasMatmul, loadNativeBlas } from "./blas.ts";
import { WasmPointwise } from "../wasm/pointwise.ts";
import {
  type CpuKernelsChoice,
  type CpuMatmul,
  type CpuMatmulPath,
  createCpuMatmul,
  type MatmulKernel,
  type MatmulOperandKey,
} from "../wasm/matmul_wasm.ts";

export type { CpuKernelsChoice, CpuMatmulPath, MatmulKernel, MatmulOperandKey };

/** Options of {@link createCpuBackend}. */
export interface CpuBackendOptions {
  /** Storage of f32 tensors: `"f32"` (default, GPU-like rounding) or `"f64"` (gradient checks). */
  precision?: "f32" | "f64";
  /**
   * Matmul kernel: `"auto"` (WebAssembly SIMD where available, else TypeScript), `"ts"` (the
   * oracle) or `"wasm"` (fails without WebAssembly SIMD). Default: env `RLVR_CPU_KERNELS`, else
   * `"auto"`. With `precision: "f64"` matmul always runs in TypeScript.
   */
  kernels?: CpuKernelsChoice;
  /**
   * Threads a large wasm matmul is split over (this one plus workers; the result is the same bit
   * for bit). Default: env `RLVR_CPU_THREADS`, else `navigator.hardwareConcurrency` (at most 16).
   * The native BLAS's threads are process-wide, set once when it loads (`./blas.ts`).
   */
  threads?: number;
  /**
   * The native BLAS (see the module doc): `"auto"` (gradient products through OpenBLAS when it
   * loads), `"openblas"` (every f32 product; throws when it cannot load), `"wasm"` (none) or
   * `"ts"` (none, and the TypeScript matmul like `kernels: "ts"`). Default: env `RLVR_BLAS`,
   * else `"auto"`. With `precision: "f64"` no product takes the BLAS.
   */
  blas?: BlasChoice;
  /**
   * Attention kernels: `"auto"` (through the wasm matmul where it runs, `./attention_matmul.ts`)
   * or `"ts"` (the oracle's float64 loops; what the shipped checkpoints were trained with).
   * Default: env `RLVR_CPU_ATTENTION`, else `"auto"`.
   */
  attention?: "auto" | "ts";
}

/** A CPU backend, with the matmul path it chose. */
export interface CpuBackend extends Backend {
  /**
   * What f32 matmuls of `n·k >= 1024` run: `"ts"`, `"wasm-relaxed"`, `"wasm-simd"` or
   * `"openblas"`.
   */
  readonly matmulPath: CpuMatmulPath;
  /** What the backward pass's products run (`"openblas"` under `blas: "auto"` when it loads). */
  readonly gradientMatmulPath: CpuMatmulPath;
  /** Threads a large wasm matmul is split over (1 on the TypeScript path, or without workers). */
  readonly matmulThreads: number;
  /** The native BLAS library in use (its name or path), or null. */
  readonly blasLibrary: string | null;
  /** The `blas` choice it was created with (after env `RLVR_BLAS`). */
  readonly blas: BlasChoice;
  /** What attention runs: `"matmul"` (the wasm matmul) or `"ts"` (the oracle). */
  readonly attentionPath: "matmul" | "ts";
}

class CpuBuffer implements BufferHandle {
  /** Writes so far (host writes and kernel outputs): the wasm matmul's resident-weight key. */
  version = 0;
  /** bf16 storage: the bit patterns, while `data` is null (see `setStorageFormat`). */
  half: Uint16Array | null = null;
  constructor(
    readonly size: number,
    readonly dtype: DType,
    public data: HostArray | null,
    readonly owner: object,
  ) {}
}

/** Kernels that replace the oracle's where the wasm matmul runs. */
interface FastKernels {
  attention?: (i: HostArray[], o: HostArray[], p: KernelParams["attention"]) => void;
  attention_backward?: (i: HostArray[], o: HostArray[], p: KernelParams["attention"]) => void;
  adamw?: (i: HostArray[], o: HostArray[], p: KernelParams["adamw"]) => void;
  unary?: (i: HostArray[], o: HostArray[], p: KernelParams["unary"]) => void;
  binary?: (i: HostArray[], o: HostArray[], p: KernelParams["binary"]) => void;
}

/** The matmul of a CPU backend: the wasm/TypeScript choice, possibly wrapped by the BLAS. */
interface ChosenMatmul {
  path: CpuMatmulPath;
  gradientPath: CpuMatmulPath;
  threads: number;
  library: string | null;
  kernel: CpuMatmul["kernel"];
  release: CpuMatmul["release"];
  direct: CpuMatmul["direct"];
}

class CpuBackendImpl implements CpuBackend {
  readonly name: string;
  readonly matmulPath: CpuMatmulPath;
  readonly gradientMatmulPath: CpuMatmulPath;
  readonly matmulThreads: number;
  readonly blasLibrary: string | null;
  readonly blas: BlasChoice;
  readonly attentionPath: "matmul" | "ts";
  readonly #matmul: CpuMatmul["kernel"];
  readonly #release: CpuMatmul["release"];
  readonly #fast: FastKernels;
  #live = 0;
  #liveBytes = 0;
  readonly #precision: "f32" | "f64";

  constructor(
    precision: "f32" | "f64",
    matmul: ChosenMatmul,
    blas: BlasChoice,
    attention: "auto" | "ts",
  ) {
    this.#precision = precision;
    this.blas = blas;
    this.matmulPath = matmul.path;
    this.gradientMatmulPath = matmul.gradientPath;
    this.matmulThreads = matmul.threads;
    this.blasLibrary = matmul.library;
    this.#matmul = matmul.kernel;
    this.#release = matmul.release;
    // Attention through the wasm matmul (attention_matmul.ts); the oracle's loops otherwise.
    const direct = precision === "f32" && attention === "auto" ? matmul.direct : null;
    this.attentionPath = direct === null ? "ts" : "matmul";
    this.#fast = direct === null ? {} : {
      attention: attentionViaMatmul(direct),
      attention_backward: attentionBackwardViaMatmul(matmul.kernel),
    };
    // AdamW, silu, sigmoid and silu_backward in wasm SIMD (same bits as the TypeScript kernels)
    // wherever the wasm matmul runs; its unary/binary wrappers run every other op in TypeScript.
    const pointwise = precision === "f32" && matmul.direct !== null ? WasmPointwise.shared() : null;
    if (pointwise !== null) {
      this.#fast.adamw = (i, o, p) => pointwise.adamw(i, o, p);
      this.#fast.unary = (i, o, p) => pointwise.unary(i, o, p);
      this.#fast.binary = (i, o, p) => pointwise.binary(i, o, p);
    }
    this.name = precision === "f64" ? "cpu-f64" : "cpu";
  }

  alloc(size: number, dtype: DType): BufferHandle {
    if (!Number.isInteger(size) || size < 0) {
      throw new RangeError(`cpu.alloc: size must be an integer >= 0, got ${size}`);
    }
    const data = dtype === "i32"
      ? new Int32Array(size)
      : dtype === "bool"
      ? new Uint8Array(size)
      : this.#precision === "f64"
      ? new Float64Array(size)
      : new Float32Array(size);
    this.#live++;
    this.#liveBytes += size * bytesPerElement(dtype);
    return new CpuBuffer(size, dtype, data, this);
  }

  free(buffer: BufferHandle): void {
    const b = this.#own(buffer, "free");
    this.#live--;
    this.#liveBytes -= b.size * (b.half === null ? bytesPerElement(b.dtype) : 2);
    b.data = null;
    b.half = null;
    this.#release(b);
  }

  write(buffer: BufferHandle, data: ArrayLike<number>): void {
    const b = this.#own(buffer, "write");
    if (b.half !== null) {
      if (data.length !== b.size) {
        throw new RangeError(
          `cpu.write: buffer holds ${b.size} elements but ${data.length} values were given`,
        );
      }
      b.half.set(f32ToBf16(data));
    } else {
      const dst = this.#data(buffer, "write");
      if (data.length !== dst.length) {
        throw new RangeError(
          `cpu.write: buffer holds ${dst.length} elements but ${data.length} values were given`,
        );
      }
      dst.set(data);
    }
    b.version++;
  }

  storageFormat(buffer: BufferHandle): StorageFormat {
    return this.#own(buffer, "storageFormat").half === null ? "f32" : "bf16";
  }

  setStorageFormat(buffer: BufferHandle, format: StorageFormat): void {
    const b = this.#own(buffer, "setStorageFormat");
    if (format !== "f32" && format !== "bf16") {
      throw new RangeError(
        `cpu.setStorageFormat: format must be "f32" or "bf16", got ${JSON.stringify(format)}`,
      );
    }
    if (b.data === null && b.half === null) {
      throw new Error("cpu.setStorageFormat: the buffer was already freed");
    }
    if ((b.half === null ? "f32" : "bf16") === format) return;
    if (b.dtype !== "f32") {
      throw new TypeError(
        `cpu.setStorageFormat: only f32 buffers can be stored as bf16, this one is ${b.dtype}`,
      );
    }
    if (this.#precision === "f64") {
      throw new TypeError(
        'cpu.setStorageFormat: a backend with precision "f64" (gradient checks) keeps float64 ' +
          'storage; use the default precision "f32" for bf16 storage',
      );
    }
    if (format === "bf16") {
      b.half = f32ToBf16(b.data!);
      b.data = null;
      this.#liveBytes -= 2 * b.size;
    } else {
      b.data = bf16ToF32(b.half!);
      b.half = null;
      this.#liveBytes += 2 * b.size;
    }
    b.version++;
  }

  read(buffer: BufferHandle): Promise<HostArray> {
    return Promise.resolve(this.#data(buffer, "read").slice());
  }

  run<K extends KernelName>(
    kernel: K,
    inputs: readonly BufferHandle[],
    outputs: readonly BufferHandle[],
    params: KernelParams[K],
  ): void {
    // bf16-stored inputs are widened for the kernel, except where a kernel reads the bits itself
    // (matmul's b, an embedding table); bf16-stored outputs are computed in f32, then narrowed.
    const ins = inputs.map((b, i) => {
      const half = this.#own(b, kernel).half;
      if (half === null) return this.#data(b, kernel);
      if (
        (kernel === "matmul" && i === 1 && this.matmulPath !== "ts") ||
        (kernel === "index_select" && i === 0)
      ) return half as unknown as HostArray;
      return bf16ToF32(half);
    });
    const outs = outputs.map((b) => this.#data(b, kernel));
    // Every output counts as written before the kernel runs, so a kernel that throws halfway
    // still leaves a version no resident copy was packed from.
    for (const b of outputs) (b as CpuBuffer).version++;
    try {
      this.#dispatch(kernel, inputs, ins, outs, params);
    } finally {
      outputs.forEach((b, i) => {
        const half = (b as CpuBuffer).half;
        if (half !== null) half.set(f32ToBf16(outs[i]!));
      });
    }
  }

  #dispatch<K extends KernelName>(
    kernel: K,
    inputs: readonly BufferHandle[],
    ins: HostArray[],
    outs: HostArray[],
    params: KernelParams[K],
  ): void {
    if (kernel === "index_select" && ins[0] instanceof Uint16Array) {
      indexSelectBf16(ins[0], ins[1]!, outs[0]!, params as KernelParams["index_select"]);
      return;
    }
    const fast = this.#fast[kernel as keyof FastKernels];
    if (fast !== undefined) {
      (fast as (i: HostArray[], o: HostArray[], p: KernelParams[K]) => void)(ins, outs, params);
      return;
    }
    if (kernel === "matmul") {
      // Naming b lets the wasm kernel keep a weight packed across products (matmul_wasm.ts). Not
      // a bf16-stored one: its packed panels are f32, twice the bytes that storage saves.
      const b = inputs[1] as CpuBuffer;
      const key = b.half === null ? { key: b, version: b.version } : undefined;
      this.#matmul(ins, outs, params as KernelParams["matmul"], key);
      return;
    }
    (CPU_KERNELS[kernel] as (i: HostArray[], o: HostArray[], p: KernelParams[K]) => void)(
      ins,
      outs,
      params,
    );
  }

  memory(): MemoryInfo {
    return { liveBuffers: this.#live, liveBytes: this.#liveBytes };
  }

  #own(buffer: BufferHandle, what: string): CpuBuffer {
    if (!(buffer instanceof CpuBuffer) || buffer.owner !== this) {
      throw new TypeError(`cpu.${what}: the buffer belongs to another backend`);
    }
    return buffer;
  }

  /** The buffer's values: its own array, or a widened copy of bf16 storage. */
  #data(buffer: BufferHandle, what: string): HostArray {
    const b = this.#own(buffer, what);
    if (b.half !== null) return bf16ToF32(b.half);
    if (b.data === null) throw new Error(`cpu.${what}: the buffer was already freed`);
    return b.data;
  }
}

/**
 * Creates a CPU backend.
 *
 * @example Usage
 * ```ts
 * import { createCpuBackend } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const cpu = createCpuBackend({ precision: "f64" });
 * assert.equal(cpu.matmulPath, "ts"); // f64 storage: TypeScript kernels only
 * const buf = cpu.alloc(3, "f32");
 * cpu.write(buf, [1, 2, 3]);
 * assert.deepEqual([...await cpu.read(buf)], [1, 2, 3]);
 * cpu.free(buf);
 * ```
 */
export function createCpuBackend(options: CpuBackendOptions = {}): CpuBackend {
  const precision = options.precision ?? "f32";
  if (precision !== "f32" && precision !== "f64") {
    throw new RangeError(
      `createCpuBackend: precision must be "f32" or "f64", got ${JSON.stringify(precision)}`,
    );
  }
  const raw = options.kernels ?? envVar("RLVR_CPU_KERNELS") ?? "auto";
  if (raw !== "auto" && raw !== "ts" && raw !== "wasm") {
    const from = options.kernels === undefined ? "env RLVR_CPU_KERNELS" : "kernels";
    throw new RangeError(
      `createCpuBackend: ${from} must be "auto", "ts" or "wasm", got ${JSON.stringify(raw)}`,
    );
  }
  const envThreads = options.threads === undefined ? envVar("RLVR_CPU_THREADS") : undefined;
  const threads = options.threads ?? (envThreads === undefined ? undefined : Number(envThreads));
  if (threads !== undefined && !(Number.isInteger(threads) && threads >= 1)) {
    const from = options.threads === undefined ? "env RLVR_CPU_THREADS" : "threads";
    throw new RangeError(
      `createCpuBackend: ${from} must be an integer >= 1, got ${
        JSON.stringify(options.threads ?? envThreads)
      }`,
    );
  }
  const blas = options.blas ?? envVar("RLVR_BLAS") ?? "auto";
  const blasFrom = options.blas === undefined ? "env RLVR_BLAS" : "blas";
  if (!(BLAS_CHOICES as readonly string[]).includes(blas)) {
    throw new RangeError(
      `createCpuBackend: ${blasFrom} must be one of ${BLAS_CHOICES.join(", ")}, got ${
        JSON.stringify(blas)
      }`,
    );
  }
  if (raw === "ts" && (blas === "openblas" || blas === "wasm")) {
    throw new RangeError(
      `createCpuBackend: ${
        options.kernels === undefined ? "env RLVR_CPU_KERNELS" : "kernels"
      } "ts" ` +
        `contradicts ${blasFrom} ${JSON.stringify(blas)}; drop one of them`,
    );
  }
  const attention = options.attention ?? envVar("RLVR_CPU_ATTENTION") ?? "auto";
  if (attention !== "auto" && attention !== "ts") {
    const from = options.attention === undefined ? "env RLVR_CPU_ATTENTION" : "attention";
    throw new RangeError(
      `createCpuBackend: ${from} must be "auto" or "ts", got ${JSON.stringify(attention)}`,
    );
  }
  const kernels = precision === "f64" || blas === "ts" ? "ts" : blas === "wasm" ? "wasm" : raw;
  const base = createCpuMatmul(kernels, undefined, threads);
  return new CpuBackendImpl(
    precision,
    withBlas(base, precision, blas as BlasChoice, raw === "ts"),
    blas as BlasChoice,
    attention,
  );
}

/** Wraps `base` with the native BLAS where `blas` asks for it and it loads. */
function withBlas(
  base: CpuMatmul,
  precision: "f32" | "f64",
  blas: BlasChoice,
  oracle: boolean,
): ChosenMatmul {
  const plain: ChosenMatmul = { ...base, gradientPath: base.path, library: null };
  // f64 storage is for gradient checks, and kernels "ts" asked for the oracle everywhere.
  if (precision === "f64" || blas === "ts" || blas === "wasm" || oracle) return plain;
  const { lib, error } = loadNativeBlas();
  if (lib === null) {
    if (blas === "openblas") {
      throw new Error(
        `createCpuBackend: blas "openblas" could not load a BLAS (${error}); install ` +
          `OpenBLAS (Debian/Ubuntu: apt install libopenblas0-pthread; macOS: brew install ` +
          `openblas), point env RLVR_BLAS_LIB at a library with cblas_sgemm, grant --allow-ffi, ` +
          `or use blas "auto" or "wasm"`,
      );
    }
    return plain;
  }
  const all = blas === "openblas";
  return {
    path: all ? "openblas" : base.path,
    gradientPath: "openblas",
    threads: base.threads,
    library: lib.library,
    release: base.release,
    direct: base.direct,
    kernel: blasMatmul(lib, base.kernel, all ? () => true : (p) => p.gradient === true),
  };
}
