/**
 * `deno task pretrain:cot`: the chain-of-thought warm start `builtin:tiny-cot`, a char-level
 * Llama of about 0.9M parameters trained from scratch by SFT on the step-by-step traces of
 * `cot.ts` (multi-operand addition with column sums, Countdown with its search, Knights and
 * Knaves by truth table), written to `apps/train/checkpoints/tiny-cot/`.
 *
 * Design decisions:
 * - **Throughput first.** The run must finish in 15 minutes on 2 CPU cores, and at this scale the
 *   model's accuracy is limited by how many trace tokens it sees. So: both cores, by data
 *   parallelism with a Web Worker (`sft_parallel.ts`; the CPU backend computes on one thread);
 *   the four tags as single tokens ({@link cotTokenizer}); batches sorted by length into
 *   micro-batches of 8 (less padding); and a small model, hidden 128 / 4 layers (0.88M
 *   parameters): one step of 32 traces took ~2.6 s on one core there and ~3.5 s at hidden 192
 *   (1.8M), and the smaller model sees more data in the same time.
 * - **A fixed number of steps with a cosine decay**, not "stop at a target pass@1": the run's
 *   length does not depend on an evaluation, and the traces are the policy's only teacher.
 * - **The mix**: 70% addition (2–4 one-digit operands), 15% Countdown (3–4 numbers), 15%
 *   Knights and Knaves (2–3 inhabitants), drawn per sequence from the seed. Problems held out by
 *   `deno task train` for these tasks and for the reasoning recipe's harder addition
 *   ({@link COT_RECIPE_TASK}) are never trained on.
 * - **Reproducible**: initialisation, data, trace noise, the split between the two threads and
 *   the evaluation draws follow `seed`; the CPU backend is deterministic, so the same command
 *   writes the same bytes (the sha256 is in apps/train/README.md; a test checks a short run).
 *
 * @module
 */

import { resolve } from "node:path";
import {
  CausalLM,
  CharTokenizer,
  type ModelConfig,
  modelConfig,
  parameterCount,
} from "@rlvr/policy";
import { saveCheckpoint } from "@rlvr/policy/fs";
import { arithmeticTask, seededRng, type Task, type TaskRow } from "@rlvr/rewards";
import { AdamW, createCpuBackend, getBackend, setBackend } from "@rlvr/tensor";
import { evaluate, promptIds } from "../loop/eval.ts";
import { heldOutProblems } from "../loop/problems.ts";
import { TINY_COT_CHECKPOINT_DIR } from "../loop/policy.ts";
import { COT_SFT_OPTIONS, cotCompletion, cotTasks } from "./cot.ts";
import { TINY_ALPHABET } from "./format.ts";
import { sftStep } from "./sft.ts";
import { ParallelSft } from "./sft_parallel.ts";

/**
 * The task of the reasoning recipe (`recipes/grpo_cot.yaml`): addition of 4 one-digit operands,
 * difficulty 3 by the arithmetic task's formula (operators × mean digits), above the median of
 * the SFT mix's addition (2: 2–4 one-digit operands, each count a third of the rows).
 */
export const COT_RECIPE_TASK: Readonly<
  { digits: [number, number]; operators: ["+"]; chainLength: number }
> = Object.freeze({
  digits: [1, 1] as [number, number],
  operators: ["+"] as ["+"],
  chainLength: 3,
});

/** Options of {@link pretrainCot}. */
export interface PretrainCotOptions {
  /** Output folder (default the shipped `tiny-cot` folder). */
  out?: string;
  /** Seed of initialisation, data and evaluation (default 0). */
  seed?: number;
  /** SFT steps (default 520). */
  steps?: number;
  /** Sequences per step (default 32). */
  batchSize?: number;
  /** Peak learning rate (default 3e-3; 20 warm-up steps, cosine decay to a tenth). */
  lr?: number;
  /** Held-out problems per task in the final evaluation (default 32; 0 skips it). */
  evalProblems?: number;
  /** Samples per held-out problem (default 4). */
  evalSamples?: number;
  /** Sequences per forward/backward pass, after sorting the batch by length (default 8). */
  microBatch?: number;
  /** Both CPU cores, by data parallelism with a Web Worker (`sft_parallel.ts`; default true). */
  parallel?: boolean;
  /** Model sizes (default {@link cotModelConfig}). */
  model?: ModelConfig;
  /** Progress lines (default console.log). */
  log?: (line: string) => void;
}

/** Held-out pass@1 of one task in {@link PretrainCotResult}. */
export interface CotEval {
  /** Task name (`arithmetic-hard` is the recipe's task). */
  task: string;
  /** Held-out pass@1 at temperature 1. */
  passAt1: number;
  /** Held-out pass@k (k = the samples). */
  passAtK: number;
  /** Mean completion length in tokens. */
  meanLength: number;
}

/** What {@link pretrainCot} returns. */
export interface PretrainCotResult {
  /** SFT steps taken. */
  steps: number;
  /** Parameters. */
  parameters: number;
  /** Token-mean NLL of the last step. */
  loss: number;
  /** Final held-out evaluation per task (empty with `evalProblems: 0`). */
  evals: CotEval[];
  /** Seconds. */
  seconds: number;
}

/** The tags of the trace format, one token each in {@link cotTokenizer}. */
export const COT_WORDS: readonly string[] = Object.freeze([
  "<think>",
  "</think>",
  "<answer>",
  "</answer>",
]);

/**
 * The warm start's tokenizer: the tiny model's characters plus the four tags of the trace format
 * as single tokens ({@link COT_WORDS}), so a trace spends its length on the reasoning, not on
 * spelling `</answer>` (a third of an addition trace's characters).
 *
 * @example Usage
 * ```ts
 * import { cotTokenizer } from "./pretrain_cot.ts";
 * import assert from "node:assert/strict";
 * const tok = cotTokenizer();
 * assert.equal(tok.encode("<think>1+1</think><answer>2</answer>", { addSpecialTokens: false }).length, 8);
 * ```
 */
export function cotTokenizer(): CharTokenizer {
  return new CharTokenizer(TINY_ALPHABET, { words: COT_WORDS });
}

/**
 * The warm start's architecture: Llama-style, hidden 128, 4 layers, 4 heads, MLP 384, 320
 * positions, over the {@link cotTokenizer} vocabulary.
 *
 * @example Usage
 * ```ts
 * import { cotModelConfig } from "./pretrain_cot.ts";
 * import { parameterCount } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * assert.ok(parameterCount(cotModelConfig()) > 800_000);
 * ```
 */
export function cotModelConfig(): ModelConfig {
  const tok = cotTokenizer();
  return modelConfig({
    modelType: "llama",
    vocabSize: tok.vocabSize,
    hiddenSize: 128,
    intermediateSize: 384,
    numLayers: 4,
    numHeads: 4,
    maxPositions: 320,
    bosTokenId: tok.bosTokenId,
    eosTokenIds: [...tok.eosTokenIds],
    padTokenId: tok.padTokenId,
  });
}

/**
 * The recipe's task as a {@link Task}.
 *
 * @example Usage
 * ```ts
 * import { cotRecipeTask } from "./pretrain_cot.ts";
 * import assert from "node:assert/strict";
 * assert.match(String(cotRecipeTask().row(0, 0).expression), /^\d \+ \d \+ \d \+ \d$/);
 * ```
 */
export function cotRecipeTask(): Task {
  return arithmeticTask({ ...COT_RECIPE_TASK, operators: ["+"] }) as unknown as Task;
}

/**
 * The SFT stream: sequence `i` of `seed` is a trace of a row drawn from one of the three
 * tasks (70% addition, 15% each of the others), skipping held-out problems and rows without
 * a trace.
 *
 * @example Usage
 * ```ts
 * import { cotStream } from "./pretrain_cot.ts";
 * import assert from "node:assert/strict";
 * const a = cotStream(0), b = cotStream(0);
 * const x = a.next().value!, y = b.next().value!;
 * assert.deepEqual(x, y);
 * assert.match(x.completion, /^<think>.*<\/think><answer>.*<\/answer>$/);
 * ```
 */
export function* cotStream(
  seed: number,
  heldOutEvalProblems = 64,
): Generator<{ row: TaskRow; completion: string }> {
  const tasks = cotTasks(COT_SFT_OPTIONS);
  const held = new Set<string>();
  const hold = (task: Task) => {
    for (const r of heldOutProblems(task, heldOutEvalProblems)) {
      held.add(`${task.name}:${task.key(r)}`);
    }
  };
  tasks.forEach(hold);
  hold(cotRecipeTask());
  for (let i = 0;; i++) {
    const rng = seededRng(seed, i, 7);
    const u = rng.next();
    const task = tasks[u < 0.7 ? 0 : u < 0.85 ? 1 : 2]!;
    const row = task.row(seed, i);
    if (held.has(`${task.name}:${task.key(row)}`)) continue;
    const completion = cotCompletion(row, rng);
    if (completion === null) continue;
    yield { row, completion };
  }
}

/**
 * Trains the warm start and saves it with its tokenizer; see the module doc.
 *
 * @example Usage
 * ```ts
 * import { pretrainCot } from "./pretrain_cot.ts";
 * import assert from "node:assert/strict";
 * const out = await Deno.makeTempDir();
 * const r = await pretrainCot({ out, steps: 2, batchSize: 4, evalProblems: 0, log: () => {} });
 * assert.equal(r.steps, 2);
 * assert.ok((await Deno.stat(`${out}/model.safetensors`)).isFile);
 * await Deno.remove(out, { recursive: true });
 * ```
 */
export async function pretrainCot(options: PretrainCotOptions = {}): Promise<PretrainCotResult> {
  const out = options.out ?? TINY_COT_CHECKPOINT_DIR;
  const seed = options.seed ?? 0;
  const steps = options.steps ?? 520;
  const batchSize = options.batchSize ?? 32;
  const lr = options.lr ?? 5e-3;
  const evalProblems = options.evalProblems ?? 32;
  const evalSamples = options.evalSamples ?? 4;
  const log = options.log ?? ((line: string) => console.log(line));
  const microBatch = options.microBatch ?? 8;
  const started = performance.now();
  const tokenizer = cotTokenizer();
  const config = options.model ?? cotModelConfig();
  const parallel = options.parallel ?? true ? await ParallelSft.start(config) : null;
  // With the worker on one core, the main thread's matmuls keep to the other (the CPU backend
  // gives the same bits with any thread count). No native BLAS for the backward pass and the
  // oracle's attention: the shipped checkpoint was made with the WebAssembly matmul and the
  // float64 attention loops, whose rounding differs from a BLAS's and from attention_matmul.ts's.
  const backendBefore = getBackend();
  if (parallel !== null) {
    setBackend(createCpuBackend({ threads: 1, blas: "wasm", attention: "ts" }));
  }
  const model = CausalLM.random(config, { seed, std: 0.05 });
  const eos = tokenizer.eosTokenIds[0]!;
  const stream = cotStream(seed);
  const opt = new AdamW(model.parameters(), { lr, betas: [0.9, 0.98], weightDecay: 0.01 });
  const params = parameterCount(config);
  log(
    `pretrain:cot: ${params} parameters, ${steps} steps of ${batchSize} traces, peak lr ${lr}`,
  );
  let loss = NaN;
  const evals: CotEval[] = [];
  try {
    for (let step = 0; step < steps; step++) {
      const batch = Array.from({ length: batchSize }, () => {
        const { row, completion } = stream.next().value!;
        return {
          promptIds: promptIds(tokenizer, row),
          completionIds: [...tokenizer.encode(completion, { addSpecialTokens: false }), eos],
        };
      });
      const warm = Math.min(1, (step + 1) / 20);
      const cosine = 0.1 + 0.45 * (1 + Math.cos(Math.PI * step / Math.max(1, steps - 1)));
      opt.lr = lr * Math.min(warm, cosine);
      loss = parallel !== null
        ? await parallel.step(model, opt, batch, { microBatch })
        : await sftStep(model, opt, batch, { microBatch });
      if ((step + 1) % 10 === 0 || step + 1 === steps) {
        log(
          `step ${step + 1}/${steps}: loss ${loss.toFixed(4)} (${
            ((performance.now() - started) / 1000).toFixed(0)
          } s)`,
        );
      }
    }
    await saveCheckpoint(out, {
      config,
      params: model.params,
      generationConfig: { bos_token_id: config.bosTokenId, eos_token_id: config.eosTokenIds },
    });
    await tokenizer.save(out);
    if (evalProblems > 0) {
      const named: [string, Task][] = [
        ...cotTasks(COT_SFT_OPTIONS).map((t) => [t.name, t] as [string, Task]),
        ["arithmetic-hard", cotRecipeTask()],
      ];
      for (const [name, task] of named) {
        const r = await evaluate(model, tokenizer, task, heldOutProblems(task, evalProblems), {
          samples: evalSamples,
          k: evalSamples,
          seed,
          sampling: { temperature: 1 },
          maxNewTokens: 200,
        });
        evals.push({
          task: name,
          passAt1: r.passAt1,
          passAtK: r.passAtK,
          meanLength: r.meanLength,
        });
        log(
          `held-out ${name}: pass@1 ${(100 * r.passAt1).toFixed(1)}%, pass@${evalSamples} ${
            (100 * r.passAtK).toFixed(1)
          }%, mean length ${r.meanLength.toFixed(1)} tokens (${r.seconds.toFixed(0)} s)`,
        );
      }
    }
  } finally {
    parallel?.close();
    opt.dispose();
    model.dispose();
    setBackend(backendBefore);
  }
  const seconds = (performance.now() - started) / 1000;
  log(`pretrain:cot: saved ${out} after ${steps} steps (${seconds.toFixed(0)} s)`);
  return { steps, parameters: params, loss, evals, seconds };
}

if (import.meta.main) {
  const out = Deno.args[0];
  await pretrainCot(out !== undefined ? { out: resolve(out) } : {});
}
