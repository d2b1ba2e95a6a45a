/**
 * `deno task eval`: a policy's pass@1, pass@k, avg@k and maj@k, each with a 95% confidence
 * interval, on a built-in task's held-out problems or a dataset file, with every sample written
 * out. Used to compare checkpoints (`deno task eval apps/train/checkpoints/tiny` against
 * `deno task eval runs/grpo/checkpoints/step-600`) and to evaluate a model on a file alone.
 *
 * Design decisions:
 * - **The task is built as training builds it**: `--task`, `--set task.*`, `--data` and the
 *   field flags become the `--set`/`--data` layers of `deno task train`, validated by
 *   `loadConfig` (same messages) and built by `taskFromConfig`, so the problems and the verifier
 *   are the training run's. With no task flag it is the default recipe's task, and with the
 *   default flags (64 problems, 8 samples, temperature 1, 8 new tokens, seed 0) the numbers are
 *   exactly the `held-out before training` line of `deno task train`.
 * - **Problems**: a built-in task's held-out set (`heldOutProblems`); for `--data`, the test
 *   split that `deno task train --data` holds out (`--split test`, default), or every row of the
 *   file in file order (`--split all`, for a file that is a test set). `--problems` defaults to
 *   64, or to every row there is when a dataset has fewer.
 * - **Metrics** (`eval_metrics.ts`): avg@k equals pass@1 for the 0/1 verifier reward; maj@k
 *   votes over the first k samples, ties to the answer seen first; intervals are the percentile
 *   bootstrap over problems (10,000 resamples seeded with `--seed`).
 * - **Output**: `<out>/samples.jsonl` (one line per sample, by the run directory's JSONL writer)
 *   is written first and `<out>/eval.jsonl` (one record) last and atomically, so an
 *   `eval.jsonl` is never beside a partial samples file. `--out` defaults to
 *   `runs/eval-<task or file>-<UTC yyyymmdd-hhmmss>`; files of an earlier evaluation in `--out`
 *   are replaced.
 * - **Bad flags** (an unknown flag, a bad value, a task option or dataset that does not load)
 *   print the problem naming the flag and the value, then the usage; the exit code is 2. Sizes
 *   are bounded ({@link EVAL_LIMITS}) so a typo such as `--samples 1000000000` is such an error,
 *   not an out-of-memory; `--out ''` is refused (it would write into the working directory).
 * - **The model's context window**: once the model is loaded, `--max-new-tokens` plus the
 *   longest prompt evaluated must fit its `max_position_embeddings` (a usage error naming the
 *   flag and the largest value that fits); a dataset's rows that do not fit are skipped and
 *   counted (`--set task.data.overlong=truncate|error` does otherwise), as in training.
 *
 * @module
 */

import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import type { Task, TaskRow } from "@rlvr/rewards";
import { getBackend, parseDeviceChoice, setBackend } from "@rlvr/tensor";
import type { ConfidenceInterval } from "@rlvr/sampling";
import { ConfigError } from "../config/errors.ts";
import { loadConfig } from "../config/load.ts";
import { parseOverride } from "../config/overrides.ts";
import { BUILTIN_MODELS } from "../config/schema.ts";
import { builtinTaskNames } from "../config/tasks.ts";
import type { Config } from "../config/types.ts";
import { summaryTable } from "../progress.ts";
import { writeFileAtomic } from "../run/atomic.ts";
import { JsonlWriter } from "../run/jsonl.ts";
import { type DataRow, type DataTask, fitDataTask, isDataTask } from "./data_task.ts";
import { type EvalResult, evaluate } from "./eval.ts";
import {
  EVAL_METRICS,
  type EvalMetricName,
  type EvalMetrics,
  evalMetrics,
  finalAnswer,
} from "./eval_metrics.ts";
import { deviceLine, selectTrainDevice } from "./device.ts";
import { contextWindowProblem, loadPolicy } from "./policy.ts";
import { heldOutProblems } from "./problems.ts";
import { promptFormat, promptIds, type PromptImages, renderPrompt } from "./prompt.ts";
import { VisionInputs } from "./vision.ts";
import { taskFromConfig } from "./task.ts";

/** Problems evaluated when `--problems` is not given (the training run's `trainer.evalProblems`). */
export const DEFAULT_EVAL_PROBLEMS = 64;

/**
 * The largest values of the size flags, and of the samples of one evaluation (problems ×
 * samples, each kept in memory and written to `samples.jsonl`).
 */
export const EVAL_LIMITS: Readonly<
  { problems: number; samples: number; maxNewTokens: number; total: number }
> = Object.freeze({
  problems: 1_000_000,
  samples: 4096,
  maxNewTokens: 131072,
  total: 10_000_000,
});

/** Usage of `deno task eval`. */
export const EVAL_USAGE =
  `Usage: deno task eval [checkpoint | --model <m>] [--task <name> | --data <file>] [options]
  checkpoint, --model <m>  builtin:tiny (default) or a checkpoint folder
                           (e.g. runs/grpo/checkpoints/step-600)
  --task <name>            a built-in task: ${builtinTaskNames().join(", ")}
                           (default: the default recipe's, 2-digit addition)
  --set task.options.<key>=<value>
                           an option of the task, repeatable (with --data: task.data.<key>)
  --data <file>            a .jsonl, .ndjson or .parquet file instead of a built-in task
  --prompt-field <path>    its prompt field (default prompt; dotted paths reach nested fields)
  --answer-field <path>    its reference answer field (default answer; "... #### 42" -> 42)
  --template <text>        the prompt built from fields, e.g. "Q: {{question}}"
  --split test|all         with --data: the test split deno task train holds out (default)
                           or every row of the file, in file order
  --problems N|all         problems (default ${DEFAULT_EVAL_PROBLEMS}, or every row a dataset has when fewer)
  --samples N              samples per problem, n (default 8)
  --k N                    the k of pass@k, avg@k and maj@k (default: n)
  --seed N                 sampler and bootstrap seed (default 0)
  --temperature T          sampling temperature (default 1; 0 = greedy)
  --max-new-tokens N       generation limit (default 8, the tiny model's; raise it for a real model)
  --device auto|webgpu|cpu where the model runs (default auto: WebGPU on a hardware adapter only)
  --decode-loop host|device
                           host (default): each decode step's logits are sampled on the host;
                           device (WebGPU): steps and sampling run on the GPU, 16 per round trip
  --out <dir>              where eval.jsonl and samples.jsonl go
                           (default runs/eval-<task or file>-<UTC time>)
  -h, --help               print this message`;

/**
 * The task and rows of an evaluation against the model's context window (see the module doc):
 * a dataset's rows that do not fit are handled by `overlong` and the rows chosen again from
 * what is left; the longest prompt plus `--max-new-tokens` must fit, else a usage error.
 */
function fitToModel(
  config: { maxPositions: number },
  tokenizer: Parameters<typeof promptIds>[0],
  images: PromptImages | undefined,
  e: {
    model: string;
    task: Task;
    rows: TaskRow[];
    maxNewTokens: number;
    overlong: "skip" | "truncate" | "error";
    select: (task: DataTask) => DataRow[];
    log: (line: string) => void;
  },
): { task: Task; rows: TaskRow[] } {
  const format = promptFormat(tokenizer);
  const measure = (row: TaskRow) => promptIds(tokenizer, row, format, images).length;
  const at = { checkpoint: e.model, field: "--max-new-tokens", maxNewTokens: e.maxNewTokens };
  const bare = contextWindowProblem(config, at);
  if (bare !== null) throw new UsageError(bare);
  let { task, rows } = e;
  if (isDataTask(task)) {
    let fitted: DataTask;
    try {
      fitted = fitDataTask(task, {
        maxPromptTokens: config.maxPositions - e.maxNewTokens,
        promptTokens: measure,
        mode: e.overlong,
        limit:
          `the ${config.maxPositions} positions of ${e.model} less --max-new-tokens ${e.maxNewTokens}`,
        log: e.log,
      });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (fitted !== task) {
      task = fitted as unknown as Task;
      rows = e.select(fitted);
    }
  }
  const longest = rows.reduce((m, row) => Math.max(m, measure(row)), 1);
  const problem = contextWindowProblem(config, {
    ...at,
    longestPrompt: longest,
    promptWhat: "the longest prompt evaluated",
  });
  if (problem !== null) throw new UsageError(problem);
  return { task, rows };
}

/** What {@link evalMain} returns. */
export interface EvalReport extends EvalResult {
  /** The checkpoint evaluated. */
  model: string;
  /** The task's name, or the data file's name. */
  task: string;
  /** Every metric with its interval. */
  metrics: EvalMetrics;
  /** The directory holding `eval.jsonl` and `samples.jsonl`. */
  out: string;
}

/** A bad command line: the message names the flag and its value. */
class UsageError extends Error {}

function intFlag(flag: string, value: string, min: number, max?: number): number {
  if (!/^-?\d+$/.test(value.trim()) || Number(value) < min) {
    throw new UsageError(`--${flag} ${JSON.stringify(value)} is not an integer >= ${min}`);
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n) || (max !== undefined && n > max)) {
    throw new UsageError(
      `--${flag} ${value} is more than ${
        max ?? Number.MAX_SAFE_INTEGER
      }, the most an evaluation takes; use a smaller value`,
    );
  }
  return n;
}

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

function stamp(date: Date): string {
  return date.toISOString().slice(0, 19).replaceAll("-", "").replaceAll(":", "").replace("T", "-");
}

/** `runs/eval-<label>-<stamp>`, with `-2`, `-3`, ... when two evaluations start in one second. */
async function defaultOut(label: string): Promise<string> {
  const slug = label.replace(/\.(jsonl|ndjson|parquet)$/i, "").replace(/[^A-Za-z0-9_.-]+/g, "-");
  const base = join("runs", `eval-${slug}-${stamp(new Date())}`);
  await Deno.mkdir("runs", { recursive: true });
  for (let i = 1;; i++) {
    const dir = i === 1 ? base : `${base}-${i}`;
    try {
      await Deno.mkdir(dir);
      return dir;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
  }
}

/** The rows of a dataset to evaluate: the test split's held-out order, or the whole file. */
function dataRows(
  task: DataTask,
  split: "test" | "all",
  problems: number | "all" | null,
): DataRow[] {
  const fix = "use fewer --problems, --problems all, --split all or a larger " +
    "--set task.data.testFraction";
  if (split === "test") {
    const available = task.testProblems;
    if (available === 0) {
      throw new UsageError(
        `--data ${task.path}: the test split is empty (${
          task.train.length + task.test.length
        } usable rows, testFraction ${task.testFraction}); use --split all or a larger --set task.data.testFraction`,
      );
    }
    const count = problems === "all"
      ? available
      : problems ?? Math.min(DEFAULT_EVAL_PROBLEMS, available);
    if (count > available) {
      throw new UsageError(
        `--problems ${count}: the test split of ${task.path} has ${available} distinct problems (testFraction ${task.testFraction}); ${fix}`,
      );
    }
    return heldOutProblems(task, count);
  }
  const seen = new Set<string>();
  const rows = [...task.train, ...task.test].sort((a, b) => a.index - b.index).filter((r) => {
    if (seen.has(r.uid)) return false;
    seen.add(r.uid);
    return true;
  });
  const count = problems === "all"
    ? rows.length
    : problems ?? Math.min(DEFAULT_EVAL_PROBLEMS, rows.length);
  if (count > rows.length) {
    throw new UsageError(
      `--problems ${count}: ${task.path} has ${rows.length} distinct problems; use --problems ${rows.length} or fewer, or --problems all`,
    );
  }
  return rows.slice(0, count);
}

function taskLine(config: Config, task: Task, split: "test" | "all"): string {
  if (!isDataTask(task)) {
    return `task: ${config.task.name} ${JSON.stringify(config.task.options ?? {})}`;
  }
  const d = config.task.data!;
  const usable = task.train.length + task.test.length;
  return `task: data ${d.path} (${
    split === "test"
      ? `test split: ${task.test.length} of ${usable} usable rows, testFraction ${d.testFraction}`
      : `all ${usable} usable rows`
  }; prompt field ${d.promptField}, answer field ${d.answerField}${
    d.template != null ? `, template ${JSON.stringify(d.template)}` : ""
  })`;
}

function interval(ci: ConfidenceInterval): { estimate: number; lower: number; upper: number } {
  return { estimate: ci.estimate, lower: ci.lower, upper: ci.upper };
}

/**
 * Runs `deno task eval` with `args` (see the module doc and {@link EVAL_USAGE}): prints the
 * result and a table, writes `eval.jsonl` and `samples.jsonl`, and returns the report; on a usage
 * error (or `--help`) it prints the problem and the usage and returns null.
 *
 * @example Usage
 * ```ts
 * import { evalMain } from "./eval_main.ts";
 * import assert from "node:assert/strict";
 * const out = await Deno.makeTempDir();
 * const r = await evalMain(["builtin:tiny", "--problems", "4", "--samples", "2", "--out", out], () => {});
 * assert.equal(r!.n, 2);
 * assert.equal(r!.metrics.metrics["avg@k"].estimate, r!.passAt1);
 * assert.equal(await evalMain(["--bogus"], () => {}), null);
 * await Deno.remove(out, { recursive: true });
 * ```
 */
export async function evalMain(
  args: readonly string[],
  log: (line: string) => void = (line) => console.log(line),
): Promise<EvalReport | null> {
  try {
    return await run(args, log);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    log(`eval: ${e.message}\n${EVAL_USAGE}`);
    return null;
  }
}

async function run(
  args: readonly string[],
  log: (line: string) => void,
): Promise<EvalReport | null> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        model: { type: "string" },
        task: { type: "string" },
        set: { type: "string", multiple: true },
        data: { type: "string" },
        "prompt-field": { type: "string" },
        "answer-field": { type: "string" },
        template: { type: "string" },
        split: { type: "string" },
        problems: { type: "string" },
        samples: { type: "string", default: "8" },
        k: { type: "string" },
        seed: { type: "string", default: "0" },
        temperature: { type: "string", default: "1" },
        "max-new-tokens": { type: "string", default: "8" },
        device: { type: "string", default: "auto" },
        "decode-loop": { type: "string", default: "host" },
        out: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const v = parsed.values;
  if (v.help) {
    log(EVAL_USAGE);
    return null;
  }

  // The model: the positional checkpoint or --model.
  if (parsed.positionals.length > 1) {
    throw new UsageError(
      `one checkpoint at most, got ${parsed.positionals.map((p) => JSON.stringify(p)).join(" ")}`,
    );
  }
  const positional = parsed.positionals[0];
  if (positional !== undefined && v.model !== undefined && positional !== v.model) {
    throw new UsageError(
      `checkpoint ${JSON.stringify(positional)} and --model ${
        JSON.stringify(v.model)
      } differ; give one`,
    );
  }
  const model = v.model ?? positional ?? "builtin:tiny";
  const modelFlag = v.model !== undefined ? "--model" : "checkpoint";
  if (model.startsWith("builtin:") && !BUILTIN_MODELS.includes(model)) {
    throw new UsageError(
      `${modelFlag} ${JSON.stringify(model)} is not a built-in model; use ${
        BUILTIN_MODELS.join(", ")
      } or a checkpoint folder`,
    );
  }
  if (!model.startsWith("builtin:") && !existsSync(model)) {
    throw new UsageError(
      `${modelFlag} ${
        JSON.stringify(model)
      } does not exist; use builtin:tiny or a checkpoint folder (config.json, *.safetensors, tokenizer.json)`,
    );
  }

  // The task: --task or --data (with its field flags), plus --set task.* keys.
  if (v.task !== undefined && v.data !== undefined) {
    throw new UsageError(
      `--task ${JSON.stringify(v.task)} and --data ${JSON.stringify(v.data)}: give one`,
    );
  }
  const dataFlags: [string | undefined, string, string][] = [
    [v["prompt-field"], "prompt-field", "promptField"],
    [v["answer-field"], "answer-field", "answerField"],
    [v.template, "template", "template"],
    [v.split, "split", ""],
  ];
  for (const [value, flag] of dataFlags) {
    if (value !== undefined && v.data === undefined) {
      throw new UsageError(`--${flag} ${JSON.stringify(value)} applies to --data <file> only`);
    }
  }
  if (v.split !== undefined && v.split !== "test" && v.split !== "all") {
    throw new UsageError(`--split ${JSON.stringify(v.split)}: use test or all`);
  }
  const split = v.split === "all" ? "all" : "test";
  const set: string[] = [];
  // The flag each synthesized override stands for, so a config error names the flag typed.
  const typed = new Map<string, string>();
  if (v.task !== undefined) {
    set.push(`task.name=${v.task}`);
    typed.set(`--set task.name=${v.task}`, `--task ${v.task}`);
  }
  for (const [value, flag, key] of dataFlags) {
    if (value === undefined || key === "") continue;
    // Quoted so that a value YAML would read as something else stays a string; `{{` is
    // already kept verbatim by the override parser.
    const text = `task.data.${key}=${value.includes("{{") ? value : JSON.stringify(value)}`;
    set.push(text);
    typed.set(`--set ${text}`, `--${flag} ${value}`);
  }
  for (const text of v.set ?? []) {
    let path: string[];
    try {
      path = parseOverride(text).path;
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const [section, part] = path;
    const ok = section === "task" && path.length >= 3 &&
      (part === "options" || part === "data");
    if (!ok) {
      throw new UsageError(
        `--set ${text}: only task.options.<key> (a built-in task's options) and task.data.<key> (with --data) apply to an evaluation`,
      );
    }
    if (part === "data" && v.data === undefined) {
      throw new UsageError(`--set ${text} applies to --data <file> only`);
    }
    if (part === "options" && v.data !== undefined) {
      throw new UsageError(
        `--set ${text}: task options configure built-in tasks, not --data ${v.data}`,
      );
    }
    set.push(text);
  }

  // Numbers.
  const samples = intFlag("samples", v.samples, 1, EVAL_LIMITS.samples);
  const k = v.k === undefined ? samples : intFlag("k", v.k, 1, EVAL_LIMITS.samples);
  if (k > samples) {
    throw new UsageError(`--k ${k} is more than --samples ${samples}; use --k ${samples} or less`);
  }
  const seed = intFlag("seed", v.seed, 0);
  const temperature = Number(v.temperature);
  if (v.temperature.trim() === "" || !Number.isFinite(temperature) || temperature < 0) {
    throw new UsageError(`--temperature ${JSON.stringify(v.temperature)} is not a number >= 0`);
  }
  const maxNewTokens = intFlag("max-new-tokens", v["max-new-tokens"], 1, EVAL_LIMITS.maxNewTokens);
  try {
    parseDeviceChoice(v.device, "--device");
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const decodeLoop = v["decode-loop"];
  if (decodeLoop !== "host" && decodeLoop !== "device") {
    throw new UsageError(
      `--decode-loop ${JSON.stringify(decodeLoop)} is not host or device (device: decode steps ` +
        `and sampling on the GPU, with --device webgpu)`,
    );
  }
  let problems: number | "all" | null = null;
  if (v.problems === "all") {
    if (v.data === undefined) {
      throw new UsageError(
        `--problems all applies to --data <file> only (a built-in task has no end); give a number`,
      );
    }
    problems = "all";
  } else if (v.problems !== undefined) {
    problems = intFlag("problems", v.problems, 1, EVAL_LIMITS.problems);
  }
  if (typeof problems === "number" && problems * samples > EVAL_LIMITS.total) {
    throw new UsageError(
      `--problems ${problems} x --samples ${samples} is ${
        problems * samples
      } samples, more than ${EVAL_LIMITS.total} (each is kept in memory and written to samples.jsonl); evaluate fewer problems or samples`,
    );
  }
  if (v.out !== undefined && v.out.trim() === "") {
    throw new UsageError(
      `--out ${
        JSON.stringify(v.out)
      } is empty, which would write eval.jsonl and samples.jsonl into the working directory; give a directory (or leave --out out for runs/eval-<task>-<time>)`,
    );
  }

  let config: Config;
  try {
    ({ config } = await loadConfig({ set, ...(v.data !== undefined ? { data: v.data } : {}) }));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    let message = e.message;
    // A source may list several layers ("(from a; key from b)"): each is replaced where it ends.
    for (const [from, to] of typed) {
      for (const end of [")", ";"]) {
        message = message.replaceAll(`from ${from}${end}`, `from ${to}${end}`);
      }
    }
    throw new UsageError(message);
  }
  let task: Task;
  try {
    task = await taskFromConfig(config.task, { log });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  let rows: TaskRow[];
  if (isDataTask(task)) {
    rows = dataRows(task, split, problems);
  } else {
    const count = problems === null ? DEFAULT_EVAL_PROBLEMS : problems as number;
    try {
      rows = heldOutProblems(task, count);
    } catch (e) {
      throw new UsageError(`--problems ${count}: ${(e as Error).message}`);
    }
  }
  const label = isDataTask(task) ? basename(task.path) : config.task.name!;

  // Sample, keeping every completion for maj@k and samples.jsonl.
  // The device, as `deno task train` picks it: the model and every tensor of the sampling live on
  // its backend, the default while the evaluation lasts.
  const device = await selectTrainDevice(v.device);
  const previous = getBackend();
  setBackend(device.backend);
  let loaded;
  try {
    loaded = await loadPolicy(model);
  } catch (e) {
    setBackend(previous);
    device.release();
    throw e;
  }
  const { model: policy, tokenizer, eosTokenIds } = loaded;
  // A vision-language checkpoint: rows with images are prompted and run with them.
  const vision = loaded.vision === null
    ? null
    : new VisionInputs(loaded.vision.model, { processor: loaded.vision.processor });
  try {
    ({ task, rows } = fitToModel(policy.config, tokenizer, vision ?? undefined, {
      model,
      task,
      rows,
      maxNewTokens,
      overlong: config.task.data?.overlong ?? "skip",
      select: (fitted) => dataRows(fitted, split, problems),
      log,
    }));
  } catch (e) {
    policy.dispose();
    setBackend(previous);
    device.release();
    throw e;
  }
  const perProblem = rows.map(() => ({
    rewards: new Array<number>(samples).fill(0),
    answers: new Array<string | null>(samples).fill(null),
    texts: new Array<string>(samples).fill(""),
  }));
  let result: EvalResult;
  try {
    result = await evaluate(policy, tokenizer, task, rows, {
      samples,
      k,
      seed,
      sampling: { temperature },
      maxNewTokens,
      eosTokenIds,
      vision,
      decodeLoop,
      onSample: (s) => {
        const p = perProblem[s.problem]!;
        p.rewards[s.sample] = s.reward;
        p.texts[s.sample] = s.text;
        p.answers[s.sample] = finalAnswer(task, rows[s.problem]!, s.text);
      },
    });
  } finally {
    policy.dispose();
    setBackend(previous);
    device.release();
  }
  const metrics = evalMetrics(perProblem, k, { seed });

  // samples.jsonl first, eval.jsonl last (atomically); see the module doc.
  let out: string;
  if (v.out !== undefined) {
    out = v.out;
    await Deno.mkdir(out, { recursive: true });
  } else {
    out = await defaultOut(label);
  }
  const samplesPath = join(out, "samples.jsonl");
  await Deno.remove(samplesPath).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  const writer = await JsonlWriter.open(samplesPath);
  try {
    for (let p = 0; p < rows.length; p++) {
      const row = rows[p]!;
      const prompt = renderPrompt(tokenizer, row);
      const own = perProblem[p]!;
      for (let s = 0; s < samples; s++) {
        await writer.append({
          problem: row.id,
          sample: s,
          prompt,
          completion: own.texts[s],
          answer: own.answers[s],
          reference: row.answer,
          reward: own.rewards[s],
          correct: own.rewards[s]! > 0,
        });
      }
    }
  } finally {
    await writer.close();
  }
  const data = config.task.data;
  const record = {
    model,
    task: config.task.name ?? null,
    options: data === undefined ? config.task.options ?? {} : null,
    data: data === undefined ? null : {
      path: data.path,
      format: data.format,
      promptField: data.promptField,
      answerField: data.answerField,
      template: data.template ?? null,
      testFraction: data.testFraction,
      split,
    },
    problems: result.problems,
    n: samples,
    k,
    seed,
    temperature,
    maxNewTokens,
    ...Object.fromEntries(
      EVAL_METRICS.map((name) => [name, interval(metrics.metrics[name])]),
    ) as Record<EvalMetricName, ReturnType<typeof interval>>,
    ci: metrics.ci,
    "response_length/mean": result.meanLength,
    "time/eval_s": result.seconds,
  };
  await writeFileAtomic(join(out, "eval.jsonl"), JSON.stringify(record) + "\n");

  const scope = split === "all" && isDataTask(task) ? "all-rows" : "held-out";
  log(
    `eval ${model}: ${scope} pass@1 ${pct(result.passAt1)}, pass@${result.k} ${
      pct(result.passAtK)
    } (${result.problems} problems x ${result.n} samples, temperature ${temperature}, seed ${seed})`,
  );
  log(taskLine(config, task, split));
  log(summaryTable(EVAL_METRICS.map((name) => {
    const ci = metrics.metrics[name];
    return {
      metric: name.replace("@k", `@${k}`),
      estimate: pct(ci.estimate),
      "95% CI": `[${pct(ci.lower)}, ${pct(ci.upper)}]`,
    };
  })));
  log(
    `95% CI: ${metrics.ci.method} (${result.problems} problems, ${metrics.ci.resamples} resamples, seed ${seed}); ` +
      `avg@${k} is the mean reward of all ${samples} samples (= pass@1 for 0/1 rewards); ` +
      `maj@${k} votes over the first ${k} samples' answers, ties to the answer seen first`,
  );
  log(deviceLine(device));
  log(`wrote ${join(out, "eval.jsonl")} and ${samplesPath} (${rows.length * samples} samples)`);
  return { ...result, model, task: label, metrics, out };
}

if (import.meta.main) {
  const help = Deno.args.includes("--help") || Deno.args.includes("-h");
  try {
    const r = await evalMain(Deno.args);
    Deno.exit(r === null && !help ? 2 : 0);
  } catch (e) {
    console.error(`eval: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
