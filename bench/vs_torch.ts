/**
 * `deno run -A bench/vs_torch.ts [--models demo,10m,0.5b] [--blas wasm,auto,openblas] [--quick]
 * [--repeats N] [--threads N] [--python python3] [--init-only]`: the parts of one RL step -
 * generation, scoring, a training step - for `@rlvr/policy` on the CPU backend and for the same
 * model in PyTorch (`bench/vs_torch.py`, Debian's `python3-torch`), in one run, with the ratio
 * ours / PyTorch per part (seconds; > 1 means we are slower), the model's random init and each
 * side's peak RSS.
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
 * - **Init, both ways**: ours times `CausalLM.random` with the default, bit-compatible Box–Muller
 *   init (`init s`, the model the parts then run on) and with the opt-in `init: "ziggurat"`
 *   (`init zig s`, after the parts, once the first model is freed). `--init-only` times just the
 *   two inits, each in a fresh process (median of `--repeats`, default 1), and writes
 *   `vs_torch-init-*.json`.
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
import {
  AdamW,
  BLAS_CHOICES,
  type CpuBackend,
  getBackend,
  noGrad,
  NORMAL_METHODS,
  type NormalMethod,
  Rng,
  tidy,
} from "@rlvr/tensor";
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
  /** The random init of the model (one call, not a median); ours: the default Box–Muller init. */
  initSeconds: number;
}

/** Our side's timings: {@link SideResult} plus the opt-in ziggurat init. */
export interface OursSide extends SideResult {
  /** `CausalLM.random(config, { seed: 0, init: "ziggurat" })` (one call, not a median). */
  initZigguratSeconds: number;
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
 * Seconds of one `CausalLM.random(config, { seed: 0, init })`; the model is freed afterwards.
 *
 * @example Usage
 * ```ts
 * import { measureInit } from "./vs_torch.ts";
 * import { modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tiny = modelConfig({ vocabSize: 16, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2 });
 * assert.ok(measureInit(tiny, "ziggurat") >= 0);
 * ```
 */
export function measureInit(config: ModelConfig, init: NormalMethod): number {
  const t0 = performance.now();
  const model = CausalLM.random(config, { seed: 0, init });
  const seconds = (performance.now() - t0) / 1e3;
  model.dispose();
  return seconds;
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
 * assert.ok(r.trainStep.seconds > 0 && r.generate.tokensPerS > 0 && r.initZigguratSeconds >= 0);
 * ```
 */
export async function measureOurs(
  config: ModelConfig,
  plan: VsTorchPlan,
  repeats: number,
): Promise<OursSide> {
  const initStart = performance.now();
  const model = CausalLM.random(config, { seed: 0 });
  const initSeconds = (performance.now() - initStart) / 1e3;
  const rng = new Rng(1);
  const V = config.vocabSize;
  const optimizer = new AdamW(model.parameters(), { lr: 1e-5 });
  let side: SideResult;
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
    side = {
      generate: { seconds: gen, tokensPerS: (plan.generateBatch * plan.newTokens) / gen },
      scoreForward: { seconds: fwd, tokensPerS: tokens / fwd },
      trainStep: { seconds: train, tokensPerS: tokens / train },
      initSeconds,
    };
  } finally {
    optimizer.dispose();
    model.dispose();
  }
  // After the parts, with the first model freed, so the peak RSS stays the parts'.
  return { ...side, initZigguratSeconds: measureInit(config, "ziggurat") };
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
export interface OursResult extends OursSide {
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

/** One `--init-only` child: one init of one model in a fresh process. */
interface InitResult {
  init: NormalMethod;
  seconds: number;
  peakRssBytes: number | null;
}

function initChild(id: string, init: NormalMethod): number {
  const model = benchModels().find((m) => m.id === id)!;
  const seconds = measureInit(model.config, init);
  const result: InitResult = { init, seconds, peakRssBytes: peakRssBytes() };
  console.log(JSON.stringify(result));
  return 0;
}

async function measureInitInChild(id: string, init: NormalMethod): Promise<InitResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      fileURLToPath(import.meta.url),
      "--child",
      id,
      "--init-only",
      "--init",
      init,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`vs_torch: init ${init} of ${id} failed`);
  return JSON.parse(text.split("\n").at(-1)!) as InitResult;
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

const USAGE = `usage: deno run -A bench/vs_torch.ts [options]
  --models demo,10m,0.5b  models to compare (default demo,10m)
  --blas wasm,auto,...    one run of ours per RLVR_BLAS choice (default wasm,auto)
  --quick                 one timed call per case (--repeats 1)
  --repeats N             timed calls per case, median reported (default 3)
  --threads N             PyTorch threads (default 2)
  --python PATH           python with torch (default /usr/bin/python3)
  --out DIR               where the JSON goes (default bench/results)
  --init-only             time only CausalLM.random, default (box-muller) and ziggurat init,
                          each in a fresh process (median of --repeats, default 1)
  --help                  this text`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: "boolean", short: "h", default: false },
      "init-only": { type: "boolean", default: false },
      init: { type: "string", default: "box-muller" },
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
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) {
    console.error(`--threads ${values.threads}: use an integer >= 1`);
    return 2;
  }
  const initOnly = values["init-only"];
  const repeats = values.repeats === undefined
    ? (values.quick || initOnly ? 1 : 3)
    : Number(values.repeats);
  if (!Number.isInteger(repeats) || repeats < 1) {
    console.error(`--repeats ${values.repeats}: use an integer >= 1`);
    return 2;
  }
  const init = values.init as NormalMethod;
  if (!NORMAL_METHODS.includes(init)) {
    console.error(`--init: unknown init "${init}"; use one of ${NORMAL_METHODS.join(", ")}`);
    return 2;
  }
  const known = benchModels();
  if (values.child !== undefined) {
    return initOnly ? initChild(values.child, init) : await child(values.child, repeats);
  }
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
  if (initOnly) {
    return await initOnlyMain(known.filter((m) => ids.includes(m.id)), repeats, values.out);
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
      `${r.id} init zig s`,
      ...o.map((x) => x.initZigguratSeconds.toFixed(2)),
      "-",
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

async function initOnlyMain(
  models: BenchModel[],
  repeats: number,
  outDir: string,
): Promise<number> {
  const rows: Record<string, unknown>[] = [];
  const t0 = performance.now();
  for (const { id, name, config } of models) {
    const runs: Record<string, InitResult[]> = {};
    for (const init of NORMAL_METHODS) {
      runs[init] = [];
      for (let r = 0; r < repeats; r++) {
        console.error(`[vs_torch] ${name}: CausalLM.random init ${init} (${r + 1}/${repeats}) ...`);
        runs[init].push(await measureInitInChild(id, init));
      }
    }
    const bm = runs["box-muller"]!, zig = runs["ziggurat"]!;
    rows.push({
      id,
      name,
      parameters: parameterCount(config),
      initSeconds: median(bm.map((x) => x.seconds)),
      initZigguratSeconds: median(zig.map((x) => x.seconds)),
      runs,
    });
  }
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(28) : c.padStart(14))).join("");
  console.log(
    `vs_torch --init-only: CausalLM.random(config, { seed: 0, init }) on the CPU backend, one fresh process per call; seconds (median of ${repeats})`,
  );
  console.log(line(["model", "parameters", "init s", "init zig s", "speed-up"]));
  for (const r of rows) {
    const a = r.initSeconds as number, b = r.initZigguratSeconds as number;
    console.log(line([
      `${r.id}`,
      `${r.parameters}`,
      a.toFixed(2),
      b.toFixed(2),
      `${(a / b).toFixed(1)}x`,
    ]));
  }
  const date = new Date().toISOString();
  const file = `${outDir}/vs_torch-init-${date.replace(/[:.]/g, "-").slice(0, 19)}Z.json`;
  await Deno.mkdir(outDir, { recursive: true });
  await Deno.writeTextFile(
    file,
    JSON.stringify({ schema: "rlvr-vs-torch-init/1", date, repeats, rows }, null, 2) + "\n",
  );
  console.log(`wrote ${file} (${((performance.now() - t0) / 1e3).toFixed(0)} s)`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
