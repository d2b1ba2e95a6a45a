/**
 * The policy bench (`deno run -A bench/policy.ts`): generation tokens/s of {@link generate}
 * (KV-cached, batch 8 and 32, 32-token prompts, 64 new tokens) and scoring tokens/s of
 * {@link scoreCompletions} (forward only, and forward + backward), for a ~10M-parameter
 * Qwen2-shaped model with random weights, per backend; a table on stdout and the same data as
 * JSON under `bench/results/`.
 *
 * Design decisions:
 * - **Whole calls, not kernels**: each number is one public call timed end to end (host
 *   sampling, cache bookkeeping, allocation, reading results back), because that is what a
 *   rollout or a learner step pays. Kernel throughput is `bench/kernels.ts`'s job.
 * - **Random weights, no EOS**: every sequence runs the full `newTokens`, so the work per call
 *   is fixed and runs are comparable. Real rollouts end early and shrink the decode batch.
 * - **Warm-up then median**: one small untimed call first (JIT, shader compilation), then the
 *   median of `repeats` timed calls (1 with `--quick`, 3 otherwise).
 * - **Sync**: generation reads every step's logits back and scoring reads its results (and the
 *   backward pass one gradient) back, so WebGPU timings include the GPU finishing the work.
 * - A software WebGPU adapter (llvmpipe, SwiftShader) runs the shaders on the CPU; its numbers
 *   are reported but labelled "speed meaningless", and `--quick` runs it with 16 new tokens
 *   instead of 64 (a check that the path works, within the ~2 minutes of a quick run).
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  type Backend,
  createCpuBackend,
  createWebGpuBackend,
  noGrad,
  Rng,
  tidy,
  withBackend,
} from "@rlvr/tensor";
import {
  CausalLM,
  configToHf,
  generate,
  type ModelConfig,
  modelConfig,
  parameterCount,
  scoreCompletions,
} from "@rlvr/policy";

/** A backend the bench can measure. */
export type PolicyBenchBackend = "cpu" | "webgpu";

/**
 * The bench model: Qwen2-shaped (QKV bias, GQA 8 heads / 2 kv heads), vocabulary 4096, hidden
 * 256, 12 layers, SwiGLU width 688, untied LM head: 10,414,848 parameters.
 *
 * @example Usage
 * ```ts
 * import { BENCH_CONFIG } from "./policy_bench.ts";
 * import { parameterCount } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * assert.equal(parameterCount(BENCH_CONFIG), 10414848);
 * ```
 */
export const BENCH_CONFIG: ModelConfig = modelConfig({
  modelType: "qwen2",
  vocabSize: 4096,
  hiddenSize: 256,
  intermediateSize: 688,
  numLayers: 12,
  numHeads: 8,
  numKvHeads: 2,
  tieWordEmbeddings: false,
});

/**
 * The Qwen2.5-0.5B shape (hidden 896, 24 layers, 14 heads / 2 KV heads, intermediate 4864,
 * vocab 151936, tied embeddings; 494M parameters). Weights are random in the bench.
 *
 * @example Usage
 * ```ts
 * import { QWEN25_05B } from "./policy_bench.ts";
 * import assert from "node:assert/strict";
 * assert.equal(QWEN25_05B.numLayers, 24);
 * assert.equal(QWEN25_05B.headDim, 64);
 * ```
 */
export const QWEN25_05B: ModelConfig = modelConfig({
  modelType: "qwen2",
  vocabSize: 151936,
  hiddenSize: 896,
  intermediateSize: 4864,
  numLayers: 24,
  numHeads: 14,
  numKvHeads: 2,
  rmsNormEps: 1e-6,
  ropeTheta: 1e6,
  maxPositions: 32768,
  tieWordEmbeddings: true,
  qkvBias: true,
});

/** Sizes of one bench run. */
export interface PolicyBenchPlan {
  /** Generation batch sizes. */
  generateBatches: number[];
  /** Prompt length (tokens) of every sequence. */
  promptTokens: number;
  /** New tokens per sequence (generation) and completion length (scoring). */
  newTokens: number;
  /** Scoring batch size. */
  scoreBatch: number;
  /** Timed calls per case (the median is reported). */
  repeats: number;
}

/**
 * The plan of a run: batch 8 and 32, 32-token prompts, 64 new tokens, scoring batch 8; three
 * repeats, or one with `quick`.
 *
 * @param quick One repeat per case.
 * @returns The plan.
 *
 * @example Usage
 * ```ts
 * import { benchPlan } from "./policy_bench.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(benchPlan(true).generateBatches, [8, 32]);
 * assert.equal(benchPlan(true).repeats, 1);
 * ```
 */
export function benchPlan(quick: boolean): PolicyBenchPlan {
  return {
    generateBatches: [8, 32],
    promptTokens: 32,
    newTokens: 64,
    scoreBatch: 8,
    repeats: quick ? 1 : 3,
  };
}

/** Parsed command line. */
export interface PolicyBenchArgs {
  /** One repeat per case. */
  quick: boolean;
  /** Backends to run, or null for cpu plus webgpu when an adapter exists. */
  backends: PolicyBenchBackend[] | null;
  /** Directory of the JSON results. */
  outDir: string;
  /** Whether to write JSON. */
  json: boolean;
  /** Print the usage and exit. */
  help: boolean;
}

/** Usage text. */
export const USAGE = `deno run -A bench/policy.ts [flags]
  --quick                 one timed call per case (default: median of 3); on a software
                          WebGPU adapter also 16 new tokens instead of 64
  --backend cpu|webgpu    one backend (repeatable; default cpu, plus webgpu when an adapter exists)
  --out <dir>             JSON directory (default bench/results)
  --no-json               do not write JSON`;

/**
 * Parses the bench's flags; errors name the flag and the bad value.
 *
 * @param argv Command-line arguments.
 * @returns The parsed flags.
 *
 * @example Usage
 * ```ts
 * import { parsePolicyBenchArgs } from "./policy_bench.ts";
 * import assert from "node:assert/strict";
 * const a = parsePolicyBenchArgs(["--quick", "--backend", "cpu"]);
 * assert.equal(a.quick, true);
 * assert.deepEqual(a.backends, ["cpu"]);
 * assert.throws(() => parsePolicyBenchArgs(["--backend", "tpu"]), /--backend must be cpu or webgpu/);
 * ```
 */
export function parsePolicyBenchArgs(argv: readonly string[]): PolicyBenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      backend: { type: "string", multiple: true },
      out: { type: "string" },
      "no-json": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const backends = values.backend?.flatMap((b) => b.split(",")).map((b) => {
    if (b !== "cpu" && b !== "webgpu") {
      throw new RangeError(
        `policy bench: --backend must be cpu or webgpu, got ${JSON.stringify(b)}`,
      );
    }
    return b as PolicyBenchBackend;
  }) ?? null;
  return {
    quick: values.quick,
    backends: backends === null ? null : [...new Set(backends)],
    outDir: values.out ?? new URL("../../../bench/results/", import.meta.url).pathname,
    json: !values["no-json"],
    help: values.help,
  };
}

/** One generation measurement (medians over the repeats). */
export interface GenerationResult {
  /** Sequences per call. */
  batch: number;
  /** Prompt tokens per sequence. */
  promptTokens: number;
  /** New tokens per sequence. */
  newTokens: number;
  /** Seconds of the prefill (including reading its logits back). */
  prefillS: number;
  /** Seconds of the decode loop. */
  decodeS: number;
  /** Seconds of the whole call. */
  totalS: number;
  /** Generated tokens per second of the whole call. */
  tokensPerS: number;
  /** Tokens sampled from decode steps per second of the decode loop. */
  decodeTokensPerS: number;
  /** Prompt tokens per second of the prefill. */
  prefillTokensPerS: number;
  /** Timed calls. */
  repeats: number;
}

/** One scoring measurement (median over the repeats). */
export interface ScoringResult {
  /** `"forward"` (under `noGrad`) or `"forward+backward"`. */
  mode: "forward" | "forward+backward";
  /** Sequences per call. */
  batch: number;
  /** Tokens per sequence (prompt + completion). */
  seqTokens: number;
  /** Completion tokens per sequence (the scored ones). */
  completionTokens: number;
  /** Seconds per call. */
  seconds: number;
  /** Sequence tokens (prompt + completion) per second. */
  tokensPerS: number;
  /** Timed calls. */
  repeats: number;
}

/** The results of one backend, as written to JSON. */
export interface PolicyBenchReport {
  /** Format tag. */
  schema: "rlvr-policy-bench/1";
  /** ISO date of the run's start. */
  date: string;
  /** The backend measured. */
  backend: PolicyBenchBackend;
  /** The WebGPU adapter, or null on the CPU. */
  adapter: { description: string; software: boolean } | null;
  /** Runtime and machine. */
  machine: { deno: string; os: string; cpuModel: string; cores: number };
  /** The command line. */
  argv: string[];
  /** The model, as a Hugging Face config. */
  config: Record<string, unknown>;
  /** Its parameter count. */
  parameterCount: number;
  /** Sizes. */
  plan: PolicyBenchPlan;
  /** Generation results. */
  generation: GenerationResult[];
  /** Scoring results. */
  scoring: ScoringResult[];
  /** Seconds the backend's run took (warm-up included). */
  wallS: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * `rows` lists of `len` token ids drawn uniformly from `[0, vocab)`.
 *
 * @param rng The generator.
 * @param rows How many lists.
 * @param len Ids per list.
 * @param vocab Vocabulary size.
 * @returns The ids.
 *
 * @example Usage
 * ```ts
 * import { randomIds } from "./policy_bench.ts";
 * import { Rng } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const ids = randomIds(new Rng(1), 2, 3, 10);
 * assert.ok(ids.length === 2 && ids.every((r) => r.length === 3 && r.every((x) => x >= 0 && x < 10)));
 * ```
 */
export function randomIds(rng: Rng, rows: number, len: number, vocab: number): number[][] {
  return Array.from(
    { length: rows },
    () => Array.from({ length: len }, () => Math.floor(rng.uniform() * vocab)),
  );
}

async function sync(backend: Backend): Promise<void> {
  const s = (backend as { sync?: () => Promise<void> }).sync;
  if (s !== undefined) await s.call(backend);
}

/**
 * Measures one backend: generation for each batch of the plan, then scoring forward and
 * forward + backward. `progress` receives one line before each timed call.
 *
 * @param backend The backend (the model is created on it).
 * @param plan Sizes and repeats.
 * @param config The model (default {@link BENCH_CONFIG}; tests pass a tiny one).
 * @param progress Progress callback.
 * @returns Generation and scoring results.
 *
 * @example Usage
 * ```ts
 * import { measurePolicy } from "./policy_bench.ts";
 * import { createCpuBackend } from "@rlvr/tensor";
 * import { modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tiny = modelConfig({
 *   vocabSize: 32, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 * });
 * const plan = { generateBatches: [2], promptTokens: 3, newTokens: 2, scoreBatch: 2, repeats: 1 };
 * const r = await measurePolicy(createCpuBackend(), plan, tiny);
 * assert.equal(r.generation[0]!.batch, 2);
 * assert.ok(r.scoring.every((s) => s.tokensPerS > 0));
 * ```
 */
export async function measurePolicy(
  backend: Backend,
  plan: PolicyBenchPlan,
  config: ModelConfig = BENCH_CONFIG,
  progress: (line: string) => void = () => {},
): Promise<{ generation: GenerationResult[]; scoring: ScoringResult[] }> {
  const model = withBackend(backend, () => CausalLM.random(config, { seed: 0 }));
  const rng = new Rng(1);
  const V = config.vocabSize;
  const sampler = { seed: 7, temperature: 1 };
  try {
    // Warm-up: JIT and shader compilation for every path measured below.
    await generate(model, randomIds(rng, 2, 4, V), {
      maxNewTokens: 2,
      sampler,
      eosTokenIds: [],
    });
    const warm = randomIds(rng, 2, 6, V).map((ids) => ({
      promptIds: ids.slice(0, 3),
      completionIds: ids.slice(3),
    }));
    await withBackend(backend, async () => {
      const s = scoreCompletions(model, warm);
      tidy(() => s.logprobs.mul(s.mask).sum().add(s.entropies!.sum()).backward());
      await s.logprobs.data();
      for (const t of [s.logprobs, s.entropies!, s.mask]) t.dispose();
      zeroGrads(model);
    });

    const generation: GenerationResult[] = [];
    for (const batch of plan.generateBatches) {
      const runs = [];
      for (let r = 0; r < plan.repeats; r++) {
        progress(
          `generate batch ${batch}, prompt ${plan.promptTokens}, ${plan.newTokens} new tokens ` +
            `(${r + 1}/${plan.repeats})`,
        );
        const prompts = randomIds(rng, batch, plan.promptTokens, V);
        const { timing } = await generate(model, prompts, {
          maxNewTokens: plan.newTokens,
          sampler,
          step: r,
          eosTokenIds: [],
        });
        runs.push(timing);
      }
      const prefillS = median(runs.map((t) => t.prefillS));
      generation.push({
        batch,
        promptTokens: plan.promptTokens,
        newTokens: plan.newTokens,
        prefillS,
        decodeS: median(runs.map((t) => t.decodeS)),
        totalS: median(runs.map((t) => t.totalS)),
        tokensPerS: median(runs.map((t) => t.tokensPerS)),
        decodeTokensPerS: median(runs.map((t) => t.decodeTokensPerS)),
        prefillTokensPerS: (batch * plan.promptTokens) / prefillS,
        repeats: plan.repeats,
      });
    }

    const scoring: ScoringResult[] = [];
    const seqTokens = plan.promptTokens + plan.newTokens;
    for (const mode of ["forward", "forward+backward"] as const) {
      const times: number[] = [];
      for (let r = 0; r < plan.repeats; r++) {
        progress(
          `score batch ${plan.scoreBatch} × ${seqTokens} tokens, ${mode} (${
            r + 1
          }/${plan.repeats})`,
        );
        const batch = randomIds(rng, plan.scoreBatch, seqTokens, V).map((ids) => ({
          promptIds: ids.slice(0, plan.promptTokens),
          completionIds: ids.slice(plan.promptTokens),
        }));
        const t0 = performance.now();
        await withBackend(backend, async () => {
          if (mode === "forward") {
            const s = noGrad(() => scoreCompletions(model, batch));
            await s.logprobs.data();
            for (const t of [s.logprobs, s.entropies!, s.mask]) t.dispose();
          } else {
            tidy(() => {
              const s = scoreCompletions(model, batch);
              s.logprobs.mul(s.mask).sum().add(s.entropies!.mul(s.mask).sum().mul(0.01))
                .backward();
            });
            await sync(backend);
            await model.params.get("model.norm.weight")!.grad!.data();
          }
        });
        times.push((performance.now() - t0) / 1e3);
        zeroGrads(model);
      }
      const seconds = median(times);
      scoring.push({
        mode,
        batch: plan.scoreBatch,
        seqTokens,
        completionTokens: plan.newTokens,
        seconds,
        tokensPerS: (plan.scoreBatch * seqTokens) / seconds,
        repeats: plan.repeats,
      });
    }
    return { generation, scoring };
  } finally {
    model.dispose();
  }
}

function zeroGrads(model: CausalLM): void {
  for (const p of model.parameters()) {
    p.grad?.dispose();
    p.grad = null;
  }
}

function fmt(x: number, digits = 1): string {
  return x.toFixed(digits).padStart(9);
}

/**
 * The report as a text table (what the bench prints).
 *
 * @param r A backend's report.
 * @returns Lines of text.
 *
 * @example Usage
 * ```ts
 * import { formatPolicyReport, type PolicyBenchReport } from "./policy_bench.ts";
 * import assert from "node:assert/strict";
 * const r: PolicyBenchReport = {
 *   schema: "rlvr-policy-bench/1", date: "2025-01-01T00:00:00.000Z", backend: "cpu",
 *   adapter: null, machine: { deno: "2", os: "linux", cpuModel: "x", cores: 2 }, argv: [],
 *   config: {}, parameterCount: 10, wallS: 1,
 *   plan: { generateBatches: [8], promptTokens: 32, newTokens: 64, scoreBatch: 8, repeats: 1 },
 *   generation: [{
 *     batch: 8, promptTokens: 32, newTokens: 64, prefillS: 1, decodeS: 9, totalS: 10,
 *     tokensPerS: 51.2, decodeTokensPerS: 56, prefillTokensPerS: 256, repeats: 1,
 *   }],
 *   scoring: [],
 * };
 * assert.match(formatPolicyReport(r), /generate\s+8\s+32\s+64\s+51\.2/);
 * ```
 */
export function formatPolicyReport(r: PolicyBenchReport): string {
  const where = r.adapter === null
    ? `cpu (${r.machine.cpuModel}, ${r.machine.cores} cores)`
    : `webgpu (${r.adapter.description}${
      r.adapter.software ? "; software adapter: speed meaningless" : ""
    })`;
  const lines = [
    `policy bench on ${where}`,
    `model: qwen2-shaped, ${r.parameterCount.toLocaleString("en-US")} parameters ` +
    `(vocab ${r.config.vocab_size}, hidden ${r.config.hidden_size}, ` +
    `${r.config.num_hidden_layers} layers, ${r.config.num_attention_heads} heads / ` +
    `${r.config.num_key_value_heads} kv, intermediate ${r.config.intermediate_size}); ` +
    `median of ${r.plan.repeats}`,
    "",
    "case          batch  prompt    new   tokens/s  decode tok/s  prefill tok/s  prefill s  decode s",
  ];
  for (const g of r.generation) {
    lines.push(
      `generate  ${String(g.batch).padStart(9)}${String(g.promptTokens).padStart(8)}` +
        `${String(g.newTokens).padStart(7)}  ${fmt(g.tokensPerS)}     ${fmt(g.decodeTokensPerS)}` +
        `      ${fmt(g.prefillTokensPerS)}  ${fmt(g.prefillS, 2)} ${fmt(g.decodeS, 2)}`,
    );
  }
  lines.push("", "case                 batch  seq tokens   tokens/s   seconds");
  for (const s of r.scoring) {
    lines.push(
      `score ${s.mode.padEnd(16)}${String(s.batch).padStart(4)}${
        String(s.seqTokens).padStart(12)
      }` +
        ` ${fmt(s.tokensPerS)} ${fmt(s.seconds, 2)}`,
    );
  }
  lines.push(
    "",
    "tokens/s: generate = generated tokens / whole call; score = (prompt + completion) tokens " +
      "/ call",
  );
  return lines.join("\n");
}

const isTty = (() => {
  try {
    return Deno.stderr.isTerminal();
  } catch {
    return false;
  }
})();
const encoder = new TextEncoder();

/** One progress line on stderr: rewritten in place on a terminal, one line per case elsewhere. */
function progressLine(line: string): void {
  if (isTty) Deno.stderr.writeSync(encoder.encode(`\r\x1b[2K[policy-bench] ${line}`));
  else Deno.stderr.writeSync(encoder.encode(`[policy-bench] ${line}\n`));
}

function progressDone(): void {
  if (isTty) Deno.stderr.writeSync(encoder.encode("\r\x1b[2K"));
}

async function cpuModel(): Promise<string> {
  try {
    const text = await Deno.readTextFile("/proc/cpuinfo");
    return /^model name\s*:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * The bench's entry point: measures each backend, prints its table and writes its JSON to
 * `<out>/policy-<backend>-<ISO date>.json`. Returns the exit code.
 *
 * @param argv Command-line arguments.
 * @param overrides Another model or plan (for tests; the command line uses the defaults).
 * @returns 0 on success, 1 on a usage error or a missing adapter.
 *
 * @example Usage
 * ```ts
 * import { main } from "./policy_bench.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await main(["--help"]), 0);
 * ```
 */
export async function main(
  argv: readonly string[],
  overrides: { config?: ModelConfig; plan?: PolicyBenchPlan } = {},
): Promise<number> {
  const config = overrides.config ?? BENCH_CONFIG;
  let args: PolicyBenchArgs;
  try {
    args = parsePolicyBenchArgs(argv);
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : e}\n\n${USAGE}`);
    return 1;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const plan = overrides.plan ?? benchPlan(args.quick);
  const started = performance.now();
  const adapter = args.backends === null || args.backends.includes("webgpu")
    ? await navigator.gpu?.requestAdapter() ?? null
    : null;
  const backends = args.backends ?? ["cpu", ...(adapter === null ? [] : ["webgpu" as const])];
  if (args.backends === null && adapter === null) {
    console.log("webgpu: navigator.gpu found no adapter; only the CPU backend is measured\n");
  }
  const machine = {
    deno: Deno.version.deno,
    os: `${Deno.build.os} ${Deno.build.arch}`,
    cpuModel: await cpuModel(),
    cores: navigator.hardwareConcurrency,
  };
  console.log(
    `bench model: ${parameterCount(config).toLocaleString("en-US")} parameters\n`,
  );
  for (const kind of backends) {
    let backend: Backend;
    let info: PolicyBenchReport["adapter"] = null;
    if (kind === "webgpu") {
      if (adapter === null) {
        console.error("policy bench: --backend webgpu, but navigator.gpu found no adapter");
        return 1;
      }
      const gpu = await createWebGpuBackend({ adapter });
      backend = gpu;
      info = { description: gpu.description, software: gpu.isSoftware };
    } else {
      backend = createCpuBackend();
    }
    const date = new Date();
    const t0 = performance.now();
    try {
      const software = kind === "webgpu" && info !== null && info.software;
      const label = software ? "webgpu (software)" : kind;
      // A software adapter's numbers mean nothing and its decode steps are slow; --quick only
      // checks that the path runs there, with fewer new tokens, to stay within ~2 minutes.
      const used = args.quick && software ? { ...plan, newTokens: 16 } : plan;
      const results = await measurePolicy(
        backend,
        used,
        config,
        (line) => progressLine(`${label}: ${line}`),
      );
      progressDone();
      const report: PolicyBenchReport = {
        schema: "rlvr-policy-bench/1",
        date: date.toISOString(),
        backend: kind,
        adapter: info,
        machine,
        argv: [...argv],
        config: configToHf(config),
        parameterCount: parameterCount(config),
        plan: used,
        ...results,
        wallS: (performance.now() - t0) / 1e3,
      };
      console.log(formatPolicyReport(report));
      if (args.json) {
        await Deno.mkdir(args.outDir, { recursive: true });
        const iso = date.toISOString().replace(/\.\d+Z$/, "Z").replaceAll(":", "-");
        const file = `${args.outDir.replace(/\/$/, "")}/policy-${kind}-${iso}.json`;
        await Deno.writeTextFile(file, JSON.stringify(report, null, 2) + "\n");
        console.log(`wrote ${file}`);
      }
      console.log("");
    } finally {
      if (kind === "webgpu") (backend as { destroy(): void } & Backend).destroy();
    }
  }
  console.log(`policy bench finished in ${((performance.now() - started) / 1e3).toFixed(0)} s`);
  return 0;
}
