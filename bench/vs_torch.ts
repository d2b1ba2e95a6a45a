/**
 * `deno run -A bench/vs_torch.ts [--models demo,10m,0.5b] [--blas wasm,auto,openblas] [--quick]
 * [--repeats N] [--threads N] [--python python3]`: the parts of one RL step - generation, scoring,
 * a training step - for `@rlvr/policy` on the CPU backend and for the same model in PyTorch
 * (`bench/vs_torch.py`, Debian's `python3-torch`), in one run, with the ratio ours / PyTorch per
 * part (seconds; > 1 means we are slower), the model's random init and each side's peak RSS.
 *
 * Design decisions:
 * - **Same model, same sizes, same timing rule**: the model is the Hugging Face config dict both
 *   sides build from (random weights, speed only); every case is one untimed warm-up call, then
 *   the median of the timed calls. Models (`--models`): `demo`, the shipped demo policy's shape
 *   (`apps/train/checkpoints/tiny/config.json`) at the default run's batch; `10m`, the
 *   ~10M-parameter Qwen2 shape of `bench/policy.ts`; `0.5b`, the Qwen2.5-0.5B shape (494M
 *   parameters) at 4 sequences of 32 + 16 tokens.
 * - **A training step** is one forward over the scoring batch, the mean completion log-prob as the
 *   loss, backward, and one AdamW step - the same on both sides.
 * - **One process per side and model**, so each peak RSS (`VmHWM`, `ru_maxrss`) is that model's
 *   alone; ours runs once per `--blas` choice (env `RLVR_BLAS` of the child: `wasm` is no native
 *   BLAS, `auto` OpenBLAS for the backward pass, `openblas` for every product), and the table
 *   prints what each child's matmuls ran.
 * - PyTorch runs with `torch.set_num_threads(--threads)` (default 2, the machine's cores); ours uses
 *   the CPU backend's default threads (the core count).
 * - Without python3 + torch the PyTorch column is missing and the bench says why; it never fakes it.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  CausalLM,
  configFromHf,
  configToHf,
  generate,
  type ModelConfig,
  parameterCount,
  scoreCompletions,
} from "@rlvr/policy";
import { AdamW, BLAS_CHOICES, type CpuBackend, getBackend, noGrad, Rng, tidy } from "@rlvr/tensor";
import { BENCH_CONFIG, QWEN25_05B, randomIds } from "../packages/policy/bench/policy_bench.ts";

/** Sizes of one model's cases. */
export interface VsTorchPlan {
  /** Sequences per generation call. */
  generateBatch: number;
  /** Prompt tokens per sequence. */
  promptTokens: number;
  /** New tokens per sequence (and the scored completion length). */
  newTokens: number;
  /** Sequences per scoring / training call. */
  scoreBatch: number;
}

/** One side's timings (seconds are medians). */
export interface SideResult {
  /** Generation: seconds per call and generated tokens per second. */
  generate: { seconds: number; tokensPerS: number };
  /** Scoring forward (no gradients). */
  scoreForward: { seconds: number; tokensPerS: number };
  /** Forward + backward + AdamW. */
  trainStep: { seconds: number; tokensPerS: number };
  /** The random init of the model (one call, not a median). */
  initSeconds: number;
}

/** A model of the bench. */
export interface BenchModel {
  /** Its `--models` id. */
  id: string;
  /** Its name in the table. */
  name: string;
  /** The architecture. */
  config: ModelConfig;
  /** The sizes of its cases. */
  plan: VsTorchPlan;
}

/**
 * The models the bench compares on.
 *
 * @example Usage
 * ```ts
 * import { benchModels } from "./vs_torch.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(benchModels().map((m) => m.id), ["demo", "10m", "0.5b"]);
 * assert.deepEqual(benchModels().map((m) => m.plan.scoreBatch), [64, 8, 4]);
 * ```
 */
export function benchModels(): BenchModel[] {
  const tinyPath = fileURLToPath(
    new URL("../apps/train/checkpoints/tiny/config.json", import.meta.url),
  );
  const tiny = configFromHf(JSON.parse(Deno.readTextFileSync(tinyPath)), tinyPath);
  return [
    {
      id: "demo",
      name: "demo (shipped tiny policy)",
      config: tiny,
      // The default run's step: 64 responses of up to 8 tokens after a ~7-token prompt.
      plan: { generateBatch: 64, promptTokens: 7, newTokens: 8, scoreBatch: 64 },
    },
    {
      id: "10m",
      name: "~10M Qwen2-shaped",
      config: BENCH_CONFIG,
      plan: { generateBatch: 8, promptTokens: 32, newTokens: 64, scoreBatch: 8 },
    },
    {
      id: "0.5b",
      name: "Qwen2.5-0.5B-shaped",
      config: QWEN25_05B,
      plan: { generateBatch: 4, promptTokens: 32, newTokens: 16, scoreBatch: 4 },
    },
  ];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function timed(fn: () => Promise<void>, repeats: number): Promise<number> {
  await fn(); // warm-up
  const xs: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    await fn();
    xs.push((performance.now() - t0) / 1e3);
  }
  return median(xs);
}

/**
 * Times our side for one model.
 *
 * @example Usage
 * ```ts
 * import { measureOurs } from "./vs_torch.ts";
 * import { modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tiny = modelConfig({ vocabSize: 16, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2 });
 * const r = await measureOurs(tiny, { generateBatch: 2, promptTokens: 3, newTokens: 2, scoreBatch: 2 }, 1);
 * assert.ok(r.trainStep.seconds > 0 && r.generate.tokensPerS > 0);
 * ```
 */
export async function measureOurs(
  config: ModelConfig,
  plan: VsTorchPlan,
  repeats: number,
): Promise<SideResult> {
  const initStart = performance.now();
  const model = CausalLM.random(config, { seed: 0 });
  const initSeconds = (performance.now() - initStart) / 1e3;
  const rng = new Rng(1);
  const V = config.vocabSize;
  const optimizer = new AdamW(model.parameters(), { lr: 1e-5 });
  try {
    const prompts = randomIds(rng, plan.generateBatch, plan.promptTokens, V);
    const gen = await timed(async () => {
      await generate(model, prompts, {
        maxNewTokens: plan.newTokens,
        sampler: { seed: 7, temperature: 1 },
        eosTokenIds: [],
      });
    }, repeats);
    const T = plan.promptTokens + plan.newTokens;
    const batch = randomIds(rng, plan.scoreBatch, T, V).map((row) => ({
      promptIds: row.slice(0, plan.promptTokens),
      completionIds: row.slice(plan.promptTokens),
    }));
    const fwd = await timed(async () => {
      const s = noGrad(() => scoreCompletions(model, batch, { entropy: false }));
      await s.logprobs.data();
      s.logprobs.dispose();
      s.mask.dispose();
      s.entropies?.dispose();
    }, repeats);
    const train = await timed(async () => {
      optimizer.zeroGrad();
      tidy(() => {
        const s = scoreCompletions(model, batch, { entropy: false });
        s.logprobs.mul(s.mask).sum().div(-s.mask.size).backward();
      });
      optimizer.step();
      await model.params.get("model.norm.weight")!.data();
    }, repeats);
    const tokens = plan.scoreBatch * T;
    return {
      generate: { seconds: gen, tokensPerS: (plan.generateBatch * plan.newTokens) / gen },
      scoreForward: { seconds: fwd, tokensPerS: tokens / fwd },
      trainStep: { seconds: train, tokensPerS: tokens / train },
      initSeconds,
    };
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}

/**
 * Runs `bench/vs_torch.py` for one model; null (with the reason) when python or torch is missing.
 *
 * @example Usage
 * ```ts
 * import { measureTorch } from "./vs_torch.ts";
 * import { modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tiny = modelConfig({ vocabSize: 16, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2 });
 * const r = await measureTorch(tiny, { generateBatch: 2, promptTokens: 3, newTokens: 2, scoreBatch: 2 }, 1, 1, "no-such-python");
 * assert.equal(r.result, null);
 * assert.match(r.reason, /no-such-python/);
 * ```
 */
export async function measureTorch(
  config: ModelConfig,
  plan: VsTorchPlan,
  repeats: number,
  threads: number,
  python: string,
): Promise<
  {
    result:
      | (SideResult & { torch: string; threads: number; parameters: number; peakRssBytes: number })
      | null;
    reason: string;
  }
> {
  const script = fileURLToPath(new URL("./vs_torch.py", import.meta.url));
  let child;
  try {
    child = new Deno.Command(python, {
      args: [script],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    return { result: null, reason: `could not start ${python}: ${(e as Error).message}` };
  }
  const w = child.stdin.getWriter();
  await w.write(
    new TextEncoder().encode(
      JSON.stringify({ config: configToHf(config), plan, repeats, threads }),
    ),
  );
  await w.close();
  const out = await child.output();
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-2).join(" | ");
    return { result: null, reason: `${python} ${script} failed: ${err}` };
  }
  return { result: JSON.parse(new TextDecoder().decode(out.stdout)), reason: "" };
}

/** Our side of one model under one `--blas` choice, measured in its own process. */
export interface OursResult extends SideResult {
  /** The `RLVR_BLAS` of the child process. */
  blas: string;
  /** What its matmuls ran: forward and gradient paths, and the BLAS library. */
  matmul: { forward: string; gradient: string; library: string | null };
  /** Peak resident set of the process (`VmHWM`), or null where `/proc` has none. */
  peakRssBytes: number | null;
}

/**
 * The peak resident set of this process in bytes (`VmHWM` of `/proc/self/status`), or null
 * where there is no such file (not Linux).
 *
 * @example Usage
 * ```ts
 * import { peakRssBytes } from "./vs_torch.ts";
 * import assert from "node:assert/strict";
 * const p = peakRssBytes();
 * assert.ok(p === null || p > 1 << 20);
 * ```
 */
export function peakRssBytes(): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
    return m === null ? null : Number(m[1]) * 1024;
  } catch {
    return null;
  }
}

async function child(id: string, repeats: number): Promise<number> {
  const model = benchModels().find((m) => m.id === id)!;
  const backend = getBackend() as Partial<CpuBackend>;
  const side = await measureOurs(model.config, model.plan, repeats);
  const result: OursResult = {
    ...side,
    blas: backend.blas ?? "-",
    matmul: {
      forward: backend.matmulPath ?? getBackend().name,
      gradient: backend.gradientMatmulPath ?? getBackend().name,
      library: backend.blasLibrary ?? null,
    },
    peakRssBytes: peakRssBytes(),
  };
  console.log(JSON.stringify(result));
  return 0;
}

async function measureOursInChild(
  id: string,
  blas: string,
  repeats: number,
): Promise<OursResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fileURLToPath(import.meta.url), "--child", id, "--repeats", `${repeats}`],
    env: { RLVR_BLAS: blas },
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`vs_torch: ours on ${id} with RLVR_BLAS=${blas} failed`);
  return JSON.parse(text.split("\n").at(-1)!) as OursResult;
}

const gib = (b: number | null | undefined) => (b == null ? "-" : (b / 2 ** 30).toFixed(2));

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      models: { type: "string", default: "demo,10m" },
      blas: { type: "string", default: "wasm,auto" },
      repeats: { type: "string" },
      threads: { type: "string", default: "2" },
      python: { type: "string", default: "/usr/bin/python3" },
      out: { type: "string", default: "bench/results" },
      child: { type: "string" },
    },
  });
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) {
    console.error(`--threads ${values.threads}: use an integer >= 1`);
    return 2;
  }
  const repeats = values.repeats === undefined ? (values.quick ? 1 : 3) : Number(values.repeats);
  if (!Number.isInteger(repeats) || repeats < 1) {
    console.error(`--repeats ${values.repeats}: use an integer >= 1`);
    return 2;
  }
  const known = benchModels();
  if (values.child !== undefined) return await child(values.child, repeats);
  const ids = values.models.split(",").map((x) => x.trim()).filter((x) => x !== "");
  for (const id of ids) {
    if (!known.some((m) => m.id === id)) {
      console.error(
        `--models: unknown model "${id}"; use a comma-separated list of ${
          known.map((m) => m.id).join(", ")
        }`,
      );
      return 2;
    }
  }
  const blasList = values.blas.split(",").map((x) => x.trim()).filter((x) => x !== "");
  for (const b of blasList) {
    if (!(BLAS_CHOICES as readonly string[]).includes(b)) {
      console.error(
        `--blas: unknown choice "${b}"; use a comma-separated list of ${BLAS_CHOICES.join(", ")}`,
      );
      return 2;
    }
  }
  const rows: Record<string, unknown>[] = [];
  const t0 = performance.now();
  for (const { id, name, config, plan } of known.filter((m) => ids.includes(m.id))) {
    const ours: OursResult[] = [];
    for (const blas of blasList) {
      console.error(`[vs_torch] ${name}: ours (RLVR_BLAS=${blas}) ...`);
      ours.push(await measureOursInChild(id, blas, repeats));
    }
    console.error(`[vs_torch] ${name}: PyTorch (${threads} threads) ...`);
    const torch = await measureTorch(config, plan, repeats, threads, values.python);
    if (torch.result === null) console.error(`[vs_torch] PyTorch missing: ${torch.reason}`);
    else if (torch.result.parameters !== parameterCount(config)) {
      // Same shapes or the comparison means nothing.
      throw new Error(
        `vs_torch: ${name}: PyTorch model has ${torch.result.parameters} parameters, ours ${
          parameterCount(config)
        }; bench/vs_torch.py does not build the same architecture`,
      );
    }
    rows.push({
      id,
      name,
      parameters: parameterCount(config),
      plan,
      ours,
      torch: torch.result,
      note: torch.reason,
    });
  }
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(28) : c.padStart(14))).join("");
  console.log(
    `vs_torch: ours on the CPU backend, PyTorch with ${threads} threads; seconds per call (median of ${repeats})`,
  );
  console.log(line([
    "model / part",
    ...blasList.map((b) => `ours ${b}`),
    "torch",
    ...blasList.map((b) => `${b}/torch`),
  ]));
  for (const r of rows) {
    const o = r.ours as OursResult[];
    const t = r.torch as (SideResult & { peakRssBytes?: number }) | null;
    for (const part of ["generate", "scoreForward", "trainStep"] as const) {
      console.log(line([
        `${r.id} ${part}`,
        ...o.map((x) => x[part].seconds.toFixed(4)),
        t === null ? "-" : t[part].seconds.toFixed(4),
        ...o.map((x) => (t === null ? "-" : (x[part].seconds / t[part].seconds).toFixed(2) + "x")),
      ]));
    }
    console.log(line([
      `${r.id} init s`,
      ...o.map((x) => x.initSeconds.toFixed(2)),
      t?.initSeconds === undefined ? "-" : t.initSeconds.toFixed(2),
    ]));
    console.log(line([
      `${r.id} peak RSS GiB`,
      ...o.map((x) => gib(x.peakRssBytes)),
      gib(t?.peakRssBytes),
    ]));
    for (const x of o) {
      console.log(
        `  ${r.id} RLVR_BLAS=${x.blas}: forward ${x.matmul.forward}, gradients ${x.matmul.gradient}` +
          (x.matmul.library === null ? "" : ` (${x.matmul.library})`),
      );
    }
  }
  const date = new Date().toISOString();
  const file = `${values.out}/vs_torch-${date.replace(/[:.]/g, "-").slice(0, 19)}Z.json`;
  await Deno.mkdir(values.out, { recursive: true });
  await Deno.writeTextFile(
    file,
    JSON.stringify(
      { schema: "rlvr-vs-torch/2", date, threads, repeats, blas: blasList, rows },
      null,
      2,
    ) + "\n",
  );
  console.log(`wrote ${file} (${((performance.now() - t0) / 1e3).toFixed(0)} s)`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
