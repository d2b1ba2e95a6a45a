/**
 * `deno task pretrain:code`: the small code dataset of the code-reward demo
 * (`examples/data/js_ops.jsonl`) and a supervised warm start of a code-writing tiny policy,
 * written to `apps/train/checkpoints/tiny-code/` (`builtin:tiny-code`), the starting point of
 * `examples/configs/code.yaml`.
 *
 * Design decisions:
 * - **The task is writing a function to a spec, checked by running it.** A row lists one or two
 *   operations as a JavaScript comment and opens an arrow function (`// +3 *2` /
 *   `const f=x=>`); the completion is the body (`(x+3)*2`); the program is prompt + completion
 *   (HumanEval's layout) and the row's `tests` assert f at four inputs, run in the JavaScript
 *   sandbox (a permission-less Deno process) by the `code` reward. Any equivalent body passes
 *   (`2*(x+3)`, `x*2+6`); no answer string is compared, and precedence matters: `x+3*2` fails.
 *   The rows carry no reference answer, so the dataset needs `task.data.answerField: null` and
 *   a `rewards:` section, as a user's code dataset would.
 * - **Why this task and not program synthesis from input/output examples** (tried first, f(x) =
 *   a·x + b from f(1), f(2), f(3)): after 100 SFT steps that policy solved 0.6% of held-out rows
 *   (pass@8 5%), too little for RL to start from; and a Python case costs a fresh interpreter
 *   process per program (~0.6 s per sample on 2 cores) against ~0.05 s for a JavaScript one, so
 *   the tests are one JavaScript snippet per row.
 * - **756 problems** (27 single operations, 729 pairs); the held-out rows are the dataset's own
 *   test split (`trainTestSplit` by prompt hash, the split `deno task train` uses), never
 *   trained on.
 * - **From `builtin:tiny`** (which already reads and writes digits and `+`), **deliberately
 *   under-trained** as `pretrain.ts` is: it stops at the first held-out evaluation (the code
 *   reward in the real sandbox, temperature 1) whose pass@1 reaches
 *   {@link PretrainCodeOptions.targetPassAt1}, so RL has room to improve it.
 * - Reproducible: data order and evaluation draws follow `seed`; the same command writes the
 *   same weights and the same dataset bytes.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { assetLocation } from "../_assets.ts";
import { saveCheckpoint } from "@rlvr/policy/fs";
import { codeReward } from "@rlvr/rewards/code";
import type { TaskRow } from "@rlvr/rewards";
import { epochPermutation } from "@rlvr/sampling";
import { AdamW } from "@rlvr/tensor";
import { type DataRow, dataTask } from "../loop/data_task.ts";
import { evaluate } from "../loop/eval.ts";
import { loadPolicy, TINY_CHECKPOINT_DIR, TINY_CODE_CHECKPOINT_DIR } from "../loop/policy.ts";
import { promptIds, renderPrompt } from "../loop/prompt.ts";
import { sftStep } from "./sft.ts";

/** One row of the ops dataset. */
export interface OpsRow {
  /** `// +3 *2` (the operations, applied left to right) then `const f=x=>` on the next line. */
  prompt: string;
  /** One JavaScript snippet of `assert.equal` calls on f at several inputs. */
  tests: string;
  /** A body that passes (for the warm start only; the reward never reads it). */
  solution: string;
}

type Op = readonly ["+" | "-" | "*", number];

/** The inputs the tests check f at. */
const INPUTS = [0, 5, -4, 11] as const;

function apply(x: number, ops: readonly Op[]): number {
  return ops.reduce((v, [op, k]) => (op === "+" ? v + k : op === "-" ? v - k : v * k), x);
}

/** The shortest JavaScript body computing `ops` left to right (parentheses only where needed). */
function body(ops: readonly Op[]): string {
  let expr = "x";
  let sum = false; // whether expr ends in a top-level + or -
  for (const [op, k] of ops) {
    if (op === "*" && sum) expr = `(${expr})*${k}`;
    else expr = `${expr}${op}${k}`;
    sum = op !== "*" ? true : false;
  }
  return expr;
}

/**
 * The ops dataset: every chain of one or two operations from `+k`, `-k`, `*k` (k in 1..9),
 * one-operation chains first: 27 + 729 = 756 rows.
 *
 * @example Usage
 * ```ts
 * import { opsProblems } from "./pretrain_code.ts";
 * import assert from "node:assert/strict";
 * const rows = opsProblems();
 * assert.equal(rows.length, 756);
 * const row = rows.find((r) => r.prompt.startsWith("// +3 *2\n"))!;
 * assert.equal(row.prompt, "// +3 *2\nconst f=x=>");
 * assert.equal(row.solution, "(x+3)*2");
 * assert.equal(row.tests, "assert.equal(f(0),6);assert.equal(f(5),16);assert.equal(f(-4),-2);assert.equal(f(11),28)");
 * ```
 */
export function opsProblems(): OpsRow[] {
  const single: Op[] = [];
  for (const op of ["+", "-", "*"] as const) {
    for (let k = 1; k <= 9; k++) single.push([op, k]);
  }
  const chains: Op[][] = [
    ...single.map((o) => [o]),
    ...single.flatMap((a) => single.map((b) => [a, b])),
  ];
  return chains.map((ops) => ({
    prompt: `// ${ops.map(([op, k]) => `${op}${k}`).join(" ")}\nconst f=x=>`,
    tests: INPUTS.map((x) => `assert.equal(f(${x}),${apply(x, ops)})`).join(";"),
    solution: body(ops),
  }));
}

/**
 * The dataset file of the demo, `examples/data/js_ops.jsonl` at the repository root (not part of
 * the published package: pass {@link PretrainCodeOptions.data} elsewhere).
 */
export const OPS_DATA_PATH: string = assetLocation(
  new URL("../../../examples/data/js_ops.jsonl", import.meta.url),
);

/**
 * Writes {@link opsProblems} as JSONL to `path` (one row per line, in order).
 *
 * @example Usage
 * ```ts
 * import { writeOpsData } from "./pretrain_code.ts";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".jsonl" });
 * await writeOpsData(path);
 * assert.equal((await Deno.readTextFile(path)).trim().split("\n").length, 756);
 * await Deno.remove(path);
 * ```
 */
export async function writeOpsData(path: string): Promise<void> {
  const text = opsProblems().map((r) => JSON.stringify(r)).join("\n") + "\n";
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, text);
}

/** Options of {@link pretrainCode}. */
export interface PretrainCodeOptions {
  /** Output folder (default the shipped `tiny-code` folder). */
  out?: string;
  /** The dataset file, written first (default {@link OPS_DATA_PATH}). */
  data?: string;
  /** The checkpoint to start from (default the shipped `builtin:tiny`). */
  from?: string;
  /** Seed of data order and evaluation (default 0). */
  seed?: number;
  /** Most SFT steps (default 2000). */
  maxSteps?: number;
  /** Sequences per step (default 32). */
  batchSize?: number;
  /** Peak learning rate (default 2e-3). */
  lr?: number;
  /** Evaluate every N steps (default 25). */
  evalEvery?: number;
  /** Stop at the first evaluation with held-out pass@1 >= this (default 0.25). */
  targetPassAt1?: number;
  /** Samples per held-out problem (default 8). */
  evalSamples?: number;
  /** Progress lines (default console.log). */
  log?: (line: string) => void;
}

/** What {@link pretrainCode} returns. */
export interface PretrainCodeResult {
  /** SFT steps taken. */
  steps: number;
  /** Held-out pass@1 at the end (all tests pass, temperature 1). */
  passAt1: number;
  /** Held-out pass@k at the end. */
  passAtK: number;
  /** Held-out problems. */
  problems: number;
  /** Seconds. */
  seconds: number;
}

/**
 * Writes the dataset, warm-starts the code-writing tiny policy on its training split and saves
 * it; see the module doc.
 *
 * @example Usage
 * ```ts
 * import { pretrainCode } from "./pretrain_code.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const r = await pretrainCode({
 *   out: `${dir}/ckpt`, data: `${dir}/js_ops.jsonl`, maxSteps: 2, evalEvery: 2, evalSamples: 1,
 *   log: () => {},
 * });
 * assert.equal(r.steps, 2);
 * assert.ok((await Deno.stat(`${dir}/ckpt/model.safetensors`)).isFile);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function pretrainCode(
  options: PretrainCodeOptions = {},
): Promise<PretrainCodeResult> {
  const out = options.out ?? TINY_CODE_CHECKPOINT_DIR;
  const data = options.data ?? OPS_DATA_PATH;
  const seed = options.seed ?? 0;
  const maxSteps = options.maxSteps ?? 2000;
  const batchSize = options.batchSize ?? 32;
  const lr = options.lr ?? 2e-3;
  const evalEvery = options.evalEvery ?? 25;
  const target = options.targetPassAt1 ?? 0.25;
  const evalSamples = options.evalSamples ?? 8;
  const log = options.log ?? ((line: string) => console.log(line));
  const started = performance.now();
  await writeOpsData(data);
  // The split `deno task train --data` uses (the default testFraction), so held-out is held out.
  const task = await dataTask({
    path: data,
    format: "jsonl",
    promptField: "prompt",
    answerField: null,
    testFraction: 0.1,
  });
  const { model, tokenizer, generationConfig, eosTokenIds } = await loadPolicy(
    options.from ?? TINY_CHECKPOINT_DIR,
  );
  const eos = tokenizer.eosTokenIds[0]!;
  const reward = codeReward({ source: "prompt+completion", language: "js" });
  const signal = new AbortController().signal;
  const solved = (rows: readonly TaskRow[], prompts: readonly string[], texts: readonly string[]) =>
    Promise.all(
      rows.map(async (row, i) =>
        (await reward.score!({ row, prompt: prompts[i]!, completion: texts[i]! }, { signal })) ===
            1
          ? 1
          : 0
      ),
    );
  const opt = new AdamW(model.parameters(), { lr, betas: [0.9, 0.98], weightDecay: 0.01 });
  log(
    `pretrain:code: from ${
      options.from ?? "builtin:tiny"
    }, ${task.train.length} training / ${task.test.length} held-out rows of ${data}, batch ${batchSize}, lr ${lr}, stop at held-out pass@1 >= ${target} or ${maxSteps} steps`,
  );
  const evalNow = () =>
    evaluate(model, tokenizer, task, task.test, {
      samples: evalSamples,
      k: evalSamples,
      seed,
      sampling: { temperature: 1 },
      maxNewTokens: 12,
      eosTokenIds,
      solved,
    });
  const sequence = (row: DataRow) => ({
    promptIds: promptIds(tokenizer, row),
    completionIds: [
      ...tokenizer.encode(String(row.solution), { addSpecialTokens: false }),
      eos,
    ],
  });
  let step = 0;
  let last = { passAt1: 0, passAtK: 0 };
  try {
    last = await evalNow();
    log(`step 0: held-out pass@1 ${(100 * last.passAt1).toFixed(1)}%`);
    const n = task.train.length;
    while (step < maxSteps && last.passAt1 < target) {
      const rows = Array.from({ length: batchSize }, (_, i) => {
        const at = step * batchSize + i;
        return task.train[epochPermutation(n, seed, Math.floor(at / n))[at % n]!]!;
      });
      opt.lr = lr * Math.min(1, (step + 1) / 20);
      const lossValue = await sftStep(model, opt, rows.map(sequence));
      step++;
      if (step % evalEvery === 0 || step === maxSteps) {
        last = await evalNow();
        log(
          `step ${step}: loss ${lossValue.toFixed(4)}, held-out pass@1 ${
            (100 * last.passAt1).toFixed(1)
          }%, pass@${evalSamples} ${(100 * last.passAtK).toFixed(1)}% (${
            ((performance.now() - started) / 1000).toFixed(0)
          } s)`,
        );
      }
    }
    await saveCheckpoint(out, {
      config: model.config,
      params: model.params,
      ...(generationConfig !== null ? { generationConfig } : {}),
    });
    await tokenizer.save(out);
  } finally {
    opt.dispose();
    model.dispose();
  }
  const seconds = (performance.now() - started) / 1000;
  log(
    `pretrain:code: saved ${out} after ${step} steps (${seconds.toFixed(0)} s): held-out pass@1 ${
      (100 * last.passAt1).toFixed(1)
    }%, pass@${evalSamples} ${(100 * last.passAtK).toFixed(1)}%`,
  );
  // renderPrompt is the text the rollout shows the policy; say it once, for the reader.
  log(`prompt as the policy sees it: ${JSON.stringify(renderPrompt(tokenizer, task.test[0]!))}`);
  return {
    steps: step,
    passAt1: last.passAt1,
    passAtK: last.passAtK,
    problems: task.test.length,
    seconds,
  };
}

if (import.meta.main) {
  const out = Deno.args[0];
  await pretrainCode(out !== undefined ? { out: resolve(out) } : {});
}
