/**
 * `deno run -A bench/lora_memory.ts [--model tiny|10m|0.5b] [--storage bf16,f32] [--rank 16]
 * [--out bench/results]`: the peak memory and time of one LoRA GRPO step on the CPU backend, with
 * the frozen base held as bf16 or f32, each in its own process (so each peak RSS is that
 * configuration's alone). It prints a table and writes JSON.
 *
 * Design decisions:
 * - **The step is the one a LoRA GRPO run takes**: generate a group of completions with the KV
 *   cache, score them with gradients, the clipped-ratio policy-gradient loss with group-normalised
 *   advantages (rewards drawn at random: memory and speed do not depend on them), backward into
 *   the adapters only, one AdamW step on the adapters. The base is `CausalLM.random` with
 *   `storage` (weights drawn as f32 and rounded to bf16 tensor by tensor).
 * - **Peak RSS** is the child's `VmHWM` after the step (the whole process: weights, activations,
 *   the WebAssembly memory, V8's heap), also after the model is built, to separate the two.
 * - Sizes: `0.5b` is the Qwen2.5-0.5B shape (494M parameters), 4 prompts of 32 tokens, 16 new
 *   tokens each; LoRA on every linear layer of every block.
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  attachLora,
  CausalLM,
  generate,
  type ModelConfig,
  modelConfig,
  scoreCompletions,
} from "@rlvr/policy";
import { AdamW, getBackend, Rng, type StorageFormat, tensor, tidy } from "@rlvr/tensor";
import { BENCH_CONFIG, QWEN25_05B, randomIds } from "../packages/policy/bench/policy_bench.ts";
import { peakRssBytes } from "./vs_torch.ts";

/** One configuration's measurement. */
export interface LoraMemoryResult {
  /** The model id. */
  model: string;
  /** How the frozen base was held. */
  storage: StorageFormat;
  /** Base parameters and adapter parameters. */
  parameters: { base: number; adapters: number };
  /** Seconds: building the model, generation, scoring + backward, the optimizer step. */
  seconds: { init: number; generate: number; scoreBackward: number; optimizer: number };
  /** Peak RSS after building the model and after the step (bytes), or null off Linux. */
  peakRssBytes: { model: number | null; step: number | null };
  /** Bytes the backend held in live buffers right after building the model. */
  liveBytesAfterInit: number;
}

const MODELS: Record<
  string,
  { config: ModelConfig; prompts: number; prompt: number; news: number }
> = {
  // For the test: seconds, not minutes.
  tiny: {
    config: modelConfig({
      modelType: "qwen2",
      vocabSize: 64,
      hiddenSize: 32,
      intermediateSize: 64,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 2,
      tieWordEmbeddings: true,
    }),
    prompts: 2,
    prompt: 4,
    news: 3,
  },
  "10m": { config: BENCH_CONFIG, prompts: 4, prompt: 32, news: 16 },
  "0.5b": { config: QWEN25_05B, prompts: 4, prompt: 32, news: 16 },
};

/**
 * One LoRA GRPO step (see the module doc) in this process.
 *
 * @param model Model id (`10m`, `0.5b`).
 * @param storage How the base is held.
 * @param rank LoRA rank.
 * @returns The measurement.
 *
 * @example Usage
 * ```ts ignore
 * import { loraGrpoStep } from "./lora_memory.ts";
 * const r = await loraGrpoStep("10m", "bf16", 8);
 * console.log(r.peakRssBytes.step);
 * ```
 */
export async function loraGrpoStep(
  model: string,
  storage: StorageFormat,
  rank: number,
): Promise<LoraMemoryResult> {
  const plan = MODELS[model];
  if (plan === undefined) {
    throw new RangeError(`--model ${model}: use one of ${Object.keys(MODELS)}`);
  }
  let t = performance.now();
  const policy = CausalLM.random(plan.config, { seed: 0, storage });
  const init = (performance.now() - t) / 1000;
  const liveBytesAfterInit = getBackend().memory().liveBytes;
  const afterModel = peakRssBytes();
  const lora = attachLora(policy, {
    rank,
    alpha: 2 * rank,
    targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
  });
  const adapters = [...lora.namedParameters().values()];
  const opt = new AdamW(adapters, { lr: 1e-4 });
  const rng = new Rng(1);
  const prompts = randomIds(rng, plan.prompts, plan.prompt, plan.config.vocabSize);

  t = performance.now();
  const { sequences } = await generate(policy, prompts, {
    maxNewTokens: plan.news,
    sampler: { seed: 2, temperature: 1 },
  });
  const gen = (performance.now() - t) / 1000;

  t = performance.now();
  const batch = sequences.map((s, i) => ({ promptIds: prompts[i]!, completionIds: s.tokens }));
  const rewards: number[] = batch.map(() => (rng.uniform() < 0.5 ? 0 : 1));
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const sd = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / rewards.length) || 1;
  const loss = tidy(() => {
    const s = scoreCompletions(policy, batch, { entropy: false });
    const adv = tensor(rewards.map((r) => (r - mean) / sd), { shape: [batch.length, 1] });
    // At the sampling policy the ratio is 1: the PPO-clip surrogate's gradient is −A·∇log π.
    const ratio = s.logprobs.sub(s.logprobs.detach()).exp();
    return ratio.mul(adv).mul(s.mask).sum().div(s.mask.sum()).neg();
  });
  loss.backward();
  loss.dispose();
  const scoreBackward = (performance.now() - t) / 1000;

  t = performance.now();
  opt.step();
  opt.zeroGrad();
  const optimizer = (performance.now() - t) / 1000;
  const result: LoraMemoryResult = {
    model,
    storage,
    parameters: {
      base: [...new Set(policy.params.values())].reduce((a, p) => a + p.size, 0),
      adapters: adapters.reduce((a, p) => a + p.size, 0),
    },
    seconds: { init, generate: gen, scoreBackward, optimizer },
    peakRssBytes: { model: afterModel, step: peakRssBytes() },
    liveBytesAfterInit,
  };
  opt.dispose();
  policy.dispose();
  return result;
}

const gib = (b: number | null) => (b === null ? "-" : (b / 2 ** 30).toFixed(2));

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: "string", default: "0.5b" },
      storage: { type: "string", default: "bf16,f32" },
      rank: { type: "string", default: "16" },
      out: { type: "string", default: "bench/results" },
      child: { type: "string" },
    },
  });
  const rank = Number(values.rank);
  if (!Number.isInteger(rank) || rank < 1) {
    console.error(`--rank ${values.rank}: use an integer >= 1`);
    return 2;
  }
  if (values.child !== undefined) {
    const r = await loraGrpoStep(values.model, values.child as StorageFormat, rank);
    console.log(JSON.stringify(r));
    return 0;
  }
  const storages = values.storage.split(",");
  for (const s of storages) {
    if (s !== "bf16" && s !== "f32") {
      console.error(`--storage ${s}: use bf16 and/or f32`);
      return 2;
    }
  }
  const results: LoraMemoryResult[] = [];
  for (const storage of storages) {
    console.error(`[lora_memory] ${values.model}, base ${storage} ...`);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        import.meta.filename!,
        "--model",
        values.model,
        "--rank",
        String(rank),
        "--child",
        storage,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (out.code !== 0) {
      console.error(`[lora_memory] the ${storage} child failed (exit ${out.code})`);
      return 1;
    }
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    results.push(JSON.parse(lines[lines.length - 1]!));
  }
  console.log(
    `LoRA GRPO step (rank ${rank}, every linear layer), model ${values.model}, CPU backend`,
  );
  console.log(
    "base   init s  generate s  score+backward s  optimizer s  live GiB after init  " +
      "peak RSS GiB (model)  peak RSS GiB (step)",
  );
  for (const r of results) {
    console.log(
      `${r.storage.padEnd(5)} ${r.seconds.init.toFixed(2).padStart(7)} ${
        r.seconds.generate.toFixed(2).padStart(11)
      } ${r.seconds.scoreBackward.toFixed(2).padStart(17)} ${
        r.seconds.optimizer.toFixed(3).padStart(12)
      } ${gib(r.liveBytesAfterInit).padStart(20)} ${gib(r.peakRssBytes.model).padStart(21)} ${
        gib(r.peakRssBytes.step).padStart(20)
      }`,
    );
  }
  const date = new Date().toISOString();
  const file = `${values.out}/lora_memory-${date.replace(/[:.]/g, "-").slice(0, 19)}Z.json`;
  await Deno.mkdir(values.out, { recursive: true });
  await Deno.writeTextFile(
    file,
    JSON.stringify({ date, model: values.model, rank, deno: Deno.version.deno, results }, null, 2) +
      "\n",
  );
  console.log(`wrote ${file}`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
