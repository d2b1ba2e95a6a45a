/**
 * `deno task pretrain`: supervised fine-tuning (SFT) of the tiny char-level policy on generated
 * problems of the default task, written to `apps/train/checkpoints/tiny/`.
 *
 * Design decisions:
 * - **Deliberately under-trained.** RL needs a policy that is sometimes right: the run stops at
 *   the first held-out evaluation whose pass@1 (sampling at temperature 1, as `deno task train`
 *   samples) reaches {@link PretrainOptions.targetPassAt1}, so the shipped policy solves a
 *   minority of problems on one try but many more within 8 tries (pass@8 well above pass@1),
 *   which is the signal GRPO turns into pass@1.
 * - **The SFT corpus is the task's own generator** (the default task, two-digit addition,
 *   {@link DEFAULT_TASK_OPTIONS}): a stream of `{prompt, answer}` rows in the compact format of
 *   `format.ts`, with the held-out problems of `deno task train` skipped, so held-out means
 *   never seen in pretraining or in RL. Two-digit addition (8100 problems) is chosen over the
 *   one-digit mix (243 problems): on the latter the policy memorises a table, and GRPO on the
 *   training problems made held-out pass@1 fall (27.9% to 18.2% in 100 steps), while on
 *   addition it learns a procedure that RL improves for every problem.
 * - **Reproducible**: initialisation, data order and the evaluation draws follow `seed`; the CPU
 *   backend is deterministic, so the same command writes the same weights.
 * - The loss is the token-mean negative log-likelihood of `answer <eos>` given `<bos> prompt`,
 *   computed with `scoreCompletions` (the same learner-side scoring RL uses).
 *
 * @module
 */

import { resolve } from "node:path";
import { CausalLM, type ModelConfig, modelConfig, parameterCount } from "@rlvr/policy";
import { saveCheckpoint } from "@rlvr/policy/fs";
import { arithmeticTask, type Task } from "@rlvr/rewards";
import { AdamW } from "@rlvr/tensor";
import { evaluate, promptIds } from "../loop/eval.ts";
import { heldOutProblems, TrainStream } from "../loop/problems.ts";
import { TINY_CHECKPOINT_DIR } from "../loop/policy.ts";
import { answerText, tinyTokenizer } from "./format.ts";
import { sftStep } from "./sft.ts";

/**
 * The default task's options: two-digit addition, one operator. Structured enough that the
 * policy learns a procedure rather than a lookup table, so what RL teaches on training problems
 * carries over to the held-out ones.
 */
export const DEFAULT_TASK_OPTIONS: Readonly<
  { digits: number; operators: readonly ["+"]; chainLength: number }
> = Object.freeze({ digits: 2, operators: ["+"] as const, chainLength: 1 });

/** Options of {@link pretrain}. */
export interface PretrainOptions {
  /** Output folder (default the shipped checkpoint folder). */
  out?: string;
  /** Seed of initialisation, data and evaluation (default 0). */
  seed?: number;
  /** Most SFT steps (default 3000). */
  maxSteps?: number;
  /** Sequences per step (default 64). */
  batchSize?: number;
  /** Peak learning rate (default 3e-3). */
  lr?: number;
  /** Evaluate every N steps (default 50). */
  evalEvery?: number;
  /** Stop at the first evaluation with held-out pass@1 >= this (default 0.25). */
  targetPassAt1?: number;
  /** Held-out problems evaluated (default 64). */
  evalProblems?: number;
  /** Samples per held-out problem (default 8). */
  evalSamples?: number;
  /** Model sizes (default {@link tinyModelConfig}). */
  model?: ModelConfig;
  /** Progress lines (default console.log). */
  log?: (line: string) => void;
}

/** What {@link pretrain} returns. */
export interface PretrainResult {
  /** SFT steps taken. */
  steps: number;
  /** Held-out pass@1 of the saved policy (temperature 1). */
  passAt1: number;
  /** Held-out pass@8 of the saved policy. */
  passAtK: number;
  /** Parameters. */
  parameters: number;
  /** Seconds. */
  seconds: number;
}

/**
 * The tiny policy's architecture: Llama-style, hidden 64, 2 layers, 4 heads, MLP 192, over
 * the {@link tinyTokenizer} vocabulary.
 *
 * @example Usage
 * ```ts
 * import { tinyModelConfig } from "./pretrain.ts";
 * import { parameterCount } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * assert.ok(parameterCount(tinyModelConfig()) < 250_000);
 * ```
 */
export function tinyModelConfig(): ModelConfig {
  const tok = tinyTokenizer();
  return modelConfig({
    modelType: "llama",
    vocabSize: tok.vocabSize,
    hiddenSize: 64,
    intermediateSize: 192,
    numLayers: 2,
    numHeads: 4,
    maxPositions: 256,
    bosTokenId: tok.bosTokenId,
    eosTokenIds: [...tok.eosTokenIds],
    padTokenId: tok.padTokenId,
  });
}

/**
 * The default task the tiny policy is trained for: `arithmeticTask(DEFAULT_TASK_OPTIONS)`.
 *
 * @example Usage
 * ```ts
 * import { defaultTask } from "./pretrain.ts";
 * import assert from "node:assert/strict";
 * const row = defaultTask().row(0, 0);
 * assert.match(String(row.expression), /^\d\d \+ \d\d$/);
 * ```
 */
export function defaultTask(): Task {
  return arithmeticTask({
    ...DEFAULT_TASK_OPTIONS,
    operators: [...DEFAULT_TASK_OPTIONS.operators],
  }) as unknown as Task;
}

/**
 * Pretrains (SFT) the tiny policy and saves it with its tokenizer; see the module doc.
 *
 * @example Usage
 * ```ts
 * import { pretrain } from "./pretrain.ts";
 * import assert from "node:assert/strict";
 * const out = await Deno.makeTempDir();
 * const r = await pretrain({ out, maxSteps: 2, evalEvery: 2, evalProblems: 2, evalSamples: 2, log: () => {} });
 * assert.equal(r.steps, 2);
 * assert.ok((await Deno.stat(`${out}/model.safetensors`)).isFile);
 * await Deno.remove(out, { recursive: true });
 * ```
 */
export async function pretrain(options: PretrainOptions = {}): Promise<PretrainResult> {
  const out = options.out ?? TINY_CHECKPOINT_DIR;
  const seed = options.seed ?? 0;
  const maxSteps = options.maxSteps ?? 3000;
  const batchSize = options.batchSize ?? 64;
  const lr = options.lr ?? 3e-3;
  const evalEvery = options.evalEvery ?? 50;
  const target = options.targetPassAt1 ?? 0.25;
  const evalSamples = options.evalSamples ?? 8;
  const log = options.log ?? ((line: string) => console.log(line));
  const started = performance.now();
  const tokenizer = tinyTokenizer();
  const config = options.model ?? tinyModelConfig();
  const model = CausalLM.random(config, { seed, std: 0.1 });
  const task = defaultTask();
  const held = heldOutProblems(task, options.evalProblems ?? 64);
  const eos = tokenizer.eosTokenIds[0]!;
  // The held-out problems are never trained on, here as in `deno task train`.
  const stream = new TrainStream(task, seed, held);
  const opt = new AdamW(model.parameters(), { lr, betas: [0.9, 0.98], weightDecay: 0.01 });
  const params = parameterCount(config);
  log(
    `pretrain: ${params} parameters, task arithmetic ${JSON.stringify(DEFAULT_TASK_OPTIONS)}, ` +
      `batch ${batchSize}, lr ${lr}, stop at held-out pass@1 >= ${target} or ${maxSteps} steps`,
  );
  const evalNow = () =>
    evaluate(model, tokenizer, task, held, {
      samples: evalSamples,
      k: evalSamples,
      seed,
      sampling: { temperature: 1 },
      maxNewTokens: 6,
    });
  let step = 0;
  let last = { passAt1: 0, passAtK: 0 };
  try {
    while (step < maxSteps) {
      const rows = stream.take(batchSize);
      const batch = rows.map((row) => ({
        promptIds: promptIds(tokenizer, row),
        completionIds: [...tokenizer.encode(answerText(row), { addSpecialTokens: false }), eos],
      }));
      // Linear warm-up over 20 steps, then constant: the run is stopped by the evaluation.
      opt.lr = lr * Math.min(1, (step + 1) / 20);
      const lossValue = await sftStep(model, opt, batch);
      step++;
      if (step % evalEvery === 0 || step === maxSteps) {
        const r = await evalNow();
        last = r;
        log(
          `step ${step}: loss ${lossValue.toFixed(4)}, held-out pass@1 ${
            (100 * r.passAt1).toFixed(1)
          }%, pass@${r.k} ${(100 * r.passAtK).toFixed(1)}% (${
            ((performance.now() - started) / 1000).toFixed(0)
          } s)`,
        );
        if (r.passAt1 >= target) break;
      }
    }
    await saveCheckpoint(out, {
      config,
      params: model.params,
      generationConfig: { bos_token_id: config.bosTokenId, eos_token_id: config.eosTokenIds },
    });
    await tokenizer.save(out);
  } finally {
    opt.dispose();
    model.dispose();
  }
  const seconds = (performance.now() - started) / 1000;
  log(
    `pretrain: saved ${out} after ${step} steps (${seconds.toFixed(0)} s): held-out pass@1 ${
      (100 * last.passAt1).toFixed(1)
    }%, pass@${evalSamples} ${(100 * last.passAtK).toFixed(1)}%`,
  );
  return { steps: step, passAt1: last.passAt1, passAtK: last.passAtK, parameters: params, seconds };
}

if (import.meta.main) {
  const out = Deno.args[0];
  await pretrain(out !== undefined ? { out: resolve(out) } : {});
}
