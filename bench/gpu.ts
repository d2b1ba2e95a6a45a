/**
 * `deno task bench:gpu`: the GPU suite in one command. On the WebGPU adapter it measures, and
 * checks for correctness before it measures:
 *
 * 1. f32 matmul at 4096³ (the backend's own kernel choice) and f16 matmul at 4096³
 *    (`shader-f16`, {@link MatmulF16}), in GFLOP/s and % of `--peak-gflops` / `--peak-f16-gflops`;
 * 2. the fused attention kernel (online softmax, `scaledDotProductAttention`) against the
 *    unfused path (`q·kᵀ`, causal mask, softmax, `·v` as separate ops) at a Qwen2.5-0.5B layer's
 *    shape (14 query heads, 2 KV heads, head 64) over 2048 tokens;
 * 3. decode tokens/s of the Qwen2.5-0.5B shape (random weights) at batch 1, 16 and 64 in both of
 *    `generate`'s loops (`decodeLoop` host: logits read back and sampled on the host each step;
 *    device: steps and sampling on the GPU, 16 steps per round trip), batch 1 over
 *    `longTokens` in the device loop, the GPU time per kernel of one device-loop step (every
 *    dispatch timed, `DeviceDecoder.profile`), and the time `CausalLM.random` takes;
 * 4. one GRPO step at that shape: sample 4 prompts × 8 responses (device loop), score them (old
 *    log-probs, no grad), the clipped policy loss with GRPO advantages, backward, clip, AdamW; tokens/s and
 *    MFU (model FLOPs over the step's time, against `--peak-gflops`);
 * 5. peak GPU memory (the backend's buffers: `poolStats().peakAllocatedBytes`).
 *
 * It prints a table and writes JSON and Markdown to `bench/results/`. `--quick` runs every path
 * at toy sizes (a 2-layer model), which is how CI checks the suite on the software adapter; the
 * numbers of a quick run mean nothing. The exit code is 1 when any correctness check fails.
 *
 * Design decisions:
 * - **Checks travel with the numbers**: each section first compares the GPU result with a
 *   reference (the CPU backend, a float64 loop, or the other attention path) and records the
 *   error and the tolerance in the JSON, so a fast number from a wrong kernel cannot be reported.
 * - **Timing**: a warm-up call, then a probe call sets the number of calls for about
 *   `--target-seconds`; every timed call ends with `backend.sync()` (the GPU finished the work).
 * - **The rewards of the GRPO step are synthetic** (the share of even token ids in a response):
 *   the step's cost does not depend on them, and a speed bench should not need a verifier.
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  AdamW,
  type Backend,
  type BufferHandle,
  clipGradNorm,
  createCpuBackend,
  createWebGpuBackend,
  type DispatchCacheStats,
  f16ToF32,
  f32ToF16,
  type KernelParams,
  MatmulF16,
  matmulF16ErrorRatio,
  noGrad,
  Rng,
  scaledDotProductAttention,
  type Tensor,
  tensor,
  tidy,
  uploadF16,
  type WebGpuBackend,
  withBackend,
} from "@rlvr/tensor";
import {
  CausalLM,
  configToHf,
  DeviceDecoder,
  generate,
  KVCache,
  type ModelConfig,
  modelConfig,
  scoreCompletions,
} from "@rlvr/policy";
import { fromRows, grpo } from "@rlvr/advantage";
import { vanillaLoss } from "@rlvr/objectives";
import { QWEN25_05B, randomIds } from "../packages/policy/bench/policy_bench.ts";
import { positiveNumber } from "./kernels.ts";

/** Parsed command line of the suite. */
export interface GpuBenchArgs {
  /** Toy sizes: checks every path, measures nothing meaningful. */
  quick: boolean;
  /** FP32 peak GFLOP/s of the device, for "% of peak" and MFU. */
  peakGflops: number | null;
  /** FP16 (non-tensor-core) peak GFLOP/s, for the f16 matmul's "% of peak". */
  peakF16Gflops: number | null;
  /** Target seconds of timed calls per kernel case. */
  targetSeconds: number;
  /** Directory of the JSON and Markdown results. */
  outDir: string;
  /** Whether to write files. */
  json: boolean;
  /** Python with PyTorch and CUDA for the side-by-side rows, or null to skip them. */
  torch: string | null;
  /** Print the usage and exit. */
  help: boolean;
}

/** Usage text. */
export const USAGE = `deno task bench:gpu [flags]   (deno run -A bench/gpu.ts)
  --quick                  toy sizes: checks every path (CI on the software adapter)
  --peak-gflops <n>        FP32 peak GFLOP/s of the GPU (H100 SXM: 67000): % of peak and MFU
  --peak-f16-gflops <n>    FP16 peak GFLOP/s without tensor cores (H100 SXM: 133800)
  --target-seconds <s>     timed seconds per kernel case (default 1, --quick 0.1)
  --out <dir>              results directory (default bench/results)
  --no-json                write no files
  --torch <python>         also time bench/vs_torch.py on CUDA (same model shape and sizes)
  --help`;

function positive(name: string, v: string | undefined): number | null {
  return v === undefined ? null : positiveNumber(name, v);
}

/**
 * Parses the flags of `deno task bench:gpu`; errors name the flag and the value.
 *
 * @param argv Command-line arguments.
 * @returns The parsed arguments.
 *
 * @example Usage
 * ```ts
 * import { parseGpuBenchArgs } from "./gpu.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseGpuBenchArgs(["--quick"]).targetSeconds, 0.1);
 * assert.equal(parseGpuBenchArgs(["--peak-gflops", "67000"]).peakGflops, 67000);
 * assert.throws(() => parseGpuBenchArgs(["--peak-gflops", "fast"]), /--peak-gflops must be/);
 * ```
 */
export function parseGpuBenchArgs(argv: readonly string[]): GpuBenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      "peak-gflops": { type: "string" },
      "peak-f16-gflops": { type: "string" },
      "target-seconds": { type: "string" },
      out: { type: "string" },
      "no-json": { type: "boolean", default: false },
      torch: { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const quick = values.quick ?? false;
  return {
    quick,
    peakGflops: positive("--peak-gflops", values["peak-gflops"]),
    peakF16Gflops: positive("--peak-f16-gflops", values["peak-f16-gflops"]),
    targetSeconds: positive("--target-seconds", values["target-seconds"]) ?? (quick ? 0.1 : 1),
    outDir: values.out ?? new URL("./results/", import.meta.url).pathname,
    json: !(values["no-json"] ?? false),
    torch: values.torch ?? null,
    help: values.help ?? false,
  };
}

export { QWEN25_05B };

/** A toy model of the same family, for `--quick` and the decode parity check. */
export const TOY_MODEL: ModelConfig = modelConfig({
  modelType: "qwen2",
  vocabSize: 512,
  hiddenSize: 64,
  intermediateSize: 128,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  tieWordEmbeddings: true,
  qkvBias: true,
});

/** Sizes of one run. */
export interface GpuBenchPlan {
  /** Square matmul size (f32 and f16). */
  matmul: number;
  /** Attention shape: query heads, KV heads, tokens, head dim. */
  attention: { heads: number; kvHeads: number; tokens: number; headDim: number };
  /** Model of the decode and GRPO sections. */
  model: ModelConfig;
  /** Human name of that model. */
  modelName: string;
  /** Decode batches. */
  decodeBatches: number[];
  /** Prompt tokens of each decode row. */
  promptTokens: number;
  /** New tokens per decode row. */
  newTokens: number;
  /** New tokens of the long batch-1 run of the device decode loop (its steady state). */
  longTokens: number;
  /** GRPO step: prompts × group responses of up to `newTokens` after `promptTokens`. */
  grpo: { prompts: number; group: number };
}

/**
 * The sizes of a full or a quick run.
 *
 * @param quick Toy sizes.
 * @returns The plan.
 *
 * @example Usage
 * ```ts
 * import { gpuBenchPlan } from "./gpu.ts";
 * import assert from "node:assert/strict";
 * assert.equal(gpuBenchPlan(false).matmul, 4096);
 * assert.deepEqual(gpuBenchPlan(false).decodeBatches, [1, 16, 64]);
 * assert.ok(gpuBenchPlan(true).model.numLayers <= 2);
 * ```
 */
export function gpuBenchPlan(quick: boolean): GpuBenchPlan {
  return quick
    ? {
      matmul: 256,
      attention: { heads: 4, kvHeads: 2, tokens: 64, headDim: 16 },
      model: TOY_MODEL,
      modelName: "toy (2 layers)",
      decodeBatches: [1, 4],
      promptTokens: 8,
      newTokens: 4,
      longTokens: 8,
      grpo: { prompts: 2, group: 2 },
    }
    : {
      matmul: 4096,
      attention: { heads: 14, kvHeads: 2, tokens: 2048, headDim: 64 },
      model: QWEN25_05B,
      modelName: "Qwen2.5-0.5B shape (random weights)",
      decodeBatches: [1, 16, 64],
      promptTokens: 32,
      newTokens: 32,
      longTokens: 256,
      grpo: { prompts: 4, group: 8 },
    };
}

/** A correctness check that ran before a measurement. */
export interface Check {
  /** What was compared. */
  name: string;
  /** Whether the error was within the tolerance. */
  ok: boolean;
  /** The largest error found. */
  error: number;
  /** The tolerance, as a formula or a number. */
  tolerance: string;
}

/** Everything one run measured. */
export interface GpuBenchReport {
  /** Adapter description. */
  adapter: string;
  /** Whether it is a software adapter (numbers then mean nothing). */
  software: boolean;
  /** Quick run. */
  quick: boolean;
  /** ISO date. */
  date: string;
  /** Deno version and host. */
  host: string;
  /** The plan. */
  plan: Omit<GpuBenchPlan, "model"> & { modelParams: number };
  /** Matmul results. */
  matmul: {
    dtype: "f32" | "f16";
    size: number;
    ms: number;
    gflops: number;
    pctOfPeak: number | null;
  }[];
  /** Why the f16 matmul did not run, when it did not. */
  f16Skipped: string | null;
  /** Attention results (milliseconds per call, forward only). */
  attention: { path: "fused" | "unfused"; ms: number; gflops: number }[];
  /** Seconds `CausalLM.random` took for the plan's model. */
  initSeconds: number;
  /**
   * Decode results (`tokensPerS`: generated tokens over the whole call, prefill included;
   * `recordMs`, `readMs`, `sampleMs`: per forward pass, from `GenerationTiming.breakdown`).
   */
  decode: {
    /**
     * `generate`'s `decodeLoop`: logits read back and sampled on the host, or on the GPU;
     * `device, top-k 50 top-p 0.9` with those filters on the GPU (the rest without filters).
     */
    loop: "host" | "device" | "device, top-k 50 top-p 0.9";
    batch: number;
    newTokens: number;
    recordMs: number;
    readMs: number;
    sampleMs: number;
    decodeTokensPerS: number;
    tokensPerS: number;
    msPerStep: number;
    prefillS: number;
  }[];
  /** Why the GRPO step failed, when it did. */
  grpoError: string | null;
  /** The GRPO step (null when it failed). */
  grpoStep: null | {
    rows: number;
    seconds: number;
    generateS: number;
    trainS: number;
    tokens: number;
    tokensPerS: number;
    gflop: number;
    mfu: number | null;
    loss: number;
  };
  /** Peak bytes of the backend's GPU buffers over the model sections. */
  peakGpuBytes: number;
  /**
   * GPU time per kernel of one device-loop step at batch 1 (`DeviceDecoder.profile`, every
   * dispatch in its own timed pass), or why it was not measured.
   */
  deviceProfile?: { kernel: string; dispatches: number; ms: number }[] | { skipped: string };
  /** PyTorch on CUDA, same shapes (`--torch`), or why it did not run. */
  torch: TorchSide | { skipped: string } | null;
  /** Params-uniform and bind-group cache counters at the end (null: the cache is off). */
  dispatchCache: DispatchCacheStats | null;
  /** Every correctness check. */
  checks: Check[];
  /** Seconds the suite took. */
  totalSeconds: number;
}

/** What `bench/vs_torch.py` reports with `"device": "cuda"`. */
export interface TorchSide {
  /** torch version. */
  torch: string;
  /** CUDA device name. */
  device: string;
  /** Parameters of its model (must equal ours). */
  parameters: number;
  /** Generation per batch: new tokens over the whole call, prefill included. */
  generateAll: { batch: number; seconds: number; tokensPerS: number }[];
  /** Log-probs forward of the GRPO step's rows. */
  scoreForward: { batch: number; seqTokens: number; seconds: number; tokensPerS: number };
  /** Forward + backward + AdamW of the same rows. */
  trainStep: { batch: number; seqTokens: number; seconds: number; tokensPerS: number };
}

async function runTorch(
  python: string,
  plan: GpuBenchPlan,
  repeats: number,
): Promise<TorchSide | { skipped: string }> {
  const script = new URL("./vs_torch.py", import.meta.url).pathname;
  const job = {
    config: configToHf(plan.model),
    plan: {
      generateBatch: plan.decodeBatches[0],
      generateBatches: plan.decodeBatches,
      promptTokens: plan.promptTokens,
      newTokens: plan.newTokens,
      scoreBatch: plan.grpo.prompts * plan.grpo.group,
    },
    repeats,
    threads: navigator.hardwareConcurrency,
    device: "cuda",
  };
  try {
    const child = new Deno.Command(python, {
      args: [script],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(JSON.stringify(job)));
    await w.close();
    const out = await child.output();
    if (!out.success) {
      const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join(" | ");
      return { skipped: `${python} ${script} failed: ${err}` };
    }
    return JSON.parse(new TextDecoder().decode(out.stdout)) as TorchSide;
  } catch (e) {
    return { skipped: `could not run ${python}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

async function timeCalls(
  run: () => void,
  gpu: WebGpuBackend,
  targetSeconds: number,
): Promise<number> {
  // Warm-up of at least 0.5 s: shader compilation, and an idle GPU ramping its clocks up (a
  // single warm-up call left a 4096³ matmul at 40% of its speed on an H200).
  const w0 = performance.now();
  for (let i = 0; i < 3 || performance.now() - w0 < 500; i++) {
    run();
    await gpu.sync();
  }
  const t0 = performance.now();
  run();
  await gpu.sync();
  const probe = (performance.now() - t0) / 1e3;
  const calls = Math.max(1, Math.min(500, Math.floor(targetSeconds / Math.max(probe, 1e-6))));
  const t1 = performance.now();
  for (let i = 0; i < calls; i++) run();
  await gpu.sync();
  return (performance.now() - t1) / 1e3 / calls;
}

function randomArray(n: number, rng: Rng): Float32Array {
  return Float32Array.from({ length: n }, () => rng.normal());
}

/** The params of one `[m, k] · [k, n]` matmul, no transposes, no batch. */
function plainMatmul(m: number, n: number, k: number): KernelParams["matmul"] {
  return { batch: 1, m, n, k, transA: false, transB: false, aBatchStride: 0, bBatchStride: 0 };
}

async function checkMatmulF32(gpu: WebGpuBackend, cpu: Backend): Promise<Check> {
  const [m, n, k] = [67, 45, 33];
  const rng = new Rng(11);
  const a = randomArray(m * k, rng);
  const b = randomArray(k * n, rng);
  const on = async (backend: Backend) => {
    const ha = backend.alloc(m * k, "f32");
    const hb = backend.alloc(k * n, "f32");
    const hc = backend.alloc(m * n, "f32");
    backend.write(ha, a);
    backend.write(hb, b);
    backend.run("matmul", [ha, hb], [hc], plainMatmul(m, n, k));
    const out = await backend.read(hc);
    for (const h of [ha, hb, hc]) backend.free(h);
    return out;
  };
  const want = await on(cpu);
  const got = await on(gpu);
  let error = 0;
  for (let i = 0; i < want.length; i++) {
    error = Math.max(error, Math.abs(got[i]! - want[i]!) / (1 + Math.abs(want[i]!)));
  }
  return {
    name: `matmul f32 ${m}×${n}×${k} vs the CPU oracle`,
    ok: error <= 1e-4,
    error,
    tolerance: "|Δ| ≤ 1e-4·(1 + |ref|)",
  };
}

async function benchMatmulF32(gpu: WebGpuBackend, size: number, target: number) {
  const handles: BufferHandle[] = [];
  const rng = new Rng(1);
  for (const len of [size * size, size * size]) {
    const h = gpu.alloc(len, "f32");
    gpu.write(h, randomArray(len, rng));
    handles.push(h);
  }
  const c = gpu.alloc(size * size, "f32");
  const p = plainMatmul(size, size, size);
  try {
    return await timeCalls(
      () => gpu.run("matmul", [handles[0]!, handles[1]!], [c], p),
      gpu,
      target,
    );
  } finally {
    for (const h of [...handles, c]) gpu.free(h);
  }
}

async function checkMatmulF16(mm: MatmulF16): Promise<Check> {
  const [m, n, k] = [67, 44, 36];
  const rng = new Rng(12);
  const a = f16ToF32(f32ToF16(randomArray(m * k, rng)));
  const b = f16ToF32(f32ToF16(randomArray(k * n, rng)));
  // Error over the bound: 1 or less passes.
  const error = matmulF16ErrorRatio(a, b, await mm.multiply(a, b, m, n, k), m, n, k).ratio;
  return {
    name: `matmul f16 ${m}×${n}×${k} vs a float64 reference (error / bound)`,
    ok: error <= 1,
    error,
    tolerance: "|Δ| ≤ 32·2⁻¹¹·Σ|aᵢₖbₖⱼ| + 1e-6 (reported as a ratio, ≤ 1)",
  };
}

async function benchMatmulF16(gpu: WebGpuBackend, mm: MatmulF16, size: number, target: number) {
  const rng = new Rng(2);
  const device = gpu.device;
  const a = uploadF16(device, randomArray(size * size, rng));
  const b = uploadF16(device, randomArray(size * size, rng));
  const c = device.createBuffer({ size: size * size * 4, usage: 0x80 | 0x04 });
  const run = () => {
    const enc = device.createCommandEncoder();
    mm.encode(enc, a, b, c, size, size, size);
    device.queue.submit([enc.finish()]);
  };
  try {
    return await timeCalls(run, gpu, target);
  } finally {
    for (const x of [a, b, c]) x.destroy();
  }
}

/** `softmax(q·kᵀ·scale + causal mask)·v` with every step a separate op (the unfused path). */
function unfusedAttention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor): Tensor {
  const [batch, heads, tokens, d] = q.shape as [number, number, number, number];
  const kvHeads = k.shape[1]!;
  const group = heads / kvHeads;
  const expand = (t: Tensor) =>
    t.reshape(batch, kvHeads, 1, tokens, d).expand(batch, kvHeads, group, tokens, d)
      .reshape(batch, heads, tokens, d);
  const scores = q.matmul(expand(k), { transB: true }).mul(1 / Math.sqrt(d)).add(mask);
  return scores.softmax(-1).matmul(expand(v));
}

async function benchAttention(
  gpu: WebGpuBackend,
  shape: GpuBenchPlan["attention"],
  target: number,
): Promise<{ fusedS: number; unfusedS: number; check: Check; flops: number }> {
  const { heads, kvHeads, tokens, headDim } = shape;
  const rng = new Rng(3);
  const maskValues = new Float32Array(tokens * tokens);
  for (let i = 0; i < tokens; i++) {
    for (let j = i + 1; j < tokens; j++) maskValues[i * tokens + j] = -Infinity;
  }
  return await withBackend(gpu, async () => {
    const q = tensor(randomArray(heads * tokens * headDim, rng), {
      shape: [1, heads, tokens, headDim],
    });
    const k = tensor(randomArray(kvHeads * tokens * headDim, rng), {
      shape: [1, kvHeads, tokens, headDim],
    });
    const v = tensor(randomArray(kvHeads * tokens * headDim, rng), {
      shape: [1, kvHeads, tokens, headDim],
    });
    const mask = tensor(maskValues, { shape: [tokens, tokens] });
    try {
      const fused = noGrad(() => scaledDotProductAttention(q, k, v));
      const unfused = noGrad(() => unfusedAttention(q, k, v, mask));
      const [a, b] = [await fused.data(), await unfused.data()];
      fused.dispose();
      unfused.dispose();
      let error = 0;
      for (let i = 0; i < a.length; i++) error = Math.max(error, Math.abs(a[i]! - b[i]!));
      const check: Check = {
        name:
          `attention fused = unfused (${heads}/${kvHeads} heads, ${tokens} tokens, d ${headDim})`,
        ok: error <= 1e-4,
        error,
        tolerance: "max |Δ| ≤ 1e-4",
      };
      const runFused = () => noGrad(() => scaledDotProductAttention(q, k, v)).dispose();
      const runUnfused = () => noGrad(() => unfusedAttention(q, k, v, mask)).dispose();
      const fusedS = await timeCalls(runFused, gpu, target);
      const unfusedS = await timeCalls(runUnfused, gpu, target);
      // q·kᵀ and p·v over the causal half: 2 · 2 · heads · d · tokens² / 2.
      const flops = 2 * heads * headDim * tokens * tokens;
      return { fusedS, unfusedS, check, flops };
    } finally {
      for (const t of [q, k, v, mask]) t.dispose();
    }
  });
}

/** Scores the same random batch with the toy model on the CPU and on the GPU. */
async function checkScoring(gpu: WebGpuBackend, cpu: Backend): Promise<Check> {
  const rng = new Rng(4);
  const batch = randomIds(rng, 3, 12, TOY_MODEL.vocabSize).map((ids) => ({
    promptIds: ids.slice(0, 5),
    completionIds: ids.slice(5),
  }));
  const on = async (backend: Backend) => {
    const model = withBackend(backend, () => CausalLM.random(TOY_MODEL, { seed: 9 }));
    try {
      return await withBackend(backend, async () => {
        const s = noGrad(() => scoreCompletions(model, batch, { entropy: false }));
        const out = await s.logprobs.data();
        s.logprobs.dispose();
        s.mask.dispose();
        return out;
      });
    } finally {
      model.dispose();
    }
  };
  const want = await on(cpu);
  const got = await on(gpu);
  let error = 0;
  for (let i = 0; i < want.length; i++) error = Math.max(error, Math.abs(got[i]! - want[i]!));
  return {
    name: "decode model: completion log-probs on the GPU = CPU (toy model, same seed)",
    ok: error <= 1e-4,
    error,
    tolerance: "max |Δ logprob| ≤ 1e-4",
  };
}

/**
 * The device decode loop against the host loop on the GPU (toy model, ragged prompts, greedy,
 * T = 1, and T = 1 with top-k 20 and top-p 0.9 on the GPU): the same tokens, log-probs within 2e-4
 * (f32 kernels with other summation orders).
 */
async function checkDeviceLoop(gpu: WebGpuBackend): Promise<Check> {
  const model = withBackend(gpu, () => CausalLM.random(TOY_MODEL, { seed: 4, std: 0.5 }));
  const prompts = [[5, 9, 2, 7], [11], [3, 3, 8]];
  let error = 0;
  let sameTokens = true;
  try {
    for (
      const sampler of [
        { seed: 6, temperature: 0 },
        { seed: 6, temperature: 1 },
        { seed: 6, temperature: 1, topK: 20, topP: 0.9 },
      ]
    ) {
      const opts = { maxNewTokens: 12, sampler, eosTokenIds: [] };
      const host = await generate(model, prompts, opts);
      const dev = await generate(model, prompts, { ...opts, decodeLoop: "device" });
      dev.sequences.forEach((s, i) => {
        const h = host.sequences[i]!;
        if (s.tokens.join() !== h.tokens.join()) sameTokens = false;
        s.scaledLogprobs.forEach((lp, j) => {
          error = Math.max(error, Math.abs(lp - (h.scaledLogprobs[j] ?? Infinity)));
          error = Math.max(error, Math.abs(s.logprobs[j]! - (h.logprobs[j] ?? Infinity)));
        });
      });
    }
  } finally {
    model.dispose();
  }
  return {
    name:
      "device decode loop: the host loop's tokens and log-probs (toy model, T = 0, 1, 1 with top-k/top-p)",
    ok: sameTokens && error <= 2e-4,
    error: sameTokens ? error : Infinity,
    tolerance: "same tokens, max |Δ logprob| ≤ 2e-4",
  };
}

/**
 * One device-loop step at batch 1 with every dispatch timed on the GPU: a prefill of
 * `promptTokens` into a cache, then `DeviceDecoder.profile` on three steps (the last is kept, the
 * first two warm up).
 */
async function profileDeviceStep(
  model: CausalLM,
  gpu: WebGpuBackend,
  plan: GpuBenchPlan,
  rng: Rng,
): Promise<NonNullable<GpuBenchReport["deviceProfile"]>> {
  if (!gpu.device.features.has("timestamp-query")) {
    return { skipped: "the adapter does not offer timestamp-query" };
  }
  const cache = new KVCache(plan.model, 1);
  const ids = randomIds(rng, 1, plan.promptTokens, plan.model.vocabSize);
  let dec: DeviceDecoder | null = null;
  try {
    noGrad(() => model.forward(tensor(ids, { dtype: "i32", backend: gpu }), { cache }).dispose());
    dec = new DeviceDecoder(model, {
      rows: 1,
      maxLen: plan.promptTokens + 4,
      maxSteps: 4,
      temperature: 1,
    });
    await dec.checked();
    dec.start(cache, { pads: [0], tokens: [1], step: 1 }, new Float32Array([0, 0.5, 0.5, 0.5]));
    await dec.profile(1);
    await dec.profile(2);
    return await dec.profile(3);
  } catch (e) {
    return { skipped: `failed: ${e instanceof Error ? e.message : String(e)}` };
  } finally {
    dec?.dispose();
    cache.dispose();
  }
}

/** FLOPs of the model's matmuls per token (attention scores left out: short sequences here). */
function flopsPerToken(c: ModelConfig): number {
  const d = c.hiddenSize;
  const kv = c.numKvHeads * c.headDim;
  const perLayer = d * (c.numHeads * c.headDim) * 2 + d * kv * 2 + 3 * d * c.intermediateSize;
  return 2 * (c.numLayers * perLayer + d * c.vocabSize);
}

async function grpoStep(
  model: CausalLM,
  optimizer: AdamW,
  gpu: WebGpuBackend,
  plan: GpuBenchPlan,
  step: number,
) {
  const rng = new Rng(100 + step);
  const { prompts, group } = plan.grpo;
  const promptIds = randomIds(rng, prompts, plan.promptTokens, plan.model.vocabSize);
  const t0 = performance.now();
  const rows = promptIds.flatMap((p) => Array.from({ length: group }, () => p));
  const { sequences } = await generate(model, rows, {
    maxNewTokens: plan.newTokens,
    sampler: { seed: step, temperature: 1 },
    eosTokenIds: [],
    decodeLoop: "device",
  });
  const tGen = performance.now();
  const items = sequences.map((s) => ({ promptIds: s.promptIds, completionIds: s.tokens }));
  const rewards = sequences.map((s) =>
    s.tokens.length === 0 ? 0 : s.tokens.filter((t) => t % 2 === 0).length / s.tokens.length
  );
  const width = Math.max(...sequences.map((s) => s.tokens.length));
  const maskRows = sequences.map((s) =>
    Array.from({ length: width }, (_, j) => (j < s.tokens.length ? 1 : 0))
  );
  const responseMask = fromRows(maskRows);
  const { advantages } = grpo({
    rewards,
    responseMask,
    index: sequences.map((_, i) => String(Math.floor(i / group))),
  });
  let loss = NaN;
  await withBackend(gpu, async () => {
    const old = noGrad(() => scoreCompletions(model, items, { entropy: false }));
    optimizer.zeroGrad();
    const lossT = tidy(() => {
      const s = scoreCompletions(model, items, { entropy: false });
      const adv = tensor(Float32Array.from(advantages), { shape: s.logprobs.shape });
      const out = vanillaLoss({
        logProbs: s.logprobs,
        oldLogProbs: old.logprobs,
        advantages: adv,
        responseMask: s.mask,
      }).loss;
      out.backward();
      return out;
    });
    loss = await lossT.item();
    lossT.dispose();
    for (const t of [old.logprobs, old.mask]) t.dispose();
    await clipGradNorm(model.parameters(), 1);
    optimizer.step();
    await gpu.sync();
  });
  const t1 = performance.now();
  const tokens = items.reduce((a, it) => a + it.promptIds.length + it.completionIds.length, 0);
  const generated = items.reduce((a, it) => a + it.completionIds.length, 0);
  const promptTokens = tokens - generated;
  // Model FLOPs: generation (prefill + one token per step), old log-probs (forward), the
  // training forward and backward (3 × forward).
  const f = flopsPerToken(plan.model);
  const flops = f * (promptTokens + generated) + f * tokens + 3 * f * tokens;
  return {
    seconds: (t1 - t0) / 1e3,
    generateS: (tGen - t0) / 1e3,
    trainS: (t1 - tGen) / 1e3,
    tokens,
    flops,
    loss,
  };
}

/**
 * Runs the suite on `gpu`.
 *
 * @param gpu The WebGPU backend.
 * @param args Parsed flags.
 * @param progress Receives a line per stage.
 * @returns The report.
 *
 * @example Usage
 * ```ts ignore
 * import { createWebGpuBackend } from "@rlvr/tensor";
 * import { parseGpuBenchArgs, runGpuBench } from "./gpu.ts";
 * const report = await runGpuBench(await createWebGpuBackend(), parseGpuBenchArgs(["--quick"]));
 * console.log(report.checks.every((c) => c.ok));
 * ```
 */
export async function runGpuBench(
  gpu: WebGpuBackend,
  args: GpuBenchArgs,
  progress: (line: string) => void = () => {},
): Promise<GpuBenchReport> {
  const start = performance.now();
  const plan = gpuBenchPlan(args.quick);
  const cpu = createCpuBackend();
  const checks: Check[] = [];
  const target = args.targetSeconds;

  progress(`matmul f32 ${plan.matmul}³`);
  checks.push(await checkMatmulF32(gpu, cpu));
  const matmul: GpuBenchReport["matmul"] = [];
  const n3 = 2 * plan.matmul ** 3;
  const f32S = await benchMatmulF32(gpu, plan.matmul, target);
  matmul.push({
    dtype: "f32",
    size: plan.matmul,
    ms: f32S * 1e3,
    gflops: n3 / f32S / 1e9,
    pctOfPeak: args.peakGflops === null ? null : (100 * n3 / f32S / 1e9) / args.peakGflops,
  });
  progress(`matmul f32: ${matmul[0]!.gflops.toFixed(0)} GFLOP/s`);
  let f16Skipped: string | null = null;
  if (gpu.device.features.has("shader-f16")) {
    progress(`matmul f16 ${plan.matmul}³`);
    const mm = new MatmulF16(gpu.device);
    checks.push(await checkMatmulF16(mm));
    const f16S = await benchMatmulF16(gpu, mm, plan.matmul, target);
    matmul.push({
      dtype: "f16",
      size: plan.matmul,
      ms: f16S * 1e3,
      gflops: n3 / f16S / 1e9,
      pctOfPeak: args.peakF16Gflops === null ? null : (100 * n3 / f16S / 1e9) / args.peakF16Gflops,
    });
  } else {
    f16Skipped = "the adapter does not offer shader-f16";
  }

  progress(`attention fused vs unfused, ${plan.attention.tokens} tokens`);
  const att = await benchAttention(gpu, plan.attention, target);
  checks.push(att.check);
  progress(
    `attention: fused ${(att.fusedS * 1e3).toFixed(3)} ms, unfused ${
      (att.unfusedS * 1e3).toFixed(3)
    } ms, max |Δ| ${att.check.error.toExponential(2)}`,
  );
  const attention: GpuBenchReport["attention"] = [
    { path: "fused", ms: att.fusedS * 1e3, gflops: att.flops / att.fusedS / 1e9 },
    { path: "unfused", ms: att.unfusedS * 1e3, gflops: att.flops / att.unfusedS / 1e9 },
  ];

  progress("decode model parity (toy model, CPU vs GPU)");
  checks.push(await checkScoring(gpu, cpu));
  progress("device decode loop = host loop (toy model)");
  checks.push(await checkDeviceLoop(gpu));

  await gpu.sync();
  gpu.resetPeakMemory();
  progress(`CausalLM.random: ${plan.modelName}`);
  const t0 = performance.now();
  const model = withBackend(gpu, () => CausalLM.random(plan.model, { seed: 0 }));
  await gpu.sync();
  const initSeconds = (performance.now() - t0) / 1e3;
  progress(`CausalLM.random: ${initSeconds.toFixed(2)} s`);
  const modelParams = model.parameters().reduce((a, p) => a + p.size, 0);
  const decode: GpuBenchReport["decode"] = [];
  let deviceProfile: GpuBenchReport["deviceProfile"] = { skipped: "not reached" };
  const optimizer = new AdamW(model.parameters(), { lr: 1e-6 });
  let grpoResult: GpuBenchReport["grpoStep"] = null;
  let grpoError: string | null = null;
  try {
    const rng = new Rng(5);
    await generate(model, randomIds(rng, 1, 4, plan.model.vocabSize), {
      maxNewTokens: 2,
      sampler: { seed: 1, temperature: 1 },
      eosTokenIds: [],
    });
    await generate(model, randomIds(rng, 1, 4, plan.model.vocabSize), {
      maxNewTokens: 3,
      sampler: { seed: 1, temperature: 1 },
      eosTokenIds: [],
      decodeLoop: "device",
    });
    type Loop = GpuBenchReport["decode"][number]["loop"];
    const runs: [number, number, Loop][] = plan.decodeBatches.flatMap((b) => [
      [b, plan.newTokens, "host"] as [number, number, Loop],
      [b, plan.newTokens, "device"] as [number, number, Loop],
    ]);
    runs.push([1, plan.longTokens, "device"]);
    // What the filters' bisections (64 workgroup reductions a step) cost on the GPU.
    const filtered = "device, top-k 50 top-p 0.9" as const;
    for (const b of plan.decodeBatches.slice(0, 2)) runs.push([b, plan.newTokens, filtered]);
    for (const [batch, newTokens, loop] of runs) {
      const what = `decode batch ${batch} (${loop} loop)`;
      progress(`${what}: ${plan.promptTokens} + ${newTokens} tokens`);
      const { timing } = await generate(
        model,
        randomIds(rng, batch, plan.promptTokens, plan.model.vocabSize),
        {
          maxNewTokens: newTokens,
          sampler: {
            seed: 2,
            temperature: 1,
            ...(loop === filtered ? { topK: 50, topP: 0.9 } : {}),
          },
          eosTokenIds: [],
          decodeLoop: loop === "host" ? "host" : "device",
        },
      );
      const passes = timing.rowsPerStep.length;
      decode.push({
        loop,
        batch,
        newTokens,
        recordMs: (timing.breakdown.recordS * 1e3) / passes,
        readMs: (timing.breakdown.readS * 1e3) / passes,
        sampleMs: (timing.breakdown.sampleS * 1e3) / passes,
        decodeTokensPerS: timing.decodeTokensPerS,
        tokensPerS: timing.tokensPerS,
        msPerStep: timing.decodeSteps > 0 ? (timing.decodeS * 1e3) / timing.decodeSteps : 0,
        prefillS: timing.prefillS,
      });
      progress(`${what}: ${timing.decodeTokensPerS.toFixed(1)} tokens/s`);
    }
    progress("device loop: GPU time per kernel of one step at batch 1");
    deviceProfile = await profileDeviceStep(model, gpu, plan, rng);
    try {
      progress(`GRPO step (warm-up): ${plan.grpo.prompts} × ${plan.grpo.group}`);
      const before = await model.params.get("model.norm.weight")!.data();
      await grpoStep(model, optimizer, gpu, plan, 0);
      progress(`GRPO step (timed)`);
      const g = await grpoStep(model, optimizer, gpu, plan, 1);
      const after = await model.params.get("model.norm.weight")!.data();
      let moved = 0;
      for (let i = 0; i < before.length; i++) {
        moved = Math.max(moved, Math.abs(after[i]! - before[i]!));
      }
      checks.push({
        name: "GRPO step: finite loss, parameters moved",
        ok: Number.isFinite(g.loss) && moved > 0,
        error: moved,
        tolerance: "loss finite and max |Δ norm weight| > 0",
      });
      grpoResult = {
        rows: plan.grpo.prompts * plan.grpo.group,
        seconds: g.seconds,
        generateS: g.generateS,
        trainS: g.trainS,
        tokens: g.tokens,
        tokensPerS: g.tokens / g.seconds,
        gflop: g.flops / 1e9,
        mfu: args.peakGflops === null ? null : g.flops / g.seconds / 1e9 / args.peakGflops,
        loss: g.loss,
      };
      progress(
        `GRPO step: ${grpoResult.seconds.toFixed(2)} s, ${
          grpoResult.tokensPerS.toFixed(1)
        } tokens/s`,
      );
    } catch (e) {
      // A failed step (say, a buffer over the device's binding limit) keeps the other numbers.
      grpoError = e instanceof Error ? e.message : String(e);
      progress(`GRPO step failed: ${grpoError}`);
      checks.push({ name: "GRPO step ran", ok: false, error: 1, tolerance: grpoError });
    }
  } finally {
    optimizer.dispose();
    model.dispose();
  }
  await gpu.sync();
  let torch: GpuBenchReport["torch"] = null;
  if (args.torch !== null) {
    progress(`PyTorch side (${args.torch} bench/vs_torch.py, device cuda)`);
    torch = await runTorch(args.torch, plan, args.quick ? 1 : 3);
    if ("parameters" in torch) {
      checks.push({
        name: "PyTorch model: the same parameter count as ours",
        ok: torch.parameters === modelParams,
        error: Math.abs(torch.parameters - modelParams),
        tolerance: "equal",
      });
    }
  }
  const { model: _m, ...planRest } = plan;
  return {
    adapter: gpu.description,
    software: gpu.isSoftware,
    quick: args.quick,
    date: new Date().toISOString(),
    host: `Deno ${Deno.version.deno}, ${Deno.build.os} ${Deno.build.arch}, ` +
      `${navigator.hardwareConcurrency} cores`,
    plan: { ...planRest, modelParams },
    matmul,
    f16Skipped,
    attention,
    initSeconds,
    decode,
    grpoStep: grpoResult,
    grpoError,
    peakGpuBytes: gpu.poolStats().peakAllocatedBytes,
    deviceProfile,
    torch,
    dispatchCache: gpu.dispatchCacheStats(),
    checks,
    totalSeconds: (performance.now() - start) / 1e3,
  };
}

const fx = (x: number, d = 1) => x.toFixed(d);

/**
 * The report as Markdown (printed, and written beside the JSON).
 *
 * @param r The report.
 * @returns Markdown text.
 *
 * @example Usage
 * ```ts ignore
 * import { formatGpuReport } from "./gpu.ts";
 * console.log(formatGpuReport(report));
 * ```
 */
export function formatGpuReport(r: GpuBenchReport): string {
  const lines: string[] = [];
  lines.push(`## bench:gpu on ${r.adapter}${r.software ? " (software adapter)" : ""}`);
  lines.push("");
  lines.push(`${r.date}, ${r.host}${r.quick ? ", --quick (toy sizes)" : ""}`);
  lines.push("");
  lines.push("| matmul | size | ms | GFLOP/s | % of peak |");
  lines.push("|---|---:|---:|---:|---:|");
  for (const m of r.matmul) {
    lines.push(
      `| ${m.dtype} | ${m.size}³ | ${fx(m.ms, 3)} | ${fx(m.gflops)} | ${
        m.pctOfPeak === null ? "-" : fx(m.pctOfPeak)
      } |`,
    );
  }
  if (r.f16Skipped !== null) lines.push(`\nf16 matmul not run: ${r.f16Skipped}.`);
  const a = r.plan.attention;
  lines.push("");
  lines.push(
    `| attention (${a.heads}/${a.kvHeads} heads, ${a.tokens} tokens, d ${a.headDim}, causal) | ms | GFLOP/s |`,
  );
  lines.push("|---|---:|---:|");
  for (const x of r.attention) lines.push(`| ${x.path} | ${fx(x.ms, 3)} | ${fx(x.gflops)} |`);
  lines.push("");
  lines.push(
    `Model: ${r.plan.modelName}, ${r.plan.modelParams.toLocaleString("en-US")} parameters; ` +
      `CausalLM.random ${fx(r.initSeconds, 2)} s.`,
  );
  lines.push("");
  const t = r.torch !== null && "generateAll" in r.torch ? r.torch : null;
  lines.push(
    `| decode loop | batch | new tokens | decode tokens/s | ms/step | ` +
      `prefill s (${r.plan.promptTokens} tokens) | whole call tokens/s | PyTorch whole call tokens/s | host record / read / sample ms per pass |`,
  );
  lines.push("|---|---:|---:|---:|---:|---:|---:|---:|---|");
  for (const d of r.decode) {
    const tg = d.newTokens === r.plan.newTokens
      ? t?.generateAll.find((x) => x.batch === d.batch)
      : undefined;
    lines.push(
      `| ${d.loop} | ${d.batch} | ${d.newTokens} | ${fx(d.decodeTokensPerS)} | ${
        fx(d.msPerStep, 2)
      } | ${fx(d.prefillS, 3)} | ` +
        `${fx(d.tokensPerS)} | ${tg === undefined ? "-" : fx(tg.tokensPerS)} | ` +
        `${fx(d.recordMs, 2)} / ${fx(d.readMs, 2)} / ${fx(d.sampleMs, 2)} |`,
    );
  }
  const g = r.grpoStep;
  lines.push("");
  if (g === null) lines.push(`GRPO step failed: ${r.grpoError}`);
  else {
    lines.push(
      "| GRPO step (device decode loop) | rows | s | generate s | score+train s | tokens/s | " +
        "GFLOP | MFU |",
    );
    lines.push("|---|---:|---:|---:|---:|---:|---:|---:|");
    lines.push(
      `| ${r.plan.grpo.prompts} × ${r.plan.grpo.group} | ${g.rows} | ${fx(g.seconds, 2)} | ${
        fx(g.generateS, 2)
      } | ${fx(g.trainS, 2)} | ${fx(g.tokensPerS)} | ${fx(g.gflop)} | ${
        g.mfu === null ? "-" : `${fx(100 * g.mfu, 2)}%`
      } |`,
    );
  }
  if (t !== null) {
    lines.push("");
    lines.push(
      `PyTorch ${t.torch} on ${t.device} (bench/vs_torch.py, f32, eager), ${
        t.parameters.toLocaleString("en-US")
      } parameters, ` +
        `${t.trainStep.batch} rows × ${t.trainStep.seqTokens} tokens: log-probs forward ` +
        `${fx(t.scoreForward.seconds, 3)} s, forward + backward + AdamW ${
          fx(t.trainStep.seconds, 3)
        } s.`,
    );
  } else if (r.torch !== null && "skipped" in r.torch) {
    lines.push("");
    lines.push(`PyTorch side not run: ${r.torch.skipped}`);
  }
  lines.push("");
  lines.push(`Peak GPU memory (the backend's buffers): ${fx(r.peakGpuBytes / 2 ** 30, 2)} GiB.`);
  const prof = r.deviceProfile;
  if (prof !== undefined && "skipped" in prof) {
    lines.push("", `Device-loop step profile not measured: ${prof.skipped}`);
  } else if (prof !== undefined) {
    const total = prof.reduce((a, p) => a + p.ms, 0);
    lines.push(
      "",
      "| device-loop step at batch 1, GPU time per kernel | dispatches | ms | share |",
    );
    lines.push("|---|---:|---:|---:|");
    for (const p of prof) {
      lines.push(
        `| ${p.kernel.replaceAll("|", "\\|")} | ${p.dispatches} | ${fx(p.ms, 3)} | ${
          fx((100 * p.ms) / total)
        }% |`,
      );
    }
    const dispatches = prof.reduce((a, p) => a + p.dispatches, 0);
    lines.push(`| all (each dispatch in its own pass) | ${dispatches} | ${fx(total, 3)} | |`);
  }
  if (r.dispatchCache !== null) {
    const c = r.dispatchCache;
    lines.push(
      `Dispatch cache: ${c.hits} hits, ${c.misses} misses (${c.uniforms} uniforms, ` +
        `${c.bindGroups} bind groups held).`,
    );
  }
  lines.push("");
  lines.push("| check | ok | error | tolerance |");
  lines.push("|---|---|---:|---|");
  for (const c of r.checks) {
    const cell = (x: string) => x.replaceAll("|", "\\|");
    lines.push(
      `| ${cell(c.name)} | ${c.ok ? "yes" : "**NO**"} | ${c.error.toExponential(2)} | ${
        cell(c.tolerance)
      } |`,
    );
  }
  lines.push("");
  lines.push(`Suite finished in ${fx(r.totalSeconds)} s.`);
  return lines.join("\n");
}

/**
 * The command: parses flags, runs the suite on the default adapter, prints and writes results.
 *
 * @param argv Command-line arguments.
 * @returns The exit code: 0, 1 when a check failed, 2 on bad flags or no adapter.
 *
 * @example Usage
 * ```ts ignore
 * import { main } from "./gpu.ts";
 * Deno.exit(await main(["--quick"]));
 * ```
 */
export async function main(argv: readonly string[]): Promise<number> {
  let args: GpuBenchArgs;
  try {
    args = parseGpuBenchArgs(argv);
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    console.error(USAGE);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (navigator.gpu === undefined || (await navigator.gpu.requestAdapter()) === null) {
    console.error("bench:gpu: navigator.gpu found no adapter; nothing to measure");
    return 2;
  }
  const gpu = await createWebGpuBackend();
  try {
    const report = await runGpuBench(gpu, args, (line) => console.error(`[bench:gpu] ${line}`));
    const md = formatGpuReport(report);
    console.log(md);
    if (args.json) {
      await Deno.mkdir(args.outDir, { recursive: true });
      const stem = `gpu-${report.adapter}-${report.date}`.toLowerCase()
        .replace(/[^a-z0-9.-]+/g, "-").replace(/-+/g, "-");
      const base = `${args.outDir.replace(/\/$/, "")}/${stem}`;
      await Deno.writeTextFile(`${base}.json`, JSON.stringify(report, null, 2) + "\n");
      await Deno.writeTextFile(`${base}.md`, md + "\n");
      console.log(`\nwrote ${base}.json and .md`);
    }
    return report.checks.every((c) => c.ok) ? 0 : 1;
  } finally {
    gpu.destroy();
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
