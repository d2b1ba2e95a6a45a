/**
 * The WebAssembly SIMD matmul of the CPU backend: f32 `c[bt] = op(a[bt]) · op(b[bt])` for every
 * transpose flag and batch stride of the `matmul` kernel, with the TypeScript kernel of
 * `../cpu/matmul.ts` as its oracle and fallback.
 *
 * Design decisions:
 * - **Hand-written WAT, committed as base64** (`matmul.wat`, `matmul_wasm_bytes.ts`, built by
 *   `deno task build:wasm`): no toolchain at import time, and one source for a plain-SIMD128 and
 *   a relaxed-SIMD binary. The relaxed one (`f32x4.relaxed_madd`, a fused multiply-add on x86
 *   with FMA and on ARM) is used when `WebAssembly.validate` accepts it.
 * - **Numerics**: every element is an f32 sum of `a·b` products taken in ascending `k` from +0,
 *   one SIMD lane per output column, in a 4×8 register tile. The order depends neither on `m` nor
 *   on the tile, the k-block, the column chunk or the thread, so a one-row decode step gives bit
 *   for bit the row of a batched product (the KV-cache contract of the TypeScript kernel). The
 *   result differs from the TypeScript kernel (float64 sums rounded once) by rounding only; with
 *   relaxed SIMD the bits may differ between machines (fused or not), never within a process.
 * - **Zero skip**: the reference skips zeros of `op(a)`, so `0·∞` adds nothing. Adding a `±0`
 *   product to a sum that started at +0 changes nothing, so the SIMD kernel agrees whenever
 *   `op(b)` is finite; a batch whose `b` holds an infinity or NaN runs the TypeScript kernel,
 *   a choice that depends on `b` only, never on `m`.
 * - **Copies**: `a` and `b` are copied into the wasm memory (`TypedArray.set`, a memcpy) and
 *   packed there by SIMD code (A in 4-row panels, B in 8-column panels, both contiguous along
 *   `k`), which also absorbs the transposes; `c` is copied out row by row. B is processed in
 *   column chunks of at most {@link WASM_MATMUL_TUNING}`.chunkBytes`, which keeps a chunk in
 *   cache from copy to use and bounds the memory for a vocabulary-sized `b`. A one-row product
 *   with a transposed `b` (a decode step through a linear layer) skips packing: `gemv1T`
 *   transposes 4×4 blocks of `b` in registers and gives the same bits as the tile kernel. The
 *   copies and the packing are single-threaded; they dominate small-`m` products.
 * - **Resident weights**: a caller that names its `b` operand ({@link MatmulOperandKey}: the
 *   buffer and how often it has been written) lets a `b` seen before keep its packed panels in
 *   the wasm memory, so the next product with the same bytes skips the copy and the packing (a
 *   decode step reads each weight once instead of three times). A key is given a slot (or its slot
 *   is re-packed in place) by the second product of the same version, so one-shot activations
 *   never take one, and neither does a training step's weight, which an optimizer step changes
 *   after its one forward product (re-packing a slot per product cost a 0.5B training step's
 *   forward and backward a third of their time); decoding runs many products per version.
 *   Slots are returned by {@link WasmMatmul.release} when the buffer is freed. At most
 *   {@link WASM_MATMUL_TUNING}`.residentBytes` are held (env `RLVR_WASM_RESIDENT_MB`); past
 *   that, products pack per call as before. The panels are the
 *   bytes a per-call pack writes, so the result is the same bit for bit (a one-row product then
 *   runs the tile kernel instead of `gemv1T`, which gives the same bits).
 * - **Threads**: with `threads > 1`, `node:worker_threads` workers (obtained synchronously via
 *   `process.getBuiltinModule`, so the module still loads where there is none), or Web Workers in
 *   a cross-origin isolated browser context that may block (a dedicated Worker, not a page's main
 *   thread), instantiate the same compiled module on a shared `WebAssembly.Memory`. A chunk's
 *   column panels are claimed in grains from an atomic counter by the calling thread and the
 *   workers; the caller blocks with `Atomics.wait` until every grain is done (the `matmul`
 *   kernel is synchronous). Which thread computes a tile never changes its bits. Workers are
 *   unref'ed, so they neither keep a process alive nor trip the test sanitizers.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";
import { matmul as matmulTs } from "../cpu/matmul.ts";
import { envVar } from "../cpu/env.ts";
import { bf16ToF32 } from "../../io/half.ts";
import {
  MATMUL_WASM_RELAXED,
  MATMUL_WASM_RELAXED_SHARED,
  MATMUL_WASM_SIMD,
  MATMUL_WASM_SIMD_SHARED,
} from "./matmul_wasm_bytes.ts";

/** Which binary a {@link WasmMatmul} runs. */
export type WasmMatmulFlavour = "relaxed" | "simd";

/** Rows of a register tile (the A panel height). */
const MR = 4;
/** Columns of a register tile (the B panel width, two f32x4 lanes). */
const NR = 8;

/**
 * Blocking parameters of the wasm kernel (mutable, for tuning from the bench).
 *
 * @example Usage
 * ```ts
 * import { WASM_MATMUL_TUNING } from "./matmul_wasm.ts";
 * import assert from "node:assert/strict";
 * assert.ok(WASM_MATMUL_TUNING.kBlock > 0);
 * ```
 */
export const WASM_MATMUL_TUNING = {
  /** Steps of k per pass over a B panel (a `kBlock × 8` slice of B stays in L1). */
  kBlock: 256,
  /** Row panels (of 4 rows) per sweep over the column panels (an A block stays in L2). */
  mBlock: 16,
  /** Largest packed B column chunk, in bytes. */
  chunkBytes: 4 << 20,
  /**
   * Chunks below this many multiply-adds (padded) stay on the calling thread. Waking a worker
   * can cost a scheduler tick (about a millisecond on the 2-vCPU VM this was measured on), so
   * only chunks of about a millisecond of work or more are split.
   */
  parallelMinMacs: 1 << 25,
  /**
   * Most bytes of packed weights kept resident across products (see the module doc); 0 turns
   * the cache off. Default 2 GiB (the f32 weights of a 0.5B-parameter model), or env
   * `RLVR_WASM_RESIDENT_MB`. The linear memory never shrinks, so this much may stay allocated.
   */
  residentBytes: residentDefault(),
};

function residentDefault(): number {
  const raw = envVar("RLVR_WASM_RESIDENT_MB");
  if (raw === undefined) return 2 ** 31;
  const mb = Number(raw);
  if (!(Number.isFinite(mb) && mb >= 0)) {
    throw new RangeError(
      `env RLVR_WASM_RESIDENT_MB must be a number of MiB >= 0 (0 turns the cache off), got ${
        JSON.stringify(raw)
      }`,
    );
  }
  return Math.floor(mb * 2 ** 20);
}

/**
 * Who a `b` operand is, for the resident cache: the same `key` object (a backend buffer) with the
 * same `version` (bumped on every write) promises the same bytes.
 */
export interface MatmulOperandKey {
  /** The buffer (held weakly). */
  key: object;
  /** How many times it has been written; a change re-packs it. */
  version: number;
}

/** A `matmul` kernel that may be told who its `b` operand is. */
export type MatmulKernel = (
  inputs: HostArray[],
  outputs: HostArray[],
  p: KernelParams["matmul"],
  b?: MatmulOperandKey,
) => void;

/** What the resident cache knows about one (buffer, orientation). */
interface ResidentEntry {
  /** Shape it was packed for. */
  k: number;
  n: number;
  /** Float offset of its panels in the memory, or -1 without a slot. */
  at: number;
  /** Floats of the slot. */
  floats: number;
  /** The version the slot holds, or -1 while it holds none. */
  packed: number;
  /** The version of the last product that packed this `b` into scratch. */
  seen: number;
  /** The cache generation the slot belongs to (a flush bumps it). */
  gen: number;
}

function decode(b64: string): Uint8Array<ArrayBuffer> {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

let detected: WasmMatmulFlavour | null | undefined;

/**
 * The best flavour this engine runs: `"relaxed"` when it validates the relaxed-SIMD binary,
 * else `"simd"` when it validates the plain SIMD128 one, else `null` (no WebAssembly SIMD).
 *
 * @returns The flavour, or null.
 *
 * @example Usage
 * ```ts
 * import { detectWasmMatmul } from "./matmul_wasm.ts";
 * import assert from "node:assert/strict";
 * assert.ok(["relaxed", "simd", null].includes(detectWasmMatmul()));
 * ```
 */
export function detectWasmMatmul(): WasmMatmulFlavour | null {
  if (detected !== undefined) return detected;
  detected = null;
  if (typeof WebAssembly === "object") {
    if (WebAssembly.validate(decode(MATMUL_WASM_RELAXED))) detected = "relaxed";
    else if (WebAssembly.validate(decode(MATMUL_WASM_SIMD))) detected = "simd";
  }
  return detected;
}

type Gemm = (
  pa: number,
  pb: number,
  bPanel: number,
  ldb: number,
  pc: number,
  ldc: number,
  p0: number,
  p1: number,
  nq: number,
  k: number,
  kBlk: number,
  mBlk: number,
) => void;

type Pack = (src: number, ld: number, dst: number, nq: number, k: number, w: number) => void;

interface Exports {
  gemm: Gemm;
  packN: Pack;
  packT: Pack;
  finite: (p: number, n4: number) => number;
  gemv1T: (a: number, b: number, ldb: number, c: number, n4: number, k: number) => void;
}

const roundUp = (x: number, to: number) => Math.ceil(x / to) * to;

/**
 * Bytes at the start of the memory that coordinate the workers (i32 indices): one mailbox of 16
 * per worker (JOB and READY at these offsets from `16·slot`); SEQ, a seqlock over ARGS (odd while
 * the calling thread writes them, `2·job` once they describe product `job`); ARGS, the 12
 * arguments; FINISHED, grains computed; FAILED, the job whose grain threw. NEXT64 (a BigInt64
 * index) is `job·2³² + the next unclaimed grain`, so a claim can only succeed for the current job.
 */
const CONTROL_BYTES = 2048;
const JOB = 0, READY = 2, SEQ = 256, ARGS = 260, FINISHED = 272, FAILED = 273, NEXT64 = 144;
/** Most worker threads (mailboxes in {@link CONTROL_BYTES}). */
const MAX_WORKERS = 15;
/** How long an idle worker polls its mailbox before it sleeps. */
const SPIN_MS = 0.5;

// The worker: instantiates the shared-memory binary, then waits for a job number in its mailbox,
// takes a consistent snapshot of ARGS (seqlock), and claims column grains of that job until none
// is left; the calling thread claims them too, so a worker that wakes late just finds fewer, and
// the caller waits for grains, not for workers. It never returns to its event loop; under Node's
// API it is unref'ed so that it does not keep the process alive. `run` gets the module, the
// memory and the mailbox slot: from `workerData` (node:worker_threads) or from the first message
// (a Web Worker).
const WORKER_MAIN = `
function run({ wasmModule, memory, slot }) {
const ctl = new Int32Array(memory.buffer, 0, ${CONTROL_BYTES / 4});
const next = new BigInt64Array(memory.buffer, 0, ${CONTROL_BYTES / 8});
const box = slot * 16;
const { gemm } = new WebAssembly.Instance(wasmModule, { env: { memory } }).exports;
Atomics.store(ctl, box + ${READY}, 1);
let seen = Atomics.load(ctl, box + ${JOB});
for (;;) {
  // Spin a little before sleeping: the next chunk of the same product usually follows within
  // microseconds, and waking a sleeping thread can take a scheduler tick.
  const until = performance.now() + ${SPIN_MS};
  while (Atomics.load(ctl, box + ${JOB}) === seen && performance.now() < until);
  Atomics.wait(ctl, box + ${JOB}, seen);
  const job = Atomics.load(ctl, box + ${JOB});
  if (job === seen) continue;
  seen = job;
  if (Atomics.load(ctl, ${SEQ}) !== 2 * job) continue;
  const [pa, pb, bPanel, ldb, pc, ldc, panels, nq, k, kBlk, mBlk, grain] =
    ctl.slice(${ARGS}, ${ARGS + 12});
  if (Atomics.load(ctl, ${SEQ}) !== 2 * job) continue;
  const total = Math.ceil(nq / grain);
  for (;;) {
    const v = Atomics.load(next, ${NEXT64});
    const i = Number(v & 0xffffffffn);
    if (Number(v >> 32n) !== job || i >= total) break;
    if (Atomics.compareExchange(next, ${NEXT64}, v, v + 1n) !== v) continue;
    const q0 = i * grain, q1 = Math.min(nq, q0 + grain);
    try {
      gemm(pa, pb + q0 * bPanel, bPanel, ldb, pc + q0 * ${
  NR * 4
}, ldc, 0, panels, q1 - q0, k, kBlk, mBlk);
    } catch {
      Atomics.store(ctl, ${FAILED}, job);
    }
    Atomics.add(ctl, ${FINISHED}, 1);
    Atomics.notify(ctl, ${FINISHED});
  }
}
}
`;
const NODE_WORKER_SOURCE = `${WORKER_MAIN}
run(require("node:worker_threads").workerData);
`;
const WEB_WORKER_SOURCE = `${WORKER_MAIN}
self.onmessage = (e) => run(e.data);
`;

interface NodeWorker {
  unref(): void;
  terminate(): Promise<number>;
  on(event: "error" | "exit", listener: () => void): void;
}

/** What the workers of one instance get. */
interface WorkerData {
  wasmModule: WebAssembly.Module;
  memory: WebAssembly.Memory;
  slot: number;
}

/** Starts one matmul worker (see {@link workerSpawner}). */
type SpawnWorker = (data: WorkerData) => NodeWorker;

/**
 * How this runtime starts matmul workers, or null where it cannot run them:
 * - `node:worker_threads` where the runtime provides it synchronously (Deno 2, Node 22);
 * - else Web Workers (a browser) where the context is cross-origin isolated, so a
 *   `SharedArrayBuffer` can be shared, and may block in `Atomics.wait`, which the page's main
 *   thread may not (the calling thread waits for the workers' grains that way): a library used
 *   from a dedicated Worker gets threads, one used on the page itself runs on one.
 */
function workerSpawner(): SpawnWorker | null {
  try {
    // deno-lint-ignore no-explicit-any
    const proc = (globalThis as any).process;
    const wt = proc?.getBuiltinModule?.("node:worker_threads") as {
      Worker: new (src: string, options: { eval: true; workerData: unknown }) => NodeWorker;
    } | undefined;
    if (wt !== undefined && wt !== null) {
      return (data) => new wt.Worker(NODE_WORKER_SOURCE, { eval: true, workerData: data });
    }
  } catch {
    // no node:worker_threads here; try Web Workers
  }
  const g = globalThis as { crossOriginIsolated?: boolean; Worker?: unknown };
  if (g.crossOriginIsolated !== true || typeof g.Worker !== "function" || !canBlock()) {
    return null;
  }
  const url = URL.createObjectURL(new Blob([WEB_WORKER_SOURCE], { type: "text/javascript" }));
  return (data) => {
    const w = new Worker(url);
    w.postMessage(data);
    return {
      unref: () => {},
      terminate: () => (w.terminate(), Promise.resolve(0)),
      on: (event, listener) => {
        if (event === "error") w.addEventListener("error", listener);
      },
    };
  };
}

/** Whether this thread may block in `Atomics.wait` (a browser's main thread may not). */
function canBlock(): boolean {
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A WebAssembly SIMD matmul instance: one module, one linear memory grown on demand.
 *
 * @example Usage
 * ```ts
 * import { WasmMatmul, detectWasmMatmul } from "./matmul_wasm.ts";
 * import assert from "node:assert/strict";
 * const flavour = detectWasmMatmul();
 * if (flavour !== null) {
 *   const mm = new WasmMatmul(flavour);
 *   const c = new Float32Array(1);
 *   const p = { batch: 1, m: 1, n: 1, k: 2, transA: false, transB: false, aBatchStride: 0, bBatchStride: 0 };
 *   mm.run([new Float32Array([1, 2]), new Float32Array([3, 4])], [c], p);
 *   assert.equal(c[0], 11);
 * }
 * ```
 */
export class WasmMatmul {
  /** The binary this instance runs. */
  readonly flavour: WasmMatmulFlavour;
  /** Threads a large product is split over (this one plus its workers); 1 without workers. */
  readonly threads: number;
  readonly #memory: WebAssembly.Memory;
  readonly #exports: Exports;
  readonly #workers: NodeWorker[] = [];
  readonly #ctl: Int32Array;
  readonly #next: BigInt64Array;
  #job = 0;
  #broken = false;
  #f32: Float32Array;
  /** Resident cache entries by buffer, for `op(b) = b` (index 0) and `op(b) = bᵀ` (index 1). */
  readonly #resident = [new WeakMap<object, ResidentEntry>(), new WeakMap<object, ResidentEntry>()];
  /** Bumped by a flush: entries of older generations hold no slot. */
  #gen = 0;
  /** Float offsets of the resident region: [base, top) is allocated; 0 while it is empty. */
  #residentBase = 0;
  /** The most bytes of scratch any product reserved: a new resident region starts above them. */
  #scratchBytes = 0;
  #residentTop = 0;
  /** Slots returned by {@link WasmMatmul.release}, by size in floats. */
  #freeSlots = new Map<number, number[]>();
  /** Bytes of packed weights held in resident slots (live or free). */
  #residentHeld = 0;

  /**
   * Compiles and instantiates the binary of `flavour` (synchronously; it is a few kilobytes).
   * With `threads > 1` it starts `threads - 1` workers (`node:worker_threads`, unref'ed) on a
   * shared memory; where the runtime has no workers or no shared memory it runs on one thread.
   *
   * @param flavour `"relaxed"` or `"simd"`; throws when this engine rejects it.
   * @param threads Threads per product (default 1); at most 16.
   */
  constructor(flavour: WasmMatmulFlavour, threads = 1) {
    this.flavour = flavour;
    const wanted = Math.max(1, Math.min(MAX_WORKERS + 1, Math.floor(threads)));
    const spawn = wanted > 1 ? workerSpawner() : null;
    let memory: WebAssembly.Memory | null = null;
    if (spawn !== null) {
      try {
        memory = new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
      } catch {
        memory = null; // no shared memory here: one thread
      }
    }
    const shared = memory !== null;
    const bytes = decode(
      flavour === "relaxed"
        ? (shared ? MATMUL_WASM_RELAXED_SHARED : MATMUL_WASM_RELAXED)
        : (shared ? MATMUL_WASM_SIMD_SHARED : MATMUL_WASM_SIMD),
    );
    this.#memory = memory ?? new WebAssembly.Memory({ initial: 1 });
    const module = new WebAssembly.Module(bytes);
    const instance = new WebAssembly.Instance(module, { env: { memory: this.#memory } });
    this.#exports = instance.exports as unknown as Exports;
    this.#f32 = new Float32Array(this.#memory.buffer);
    this.#ctl = new Int32Array(this.#memory.buffer, 0, CONTROL_BYTES / 4);
    this.#next = new BigInt64Array(this.#memory.buffer, 0, CONTROL_BYTES / 8);
    if (spawn !== null && shared) {
      try {
        for (let slot = 0; slot < wanted - 1; slot++) {
          const w = spawn({ wasmModule: module, memory: this.#memory, slot });
          w.unref();
          const broken = () => (this.#broken = true);
          w.on("error", broken);
          w.on("exit", broken);
          this.#workers.push(w);
        }
      } catch {
        this.#broken = true;
      }
    }
    this.threads = this.#broken ? 1 : 1 + this.#workers.length;
  }

  /** Bytes of linear memory held now. */
  get memoryBytes(): number {
    return this.#memory.buffer.byteLength;
  }

  /** Threads a large product runs on now: 1 plus the workers that finished starting. */
  get activeThreads(): number {
    return 1 + this.#readyWorkers();
  }

  /** Bytes of the memory given to resident weight panels (see the module doc). */
  get residentBytes(): number {
    return this.#residentHeld;
  }

  /**
   * Forgets the resident panels of `key` (its buffer was freed), so its slots can serve another.
   *
   * @param key The buffer given as {@link MatmulOperandKey}`.key`.
   */
  release(key: object): void {
    for (const map of this.#resident) {
      const e = map.get(key);
      if (e === undefined) continue;
      map.delete(key);
      this.#freeSlot(e);
    }
  }

  /** Returns the slot of `e`, if it holds one of this generation, to the free lists. */
  #freeSlot(e: ResidentEntry): void {
    if (e.at < 0 || e.gen !== this.#gen) return;
    const list = this.#freeSlots.get(e.floats);
    if (list === undefined) this.#freeSlots.set(e.floats, [e.at]);
    else list.push(e.at);
    e.at = -1;
  }

  /** Drops every resident slot (scratch must grow into their region). */
  #flushResident(): void {
    this.#gen++;
    this.#residentBase = this.#residentTop = 0;
    this.#freeSlots.clear();
    this.#residentHeld = 0;
  }

  /**
   * The resident entry of `key` for this product, with a slot when one is held or can be had
   * (see the module doc), or null when the product packs into scratch. Called after the scratch
   * of the product is reserved, so a new resident region starts above it.
   */
  #residentEntry(
    key: MatmulOperandKey,
    transB: boolean,
    k: number,
    n: number,
  ): ResidentEntry | null {
    const map = this.#resident[transB ? 1 : 0]!;
    const floats = roundUp(roundUp(n, NR) * k, 16);
    const e = map.get(key.key);
    if (e === undefined || e.k !== k || e.n !== n) {
      // First sighting (or a new shape, whose old slot goes back): remember it, pack into scratch.
      if (e !== undefined) this.#freeSlot(e);
      map.set(key.key, { k, n, at: -1, floats, packed: -1, seen: key.version, gen: this.#gen });
      return null;
    }
    const held = e.at >= 0 && e.gen === this.#gen;
    if (held && e.packed === key.version) return e;
    // The first product of a version packs into scratch; only a second one takes (or re-packs) a
    // slot. A weight that an optimizer step changes between every pair of products (a training
    // forward, then the backward's other orientation) would otherwise re-pack its slot once per
    // product and gain nothing, while decoding uses one version for many products.
    if (e.seen !== key.version) {
      e.seen = key.version;
      return null;
    }
    if (held) return e;
    e.at = -1;
    e.packed = -1;
    e.gen = this.#gen;
    const bytes = 4 * floats;
    const free = this.#freeSlots.get(floats);
    if (free !== undefined && free.length > 0) {
      e.at = free.pop()!;
      return e;
    }
    if (this.#residentHeld + bytes > WASM_MATMUL_TUNING.residentBytes) return null;
    if (this.#residentBase === 0) {
      // Right above the largest scratch so far, which after a flush reuses the old region's
      // pages instead of growing the memory past them.
      this.#residentBase = this.#residentTop = roundUp(Math.ceil(this.#scratchBytes / 4), 16);
    }
    const end = this.#residentTop + floats;
    if (4 * end > 2 ** 32 - 65536) return null;
    try {
      this.#reserve(4 * end);
    } catch {
      return null;
    }
    e.at = this.#residentTop;
    this.#residentTop = end;
    this.#residentHeld += bytes;
    return e;
  }

  /** Stops the workers (later products run on the calling thread). */
  close(): void {
    this.#broken = true;
    for (const w of this.#workers) void w.terminate();
    this.#workers.length = 0;
  }

  #reserve(bytes: number): Float32Array {
    const have = this.#memory.buffer.byteLength;
    if (bytes > have) this.#memory.grow(Math.ceil((bytes - have) / 65536));
    if (this.#f32.length * 4 !== this.#memory.buffer.byteLength) {
      this.#f32 = new Float32Array(this.#memory.buffer);
    }
    return this.#f32;
  }

  /**
   * Copies `len` values of `src` from `from` to float offset `to` of the memory: a memcpy for f32,
   * a widening (`bits << 16`, exact) for bfloat16 bit patterns (bf16-stored weights).
   */
  #copyIn(src: HostArray | Uint16Array, from: number, len: number, to: number): void {
    if (!(src instanceof Uint16Array)) {
      this.#f32.set(src.subarray(from, from + len), to);
      return;
    }
    const u32 = new Uint32Array(this.#f32.buffer, 4 * to, len);
    for (let i = 0; i < len; i++) u32[i] = src[from + i]! << 16;
  }

  /**
   * Copies `rows` runs of `width` values of `src`, `stride` apart from `from`, to consecutive
   * floats from offset `to`: the columns of a row-major `b` chunk. Narrow runs (a vocabulary-long
   * `b` gets 8-column chunks) are copied element by element, since a `subarray` + `set` per run
   * costs more than the run itself (the LM head's `dz · W` spent seconds in them).
   */
  #copyInRows(
    src: HostArray | Uint16Array,
    from: number,
    rows: number,
    width: number,
    stride: number,
    to: number,
  ): void {
    if (width >= 64) {
      for (let r = 0; r < rows; r++) this.#copyIn(src, from + r * stride, width, to + r * width);
    } else if (src instanceof Float32Array) {
      copyRowsF32(src, from, rows, width, stride, this.#f32, to);
    } else if (src instanceof Uint16Array) {
      copyRowsBf16(src, from, rows, width, stride, new Uint32Array(this.#f32.buffer), to);
    } else {
      for (let r = 0; r < rows; r++) this.#copyIn(src, from + r * stride, width, to + r * width);
    }
  }

  /** The workers that finished starting (they start in the background). */
  #readyWorkers(): number {
    if (this.#broken) return 0;
    let n = 0;
    while (n < this.#workers.length && Atomics.load(this.#ctl, n * 16 + READY) === 1) n++;
    return n;
  }

  /**
   * `gemm` over column panels `0..nq`, in grains of column panels claimed by this thread and the
   * ready workers (a busy or late worker just claims fewer; this thread waits for the grains to
   * be finished, not for the workers). Each tile is computed whole by one thread with the same
   * k-blocking, so the split never changes a bit of the result.
   */
  #gemm(pa: number, pb: number, pc: number, ldc: number, panels: number, nq: number, k: number) {
    const { kBlock, mBlock } = WASM_MATMUL_TUNING;
    const bPanel = 4 * k * NR;
    const macs = panels * MR * nq * NR * k;
    const workers = macs < WASM_MATMUL_TUNING.parallelMinMacs
      ? 0
      : Math.min(nq - 1, this.#readyWorkers());
    if (workers <= 0) {
      this.#exports.gemm(pa, pb, bPanel, 4 * NR, pc, ldc, 0, panels, nq, k, kBlock, mBlock);
      return;
    }
    const ctl = this.#ctl, next = this.#next;
    const grain = Math.max(1, Math.ceil(nq / (4 * (workers + 1))));
    const total = Math.ceil(nq / grain);
    const job = ++this.#job;
    Atomics.store(ctl, SEQ, 2 * job - 1);
    ctl.set([pa, pb, bPanel, 4 * NR, pc, ldc, panels, nq, k, kBlock, mBlock, grain], ARGS);
    Atomics.store(ctl, FINISHED, 0);
    Atomics.store(next, NEXT64, BigInt(job) << 32n);
    Atomics.store(ctl, SEQ, 2 * job);
    for (let w = 0; w < workers; w++) {
      Atomics.store(ctl, w * 16 + JOB, job);
      Atomics.notify(ctl, w * 16 + JOB);
    }
    for (;;) {
      const v = Atomics.add(next, NEXT64, 1n);
      const i = Number(v & 0xffffffffn);
      if (i >= total) break;
      const q0 = i * grain, q1 = Math.min(nq, q0 + grain);
      const at = pb + q0 * bPanel;
      this.#exports.gemm(
        pa,
        at,
        bPanel,
        4 * NR,
        pc + q0 * NR * 4,
        ldc,
        0,
        panels,
        q1 - q0,
        k,
        kBlock,
        mBlock,
      );
      Atomics.add(ctl, FINISHED, 1);
    }
    for (let f = Atomics.load(ctl, FINISHED); f < total; f = Atomics.load(ctl, FINISHED)) {
      Atomics.wait(ctl, FINISHED, f, 100);
    }
    if (Atomics.load(ctl, FAILED) === job) {
      this.close();
      throw new Error("WasmMatmul: a worker's gemm call failed; workers stopped");
    }
  }

  /**
   * `c[bt] = op(a[bt]) · op(b[bt])` (the `matmul` kernel contract) for Float32Array operands.
   * Batches whose `b` is not finite run the TypeScript kernel (see the module doc).
   *
   * @param inputs `[a, b]`.
   * @param outputs `[c]`.
   * @param p Kernel parameters.
   */
  run(
    [a, b]: HostArray[],
    [c]: HostArray[],
    p: KernelParams["matmul"],
    bKey?: MatmulOperandKey,
  ): void {
    const A = a!, B = b!, C = c!;
    const { batch, m, n, k, bBatchStride } = p;
    if (batch === 0 || m === 0 || n === 0) return;
    if (k === 0) {
      C.fill(0, 0, batch * m * n);
      return;
    }
    // A shared b is packed once for all batches; otherwise one product per batch.
    const shared = bBatchStride === 0 || batch === 1;
    for (let bt = 0; bt < batch; bt += shared ? batch : 1) {
      const count = shared ? batch : 1;
      const b0 = bt * bBatchStride;
      if (this.#product(A, B, C, p, bt, count, b0, shared ? bKey : undefined)) continue;
      const Bf = B instanceof Uint16Array ? bf16ToF32(B) : B;
      for (let t = bt; t < bt + count; t++) {
        matmulTs(
          [A.subarray(t * p.aBatchStride), Bf.subarray(b0)],
          [C.subarray(t * m * n, (t + 1) * m * n)],
          { ...p, batch: 1 },
        );
      }
    }
  }

  /**
   * Batches `first .. first+count-1`, all with the `b` at `b0`. Returns false, leaving `c` to the
   * caller, when that `b` holds an infinity or NaN (found while copying it in) or when the
   * product does not fit the wasm memory. `bKey` names a `b` that is one whole matrix.
   */
  #product(
    A: HostArray,
    B: HostArray,
    C: HostArray,
    p: KernelParams["matmul"],
    first: number,
    count: number,
    b0: number,
    bKey: MatmulOperandKey | undefined,
  ): boolean {
    const { m, n, k, transA, transB, aBatchStride } = p;
    const tune = WASM_MATMUL_TUNING;
    // Row groups: one tall group when the batches of a row-major a are contiguous (so a decode
    // batch of 1-row products fills whole 4-row panels), else one group per batch.
    const fused = !transA && (count === 1 || aBatchStride === m * k);
    const groups = fused ? 1 : count;
    const rows = fused ? count * m : m;
    const panels = Math.ceil(rows / MR); // per group
    const rawA = panels * MR * k + 2 * NR; // floats per group, padded, with slack
    // Column chunk: a multiple of NR whose packed B fits chunkBytes.
    const chunk = Math.min(
      roundUp(n, NR),
      Math.max(NR, Math.floor(tune.chunkBytes / (4 * k * NR)) * NR),
    );
    const ra = CONTROL_BYTES / 4; // float offsets into the memory, 64-byte aligned
    const pa = roundUp(ra + groups * rawA, 16);
    const rb = roundUp(pa + groups * panels * MR * k, 16);
    const pb = roundUp(rb + chunk * k + 2 * NR, 16);
    const pc = roundUp(pb + chunk * k, 16);
    const bytes = 4 * (pc + groups * panels * MR * chunk + 2 * NR);
    // Past the 4 GiB of a 32-bit memory (or when the engine refuses to grow it), the caller runs
    // the TypeScript kernel: the only case where the path depends on the size of a.
    if (bytes > 2 ** 32 - 65536) return false;
    // Scratch grows into the resident region only after dropping it (rare: a larger product).
    if (this.#residentBase !== 0 && bytes > 4 * this.#residentBase) this.#flushResident();
    let f: Float32Array;
    try {
      f = this.#reserve(bytes);
    } catch {
      return false;
    }
    this.#scratchBytes = Math.max(this.#scratchBytes, bytes);
    const X = this.#exports;
    const res = bKey !== undefined && WASM_MATMUL_TUNING.residentBytes > 0
      ? this.#residentEntry(bKey, transB, k, n)
      : null;
    f = this.#f32; // the entry may have grown the memory
    // Its panels already hold this version of b: no copy, no packing, no finite scan.
    const hit = res !== null && res.packed === bKey!.version;
    if (res !== null) res.packed = -1; // until every chunk below is packed and finite

    // One row times a transposed b (a decode step through a linear layer): no packing at all.
    const gemv = transB && groups === 1 && rows === 1 && res === null;

    // Copy a in, then pack it into 4-row panels (transposing a row-major a).
    for (let g = 0; g < groups; g++) {
      const src = (first + g) * aBatchStride;
      const dst = ra + g * rawA;
      f.set(A.subarray(src, src + rows * k), dst);
      f.fill(0, dst + rows * k, dst + rawA);
      const packed = 4 * (pa + g * panels * MR * k);
      if (gemv) continue; // one row: read in place
      if (transA) X.packN(4 * dst, 4 * m, packed, panels, k, MR);
      else X.packT(4 * dst, 4 * k, packed, panels, k, MR);
    }

    for (let j0 = 0; j0 < n; j0 += chunk) {
      const w = Math.min(chunk, n - j0);
      const nq = Math.ceil(w / NR);
      // Where this chunk's panels are: its part of the resident slot, or scratch.
      const pw = res === null ? pb : res.at + j0 * k;
      // Copy columns j0..j0+w of op(b) in, then pack them into 8-column panels.
      if (hit) {
        // packed by an earlier product
      } else if (transB) {
        const src = b0 + j0 * k;
        this.#copyIn(B, src, w * k, rb);
        f.fill(0, rb + w * k, rb + nq * NR * k + 2 * NR);
        if (!gemv) X.packT(4 * rb, 4 * k, 4 * pw, nq, k, NR);
      } else {
        if (w === n) this.#copyIn(B, b0, k * n, rb);
        else this.#copyInRows(B, b0 + j0, k, w, n, rb);
        f.fill(0, rb + k * w, rb + k * w + 2 * NR);
        X.packN(4 * rb, 4 * w, 4 * pw, nq, k, NR);
      }
      if (!hit && !X.finite(4 * rb, Math.ceil((k * w) / 4))) return false;
      if (gemv) {
        X.gemv1T(4 * ra, 4 * rb, 4 * k, 4 * pc, Math.ceil(w / 4), k);
        C.set(f.subarray(pc, pc + w), first * n + j0);
        continue;
      }
      const ldc = nq * NR;
      this.#gemm(4 * pa, 4 * pw, 4 * pc, 4 * ldc, groups * panels, nq, k);
      // Copy out: row i of group g is row first·m + g·m + i of the batched c.
      for (let g = 0; g < groups; g++) {
        const cw = pc + g * panels * MR * ldc;
        const c0 = (first + g) * m * n;
        if (w === n && ldc === n) C.set(f.subarray(cw, cw + rows * n), c0);
        else {
          for (let i = 0; i < rows; i++) {
            C.set(f.subarray(cw + i * ldc, cw + i * ldc + w), c0 + i * n + j0);
          }
        }
      }
    }
    if (res !== null) res.packed = bKey!.version;
    return true;
  }
}

/** `dst[to + r·width + j] = src[from + r·stride + j]` (monomorphic: f32 only). */
function copyRowsF32(
  src: Float32Array,
  from: number,
  rows: number,
  width: number,
  stride: number,
  dst: Float32Array,
  to: number,
): void {
  for (let r = 0, s = from, d = to; r < rows; r++, s += stride) {
    for (let j = 0; j < width; j++, d++) dst[d] = src[s + j]!;
  }
}

/** {@link copyRowsF32} for bfloat16 bit patterns, widened (`bits << 16`, exact) into `dst`. */
function copyRowsBf16(
  src: Uint16Array,
  from: number,
  rows: number,
  width: number,
  stride: number,
  dst: Uint32Array,
  to: number,
): void {
  for (let r = 0, s = from, d = to; r < rows; r++, s += stride) {
    for (let j = 0; j < width; j++, d++) dst[d] = src[s + j]! << 16;
  }
}

/**
 * Which matmul kernel a CPU backend runs: the TypeScript loops, a WebAssembly binary, or the
 * native BLAS (`../cpu/blas.ts`; never chosen by {@link createCpuMatmul} itself).
 */
export type CpuMatmulPath = "ts" | "wasm-relaxed" | "wasm-simd" | "openblas";

/** How a CPU backend chooses its matmul: `auto` (wasm where SIMD exists), `ts` or `wasm`. */
export type CpuKernelsChoice = "auto" | "ts" | "wasm";

/**
 * Products with `n·k` below this run the TypeScript kernel even on the wasm path: copying in and
 * out costs more than it saves there (measured on a 2-core Xeon: at `n = k = 16` a 1-row product
 * took 0.25 µs in TypeScript and 0.28 µs in wasm, a 4-row one 0.70 and 0.35 µs; from
 * `n = k = 32` wasm was faster at every `m`, 1.1–2.3× for one row, 5–12× from 32 rows).
 * The test looks at `n` and `k` only, never at `m`, so a decode step and a prefill of the same
 * weights take the same path and give the same bits.
 *
 * @example Usage
 * ```ts
 * import { WASM_MIN_NK } from "./matmul_wasm.ts";
 * import assert from "node:assert/strict";
 * assert.equal(WASM_MIN_NK, 1024);
 * ```
 */
export const WASM_MIN_NK = 1024;

const instances = new Map<string, WasmMatmul>();

/** Whether a `b` operand is f32 values or bfloat16 bit patterns (a bf16-stored weight). */
function f32OrBf16(b: unknown): boolean {
  return b instanceof Float32Array || b instanceof Uint16Array;
}

/** The inputs with a bf16 `b` widened to f32, for the TypeScript kernel. */
function widenB(inputs: HostArray[]): HostArray[] {
  const b = inputs[1] as HostArray | Uint16Array;
  return b instanceof Uint16Array ? [inputs[0]!, bf16ToF32(b)] : inputs;
}

/** The process-wide instance of a flavour and thread count (shared by every CPU backend). */
function instance(flavour: WasmMatmulFlavour, threads: number): WasmMatmul {
  const key = `${flavour}:${threads}`;
  let mm = instances.get(key);
  if (mm === undefined) instances.set(key, mm = new WasmMatmul(flavour, threads));
  return mm;
}

/**
 * The default thread count of the wasm matmul: `navigator.hardwareConcurrency` (1 where it is
 * unknown), at most 16.
 *
 * @returns The count.
 *
 * @example Usage
 * ```ts
 * import { defaultMatmulThreads } from "./matmul_wasm.ts";
 * import assert from "node:assert/strict";
 * assert.ok(defaultMatmulThreads() >= 1 && defaultMatmulThreads() <= 16);
 * ```
 */
export function defaultMatmulThreads(): number {
  const n = globalThis.navigator?.hardwareConcurrency;
  return typeof n === "number" && n >= 1 ? Math.min(16, Math.floor(n)) : 1;
}

/** A `matmul` kernel and the path it takes. */
export interface CpuMatmul {
  /** What runs products of `n·k >= WASM_MIN_NK` on Float32Array operands. */
  path: CpuMatmulPath;
  /** Threads a large wasm product is split over (1 on the TypeScript path). */
  threads: number;
  /** The kernel (the `matmul` entry of the CPU kernel table). */
  kernel: MatmulKernel;
  /** Tells the kernel a buffer given as a `b` key was freed (see {@link WasmMatmul.release}). */
  release(key: object): void;
  /**
   * The wasm kernel for every size of f32 product (no {@link WASM_MIN_NK} rule, so its bits do
   * not change with `n` or `k`), or null on the TypeScript path.
   */
  direct: MatmulKernel | null;
}

/**
 * The `matmul` kernel for a choice: `"ts"` is the TypeScript kernel; `"auto"` the wasm one with
 * the best flavour this engine validates (relaxed SIMD, else SIMD128), else TypeScript; `"wasm"`
 * like `auto` but throws without WebAssembly SIMD. The wasm kernel hands Float64Array operands
 * (`precision: "f64"`) and products with `n·k < WASM_MIN_NK` to the TypeScript kernel.
 *
 * @param choice The choice.
 * @param flavour Force one binary (tests); default: {@link detectWasmMatmul}.
 * @param threads Threads per large product (default {@link defaultMatmulThreads}); one where
 *   the runtime has no `node:worker_threads` or no shared memory.
 * @returns The kernel and its path.
 *
 * @example Usage
 * ```ts
 * import { createCpuMatmul } from "./matmul_wasm.ts";
 * import assert from "node:assert/strict";
 * const { kernel, path } = createCpuMatmul("ts");
 * assert.equal(path, "ts");
 * const c = new Float32Array(1);
 * const p = { batch: 1, m: 1, n: 1, k: 2, transA: false, transB: false, aBatchStride: 0, bBatchStride: 0 };
 * kernel([new Float32Array([1, 2]), new Float32Array([3, 4])], [c], p);
 * assert.equal(c[0], 11);
 * ```
 */
export function createCpuMatmul(
  choice: CpuKernelsChoice,
  flavour: WasmMatmulFlavour | null = detectWasmMatmul(),
  threads: number = defaultMatmulThreads(),
): CpuMatmul {
  if (!(Number.isInteger(threads) && threads >= 1)) {
    throw new RangeError(`createCpuMatmul: threads must be an integer >= 1, got ${threads}`);
  }
  if (choice !== "auto" && choice !== "ts" && choice !== "wasm") {
    throw new RangeError(
      `createCpuMatmul: kernels must be "auto", "ts" or "wasm", got ${JSON.stringify(choice)}`,
    );
  }
  const none = () => {};
  if (choice === "ts") {
    return { path: "ts", threads: 1, kernel: matmulTs, release: none, direct: null };
  }
  if (flavour === null) {
    if (choice === "wasm") {
      throw new Error(
        'createCpuMatmul: kernels "wasm" needs WebAssembly SIMD, which this engine lacks; ' +
          'use "auto" or "ts"',
      );
    }
    return { path: "ts", threads: 1, kernel: matmulTs, release: none, direct: null };
  }
  const mm = instance(flavour, threads);
  return {
    path: flavour === "relaxed" ? "wasm-relaxed" : "wasm-simd",
    threads: mm.threads,
    release: (key) => mm.release(key),
    direct: (inputs, outputs, p, bKey) => {
      const [a, b] = inputs, [c] = outputs;
      if (a instanceof Float32Array && f32OrBf16(b) && c instanceof Float32Array) {
        mm.run(inputs, outputs, p, bKey);
      } else {
        matmulTs(widenB(inputs), outputs, p);
      }
    },
    kernel: (inputs, outputs, p, bKey) => {
      const [a, b] = inputs, [c] = outputs;
      if (
        p.n * p.k >= WASM_MIN_NK && a instanceof Float32Array && f32OrBf16(b) &&
        c instanceof Float32Array
      ) {
        mm.run(inputs, outputs, p, bKey);
      } else {
        matmulTs(widenB(inputs), outputs, p);
      }
    },
  };
}
