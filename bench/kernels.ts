/**
 * `deno task bench`: kernel throughput per backend. Matmul in GFLOP/s (every variant on WebGPU),
 * memory-bound kernels (softmax, RMSNorm, AdamW, the log-prob gather, decode GEMV) in GB/s; one
 * table per backend on stdout and the same data as JSON under `bench/results/`.
 *
 * Design decisions:
 * - **Kernels, not ops**: each case calls `backend.run` on buffers allocated once, so the numbers
 *   are the kernels' own (no tensor allocation, autograd or pool traffic in the loop).
 * - **Sync**: on WebGPU a measurement is N dispatches followed by `backend.sync()` (submit, then
 *   `queue.onSubmittedWorkDone()`), so it covers the GPU finishing the work, not only recording
 *   it. Every case runs once untimed first (shader compilation, JIT, first touch of the buffers).
 * - **Adaptive iterations**: a timed probe call sets N so that a case takes about
 *   `--target-seconds`; a call slower than half of that is the measurement itself. A case whose
 *   estimated call time (scaled from the previous size) exceeds `--max-call-seconds` is reported
 *   as skipped with the estimate, which keeps the whole run under 3 minutes on a 2-core machine
 *   with a software adapter.
 * - **Bytes** are the compulsory traffic: every input read once and every output written once
 *   (read-modify-write buffers count twice). Kernels that read a row twice (max, then sum) move
 *   more; the formula of each case is in the JSON.
 *
 * Flags: `--quick`, `--sizes 256,512`, `--backend cpu|webgpu` (default both when an adapter
 * exists), `--variants 1,2`, `--peak-gflops <n>`, `--target-seconds <s>`, `--max-call-seconds
 * <s>`, `--out <dir>`, `--no-json`, `--help`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  type Backend,
  type BufferHandle,
  type CpuBackend,
  type CpuMatmulPath,
  createCpuBackend,
  createWebGpuBackend,
  type KernelName,
  type KernelParams,
  loadNativeBlas,
  MATMUL_VARIANTS,
  type MatmulVariant,
  type WebGpuBackend,
} from "@rlvr/tensor";

/** Which backends a run measures. */
export type BenchBackend = "cpu" | "webgpu";

/** Parsed command line of the bench. */
export interface BenchArgs {
  /** Smaller sizes and shorter timings. */
  quick: boolean;
  /** Matmul sizes (square), or null for the defaults. */
  sizes: number[] | null;
  /** Backends to run, or null for cpu plus webgpu when an adapter exists. */
  backends: BenchBackend[] | null;
  /** WebGPU matmul variants to run, or null for all. */
  variants: MatmulVariant[] | null;
  /** Peak FP32 GFLOP/s of the measured device, for a "% of peak" column. */
  peakGflops: number | null;
  /** Target seconds of timed calls per case. */
  targetSeconds: number;
  /** Cases whose estimated call time exceeds this are skipped. */
  maxCallSeconds: number;
  /** Directory of the JSON results. */
  outDir: string;
  /** Whether to write JSON. */
  json: boolean;
  /** Print the usage and exit. */
  help: boolean;
}

/** Usage text of the bench. */
export const USAGE = `deno task bench [flags]   (deno run -A bench/kernels.ts)
  --quick                 matmul 256 and 512, small memory-bound cases, shorter timings
  --sizes 256,512,...     matmul sizes (square m = n = k); 4096 runs only when listed here or
                          on a hardware adapter
  --backend cpu|webgpu    one backend (repeatable; default cpu, plus webgpu when an adapter exists)
  --variants 1,2,3        WebGPU matmul variants (default all)
  --peak-gflops <n>       FP32 peak of the device: adds "% of peak" to the matmul table
  --target-seconds <s>    timed seconds per case (default 1, --quick 0.25)
  --max-call-seconds <s>  skip a case whose estimated single call takes longer (default 45)
  --out <dir>             JSON directory (default bench/results)
  --no-json               do not write JSON`;

/**
 * A flag's value as a number > 0; the error names the flag and the value.
 *
 * @param flag The flag, e.g. `--peak-gflops`.
 * @param v Its value.
 * @returns The number.
 *
 * @example Usage
 * ```ts
 * import { positiveNumber } from "./kernels.ts";
 * import assert from "node:assert/strict";
 * assert.equal(positiveNumber("--peak-gflops", "67000"), 67000);
 * assert.throws(() => positiveNumber("--peak-gflops", "0"), /--peak-gflops must be a number > 0/);
 * ```
 */
export function positiveNumber(flag: string, v: string): number {
  const x = Number(v);
  if (!(Number.isFinite(x) && x > 0)) {
    throw new RangeError(`bench: ${flag} must be a number > 0, got ${JSON.stringify(v)}`);
  }
  return x;
}

function intList(flag: string, v: string): number[] {
  const parts = v.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const xs = parts.map(Number);
  if (xs.length === 0 || !xs.every((x) => Number.isInteger(x) && x >= 1)) {
    throw new RangeError(
      `bench: ${flag} must be a comma-separated list of integers >= 1, got ${JSON.stringify(v)}`,
    );
  }
  return xs;
}

/**
 * Parses the bench's command line. Throws a `RangeError` naming the flag, the bad value and what
 * it must be.
 *
 * @param argv The arguments after the script name.
 * @returns The parsed arguments with defaults filled in.
 *
 * @example Usage
 * ```ts
 * import { parseBenchArgs } from "./kernels.ts";
 * import assert from "node:assert/strict";
 * const a = parseBenchArgs(["--quick", "--sizes", "256,512", "--backend", "cpu"]);
 * assert.deepEqual([a.quick, a.sizes, a.backends, a.targetSeconds], [true, [256, 512], ["cpu"], 0.25]);
 * assert.throws(() => parseBenchArgs(["--backend", "tpu"]), /--backend must be cpu or webgpu/);
 * ```
 */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      sizes: { type: "string" },
      backend: { type: "string", multiple: true },
      variants: { type: "string" },
      "peak-gflops": { type: "string" },
      "target-seconds": { type: "string" },
      "max-call-seconds": { type: "string" },
      out: { type: "string" },
      "no-json": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const backends = values.backend?.flatMap((b) => b.split(",")).map((b) => {
    if (b !== "cpu" && b !== "webgpu") {
      throw new RangeError(`bench: --backend must be cpu or webgpu, got ${JSON.stringify(b)}`);
    }
    return b as BenchBackend;
  }) ?? null;
  const variants = values.variants === undefined
    ? null
    : intList("--variants", values.variants).map((v) => {
      if (!(MATMUL_VARIANTS as readonly number[]).includes(v)) {
        throw new RangeError(
          `bench: --variants must list matmul variants among ${
            MATMUL_VARIANTS.join(", ")
          }, got ${v}`,
        );
      }
      return v as MatmulVariant;
    });
  return {
    quick: values.quick,
    sizes: values.sizes === undefined ? null : intList("--sizes", values.sizes),
    backends: backends === null ? null : [...new Set(backends)],
    variants,
    peakGflops: values["peak-gflops"] === undefined
      ? null
      : positiveNumber("--peak-gflops", values["peak-gflops"]),
    targetSeconds: values["target-seconds"] === undefined
      ? (values.quick ? 0.25 : 1)
      : positiveNumber("--target-seconds", values["target-seconds"]),
    maxCallSeconds: values["max-call-seconds"] === undefined
      ? 45
      : positiveNumber("--max-call-seconds", values["max-call-seconds"]),
    outDir: values.out ?? new URL("./results/", import.meta.url).pathname,
    json: !values["no-json"],
    help: values.help,
  };
}

/**
 * How many timed calls to make after a probe call took `probeSeconds`: enough to fill
 * `targetSeconds`, at least 2 and at most `maxIterations`; 1 when the probe alone took half the
 * target or more (the probe is then the measurement).
 *
 * @param probeSeconds Duration of one synced call.
 * @param targetSeconds Wanted total of timed calls.
 * @param maxIterations Upper bound.
 * @returns The number of calls; 1 means "use the probe".
 *
 * @example Usage
 * ```ts
 * import { pickIterations } from "./kernels.ts";
 * import assert from "node:assert/strict";
 * assert.equal(pickIterations(0.01, 1), 100);
 * assert.equal(pickIterations(0.6, 1), 1);
 * assert.equal(pickIterations(1e-7, 1, 500), 500);
 * ```
 */
export function pickIterations(
  probeSeconds: number,
  targetSeconds: number,
  maxIterations = 1000,
): number {
  if (probeSeconds >= targetSeconds / 2) return 1;
  const n = Math.ceil(targetSeconds / Math.max(probeSeconds, 1e-9));
  return Math.max(2, Math.min(maxIterations, n));
}

/** Geometry of one memory-bound case, and its compulsory bytes. */
export interface BandwidthShape {
  /** Kernel name as it appears in the tables. */
  op: "softmax" | "rms_norm" | "adamw" | "logprobs" | "gemv";
  /** Sizes: softmax/rms_norm `[rows, cols]`, adamw `[params]`, logprobs `[rows, vocab]`, gemv `[n, k]`. */
  dims: number[];
}

/**
 * Compulsory bytes moved by one call of a memory-bound kernel (f32 and i32 are 4 bytes; every
 * input read once, every output written once, read-modify-write twice) and the formula as text.
 *
 * @param s The case.
 * @returns `{ bytes, formula }`.
 *
 * @example Usage
 * ```ts
 * import { bandwidthBytes } from "./kernels.ts";
 * import assert from "node:assert/strict";
 * assert.equal(bandwidthBytes({ op: "adamw", dims: [1000] }).bytes, 28_000);
 * assert.equal(bandwidthBytes({ op: "softmax", dims: [2, 10] }).bytes, 160);
 * ```
 */
export function bandwidthBytes(s: BandwidthShape): { bytes: number; formula: string } {
  const [a = 0, b = 0] = s.dims;
  switch (s.op) {
    case "softmax":
      return { bytes: 4 * (2 * a * b), formula: "4·(R·C read x + R·C write y)" };
    case "rms_norm":
      return {
        bytes: 4 * (2 * a * b + b + a),
        formula: "4·(R·C read x + C read w + R·C write y + R write rstd)",
      };
    case "adamw":
      return {
        bytes: 4 * 7 * a,
        formula: "4·(P read grad + 3·P read param/m/v + 3·P write param/m/v)",
      };
    case "logprobs":
      return {
        bytes: 4 * (a * b + 3 * a),
        formula: "4·(N·V read logits + N read tokens + N write logprob + N write lse)",
      };
    case "gemv":
      return {
        bytes: 4 * (b + a * b + a),
        formula: "4·(K read x + N·K read W + N write y)",
      };
  }
}

/** One measured (or skipped) case. */
export interface BenchResult {
  /** `matmul` or a {@link BandwidthShape} op. */
  op: string;
  /** WebGPU matmul variant, or null (CPU, or a non-matmul kernel). */
  variant: MatmulVariant | null;
  /**
   * CPU matmul kernel: `ts`, or the wasm path with its threads (`wasm-relaxed 2T`); absent on
   * WebGPU.
   */
  kernel?: string;
  /** The case's sizes (matmul: `[m, n, k]`). */
  dims: number[];
  /** Human-readable size. */
  label: string;
  /** Floating-point operations per call (2·m·n·k for matmul), or null. */
  flops: number | null;
  /** Compulsory bytes per call, or null. */
  bytes: number | null;
  /** How {@link BenchResult.bytes} is counted. */
  bytesFormula: string | null;
  /** Seconds per call, or null when skipped. */
  secondsPerCall: number | null;
  /** Timed calls averaged. */
  iterations: number;
  /** GFLOP/s, when flops is known and the case ran. */
  gflops: number | null;
  /** GB/s (10⁹ bytes), when bytes is known and the case ran. */
  gbps: number | null;
  /** Percent of `--peak-gflops`, when given. */
  pctOfPeak: number | null;
  /** Why the case did not run, or null. */
  skipped: string | null;
}

/** Machine facts recorded with every result file. */
export interface MachineInfo {
  /** `Deno.version.deno`. */
  deno: string;
  /** `Deno.version.v8`. */
  v8: string;
  /** `Deno.build.os` and `arch`. */
  os: string;
  /** CPU model from /proc/cpuinfo (or "unknown"). */
  cpuModel: string;
  /** Logical cores (`navigator.hardwareConcurrency`). */
  cores: number;
}

async function machineInfo(): Promise<MachineInfo> {
  let cpuModel = "unknown";
  try {
    const text = await Deno.readTextFile("/proc/cpuinfo");
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? cpuModel;
  } catch {
    // Not Linux, or no permission: the model stays unknown.
  }
  return {
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    os: `${Deno.build.os} ${Deno.build.arch}`,
    cpuModel,
    cores: navigator.hardwareConcurrency,
  };
}

/**
 * The JSON file name of one backend's results: backend, adapter (or CPU model) and the ISO date
 * with `:` replaced by `-`, lower-case and free of characters that need quoting.
 *
 * @param backend Backend name.
 * @param device Adapter description or CPU model.
 * @param date When the run started.
 * @returns A file name ending in `.json`.
 *
 * @example Usage
 * ```ts
 * import { resultFileName } from "./kernels.ts";
 * import assert from "node:assert/strict";
 * const name = resultFileName("webgpu", "llvmpipe (LLVM 15.0.6, 256 bits)", new Date(0));
 * assert.equal(name, "webgpu-llvmpipe-llvm-15.0.6-256-bits-1970-01-01T00-00-00Z.json");
 * ```
 */
export function resultFileName(backend: string, device: string, date: Date): string {
  const slug = device.toLowerCase().replace(/[^a-z0-9.]+/g, "-").replace(/^-+|-+$/g, "")
    .slice(0, 60);
  const iso = date.toISOString().replace(/\.\d+Z$/, "Z").replaceAll(":", "-");
  return `${backend}-${slug || "unknown"}-${iso}.json`;
}

// ---------------------------------------------------------------- cases

/** A prepared case: buffers allocated and filled, `run` records one call. */
interface Prepared {
  run(): void;
  free(): void;
}

/** Deterministic values in [-scale, scale) (xorshift32; speed matters more than quality here). */
function fillRandom(n: number, seed: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  let s = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = ((s / 4294967296) * 2 - 1) * scale;
  }
  return out;
}

function prepareKernel<K extends KernelName>(
  backend: Backend,
  kernel: K,
  inputs: { size: number; dtype?: "f32" | "i32"; data?: ArrayLike<number> }[],
  outputs: { size: number; data?: ArrayLike<number> }[],
  params: KernelParams[K],
): Prepared {
  const alloc = (spec: { size: number; dtype?: "f32" | "i32"; data?: ArrayLike<number> }) => {
    const b = backend.alloc(spec.size, spec.dtype ?? "f32");
    if (spec.data !== undefined) backend.write(b, spec.data);
    return b;
  };
  const ins: BufferHandle[] = [];
  const outs: BufferHandle[] = [];
  try {
    for (const s of inputs) ins.push(alloc(s));
    for (const s of outputs) outs.push(alloc(s));
  } catch (e) {
    for (const b of [...ins, ...outs]) backend.free(b);
    throw e;
  }
  return {
    run: () => backend.run(kernel, ins, outs, params),
    free: () => {
      for (const b of [...ins, ...outs]) backend.free(b);
    },
  };
}

function prepareMatmul(backend: Backend, m: number, n: number, k: number, transB: boolean) {
  return prepareKernel(
    backend,
    "matmul",
    [{ size: m * k, data: fillRandom(m * k, 1) }, { size: k * n, data: fillRandom(k * n, 2) }],
    [{ size: m * n }],
    { batch: 1, m, n, k, transA: false, transB, aBatchStride: 0, bBatchStride: 0 },
  );
}

function prepareBandwidth(backend: Backend, s: BandwidthShape): Prepared {
  const [a = 0, b = 0] = s.dims;
  switch (s.op) {
    case "softmax":
      return prepareKernel(backend, "softmax", [{ size: a * b, data: fillRandom(a * b, 3, 4) }], [{
        size: a * b,
      }], { rows: a, cols: b, log: false });
    case "rms_norm":
      return prepareKernel(
        backend,
        "rms_norm",
        [{ size: a * b, data: fillRandom(a * b, 4) }, { size: b, data: fillRandom(b, 5) }],
        [{ size: a * b }, { size: a }],
        { rows: a, cols: b, eps: 1e-6 },
      );
    case "adamw":
      return prepareKernel(
        backend,
        "adamw",
        [{ size: a, data: fillRandom(a, 6, 1e-2) }],
        [{ size: a, data: fillRandom(a, 7) }, { size: a }, { size: a }],
        {
          lr: 1e-3,
          beta1: 0.9,
          beta2: 0.999,
          eps: 1e-8,
          weightDecay: 0.01,
          bc1: 0.1,
          bc2: 0.001,
        },
      );
    case "logprobs": {
      const tokens = Int32Array.from(fillRandom(a, 8), (x) => Math.floor((x + 1) / 2 * b) % b);
      return prepareKernel(
        backend,
        "logprobs",
        [{ size: a * b, data: fillRandom(a * b, 9, 4) }, { size: a, dtype: "i32", data: tokens }],
        [{ size: a }, { size: a }],
        { rows: a, vocab: b },
      );
    }
    case "gemv":
      return prepareMatmul(backend, 1, a, b, true);
  }
}

/** The default cases of a run. */
export interface BenchPlan {
  /** Square matmul sizes. */
  sizes: number[];
  /** Memory-bound cases. */
  bandwidth: BandwidthShape[];
}

/**
 * The sizes a run measures: matmul 256–2048 (256 and 512 with `--quick`; 4096 added on a
 * hardware adapter) unless `--sizes` says otherwise, and the memory-bound cases at realistic
 * RL-fine-tuning sizes (divided by about 8 with `--quick`): softmax over 4096 attention rows of
 * 1024 keys, RMSNorm over 4096 tokens of width 2048, AdamW over a flat buffer of 2²⁴ parameters,
 * log-probs of 128 tokens over a 151,936-entry vocabulary (Qwen2.5) and a decode GEMV
 * `x · Wᵀ` with W of 2048×2048.
 *
 * @param args Parsed arguments.
 * @param hardware Whether the backend is a hardware GPU (adds the 4096³ matmul).
 * @returns The plan.
 *
 * @example Usage
 * ```ts
 * import { benchPlan, parseBenchArgs } from "./kernels.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(benchPlan(parseBenchArgs([]), false).sizes, [256, 512, 1024, 2048]);
 * assert.deepEqual(benchPlan(parseBenchArgs([]), true).sizes, [256, 512, 1024, 2048, 4096]);
 * assert.deepEqual(benchPlan(parseBenchArgs(["--sizes", "4096"]), false).sizes, [4096]);
 * ```
 */
export function benchPlan(args: BenchArgs, hardware: boolean): BenchPlan {
  const sizes = args.sizes ??
    (args.quick ? [256, 512] : [256, 512, 1024, 2048, ...(hardware ? [4096] : [])]);
  const q = args.quick;
  return {
    sizes,
    bandwidth: [
      { op: "softmax", dims: q ? [1024, 512] : [4096, 1024] },
      { op: "rms_norm", dims: q ? [1024, 1024] : [4096, 2048] },
      { op: "adamw", dims: [q ? 2 ** 21 : 2 ** 24] },
      { op: "logprobs", dims: [q ? 16 : 128, 151936] },
      { op: "gemv", dims: q ? [1024, 1024] : [2048, 2048] },
    ],
  };
}

// ---------------------------------------------------------------- timing

const isTty = (() => {
  try {
    return Deno.stderr.isTerminal();
  } catch {
    return false;
  }
})();
const encoder = new TextEncoder();

/**
 * One progress line on stderr: rewritten in place on a terminal; elsewhere (logs, CI) only the
 * first line of each case is written, so a log shows what ran without the per-step noise.
 */
function progress(line: string, first: boolean): void {
  if (isTty) Deno.stderr.writeSync(encoder.encode(`\r\x1b[2K${line}`));
  else if (first) Deno.stderr.writeSync(encoder.encode(`${line}\n`));
}

function progressDone(): void {
  if (isTty) Deno.stderr.writeSync(encoder.encode("\r\x1b[2K"));
}

interface Timing {
  secondsPerCall: number;
  iterations: number;
}

async function time(
  prepared: Prepared,
  sync: () => Promise<void>,
  args: BenchArgs,
  estimate: number | null,
  say: (what: string) => void,
): Promise<Timing> {
  // Untimed first call: compilation, JIT and first touch. Skipped when the same kernel already
  // ran at a smaller size and this call is expected to be long (the probe then measures it).
  if (estimate === null || estimate < 0.5) {
    say("warm-up");
    prepared.run();
    await sync();
  }
  say("probe");
  const t0 = performance.now();
  prepared.run();
  await sync();
  const probe = (performance.now() - t0) / 1e3;
  const n = pickIterations(probe, args.targetSeconds);
  if (n === 1) return { secondsPerCall: probe, iterations: 1 };
  say(`${n} calls`);
  const t1 = performance.now();
  for (let i = 0; i < n; i++) prepared.run();
  await sync();
  return { secondsPerCall: (performance.now() - t1) / 1e3 / n, iterations: n };
}

// ---------------------------------------------------------------- running

/** Everything one backend's run produced (what goes into the JSON file). */
export interface BackendReport {
  /** Format tag. */
  schema: "rlvr-kernel-bench/1";
  /** ISO date of the start of the run. */
  date: string;
  /** `cpu` or `webgpu`. */
  backend: BenchBackend;
  /** The WebGPU adapter, or null for the CPU backend. */
  adapter: { description: string; software: boolean } | null;
  /** Machine facts. */
  machine: MachineInfo;
  /** The command line. */
  argv: string[];
  /** `--peak-gflops`, or null. */
  peakGflops: number | null;
  /** Timing rules, for whoever compares files. */
  method: string;
  /** Every case in run order. */
  results: BenchResult[];
}

const METHOD = "backend.run on preallocated buffers; one untimed call first; a synced probe call " +
  "sets N calls to fill the target time; on WebGPU N dispatches then backend.sync() " +
  "(submit + queue.onSubmittedWorkDone); seconds per call = elapsed / N. GFLOP/s = flops / s / 1e9; " +
  "GB/s = compulsory bytes / s / 1e9.";

async function runBackend(
  backend: Backend,
  kind: BenchBackend,
  args: BenchArgs,
  hardware: boolean,
): Promise<BenchResult[]> {
  const gpu = kind === "webgpu" ? backend as WebGpuBackend : null;
  // CPU: matmul on the backend's own path, then on one thread (when it has more), then on the
  // TypeScript kernel for comparison.
  const cpu = gpu === null ? backend as CpuBackend : null;
  const label = (path: CpuMatmulPath, threads: number) =>
    path === "ts" ? "ts" : `${path} ${threads}T`;
  const cpuPath = cpu === null ? null : label(cpu.matmulPath, cpu.matmulThreads);
  const kernels: { kernel: string | null; on: () => Backend }[] = cpu === null
    ? [{ kernel: null, on: () => backend }]
    : [
      { kernel: cpuPath, on: () => backend },
      ...(cpu.matmulThreads > 1
        ? [{
          kernel: label(cpu.matmulPath, 1),
          on: () => createCpuBackend({ threads: 1 }),
        }]
        : []),
      ...(cpu.matmulPath === "openblas" || loadNativeBlas().lib === null ? [] : [{
        kernel: "openblas",
        on: () => createCpuBackend({ blas: "openblas" }),
      }]),
      ...(cpu.matmulPath === "ts" ? [] : [{
        kernel: "ts",
        on: () => createCpuBackend({ kernels: "ts" }),
      }]),
    ];
  const sync = gpu === null ? () => Promise.resolve() : () => gpu.sync();
  const plan = benchPlan(args, hardware);
  const variants: (MatmulVariant | null)[] = gpu === null
    ? [null]
    : [...(args.variants ?? MATMUL_VARIANTS)];
  const results: BenchResult[] = [];
  const last = new Map<string, { work: number; seconds: number }>();

  const measure = async (
    base: Omit<
      BenchResult,
      "secondsPerCall" | "iterations" | "gflops" | "gbps" | "pctOfPeak" | "skipped"
    >,
    work: number,
    prepare: () => Prepared,
  ) => {
    const key = `${base.op}:${base.variant}:${base.kernel}`;
    const prev = last.get(key);
    const estimate = prev === undefined ? null : prev.seconds * (work / prev.work);
    const v = base.variant !== null
      ? ` v${base.variant}`
      : base.kernel === undefined
      ? ""
      : ` ${base.kernel}`;
    let first = true;
    const say = (what: string) => {
      const name = `[bench] ${kind} ${base.op}${v} ${base.label}`;
      progress(isTty ? `${name}: ${what}` : name, first);
      first = false;
    };
    const result: BenchResult = {
      ...base,
      secondsPerCall: null,
      iterations: 0,
      gflops: null,
      gbps: null,
      pctOfPeak: null,
      skipped: null,
    };
    if (estimate !== null && estimate > args.maxCallSeconds) {
      result.skipped = `estimated ${estimate.toFixed(1)} s per call (from the previous size) > ` +
        `--max-call-seconds ${args.maxCallSeconds}`;
      results.push(result);
      return;
    }
    let prepared: Prepared | null = null;
    try {
      say("allocating");
      prepared = prepare();
      const t = await time(prepared, sync, args, estimate, say);
      result.secondsPerCall = t.secondsPerCall;
      result.iterations = t.iterations;
      if (base.flops !== null) result.gflops = base.flops / t.secondsPerCall / 1e9;
      if (base.bytes !== null) result.gbps = base.bytes / t.secondsPerCall / 1e9;
      if (result.gflops !== null && args.peakGflops !== null && base.op === "matmul") {
        result.pctOfPeak = (100 * result.gflops) / args.peakGflops;
      }
      last.set(key, { work, seconds: t.secondsPerCall });
    } catch (e) {
      result.skipped = `error: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      prepared?.free();
      if (gpu !== null) await gpu.sync().catch(() => {});
    }
    results.push(result);
  };

  try {
    for (const variant of variants) {
      if (gpu !== null && variant !== null) gpu.matmulVariant = variant;
      for (const { kernel, on: make } of kernels) {
        const on = make();
        for (const s of plan.sizes) {
          await measure(
            {
              op: "matmul",
              variant,
              ...(kernel === null ? {} : { kernel }),
              dims: [s, s, s],
              label: `${s}×${s}×${s}`,
              flops: 2 * s ** 3,
              bytes: null,
              bytesFormula: null,
            },
            s ** 3,
            () => prepareMatmul(on, s, s, s, false),
          );
        }
      }
    }
    for (const shape of plan.bandwidth) {
      const { bytes, formula } = bandwidthBytes(shape);
      const vs = shape.op === "gemv" ? variants : [null];
      for (const variant of vs) {
        if (gpu !== null) gpu.matmulVariant = variant ?? "auto";
        const [a = 0, b = 0] = shape.dims;
        await measure(
          {
            op: shape.op,
            variant,
            ...(shape.op === "gemv" && cpuPath !== null ? { kernel: cpuPath } : {}),
            dims: shape.dims,
            label: shape.op === "gemv" ? `1×${b} · (${a}×${b})ᵀ` : shape.dims.join("×"),
            flops: shape.op === "gemv" ? 2 * a * b : null,
            bytes,
            bytesFormula: formula,
          },
          bytes,
          () => prepareBandwidth(backend, shape),
        );
      }
    }
  } finally {
    if (gpu !== null) gpu.matmulVariant = "auto";
    progressDone();
  }
  return results;
}

// ---------------------------------------------------------------- output

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

const fmt = (x: number | null, digits = 2) => (x === null ? "-" : x.toFixed(digits));
const ms = (s: number | null) => (s === null ? "-" : (s * 1e3).toFixed(s < 0.01 ? 3 : 1));

/**
 * The text tables of one backend's report: a title line (backend, adapter and whether it is
 * software, machine), matmul GFLOP/s per size and variant, memory-bound GB/s, and the skipped
 * cases with their reasons.
 *
 * @param r The report.
 * @returns Lines for stdout.
 *
 * @example Usage
 * ```ts
 * import { formatReport } from "./kernels.ts";
 * import assert from "node:assert/strict";
 * const text = formatReport({
 *   schema: "rlvr-kernel-bench/1", date: "1970-01-01T00:00:00.000Z", backend: "cpu", adapter: null,
 *   machine: { deno: "2", v8: "13", os: "linux x86_64", cpuModel: "AMD EPYC", cores: 2 },
 *   argv: [], peakGflops: null, method: "", results: [{
 *     op: "matmul", variant: null, dims: [256, 256, 256], label: "256×256×256", flops: 2 * 256 ** 3,
 *     bytes: null, bytesFormula: null, secondsPerCall: 0.01, iterations: 10, gflops: 3.36,
 *     gbps: null, pctOfPeak: null, skipped: null,
 *   }],
 * });
 * assert.match(text, /256×256×256 +3\.36/);
 * ```
 */
export function formatReport(r: BackendReport): string {
  const m = r.machine;
  const cpuKernels = [...new Set(r.results.map((x) => x.kernel).filter((k) => k !== undefined))];
  const device = r.adapter === null
    ? `CPU backend (matmul: ${
      cpuKernels.join(", ") || "ts"
    }; ts is the TypeScript oracle, other kernels JavaScript loops)`
    : `adapter "${r.adapter.description}" (${
      r.adapter.software ? "SOFTWARE adapter: runs on the CPU, speed meaningless" : "hardware"
    })`;
  const out = [
    `== ${r.backend}: ${device}`,
    `   ${m.cpuModel}, ${m.cores} cores, ${m.os}, Deno ${m.deno}, ${r.date}`,
    "",
  ];
  // Matmul: one row per size, one GFLOP/s column per variant (the best one gets "% of peak").
  const mm = r.results.filter((x) => x.op === "matmul");
  const peak = r.peakGflops !== null;
  if (mm.some((x) => x.skipped === null)) {
    // One column per WebGPU variant, or per CPU kernel.
    const column = (x: BenchResult) => x.variant !== null ? `v${x.variant}` : x.kernel ?? "";
    const variants = [...new Set(mm.map(column))];
    const labels = [...new Set(mm.map((x) => x.label))];
    const name = (v: string) => (v === "" ? "GFLOP/s" : `${v} GFLOP/s`);
    out.push(table(
      [
        "matmul f32 (m×n×k, NN)",
        ...variants.map(name),
        ...(peak ? [`best % of ${r.peakGflops} peak`] : []),
      ],
      labels.map((label) => {
        const row = variants.map((v) => mm.find((x) => x.label === label && column(x) === v));
        const best = Math.max(...row.map((x) => x?.pctOfPeak ?? -1));
        return [
          label,
          ...row.map((x) => (x?.skipped === null ? fmt(x.gflops) : "skipped")),
          ...(peak ? [best < 0 ? "-" : best.toFixed(1)] : []),
        ];
      }),
    ));
    out.push("");
  }
  const bw = r.results.filter((x) => x.op !== "matmul" && x.skipped === null);
  if (bw.length > 0) {
    out.push(table(
      ["memory-bound kernel", "size", "variant", "GB/s", "GFLOP/s", "ms/call", "calls"],
      bw.map((x) => [
        x.op,
        x.label,
        x.variant !== null ? `v${x.variant}` : x.kernel ?? "-",
        fmt(x.gbps),
        fmt(x.gflops),
        ms(x.secondsPerCall),
        String(x.iterations),
      ]),
    ));
    out.push("");
  }
  const skipped = r.results.filter((x) => x.skipped !== null);
  for (const x of skipped) {
    const v = x.variant !== null ? ` v${x.variant}` : x.kernel === undefined ? "" : ` ${x.kernel}`;
    out.push(`skipped: ${x.op}${v} ${x.label}: ${x.skipped}`);
  }
  if (skipped.length > 0) out.push("");
  return out.join("\n");
}

async function main(argv: string[]): Promise<number> {
  let args: BenchArgs;
  try {
    args = parseBenchArgs(argv);
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    console.error(USAGE);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const started = performance.now();
  const machine = await machineInfo();
  const adapter = args.backends === null || args.backends.includes("webgpu")
    ? await navigator.gpu?.requestAdapter() ?? null
    : null;
  const backends = args.backends ?? ["cpu", ...(adapter === null ? [] : ["webgpu" as const])];
  if (args.backends === null && adapter === null) {
    console.log("webgpu: navigator.gpu found no adapter; only the CPU backend is measured\n");
  }
  for (const kind of backends) {
    let backend: Backend;
    let report: BackendReport["adapter"] = null;
    if (kind === "webgpu") {
      if (adapter === null) {
        console.error("bench: --backend webgpu, but navigator.gpu found no adapter");
        return 1;
      }
      const gpu = await createWebGpuBackend({ adapter });
      backend = gpu;
      report = { description: gpu.description, software: gpu.isSoftware };
    } else {
      backend = createCpuBackend();
    }
    const date = new Date();
    try {
      const results = await runBackend(backend, kind, args, report !== null && !report.software);
      const full: BackendReport = {
        schema: "rlvr-kernel-bench/1",
        date: date.toISOString(),
        backend: kind,
        adapter: report,
        machine,
        argv,
        peakGflops: args.peakGflops,
        method: METHOD,
        results,
      };
      console.log(formatReport(full));
      if (args.json) {
        await Deno.mkdir(args.outDir, { recursive: true });
        const file = `${args.outDir.replace(/\/$/, "")}/${
          resultFileName(kind, report?.description ?? machine.cpuModel, date)
        }`;
        await Deno.writeTextFile(file, JSON.stringify(full, null, 2) + "\n");
        console.log(`wrote ${file}\n`);
      }
    } finally {
      if (kind === "webgpu") (backend as WebGpuBackend).destroy();
    }
  }
  console.log(`bench finished in ${((performance.now() - started) / 1e3).toFixed(0)} s`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
