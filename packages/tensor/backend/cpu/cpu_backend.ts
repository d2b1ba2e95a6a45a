/**
 * The CPU backend: plain TypeScript loops, slow on purpose and obviously correct.
 *
 * It is the numerical oracle that every other backend is tested against, and the fallback where
 * no GPU is present. `precision: "f64"` stores f32 tensors in Float64Array so that
 * finite-difference gradient checks see float64 arithmetic end to end; the default `"f32"`
 * rounds like a GPU does.
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
} from "../types.ts";
import { CPU_KERNELS } from "./kernels.ts";

/** Options of {@link createCpuBackend}. */
export interface CpuBackendOptions {
  /** Storage of f32 tensors: `"f32"` (default, GPU-like rounding) or `"f64"` (gradient checks). */
  precision?: "f32" | "f64";
}

class CpuBuffer implements BufferHandle {
  constructor(
    readonly size: number,
    readonly dtype: DType,
    public data: HostArray | null,
    readonly owner: object,
  ) {}
}

class CpuBackend implements Backend {
  readonly name: string;
  #live = 0;
  #liveBytes = 0;
  readonly #precision: "f32" | "f64";

  constructor(precision: "f32" | "f64") {
    this.#precision = precision;
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
    this.#liveBytes -= b.size * bytesPerElement(b.dtype);
    b.data = null;
  }

  write(buffer: BufferHandle, data: ArrayLike<number>): void {
    const dst = this.#data(buffer, "write");
    if (data.length !== dst.length) {
      throw new RangeError(
        `cpu.write: buffer holds ${dst.length} elements but ${data.length} values were given`,
      );
    }
    dst.set(data);
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
    const fn = CPU_KERNELS[kernel] as (
      i: HostArray[],
      o: HostArray[],
      p: KernelParams[K],
    ) => void;
    fn(
      inputs.map((b) => this.#data(b, kernel)),
      outputs.map((b) => this.#data(b, kernel)),
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

  #data(buffer: BufferHandle, what: string): HostArray {
    const data = this.#own(buffer, what).data;
    if (data === null) throw new Error(`cpu.${what}: the buffer was already freed`);
    return data;
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
 * const buf = cpu.alloc(3, "f32");
 * cpu.write(buf, [1, 2, 3]);
 * assert.deepEqual([...await cpu.read(buf)], [1, 2, 3]);
 * cpu.free(buf);
 * ```
 */
export function createCpuBackend(options: CpuBackendOptions = {}): Backend {
  const precision = options.precision ?? "f32";
  if (precision !== "f32" && precision !== "f64") {
    throw new RangeError(
      `createCpuBackend: precision must be "f32" or "f64", got ${JSON.stringify(precision)}`,
    );
  }
  return new CpuBackend(precision);
}
