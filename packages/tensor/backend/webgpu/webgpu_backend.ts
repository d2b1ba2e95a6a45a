/**
 * The WebGPU backend: the kernel catalogue in WGSL behind the same narrow `Backend` interface as
 * the CPU oracle.
 *
 * Design decisions:
 * - **Storage**: every dtype is one 32-bit word per element; bool is a `u32` 0/1 (WGSL has no
 *   8-bit storage, and packed bools would make every bool store a read-modify-write race).
 *   `read()` returns the CPU backend's arrays: `Float32Array` (f32), `Int32Array` (i32),
 *   `Uint8Array` (bool). `memory().liveBytes` counts the stored bytes (4 per element, bool
 *   included), so it is 4× the CPU backend's figure for bool tensors.
 * - **Zero-fill**: new GPU buffers are zero-initialised by WebGPU; a buffer reused from the pool
 *   is cleared with `encoder.clearBuffer` lazily, just before its first use by a kernel (a
 *   `write()` that overwrites it first skips the clear, and a `read()` before any use returns
 *   zeros without touching the GPU). Zero-size tensors get a 4-byte buffer (empty bindings are
 *   invalid).
 * - **Pool**: buffers come from a size-class pool (`pool.ts`); `free()` returns a buffer to it
 *   at once when no pending work uses it, otherwise right after the submit of the command buffer
 *   that does, because `queue.writeBuffer` overtakes unsubmitted work.
 * - **Batching**: dispatches are recorded into one command buffer (`encoder.ts`) and submitted
 *   on `read()`, before a `write()` to a buffer that pending work uses, every `flushEvery`
 *   dispatches (default 64), or on `flush()`. Only `read()` waits for the GPU (`mapAsync` on a
 *   pooled staging buffer).
 * - **Params**: each dispatch's geometry goes into a small pooled uniform buffer, written with
 *   `queue.writeBuffer` and reused only after the submit.
 * - **Aliasing**: a buffer passed both as an input and an output (WebGPU forbids binding it
 *   read-only and writable in one dispatch) is read from a scratch copy.
 * - **Limits**: a tensor bound to a kernel must fit `maxStorageBufferBindingSize`; larger ones
 *   are rejected naming the kernel, the size and the limit (splitting them is later work).
 *   `alloc` rejects sizes over `maxBufferSize`.
 * - **Errors**: uncaptured GPU errors (e.g. a shader that fails validation) are logged at once
 *   and make the next `read()` reject, so wrong results never pass silently. After the device is
 *   lost (or `destroy()`), every call throws an error naming the reason.
 * - **Matmul variants**: `matmul` has numbered kernels (`kernels/matmul.ts`) picked by shape;
 *   `matmulVariant` (option, env `RLVR_MATMUL_VARIANT`, or the mutable property, for tests and
 *   benchmarks) forces one.
 * - **Debug**: `RLVR_WEBGPU_DEBUG=1` (or `debug: true`) prints each kernel's WGSL when it is
 *   compiled and each dispatch with its workgroup grid, on stderr.
 *
 * @module
 */

import type { DType } from "../../dtype.ts";
import type {
  Backend,
  BufferHandle,
  HostArray,
  KernelName,
  KernelParams,
  MemoryInfo,
} from "../types.ts";
import { requestGpuDevice } from "./device.ts";
import { CommandBatch } from "./encoder.ts";
import type { DispatchSpec, GpuBinding, KernelContext } from "./kernels/_wgsl.ts";
import { PARAM_BYTES } from "./kernels/_wgsl.ts";
import { type MatmulVariant, parseMatmulVariant } from "./kernels/matmul.ts";
import { GPU_KERNELS } from "./kernels/mod.ts";
import { PipelineCache } from "./pipelines.ts";
import { BufferPool, MemoryMeter, type PooledBuffer } from "./pool.ts";
import { DispatchCache, type DispatchCacheStats } from "./dispatch_cache.ts";

/**
 * Options of {@link createWebGpuBackend}.
 *
 * @example Usage
 * ```ts
 * import { createWebGpuBackend, type WebGpuBackendOptions } from "@rlvr/tensor";
 * const options: WebGpuBackendOptions = { flushEvery: 32, maxPoolBytes: 2 ** 28 };
 * const gpu = await navigator.gpu?.requestAdapter();
 * if (gpu) (await createWebGpuBackend({ ...options, adapter: gpu })).destroy();
 * ```
 */
export interface WebGpuBackendOptions {
  /** Adapter to use (default: `navigator.gpu.requestAdapter({ powerPreference })`). */
  adapter?: GPUAdapter;
  /** Passed to `requestAdapter` when no adapter is given. */
  powerPreference?: GPUPowerPreference;
  /** Submit after this many pending dispatches (default 64). */
  flushEvery?: number;
  /**
   * Submit as soon as buffers freed while pending work still reads them reach this many bytes
   * (default 256 MiB; `Infinity`: never), so that they return to the pool instead of new
   * buffers being created beside them.
   */
  flushFreedBytes?: number;
  /** Most bytes of idle buffers the pool keeps (default 1 GiB); beyond that they are destroyed. */
  maxPoolBytes?: number;
  /** Print WGSL and dispatches on stderr (default: env `RLVR_WEBGPU_DEBUG` is set and not `0`). */
  debug?: boolean;
  /**
   * Lower bound on the bytes one kernel binding may have, below the device's
   * `maxStorageBufferBindingSize` (for tests of the size check; default: the device limit).
   */
  maxBindingBytes?: number;
  /**
   * Force one matmul variant for every shape (default: env `RLVR_MATMUL_VARIANT`, else
   * `"auto"`, which picks by shape with `pickMatmulVariant`).
   */
  matmulVariant?: MatmulVariant | "auto";
  /**
   * Reuse params uniforms and bind groups across dispatches with the same content (default: off,
   * unless env `RLVR_WEBGPU_DISPATCH_CACHE` is set and not `0`). Measured on an H200 (bench/
   * RESULTS.md): it cut the host time of a 0.5B decode pass (31 vs 39 ms) but the GPU side grew
   * more (34 vs 18 ms), so it is opt-in. Cached uniforms (at most 4096 × 512 bytes) are not
   * counted in `poolStats()`.
   */
  dispatchCache?: boolean;
}

/**
 * Pool counters of a {@link WebGpuBackend} (storage, staging and params buffers together).
 *
 * @example Usage
 * ```ts
 * import { createWebGpuBackend } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const gpu = await navigator.gpu?.requestAdapter();
 * if (gpu) {
 *   const backend = await createWebGpuBackend({ adapter: gpu });
 *   backend.free(backend.alloc(100, "f32"));
 *   const stats = backend.poolStats();
 *   assert.equal(stats.pooledBuffers, 1); // kept for the next allocation of that size class
 *   assert.equal(stats.allocatedBytes, stats.poolBytes);
 *   backend.destroy();
 * }
 * ```
 */
export interface WebGpuPoolStats {
  /** Idle buffers kept for reuse. */
  pooledBuffers: number;
  /** Bytes of those buffers. */
  poolBytes: number;
  /** GPU buffers that exist (live tensors, pooled, and pending release). */
  allocatedBuffers: number;
  /** Bytes of those buffers. */
  allocatedBytes: number;
  /**
   * The most `allocatedBytes` has been since the backend was created or since
   * {@link WebGpuBackend.resetPeakMemory}: the peak GPU memory of this backend's buffers (the
   * driver's own allocations and compiled pipelines are not counted).
   */
  peakAllocatedBytes: number;
  /** Freed buffers waiting for the submit of work that uses them. */
  pendingBuffers: number;
  /** Compiled pipelines. */
  pipelines: number;
}

/**
 * A {@link Backend} on a WebGPU device, with pool counters and device control.
 *
 * @example Usage
 * ```ts
 * import { createWebGpuBackend, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const gpu = await navigator.gpu?.requestAdapter();
 * if (gpu) {
 *   const backend = await createWebGpuBackend({ adapter: gpu });
 *   const t = tensor([true, false], { backend });
 *   assert.deepEqual([...await t.data()], [1, 0]); // bool reads back as a Uint8Array
 *   assert.deepEqual(backend.memory(), { liveBuffers: 1, liveBytes: 8 }); // 4 bytes per bool
 *   t.dispose();
 *   await backend.sync();
 *   backend.destroy();
 * }
 * ```
 */
export interface WebGpuBackend extends Backend {
  /** `"webgpu"`. */
  readonly name: string;
  /** The device the kernels run on. */
  readonly device: GPUDevice;
  /** The adapter's description (e.g. `"llvmpipe (LLVM 15.0.6, 256 bits)"`). */
  readonly description: string;
  /** Whether the adapter is a software (CPU) implementation. */
  readonly isSoftware: boolean;
  /**
   * The matmul variant forced on every matmul, or `"auto"` (pick by shape). Assignable, for tests
   * and benchmarks; assigning anything else throws.
   */
  matmulVariant: MatmulVariant | "auto";
  /** Pool counters, for leak tests (live tensors are in `memory()`). */
  poolStats(): WebGpuPoolStats;
  /** Starts a new `poolStats().peakAllocatedBytes` at the bytes allocated now. */
  resetPeakMemory(): void;
  /** Counters of the params-uniform and bind-group cache, or null when it is off. */
  dispatchCacheStats(): DispatchCacheStats | null;
  /**
   * The GPU buffer behind `buffer` and the bytes of its data, for programs that record their own
   * dispatches on {@link WebGpuBackend.device} (the device decode loop of `@rlvr/policy`). Submits
   * the pending work first, so commands submitted after this call see every write recorded
   * before it. The buffer stays the handle's: do not destroy it, and do not use it after the
   * handle is freed.
   */
  gpuBuffer(buffer: BufferHandle): { buffer: GPUBuffer; bytes: number };
  /** Submits the pending dispatches without waiting for them. */
  flush(): void;
  /** Submits the pending dispatches and waits until the GPU has finished them. */
  sync(): Promise<void>;
  /** Destroys the device and every buffer; later calls throw. */
  destroy(): void;
}

const STORAGE = 0x80 | 0x04 | 0x08; // STORAGE | COPY_SRC | COPY_DST
const STAGING = 0x01 | 0x08; // MAP_READ | COPY_DST
const UNIFORM = 0x40 | 0x08; // UNIFORM | COPY_DST

function envVar(name: string): string | undefined {
  try {
    return (globalThis as { Deno?: typeof Deno }).Deno?.env.get(name);
  } catch {
    return undefined;
  }
}

function envFlag(name: string): boolean {
  const v = envVar(name);
  return v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";
}

/** The forced matmul variant: the option, else env `RLVR_MATMUL_VARIANT`, else `"auto"`. */
function matmulVariantOf(options: WebGpuBackendOptions): MatmulVariant | "auto" {
  return options.matmulVariant === undefined
    ? parseMatmulVariant(envVar("RLVR_MATMUL_VARIANT"), "createWebGpuBackend: RLVR_MATMUL_VARIANT")
    : parseMatmulVariant(options.matmulVariant, "createWebGpuBackend: matmulVariant");
}

class GpuBuffer implements BufferHandle {
  constructor(
    readonly size: number,
    readonly dtype: DType,
    public pooled: PooledBuffer | null,
    public needsClear: boolean,
    readonly owner: object,
  ) {}

  /** Bytes bound and copied: 4 per element, at least 4. */
  get bytes(): number {
    return Math.max(4, this.size * 4);
  }
}

function hostArray(dtype: DType, n: number): HostArray {
  return dtype === "f32"
    ? new Float32Array(n)
    : dtype === "i32"
    ? new Int32Array(n)
    : new Uint8Array(n);
}

class WebGpuBackendImpl implements WebGpuBackend {
  readonly name = "webgpu";
  readonly #meter = new MemoryMeter();
  #pendingFreeBytes = 0;
  readonly #flushFreedBytes: number;
  readonly #cache: DispatchCache | null;
  readonly #storage: BufferPool;
  readonly #staging: BufferPool;
  readonly #uniforms: BufferPool;
  readonly #batch: CommandBatch;
  readonly #pipelines: PipelineCache;
  readonly #maxBinding: number;
  readonly #maxBuffer: number;
  readonly #maxGroups: number;
  readonly #log: ((line: string) => void) | null;
  #live = 0;
  #liveBytes = 0;
  #pendingFrees = 0;
  #lost: { reason: string; message: string } | null = null;
  #errors: string[] = [];
  #ctx: KernelContext;

  constructor(
    readonly device: GPUDevice,
    readonly description: string,
    readonly isSoftware: boolean,
    options: WebGpuBackendOptions,
  ) {
    const limits = device.limits;
    this.#maxBinding = Math.min(
      limits.maxStorageBufferBindingSize,
      options.maxBindingBytes ?? Infinity,
    );
    this.#maxBuffer = limits.maxBufferSize;
    this.#maxGroups = limits.maxComputeWorkgroupsPerDimension;
    const maxPool = options.maxPoolBytes ?? 2 ** 30;
    const meter = this.#meter;
    this.#storage = new BufferPool(device, STORAGE, "tensor", maxPool, this.#maxBuffer, meter);
    this.#staging = new BufferPool(device, STAGING, "staging", maxPool, this.#maxBuffer, meter);
    this.#uniforms = new BufferPool(device, UNIFORM, "params", 2 ** 20, this.#maxBuffer, meter);
    const flushFreed = options.flushFreedBytes ?? 2 ** 28;
    if (!(typeof flushFreed === "number" && flushFreed >= 0)) {
      throw new RangeError(
        `createWebGpuBackend: flushFreedBytes must be a number >= 0 (Infinity: never), got ${flushFreed}`,
      );
    }
    this.#flushFreedBytes = flushFreed;
    const flushEvery = options.flushEvery ?? 64;
    if (!(Number.isInteger(flushEvery) && flushEvery >= 1)) {
      throw new RangeError(
        `createWebGpuBackend: flushEvery must be an integer >= 1, got ${flushEvery}`,
      );
    }
    this.#batch = new CommandBatch(device, flushEvery);
    const cache = options.dispatchCache ?? envFlag("RLVR_WEBGPU_DISPATCH_CACHE");
    this.#cache = cache
      ? new DispatchCache(
        device,
        PARAM_BYTES,
        // An evicted uniform may be bound by recorded, unsubmitted work: destroy it after that.
        (b) => this.#batch.afterSubmit(() => b.destroy()),
      )
      : null;
    this.#ctx = { matmulVariant: matmulVariantOf(options) };
    const debug = options.debug ?? envFlag("RLVR_WEBGPU_DEBUG");
    this.#log = debug ? (line) => console.error(line) : null;
    this.#pipelines = new PipelineCache(device, this.#log);
    device.lost.then((info) => {
      this.#lost ??= { reason: info.reason ?? "unknown", message: info.message };
      if (info.reason !== "destroyed") {
        console.error(`[webgpu] device lost (${info.reason}): ${info.message}`);
      }
    });
    device.addEventListener("uncapturederror", (e) => {
      const msg = (e as GPUUncapturedErrorEvent).error?.message ?? String(e);
      this.#errors.push(msg);
      console.error(`[webgpu] uncaptured GPU error: ${msg}`);
    });
  }

  get matmulVariant(): MatmulVariant | "auto" {
    return this.#ctx.matmulVariant;
  }

  set matmulVariant(v: MatmulVariant | "auto") {
    this.#ctx = { matmulVariant: parseMatmulVariant(v, "webgpu.matmulVariant") };
  }

  alloc(size: number, dtype: DType): BufferHandle {
    this.#alive("alloc");
    if (!Number.isInteger(size) || size < 0) {
      throw new RangeError(`webgpu.alloc: size must be an integer >= 0, got ${size}`);
    }
    const bytes = Math.max(4, size * 4);
    if (bytes > this.#maxBuffer) {
      throw new RangeError(
        `webgpu.alloc: a ${dtype} tensor of ${size} elements needs ${bytes} bytes, over this ` +
          `device's maxBufferSize of ${this.#maxBuffer} bytes`,
      );
    }
    const pooled = this.#storage.acquire(bytes);
    this.#live++;
    this.#liveBytes += size * 4;
    return new GpuBuffer(size, dtype, pooled, !pooled.fresh, this);
  }

  free(buffer: BufferHandle): void {
    const b = this.#own(buffer, "free");
    const pooled = b.pooled;
    if (pooled === null) throw new Error("webgpu.free: the buffer was already freed");
    b.pooled = null;
    this.#live--;
    this.#liveBytes -= b.size * 4;
    if (this.#lost !== null) return;
    if (this.#batch.uses(pooled.buffer)) {
      this.#pendingFrees++;
      this.#pendingFreeBytes += pooled.capacity;
      this.#batch.afterSubmit(() => {
        this.#pendingFrees--;
        this.#pendingFreeBytes -= pooled.capacity;
        this.#storage.release(pooled);
      });
      // Freed buffers wait for the submit of the work that reads them, and meanwhile new
      // requests of their size get new buffers: without this, a backward pass over large
      // chunks (a 0.5B model's LM-head gradient is 545 MB) held tens of GB in waiting buffers.
      if (this.#pendingFreeBytes >= this.#flushFreedBytes) this.#batch.flush();
    } else {
      this.#storage.release(pooled);
    }
  }

  write(buffer: BufferHandle, data: ArrayLike<number>): void {
    this.#alive("write");
    const b = this.#handle(buffer, "write");
    if (data.length !== b.size) {
      throw new RangeError(
        `webgpu.write: buffer holds ${b.size} elements but ${data.length} values were given`,
      );
    }
    if (b.size === 0) return;
    // Convert exactly as the CPU backend's typed-array stores do (fround, ToInt32, ToUint8).
    const words = b.dtype === "f32"
      ? Float32Array.from(data)
      : b.dtype === "i32"
      ? Int32Array.from(data)
      : Uint32Array.from(Uint8Array.from(data));
    const gpu = b.pooled!.buffer;
    if (this.#batch.uses(gpu)) this.#batch.flush();
    this.device.queue.writeBuffer(gpu, 0, words);
    b.needsClear = false;
  }

  read(buffer: BufferHandle): Promise<HostArray> {
    this.#alive("read");
    const b = this.#handle(buffer, "read");
    if (b.size === 0 || b.needsClear) return Promise.resolve(hostArray(b.dtype, b.size));
    const bytes = b.size * 4;
    const staging = this.#staging.acquire(bytes);
    this.#batch.encoder().copyBufferToBuffer(b.pooled!.buffer, 0, staging.buffer, 0, bytes);
    this.#batch.flush();
    return this.#finishRead(staging, bytes, b.dtype, b.size);
  }

  async #finishRead(
    staging: PooledBuffer,
    bytes: number,
    dtype: DType,
    size: number,
  ): Promise<HostArray> {
    try {
      await staging.buffer.mapAsync(GPUMapMode.READ, 0, bytes);
    } catch (e) {
      this.#alive("read");
      throw new Error(
        `webgpu.read: mapping the staging buffer failed: ${e instanceof Error ? e.message : e}`,
      );
    }
    const copy = staging.buffer.getMappedRange(0, bytes).slice(0);
    staging.buffer.unmap();
    this.#staging.release(staging);
    this.#throwErrors("read");
    if (dtype === "f32") return new Float32Array(copy);
    if (dtype === "i32") return new Int32Array(copy);
    const out = new Uint8Array(size);
    out.set(new Uint32Array(copy));
    return out;
  }

  run<K extends KernelName>(
    kernel: K,
    inputs: readonly BufferHandle[],
    outputs: readonly BufferHandle[],
    params: KernelParams[K],
  ): void {
    this.#alive(kernel);
    const ins = inputs.map((b) => this.#handle(b, kernel));
    const outs = outputs.map((b) => this.#handle(b, kernel));
    for (const b of [...ins, ...outs]) {
      if (b.bytes > this.#maxBinding) {
        throw new RangeError(
          `webgpu.${kernel}: a ${b.dtype} tensor of ${b.size} elements (${b.bytes} bytes) exceeds ` +
            `the ${this.#maxBinding}-byte storage binding limit (maxStorageBufferBindingSize) of ` +
            `this device; tensors that large are not supported by WebGPU kernels yet`,
        );
      }
      if (b.needsClear) {
        this.#batch.encoder().clearBuffer(b.pooled!.buffer, 0, b.bytes);
        this.#batch.use(b.pooled!.buffer);
        b.needsClear = false;
      }
    }
    const outBuffers = new Set(outs.map((b) => b.pooled!.buffer));
    const inBindings = ins.map((b) =>
      outBuffers.has(b.pooled!.buffer) ? this.#scratchCopy(b) : this.#binding(b)
    );
    const outBindings = outs.map((b) => this.#binding(b));
    const dispatches = GPU_KERNELS[kernel](inBindings, outBindings, params, this.#ctx);
    for (const d of dispatches) this.#encode(kernel, d);
  }

  memory(): MemoryInfo {
    return { liveBuffers: this.#live, liveBytes: this.#liveBytes };
  }

  poolStats(): WebGpuPoolStats {
    const s = [this.#storage.stats(), this.#staging.stats(), this.#uniforms.stats()];
    const total = (f: (x: (typeof s)[number]) => number) => s.reduce((a, x) => a + f(x), 0);
    return {
      pooledBuffers: total((x) => x.pooledBuffers),
      poolBytes: total((x) => x.pooledBytes),
      allocatedBuffers: total((x) => x.allocatedBuffers),
      allocatedBytes: total((x) => x.allocatedBytes),
      peakAllocatedBytes: this.#meter.peak,
      pendingBuffers: this.#pendingFrees,
      pipelines: this.#pipelines.size,
    };
  }

  resetPeakMemory(): void {
    this.#meter.resetPeak();
  }

  dispatchCacheStats(): DispatchCacheStats | null {
    return this.#cache?.stats() ?? null;
  }

  gpuBuffer(buffer: BufferHandle): { buffer: GPUBuffer; bytes: number } {
    this.#alive("gpuBuffer");
    const b = this.#handle(buffer, "gpuBuffer");
    if (b.needsClear) {
      this.#batch.encoder().clearBuffer(b.pooled!.buffer, 0, b.bytes);
      b.needsClear = false;
    }
    this.#batch.flush();
    return { buffer: b.pooled!.buffer, bytes: b.bytes };
  }

  flush(): void {
    this.#alive("flush");
    this.#batch.flush();
  }

  async sync(): Promise<void> {
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    this.#throwErrors("sync");
  }

  destroy(): void {
    if (this.#lost === null) this.#lost = { reason: "destroyed", message: "destroy() was called" };
    this.#storage.trim();
    this.#staging.trim();
    this.#uniforms.trim();
    this.device.destroy();
  }

  #encode(kernel: string, d: DispatchSpec): void {
    if (d.groups === 0) return;
    const { pipeline, layout } = this.#pipelines.get(d.shader);
    let bindGroup: GPUBindGroup;
    let release: (() => void) | null = null;
    if (this.#cache !== null) {
      const uniform = this.#cache.uniform(d.params);
      bindGroup = this.#cache.bindGroup(layout, d.bindings, uniform);
    } else {
      const params = this.#uniforms.acquire(PARAM_BYTES);
      this.device.queue.writeBuffer(params.buffer, 0, d.params);
      const entries: GPUBindGroupEntry[] = d.bindings.map((b, i) => ({
        binding: i,
        resource: { buffer: b.buffer, offset: 0, size: b.bytes },
      }));
      entries.push({
        binding: d.bindings.length,
        resource: { buffer: params.buffer, offset: 0, size: PARAM_BYTES },
      });
      bindGroup = this.device.createBindGroup({ layout, entries });
      release = () => this.#uniforms.release(params);
    }
    const x = Math.min(d.groups, this.#maxGroups);
    const y = Math.ceil(d.groups / x);
    if (y > this.#maxGroups) {
      throw new RangeError(
        `webgpu.${kernel}: ${d.groups} workgroups exceed the ${this.#maxGroups}² grid of this device`,
      );
    }
    this.#log?.(`[webgpu] dispatch ${kernel}/${d.shader.label} groups=${x}x${y} (${d.groups})`);
    this.#batch.dispatch(pipeline, bindGroup, x, y, d.bindings.map((b) => b.buffer));
    // Only after dispatch(): registered before it, with nothing pending, the callback would run
    // at once and the next dispatch could overwrite this uniform before this one is submitted.
    if (release !== null) this.#batch.afterSubmit(release);
  }

  #binding(b: GpuBuffer): GpuBinding {
    return { buffer: b.pooled!.buffer, size: b.size, dtype: b.dtype, bytes: b.bytes };
  }

  /** A pooled copy of `b`, released after the submit (for inputs that alias an output). */
  #scratchCopy(b: GpuBuffer): GpuBinding {
    const scratch = this.#storage.acquire(b.bytes);
    this.#batch.encoder().copyBufferToBuffer(b.pooled!.buffer, 0, scratch.buffer, 0, b.bytes);
    this.#batch.use(scratch.buffer);
    this.#batch.afterSubmit(() => this.#storage.release(scratch));
    return { buffer: scratch.buffer, size: b.size, dtype: b.dtype, bytes: b.bytes };
  }

  #alive(op: string): void {
    if (this.#lost !== null) {
      throw new Error(
        `webgpu.${op}: the GPU device was lost (reason: ${this.#lost.reason}: ${this.#lost.message}); ` +
          `create a new backend`,
      );
    }
  }

  #throwErrors(op: string): void {
    if (this.#errors.length === 0) return;
    const errors = this.#errors;
    this.#errors = [];
    throw new Error(
      `webgpu.${op}: ${errors.length} GPU error(s) occurred since the last check; results may be ` +
        `wrong. First: ${errors[0]}`,
    );
  }

  #own(buffer: BufferHandle, what: string): GpuBuffer {
    if (!(buffer instanceof GpuBuffer) || buffer.owner !== this) {
      throw new TypeError(`webgpu.${what}: the buffer belongs to another backend`);
    }
    return buffer;
  }

  #handle(buffer: BufferHandle, what: string): GpuBuffer {
    const b = this.#own(buffer, what);
    if (b.pooled === null) throw new Error(`webgpu.${what}: the buffer was already freed`);
    return b;
  }
}

/**
 * Creates a WebGPU backend on the given (or default) adapter, requesting the adapter's limits
 * and optional features. Throws when `navigator.gpu` finds no adapter; use `selectBackend` to
 * fall back to the CPU instead.
 *
 * @param options Adapter, batching, pool and debug settings.
 * @returns The backend; call `destroy()` when done with it.
 *
 * @example Usage
 * ```ts
 * import { createWebGpuBackend, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const gpu = await navigator.gpu?.requestAdapter();
 * if (gpu) {
 *   const backend = await createWebGpuBackend({ adapter: gpu });
 *   const x = tensor([[1, 2], [3, 4]], { backend });
 *   assert.deepEqual(await x.matmul(x).toArray(), [[7, 10], [15, 22]]);
 *   x.dispose();
 *   backend.destroy();
 * }
 * ```
 */
export async function createWebGpuBackend(
  options: WebGpuBackendOptions = {},
): Promise<WebGpuBackend> {
  // Settings are checked before a device exists, so a bad one leaks no device.
  const matmulVariant = matmulVariantOf(options);
  const ctx = await requestGpuDevice(options);
  return new WebGpuBackendImpl(ctx.device, ctx.description, ctx.isSoftware, {
    ...options,
    matmulVariant,
  });
}
