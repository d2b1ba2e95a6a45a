/**
 * `deno run -A bench/vs_torch.ts [--quick] [--threads N] [--python python3]`: the parts of one RL
 * step - generation, scoring, a training step - for `@rlvr/policy` on the CPU backend and for the
 * same model in PyTorch (`bench/vs_torch.py`, Debian's `python3-torch`), in one run, with the ratio
 * ours / PyTorch per part (seconds; > 1 means we are slower).
 *
 * Design decisions:
 * - **Same model, same sizes, same timing rule**: the model is the Hugging Face config dict both
 *   sides build from (random weights, speed only); every case is one untimed warm-up call, then
 *   the median of the timed calls. Two models: the shipped demo policy's shape
 *   (`apps/train/checkpoints/tiny/config.json`) at the default run's batch, and the ~10M-parameter
 *   Qwen2 shape of `bench/policy.ts`.
 * - **A training step** is one forward over the scoring batch, the mean completion log-prob as the
 *   loss, backward, and one AdamW step - the same on both sides.
 * - PyTorch runs with `torch.set_num_threads(--threads)` (default 2, the machine's cores); ours is
 *   whatever the default backend is (today the single-threaded TypeScript CPU oracle).
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
import { AdamW, getBackend, noGrad, Rng, tidy } from "@rlvr/tensor";
import { BENCH_CONFIG, randomIds } from "../packages/policy/bench/policy_bench.ts";

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
}

/**
 * The two models the bench compares on.
 *
 * @example Usage
 * ```ts
 * import { benchModels } from "./vs_torch.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(benchModels().map((m) => m.plan.scoreBatch), [64, 8]);
 * ```
 */
export function benchModels(): { name: string; config: ModelConfig; plan: VsTorchPlan }[] {
  const tinyPath = fileURLToPath(
    new URL("../apps/train/checkpoints/tiny/config.json", import.meta.url),
  );
  const tiny = configFromHf(JSON.parse(Deno.readTextFileSync(tinyPath)), tinyPath);
  return [
    {
      name: "demo (shipped tiny policy)",
      config: tiny,
      // The default run's step: 64 responses of up to 8 tokens after a ~7-token prompt.
      plan: { generateBatch: 64, promptTokens: 7, newTokens: 8, scoreBatch: 64 },
    },
    {
      name: "~10M Qwen2-shaped",
      config: BENCH_CONFIG,
      plan: { generateBatch: 8, promptTokens: 32, newTokens: 64, scoreBatch: 8 },
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
  const model = CausalLM.random(config, { seed: 0 });
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
    result: (SideResult & { torch: string; threads: number; parameters: number }) | null;
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

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      threads: { type: "string", default: "2" },
      python: { type: "string", default: "/usr/bin/python3" },
      out: { type: "string", default: "bench/results" },
    },
  });
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) {
    console.error(`--threads ${values.threads}: use an integer >= 1`);
    return 2;
  }
  const repeats = values.quick ? 1 : 3;
  const rows: Record<string, unknown>[] = [];
  const t0 = performance.now();
  for (const { name, config, plan } of benchModels()) {
    console.error(`[vs_torch] ${name}: ours (${getBackend().name}) ...`);
    const ours = await measureOurs(config, plan, repeats);
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
      name,
      parameters: parameterCount(config),
      plan,
      ours,
      torch: torch.result,
      note: torch.reason,
    });
  }
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(34) : c.padStart(12))).join("");
  console.log(
    `vs_torch: ours on ${getBackend().name}, PyTorch with ${threads} threads; seconds per call (median of ${repeats})`,
  );
  console.log(line(["model / part", "ours s", "torch s", "ours/torch"]));
  for (const r of rows) {
    const o = r.ours as SideResult;
    const t = r.torch as SideResult | null;
    for (const part of ["generate", "scoreForward", "trainStep"] as const) {
      const ratio = t === null ? "-" : (o[part].seconds / t[part].seconds).toFixed(1) + "x";
      console.log(line([
        `${String(r.name).slice(0, 20)} ${part}`,
        o[part].seconds.toFixed(4),
        t === null ? "-" : t[part].seconds.toFixed(4),
        ratio,
      ]));
    }
  }
  const date = new Date().toISOString();
  const file = `${values.out}/vs_torch-${date.replace(/[:.]/g, "-").slice(0, 19)}Z.json`;
  await Deno.mkdir(values.out, { recursive: true });
  await Deno.writeTextFile(
    file,
    JSON.stringify({ schema: "rlvr-vs-torch/1", date, threads, repeats, rows }, null, 2) + "\n",
  );
  console.log(`wrote ${file} (${((performance.now() - t0) / 1e3).toFixed(0)} s)`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
