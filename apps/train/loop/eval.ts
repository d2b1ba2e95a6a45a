/**
 * Held-out evaluation: `n` sampled completions per problem, scored by the task's verifier,
 * summarised as the unbiased pass@1 and pass@k of `@rlvr/sampling`.
 *
 * Design decision: the draws are keyed by a fixed evaluation step ({@link EVAL_DRAW_STEP}) and
 * `problem · n + sample`, not by the training step, so the evaluation before and after training
 * draws with the same random numbers and the difference measures the policy, not the noise.
 *
 * @module
 */

import { type CausalLM, generate, type SamplingParams, type Tokenizer } from "@rlvr/policy";
import type { Task, TaskRow } from "@rlvr/rewards";
import { passAtK } from "@rlvr/sampling";
import { completionReward } from "../demo/format.ts";
import { promptIds, renderPrompt } from "./prompt.ts";
import { forwardHookOf, type VisionInputs } from "./vision.ts";

// Prompt encoding lives in prompt.ts (one format per kind of tokenizer); re-exported here, where
// it was first defined.
export { promptIds } from "./prompt.ts";

/** The `step` part of every evaluation draw key (outside the training steps' range). */
export const EVAL_DRAW_STEP = 0xfffffff0;

/** Options of {@link evaluate}. */
export interface EvaluateOptions {
  /** Samples per problem (n). */
  samples: number;
  /** The k of pass@k (<= samples). */
  k: number;
  /** Sampler seed. */
  seed: number;
  /** Sampling parameters (the training sampler's, so pass@1 is the policy being trained). */
  sampling: SamplingParams;
  /** Generation limit. */
  maxNewTokens: number;
  /** Completions generated per `generate` call (default 256). */
  batch?: number;
  /** Where decode steps run (`generate`'s `decodeLoop`; default `"host"`). */
  decodeLoop?: "host" | "device";
  /**
   * Token ids that end a completion (default: the tokenizer's EOS); `loadPolicy` gives the
   * tokenizer's, `config.json`'s and `generation_config.json`'s together.
   */
  eosTokenIds?: readonly number[];
  /**
   * Called once per sampled completion with its problem index (into `rows`), sample index
   * (`0..n-1`, generation order), text, verifier reward (0/1) and token count; `deno task eval`
   * collects its samples and maj@k answers this way.
   */
  onSample?: (sample: EvalSample) => void;
  /**
   * Decides which completions solve their rows, 1 or 0 each, for tasks whose rows have no
   * reference answer (a dataset scored by `rewards:`, e.g. code tests); default: the task's
   * verifier (`completionReward`).
   */
  solved?: (
    rows: readonly TaskRow[],
    prompts: readonly string[],
    completions: readonly string[],
  ) => Promise<readonly number[]>;
  /** A vision-language policy's images: rows with images are prompted and run with them. */
  vision?: VisionInputs | null;
}

/** One sampled completion of {@link evaluate}, as given to {@link EvaluateOptions.onSample}. */
export interface EvalSample {
  /** Index of the problem in the evaluated rows. */
  problem: number;
  /** Index of the sample among the problem's n (the order of its draw keys). */
  sample: number;
  /** The decoded completion. */
  text: string;
  /** The verifier's reward (`completionReward`: 0 or 1). */
  reward: number;
  /** Completion length in tokens. */
  tokens: number;
}

/** What {@link evaluate} returns. */
export interface EvalResult {
  /** Mean over problems of the unbiased pass@1. */
  passAt1: number;
  /** Mean over problems of the unbiased pass@k. */
  passAtK: number;
  /** k. */
  k: number;
  /** n. */
  n: number;
  /** Problems evaluated. */
  problems: number;
  /** Mean completion length in tokens. */
  meanLength: number;
  /** Seconds taken. */
  seconds: number;
}

/**
 * Checks the samples per problem `n` and the `k` of pass@k of an evaluation (integers,
 * `1 <= k <= n`), naming the config keys in the error.
 *
 * @example Usage
 * ```ts
 * import { checkEvalSizes } from "./eval.ts";
 * import assert from "node:assert/strict";
 * checkEvalSizes("evaluate", 8, 8);
 * assert.throws(() => checkEvalSizes("evaluate", 4, 8), /1 <= k <= samples, got samples 4, k 8/);
 * ```
 */
export function checkEvalSizes(owner: string, n: number, k: number): void {
  if (!Number.isInteger(n) || n < 1 || !Number.isInteger(k) || k < 1 || k > n) {
    throw new RangeError(
      `${owner}: need integers 1 <= k <= samples, got samples ${n}, k ${k}; ` +
        `set trainer.evalK <= trainer.evalSamples`,
    );
  }
}

/**
 * The mean over problems of the unbiased pass@1 and pass@k, from each problem's count of
 * correct samples out of `n`.
 *
 * @example Usage
 * ```ts
 * import { passRates } from "./eval.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(passRates([0, 2], 2, 2), { passAt1: 0.5, passAtK: 0.5 });
 * ```
 */
export function passRates(
  correct: readonly number[],
  n: number,
  k: number,
): { passAt1: number; passAtK: number } {
  const mean = (f: (c: number) => number) =>
    correct.reduce((a, c) => a + f(c), 0) / Math.max(1, correct.length);
  return { passAt1: mean((c) => passAtK(n, c, 1)), passAtK: mean((c) => passAtK(n, c, k)) };
}

/**
 * Samples `samples` completions for every row and reports pass@1 and pass@k.
 *
 * @example Usage
 * ```ts
 * import { evaluate } from "./eval.ts";
 * import { loadPolicy } from "./policy.ts";
 * import { heldOutProblems } from "./problems.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const r = await evaluate(model, tokenizer, task, heldOutProblems(task, 4), {
 *   samples: 2, k: 2, seed: 0, sampling: { temperature: 1 }, maxNewTokens: 4,
 * });
 * assert.ok(r.passAt1 >= 0 && r.passAt1 <= r.passAtK && r.passAtK <= 1);
 * model.dispose();
 * ```
 */
export async function evaluate<R extends TaskRow>(
  model: CausalLM,
  tokenizer: Tokenizer,
  task: Task<R>,
  rows: readonly R[],
  opts: EvaluateOptions,
): Promise<EvalResult> {
  const { samples: n, k } = opts;
  checkEvalSizes("evaluate", n, k);
  const started = performance.now();
  const jobs: { row: number; prompt: number[]; id: number }[] = [];
  await opts.vision?.prepare(rows);
  rows.forEach((row, p) => {
    const prompt = promptIds(tokenizer, row, undefined, opts.vision ?? undefined);
    for (let s = 0; s < n; s++) jobs.push({ row: p, prompt, id: p * n + s });
  });
  const correct = new Array<number>(rows.length).fill(0);
  let tokens = 0;
  const batch = opts.batch ?? 256;
  for (let i = 0; i < jobs.length; i += batch) {
    const part = jobs.slice(i, i + batch);
    const { sequences } = await generate(model, part.map((j) => j.prompt), {
      ...forwardHookOf(opts.vision, model, (i) => rows[part[i]!.row]),
      maxNewTokens: opts.maxNewTokens,
      sampler: { ...opts.sampling, seed: opts.seed },
      step: EVAL_DRAW_STEP,
      sequenceIds: part.map((j) => j.id),
      tokenizer,
      ...(opts.eosTokenIds !== undefined ? { eosTokenIds: opts.eosTokenIds } : {}),
      ...(opts.decodeLoop === undefined ? {} : { decodeLoop: opts.decodeLoop }),
    });
    const texts = sequences.map((seq) => seq.text ?? "");
    const verdicts = opts.solved !== undefined
      ? await opts.solved(
        part.map((j) => rows[j.row]!),
        part.map((j) => renderPrompt(tokenizer, rows[j.row]!)),
        texts,
      )
      : texts.map((text, j) => completionReward(task, rows[part[j]!.row]!, text));
    sequences.forEach((seq, j) => {
      const job = part[j]!;
      tokens += seq.tokens.length;
      const reward = verdicts[j]!;
      correct[job.row]! += reward;
      opts.onSample?.({
        problem: job.row,
        sample: job.id - job.row * n,
        text: seq.text ?? "",
        reward,
        tokens: seq.tokens.length,
      });
    });
  }
  return {
    ...passRates(correct, n, k),
    k,
    n,
    problems: rows.length,
    meanLength: tokens / Math.max(1, jobs.length),
    seconds: (performance.now() - started) / 1000,
  };
}
