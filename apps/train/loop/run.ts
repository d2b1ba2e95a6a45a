/**
 * The training run behind `deno task train`: builds everything a config names, evaluates the
 * held-out set before training, runs the steps, evaluates, samples and checkpoints at the
 * configured intervals, and finishes with `report.html` and a summary that prints held-out
 * pass@1 and pass@k before and after.
 *
 * The loop, each part a function of its own:
 *
 * 1. `loadLearner` (`learner.ts`): policy, reference, value head, LoRA, AdamW;
 * 2. `startRollouts`: the rollout source of the mode (`rollout_source.ts`: sync completions,
 *    episodes, or rollout workers through the staleness gate);
 * 3. per step, `trainingStep`: collect the batch → `trainStep` (`trainer.ts`: score → advantages
 *    → mini-batch updates) → publish weights → `stepRecord` (`step_record.ts`) and samples;
 * 4. evaluate (`heldOutEvaluator`) and checkpoint (`saveCheckpoint`) when due.
 *
 * Design decisions:
 * - **Resume is exact** (same seed, CPU): a checkpoint holds the weights, the optimizer's
 *   moments bit for bit, the seed and the data position; draws are keyed by
 *   `(seed, step, sequence, position)` and the learning rate is a function of the step, so the
 *   steps after a resume compute what an uninterrupted run computes. The run directory is
 *   truncated to the checkpoint's step first (`RunDir.resume`).
 * - **Ctrl-C** (SIGINT) finishes the current step, writes a checkpoint and exits 130; a second
 *   Ctrl-C is left to Deno (immediate exit), so a stuck run can still be killed.
 * - **No reference model unless something reads it** (KL, PRIME); with LoRA the reference is the
 *   base itself, scored with the adapters detached (`lora.ts`), so no second copy of the weights.
 * - **One device for everything** (`trainer.device`, `device.ts`): the tensor package's backend
 *   selection picks it, the header prints it with the reason and `device.json` records it; the
 *   backend is the default for the run's duration, so every tensor the loop creates lands there.
 * - **Bring-your-own model** (`model.checkpoint`, `--model`): a Hugging Face folder is trained as
 *   it is; prompts use its chat template when it has one (`prompt.ts`) and generation stops on
 *   every EOS id of its tokenizer, `config.json` and `generation_config.json` (`policy.ts`).
 * - The timing metrics (`time/*`, `tokens_per_s`) are the only ones that differ between two
 *   runs of the same config.
 * - **One process per run directory**: the run holds its directory's lock (`run/run_lock.ts`)
 *   from before a resume truncates anything until the report is written, so a second
 *   `--resume` of a running run fails at once naming the holder's PID (`--resume` asks in
 *   `loadConfig` first, so the CLI exits 2 before loading anything).
 * - **Nothing runs that cannot fit**: once the model is loaded, before the run directory of a
 *   new run exists and before step 1, the longest prompt plus `rollout.maxNewTokens` must fit
 *   the model's `max_position_embeddings` (a dataset's rows that do not are skipped or
 *   truncated by `task.data.overlong`), and a lower bound of the memory the run needs at its
 *   peak must fit the machine's (CPU; `estimateTrainingMemory` in `policy.ts`). A model that
 *   fails to load, or a run that fails these checks, leaves no run directory behind; a new run
 *   that fails before its first step record removes the directory it created.
 * - **A damaged latest checkpoint is not the end of a run**: resuming falls back to the
 *   previous complete one with a warning (`RunDir.resume`, `verifyCheckpoint`).
 *
 * @module
 */

import { basename, extname, join } from "node:path";
import type { Environment, Task, TaskRow } from "@rlvr/rewards";
import { AdaptiveKlController } from "@rlvr/objectives";
import {
  constantSchedule,
  cosineSchedule,
  getBackend,
  linearDecay,
  linearWarmup,
  type LrFactor,
  setBackend,
} from "@rlvr/tensor";
import type { Config } from "../config/types.ts";
import { configToYaml, type LoadedConfig } from "../config/load.ts";
import { rolloutSchedule, samplingParams } from "../config/mapping.ts";
import { ProgressBar, summaryTable } from "../progress.ts";
import { writeReport } from "../report/report.ts";
import { runSummary } from "../report/summary.ts";
import { RunDir } from "../run/run_dir.ts";
import { trackerOptions } from "../run/trackers.ts";
import type { MetricsSink } from "@rlvr/infra";
import {
  cpuMatmulLine,
  deviceLine,
  type DeviceRecord,
  recordDevice,
  selectTrainDevice,
  type TrainDevice,
} from "./device.ts";
import { type EvalResult, type EvalSample, evaluate } from "./eval.ts";
import { evaluateEpisodes } from "./episode.ts";
import { type Learner, loadLearner } from "./learner.ts";
import { LORA_FILES, saveMergedModel } from "./lora.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { promptFormat, promptIds, renderPrompt } from "./prompt.ts";
import { rowImageSources } from "./vision.ts";
import { type DataTask, fitDataTask, isDataTask } from "./data_task.ts";
import { contextWindowProblem, estimateTrainingMemory, memoryProblem } from "./policy.ts";
import { needsReference } from "../config/mapping.ts";
import {
  episodeIo,
  episodeRollouts,
  type RolloutSource,
  scheduledRollouts,
  type ScheduledStart,
  type SourceContext,
  type StepBatch,
  syncRollouts,
} from "./rollout_source.ts";
import {
  loadSamplingState,
  saveSamplingState,
  saveSchedulerState,
  saveTrainState,
} from "./state.ts";
import { PromptSource, usesStrategies } from "./prompt_source.ts";
import { stepRecord } from "./step_record.ts";
import { type JobTask, jobTask } from "./job_runner.ts";
import type { RewardLike, RewardSet } from "./reward_set.ts";
import { trainStep } from "./trainer.ts";

/** Options of {@link runTraining}. */
export interface RunOptions {
  /** Output lines (default console.log). */
  log?: (line: string) => void;
  /** Progress bar output (default: stdout, redrawn on a terminal). */
  progress?: (text: string) => void;
  /** Stop after this many steps of this process (a test's stand-in for Ctrl-C), saving a checkpoint. */
  stopAfter?: number;
  /** Handle SIGINT (default true). */
  handleSignals?: boolean;
  /** Write report.html (default true). */
  report?: boolean;
  /** Rewards passed in code, by the names the config's `inline` rewards use (`train()`). */
  rewards?: ReadonlyMap<string, RewardLike>;
  /** Called with each step's metrics record, after it is written. */
  onStep?: (record: Readonly<Record<string, number | null>>) => void | Promise<void>;
  /** Called with each held-out evaluation, after it is written. */
  onEval?: (record: Readonly<Record<string, number>>) => void | Promise<void>;
  /** Called with each checkpoint's step and folder, after it is complete. */
  onCheckpoint?: (step: number, dir: string) => void | Promise<void>;
  /** Asked after every step; true stops the run there with a checkpoint (resumable). */
  shouldStop?: (step: number) => boolean | Promise<boolean>;
  /**
   * Sinks that receive every metrics record and every eval record (keys prefixed `eval/`) this
   * process writes; the caller closes them.
   */
  sinks?: readonly MetricsSink[];
  /**
   * The memory the run may use, in bytes, checked against a lower bound of what it needs before
   * step 1 (default: the machine's total memory, on the CPU only).
   */
  memoryLimit?: number;
}

/** What {@link runTraining} returns. */
export interface RunResult {
  /** The run directory. */
  dir: string;
  /** Steps completed (in total, including before a resume). */
  step: number;
  /** Whether it stopped early (Ctrl-C or `stopAfter`) after saving a checkpoint. */
  interrupted: boolean;
  /** The evaluation before training (null when resumed past it). */
  before: EvalResult | null;
  /** The last evaluation. */
  after: EvalResult | null;
  /** Where this process computed (also appended to the run's `device.json`). */
  device: DeviceRecord;
}

/** The learning-rate factor of `optimizer.schedule` at 0-based optimizer step `s`. */
function lrFactor(config: Config): LrFactor {
  const o = config.optimizer;
  const total = Math.max(config.trainer.steps, o.warmupSteps);
  switch (o.schedule) {
    case "cosine":
      return cosineSchedule({ warmupSteps: o.warmupSteps, totalSteps: total });
    case "linear":
      return linearDecay({ warmupSteps: o.warmupSteps, totalSteps: total });
    default:
      return o.warmupSteps > 0 ? linearWarmup(o.warmupSteps) : constantSchedule();
  }
}

async function buildTask(
  config: Config,
  inline: ReadonlyMap<string, RewardLike> | undefined,
): Promise<JobTask> {
  // A multi-turn environment (task.env) brings its task; else a built-in task, or a dataset
  // file (task.data, --data) checked for training; see task.ts. `rewards:` are built here too.
  return await jobTask(config, inline);
}

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

/**
 * Runs (or resumes) the training run of a loaded config; see the module doc.
 *
 * @example Usage
 * ```ts
 * import { loadConfig, runTraining } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const out = await Deno.makeTempDir();
 * const loaded = await loadConfig({
 *   out, steps: "1", device: "cpu",
 *   set: ["rollout.batchSize=4", "rollout.groupSize=4", "algorithm.microBatchSize=4", "trainer.evalProblems=2",
 *     "trainer.evalSamples=2", "trainer.evalK=2", "rollout.maxNewTokens=4"],
 * });
 * const r = await runTraining(loaded, { log: () => {}, progress: () => {}, report: false });
 * assert.equal(r.step, 1);
 * assert.equal(r.device.device, "cpu");
 * await Deno.remove(out, { recursive: true });
 * ```
 */
export async function runTraining(
  loaded: LoadedConfig,
  options: RunOptions = {},
): Promise<RunResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const { config } = loaded;
  const t = config.trainer;
  let job = await buildTask(config, options.rewards);
  const trackers = trackerOptions(config, { ...options, log });

  // A resumed run: its directory, locked before anything in it is read or truncated, then
  // truncated to its latest sound checkpoint.
  let run: RunDir | null = null;
  let checkpoint: { path: string; step: number } | null = null;
  if (loaded.resume !== null) {
    run = await RunDir.open(loaded.resume, { ...trackers, lock: true });
    try {
      const info = await run.resume();
      for (const c of info.corruptCheckpoints) {
        log(
          `warning: checkpoint step-${c.step} of ${run.path} is damaged (${c.reason}); moved it to ${c.movedTo} and resuming from the one before`,
        );
      }
      checkpoint = info.checkpoint;
      log(
        `resume: ${run.path} from ${
          info.checkpoint === null
            ? "the start (no complete checkpoint)"
            : `step ${info.checkpoint.step}`
        }`,
      );
    } catch (e) {
      await run.unlock();
      throw e;
    }
  }

  // The device: every tensor of the run (policy, reference, value head, rollout, scoring, the
  // update, AdamW's moments) is created on its backend, the default while the run lasts.
  let device: TrainDevice | null = null;
  const previous = getBackend();
  let result: Omit<RunResult, "dir">;
  let created = false;
  try {
    try {
      device = await selectTrainDevice(t.device, t.blas);
      setBackend(device.backend);
      // The model first: a new run's directory is created only once it has loaded and the run
      // is known to fit it, so a failure here leaves nothing behind.
      const learner = await loadLearner(config, checkpoint?.path ?? null);
      try {
        job = fitToModel(config, job, learner, device, options.memoryLimit, log);
        if (run === null) {
          const name = config.output.name ??
            (loaded.recipe !== null ? basename(loaded.recipe, extname(loaded.recipe)) : "run");
          run = await RunDir.create(config.output.dir, name, { ...trackers, lock: true });
          created = true;
          await run.writeConfig(configToYaml(config));
        }
      } catch (e) {
        learner.dispose();
        throw e;
      }
      log(`run directory: ${run.path}`);
      log(deviceLine(device));
      const matmulLine = cpuMatmulLine(device);
      if (matmulLine !== null) log(matmulLine);
      await recordDevice(run.path, device, checkpoint?.step ?? 0);
      result = await trainOnDevice(config, job, run, learner, checkpoint?.path ?? null, device, {
        ...options,
        log,
      });
    } finally {
      setBackend(previous);
      await run?.close();
      device?.release();
    }
  } catch (e) {
    if (run !== null && created && (await run.readMetrics()).length === 0) {
      // Nothing to resume or report: the directory would only claim a name (runs/grpo-2).
      await Deno.remove(run.path, { recursive: true });
      log(`train: removed ${run.path}: the run failed before its first step`);
    }
    await run?.unlock();
    throw e;
  }
  try {
    return await finishRun(run, result, options, log);
  } finally {
    await run.unlock();
  }
}

/**
 * The sequences of the run against the model: the context window (`max_position_embeddings`)
 * must hold the longest prompt plus `rollout.maxNewTokens` (a dataset's rows that do not fit
 * are dealt with by `task.data.overlong`), and on the CPU the memory the run needs at its peak
 * (a lower bound) must fit the machine's. Returns the job with the dataset's fitted rows; throws
 * a message naming the setting, its value, the limit and the fix.
 */
function fitToModel(
  config: Config,
  job: JobTask,
  learner: Learner,
  device: TrainDevice,
  memoryLimit: number | undefined,
  log: (line: string) => void,
): JobTask {
  const { tokenizer, model } = learner;
  const mc = model.config;
  const maxNewTokens = config.rollout.maxNewTokens;
  const at = { checkpoint: config.model.checkpoint, field: "rollout.maxNewTokens", maxNewTokens };
  const format = promptFormat(tokenizer);
  const images = learner.vision ?? undefined;
  const measure = (row: TaskRow) => promptIds(tokenizer, row, format, images).length;
  // At least one prompt token: the new tokens alone must leave room for it.
  const bare = contextWindowProblem(mc, at);
  if (bare !== null) throw new Error(bare);
  let longest = 1;
  let task = job.task;
  if (job.env === null && isDataTask(task)) {
    const fitted: DataTask = fitDataTask(task, {
      maxPromptTokens: mc.maxPositions - maxNewTokens,
      promptTokens: measure,
      mode: config.task.data?.overlong ?? "skip",
      limit:
        `the ${mc.maxPositions} positions of ${config.model.checkpoint} less rollout.maxNewTokens ${maxNewTokens}`,
      log,
    });
    const evalProblems = config.trainer.evalProblems;
    const why = `after leaving out the rows too long for the model (task.data.overlong)`;
    if (fitted.train.length === 0) {
      throw new Error(
        `task.data: the training split of ${fitted.path} is empty ${why}; use task.data.overlong: truncate, lower rollout.maxNewTokens or lower task.data.testFraction`,
      );
    }
    if (evalProblems > fitted.testProblems) {
      throw new Error(
        `trainer.evalProblems: ${evalProblems} is more than the ${fitted.testProblems} distinct held-out problems of ${fitted.path} ${why}; set trainer.evalProblems to ${fitted.testProblems} or fewer, or use task.data.overlong: truncate`,
      );
    }
    for (const row of [...fitted.train, ...fitted.test]) longest = Math.max(longest, measure(row));
    task = fitted;
  } else if (job.env === null) {
    // A built-in task's stream has no end: its held-out problems and a sample of its training
    // stream stand for its prompts (their lengths vary little within a task's options).
    const t = config.trainer;
    const rows = [
      ...(t.evalProblems > 0 ? heldOutProblems(task, t.evalProblems) : []),
      ...task.rows(t.seed, PROMPT_SAMPLE),
    ];
    for (const row of rows) longest = Math.max(longest, measure(row));
    const problem = contextWindowProblem(mc, {
      ...at,
      longestPrompt: longest,
      promptWhat: `the longest prompt of task ${task.name} (of ${rows.length} drawn)`,
    });
    if (problem !== null) throw new Error(problem);
  }
  if (memoryLimit !== undefined || device.device === "cpu") {
    const available = memoryLimit ?? systemMemory();
    if (available !== null) {
      const r = config.rollout;
      const a = config.algorithm;
      const micro = Math.min(a.microBatchSize, a.ppoMiniBatchSize ?? r.batchSize, r.batchSize);
      const estimate = estimateTrainingMemory(mc, {
        batchSize: r.batchSize,
        microBatchSize: micro,
        positions: longest + maxNewTokens,
        evalSequences: Math.min(256, config.trainer.evalProblems * config.trainer.evalSamples),
        trainableParameters: model.parameters().reduce((n, p) => n + p.size, 0),
        reference: needsReference(config) && config.model.lora == null,
      });
      const problem = memoryProblem(estimate, available, {
        "rollout.batchSize": r.batchSize,
        "algorithm.microBatchSize": a.microBatchSize,
        "trainer.evalSamples": config.trainer.evalSamples,
      }, memoryLimit !== undefined ? "the run may use (memoryLimit)" : "this machine has");
      if (problem !== null) throw new Error(problem);
    }
  }
  return task === job.task ? job : { ...job, task };
}

/** Training rows whose prompts a built-in task's context check measures. */
const PROMPT_SAMPLE = 256;

/** The machine's memory in bytes, or null when it cannot be read (no `--allow-sys`). */
function systemMemory(): number | null {
  try {
    return Deno.systemMemoryInfo().total;
  } catch {
    return null;
  }
}

/** The report and the summary lines of a finished (or stopped) run. */
async function finishRun(
  run: RunDir,
  result: Omit<RunResult, "dir">,
  options: RunOptions,
  log: (line: string) => void,
): Promise<RunResult> {
  if (options.report ?? true) {
    const path = await writeReport(run.path);
    log(`report: ${path}`);
  }
  const metrics = await run.readMetrics();
  const evals = await run.readEval();
  log(summaryTable(runSummary(metrics, evals) as unknown as Record<string, unknown>[]));
  const first = evals.find((e) => e.step === 0);
  const last = evals.at(-1);
  if (first !== undefined && last !== undefined) {
    log(
      `held-out pass@1: ${pct(first["pass@1"])} -> ${pct(last["pass@1"])} (${
        ((last["pass@1"] - first["pass@1"]) * 100).toFixed(1)
      } points); pass@${last.k}: ${pct(first["pass@k"])} -> ${
        pct(last["pass@k"])
      } (step ${first.step} -> ${last.step}, ${last.problems} problems x ${last.n} samples)`,
    );
  }
  if (result.interrupted) {
    log(`train: stopped at step ${result.step}; continue with --resume ${run.path}`);
  }
  return { dir: run.path, ...result };
}

/** What the loop's steps share: the run, the learner, the data and where batches come from. */
interface RunContext {
  config: Config;
  run: RunDir;
  learner: Learner;
  /** The training problems under the `sampling` strategies. */
  prompts: PromptSource<TaskRow>;
  source: RolloutSource;
  /** The adaptive KL controller (`algorithm.kl.target`), or null for a fixed β. */
  kl: AdaptiveKlController | null;
  /** The caller's per-step callback. */
  callbacks: Pick<RunOptions, "onStep">;
  /** Evaluates the policy on the held-out problems. */
  evaluate: (step: number) => Promise<EvalResult>;
  log: (line: string) => void;
}

function evalRecord(step: number, r: EvalResult) {
  return {
    step,
    "pass@1": r.passAt1,
    "pass@k": r.passAtK,
    k: r.k,
    n: r.n,
    problems: r.problems,
    "response_length/mean": r.meanLength,
    "time/eval_s": r.seconds,
  };
}

/**
 * For rows without a reference answer: a sample solves its row when the `rewards:` total is at
 * least {@link SOLVED_REWARD} (a 0/1 verifier's pass, e.g. code tests all passing); a sample no
 * reward scored does not.
 */
function solvedByRewards(rewards: RewardSet) {
  return async (
    rows: readonly TaskRow[],
    prompts: readonly string[],
    completions: readonly string[],
  ): Promise<number[]> => {
    const { totals } = await rewards.score(
      rows.map((row, i) => ({ row, prompt: prompts[i]!, completion: completions[i]! })),
    );
    return totals.map((t) => (t !== null && t >= SOLVED_REWARD ? 1 : 0));
  };
}

/** The `rewards:` total at which a held-out sample of a dataset without answers counts as solved. */
const SOLVED_REWARD = 1;

/**
 * Held-out evaluation of the policy as it is (episode success with an environment). With
 * sample logging on (`trainer.samplesEvery` > 0), the first completion of each of the first
 * `trainer.samplesCount` problems goes to `eval_samples.jsonl` at every evaluation: the same
 * problems each time, which the report shows before and after training.
 */
function heldOutEvaluator(
  config: Config,
  learner: Learner,
  task: Task<TaskRow>,
  env: Environment | null,
  held: TaskRow[],
  rewards: RewardSet | null,
  run: RunDir,
): (step: number) => Promise<EvalResult> {
  const t = config.trainer;
  const { model, tokenizer } = learner;
  const options = {
    ...(config.task.data?.answerField === null && rewards !== null
      ? { solved: solvedByRewards(rewards) }
      : {}),
    samples: t.evalSamples,
    k: t.evalK,
    seed: t.seed,
    sampling: samplingParams(config),
    maxNewTokens: config.rollout.maxNewTokens,
    eosTokenIds: learner.init.eosTokenIds,
    vision: learner.vision,
  };
  const logged = t.samplesEvery > 0 ? Math.min(t.samplesCount, held.length) : 0;
  return async (step) => {
    if (env !== null) {
      return await evaluateEpisodes(model, tokenizer, env, held, {
        ...options,
        ...episodeIo(tokenizer),
      });
    }
    const shown: EvalSample[] = [];
    const result = await evaluate(model, tokenizer, task, held, {
      ...options,
      ...(logged > 0
        ? { onSample: (s: EvalSample) => s.problem < logged && s.sample === 0 && shown.push(s) }
        : {}),
    });
    for (const s of shown.sort((a, b) => a.problem - b.problem)) {
      const row = held[s.problem]!;
      await run.appendEvalSample({
        step,
        problem: s.problem,
        prompt: renderPrompt(tokenizer, row),
        completion: s.text,
        reward: s.reward,
        answer: row.answer,
        ...sampleImages(row),
      });
    }
    return result;
  };
}

/** The largest image data URL a sample record carries (a report shows it inline). */
const SAMPLE_IMAGE_CHARS = 64 * 1024;

/**
 * `{ images }`: a row's image data URLs for a sample record (those up to
 * {@link SAMPLE_IMAGE_CHARS}; file paths and larger images are left out), or `{}`.
 */
function sampleImages(row: TaskRow): { images?: string[] } {
  const images = rowImageSources(row).filter((s) =>
    /^data:image\//i.test(s) && s.length <= SAMPLE_IMAGE_CHARS
  );
  return images.length === 0 ? {} : { images };
}

/** The rollout source of the config's mode (see rollout_source.ts). */
function startRollouts(
  ctx: SourceContext,
  task: Task<TaskRow>,
  env: Environment | null,
  at: ScheduledStart,
): Promise<RolloutSource> {
  if (rolloutSchedule(ctx.config).mode !== "sync") return scheduledRollouts(ctx, at);
  return Promise.resolve(env !== null ? episodeRollouts(ctx, env) : syncRollouts(ctx, task));
}

/** Writes checkpoint `step` (with the rollout source's outstanding batches); returns its folder. */
async function saveCheckpoint(ctx: RunContext, step: number): Promise<string> {
  const { config, run, learner, prompts } = ctx;
  const { model, tokenizer, optimizer, init } = learner;
  const vlm = learner.vision?.modelOf(model);
  const visionSave = vlm === undefined
    ? undefined
    : { model: vlm, preprocessorConfig: init.vision?.preprocessorConfig ?? null };
  return await ctx.source.checkpoint(async (rollouts) => {
    const dir = await run.beginCheckpoint(step);
    await saveTrainState(dir, model, tokenizer, optimizer, {
      step,
      seed: config.trainer.seed,
      dataPosition: prompts.position,
    }, {
      generationConfig: init.generationConfig,
      baseModel: config.model.checkpoint,
      ...(visionSave !== undefined ? { vision: visionSave } : {}),
    });
    if (rollouts !== null) await saveSchedulerState(dir, rollouts);
    if (usesStrategies(config.sampling) || ctx.kl !== null) {
      await saveSamplingState(dir, { prompts: prompts.state(), klCoef: ctx.kl?.value ?? null });
    }
    if (config.model.lora != null && step === config.trainer.steps) {
      await saveMergedModel(
        join(dir, LORA_FILES.merged),
        model,
        tokenizer,
        init.generationConfig,
        visionSave,
      );
    }
    await run.completeCheckpoint(step);
    return dir;
  });
}

/** Logs the first samples of a step's batch when they are due. */
async function logSamples(ctx: RunContext, step: number, batch: StepBatch): Promise<void> {
  const t = ctx.config.trainer;
  if (!(t.samplesEvery > 0 && (step % t.samplesEvery === 0 || step === 1))) return;
  for (const it of batch.rollout.items.slice(0, t.samplesCount)) {
    await ctx.run.appendSample({
      step,
      prompt: it.prompt,
      completion: it.text,
      reward: it.reward,
      answer: it.row.answer,
      ...sampleImages(it.row),
    });
  }
}

/**
 * One training step: draw and collect the batch → record what was drawn (pass rates, GRESO,
 * replay store) and mix in replayed responses → update (score, advantages, mini-batch steps)
 * with this step's KL coefficient → publish the weights → record the metrics and samples.
 * Returns the record.
 */
async function trainingStep(
  ctx: RunContext,
  step: number,
  lr: number,
): Promise<Record<string, number | null>> {
  const { config, learner, prompts } = ctx;
  prompts.setStep(step);
  const batch = await ctx.source.next(step);
  logRewardFailures(ctx, step, batch);
  prompts.observe(batch.rollout.items, step);
  const items = prompts.mixReplay(batch.rollout.items, step);
  const started = performance.now();
  learner.optimizer.lr = lr;
  const klCoef = ctx.kl?.value ?? null;
  const u = await trainStep({
    config: klCoef === null ? config : withKlCoef(config, klCoef),
    model: learner.model,
    ref: learner.ref,
    optimizer: learner.optimizer,
    step,
    vision: learner.vision,
  }, items);
  await ctx.source.afterUpdate(step);
  const trainS = (performance.now() - started) / 1000;
  if (ctx.kl !== null && u.kl !== null) ctx.kl.update(u.kl, items.length);
  const record = {
    ...stepRecord(config, step, lr, { ...batch, rollout: { ...batch.rollout, items } }, u, {
      trainS,
    }),
    ...(klCoef !== null ? { kl_coef: klCoef } : {}),
    ...prompts.metrics(),
  };
  await ctx.run.appendMetrics(record);
  await ctx.callbacks.onStep?.(record);
  await logSamples(ctx, step, batch);
  return record;
}

/** Logs the reward calls that failed in a step (the samples were left out of its batch). */
function logRewardFailures(ctx: RunContext, step: number, batch: StepBatch): void {
  const failures = batch.rollout.rewardStats?.failures ?? [];
  const shown = 3;
  for (const f of failures.slice(0, shown)) {
    ctx.log(
      `reward: step ${step}, sample ${f.sample}: ${f.reward} ${f.status}: ${f.reason} (scored null, left out of the update)`,
    );
  }
  if (failures.length > shown) {
    ctx.log(`reward: step ${step}: ${failures.length - shown} more failed reward calls`);
  }
}

/** `config` with `algorithm.kl.beta` replaced (the adaptive controller's β for one step). */
function withKlCoef(config: Config, beta: number): Config {
  return { ...config, algorithm: { ...config.algorithm, kl: { ...config.algorithm.kl, beta } } };
}

/**
 * The run's model side on its device: evaluate, train, checkpoint (see the module doc). Takes
 * the loaded learner and disposes of it.
 */
async function trainOnDevice(
  config: Config,
  job: JobTask,
  run: RunDir,
  learner: Learner,
  checkpointPath: string | null,
  device: TrainDevice,
  options: RunOptions & { log: (line: string) => void },
): Promise<Omit<RunResult, "dir">> {
  const { log } = options;
  const t = config.trainer;
  const { env } = job;
  const task = job.task as Task<TaskRow>;
  const { tokenizer, start } = learner;
  log(
    `model: ${learner.description}; ${promptFormat(tokenizer)} prompts; stops on token ids ${
      learner.init.eosTokenIds.join(", ")
    }; on ${device.device})`,
  );
  // trainer.evalProblems 0: no held-out evaluation at all (no eval records, no before/after).
  const held = t.evalProblems > 0 ? heldOutProblems(task, t.evalProblems) : [];
  const stream = new TrainStream<TaskRow>(
    task as Task<TaskRow>,
    t.seed,
    held,
    config.task.trainProblems ?? null,
    learner.dataPosition,
  );
  const saved = checkpointPath === null ? null : await loadSamplingState(checkpointPath);
  const prompts = new PromptSource<TaskRow>(
    task as Task<TaskRow>,
    stream,
    config.sampling,
    t.seed,
    saved?.prompts ?? null,
  );
  const klSettings = config.algorithm.kl;
  const kl = klSettings.target == null ? null : new AdaptiveKlController({
    initCoef: saved?.klCoef ?? klSettings.beta,
    target: klSettings.target,
    horizon: klSettings.horizon ?? 10000,
  });

  let stop = false;
  const onSigint = () => {
    if (stop) Deno.exit(130);
    stop = true;
    log("\ntrain: Ctrl-C - finishing this step and saving a checkpoint (Ctrl-C again to quit now)");
  };
  const handle = options.handleSignals ?? true;
  let listening = false;
  let source: RolloutSource | null = null;
  let before: EvalResult | null = null;
  let after: EvalResult | null = null;
  let step = start;
  let interrupted = false;
  try {
    source = await startRollouts(
      {
        config,
        model: learner.model,
        tokenizer,
        stream: prompts,
        eosTokenIds: learner.init.eosTokenIds,
        vision: learner.vision,
        groupSizes: (rows) => prompts.groupSizes(rows, config.rollout.groupSize),
        ...(job.rewards !== null ? { rewards: job.rewards } : {}),
      },
      task,
      env,
      { start, checkpointPath, runDir: run.path, log },
    );
    if (source.description !== null) log(source.description);
    const ctx: RunContext = {
      config,
      run,
      learner,
      prompts,
      source,
      kl,
      callbacks: { ...(options.onStep !== undefined ? { onStep: options.onStep } : {}) },
      evaluate: heldOutEvaluator(config, learner, task, env, held, job.rewards, run),
      log,
    };
    if (start === 0 && held.length > 0) {
      before = await ctx.evaluate(0);
      after = before;
      await run.appendEval(evalRecord(0, before));
      await options.onEval?.(evalRecord(0, before));
      log(
        `held-out before training: pass@1 ${pct(before.passAt1)}, pass@${before.k} ${
          pct(before.passAtK)
        } (${before.problems} problems x ${before.n} samples, ${before.seconds.toFixed(1)} s)`,
      );
    }
    if (handle) {
      Deno.addSignalListener("SIGINT", onSigint);
      listening = true;
    }
    const progress = new ProgressBar({
      total: t.steps,
      start,
      ...(options.progress !== undefined ? { write: options.progress, tty: false } : {}),
    });
    const factor = lrFactor(config);
    let lastPass1 = before?.passAt1 ?? null;
    while (step < t.steps) {
      step++;
      const record = await trainingStep(ctx, step, config.optimizer.lr * factor(step - 1));
      const evalDue = (t.evalEvery > 0 && step % t.evalEvery === 0) || step === t.steps;
      if (held.length > 0 && evalDue) {
        after = await ctx.evaluate(step);
        lastPass1 = after.passAt1;
        await run.appendEval(evalRecord(step, after));
        await options.onEval?.(evalRecord(step, after));
      }
      const stopping = stop ||
        (options.stopAfter !== undefined && step - start >= options.stopAfter) ||
        (await options.shouldStop?.(step) ?? false);
      if ((t.saveEvery > 0 && step % t.saveEvery === 0) || step === t.steps || stopping) {
        const dir = await saveCheckpoint(ctx, step);
        await options.onCheckpoint?.(step, dir);
      }
      progress.update(step, {
        reward: record["reward/mean"] ?? null,
        pass1: lastPass1,
        tokensPerS: record.tokens_per_s ?? null,
      });
      if (stopping && step < t.steps) {
        interrupted = true;
        break;
      }
    }
    progress.finish({ pass1: lastPass1 });
    const summary = await source.finish(run.path);
    if (summary !== null) log(summary);
  } finally {
    await source?.close();
    if (listening) Deno.removeSignalListener("SIGINT", onSigint);
    learner.dispose();
  }
  const record: DeviceRecord = {
    startStep: start,
    choice: device.choice,
    device: device.device,
    reason: device.reason,
    adapter: device.adapter,
    softwareAdapter: device.softwareAdapter,
  };
  return { step, interrupted, before, after, device: record };
}
