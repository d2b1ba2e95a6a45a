/**
 * The training run behind `deno task train`: builds everything a config names, evaluates the
 * held-out set before training, runs the steps, evaluates, samples and checkpoints at the
 * configured intervals, and finishes with `report.html` and a summary that prints held-out
 * pass@1 and pass@k before and after.
 *
 * The run, each part a function of its own:
 *
 * 1. `resumeRunDir`: a resumed run's directory, locked and truncated to its latest checkpoint;
 * 2. the device (`device.ts`), then `loadLearner` (`learner.ts`: policy, reference, value head,
 *    LoRA, AdamW) and `fitToModel` (context window, memory) before a new run's directory exists;
 * 3. `trainOnDevice`: a {@link TrainingSession} (`session.ts`: the held-out problems, the prompt
 *    source, the rollout source of the mode, the evaluator, the learning-rate schedule) writing
 *    to the run directory (`run_dir_sink.ts`), evaluated before training;
 * 4. `trainSteps`: per step `session.step()` (collect the batch → `trainStep` → publish weights →
 *    metrics, samples, the evaluation when due), then Ctrl-C / `stopAfter` / `shouldStop`, the
 *    checkpoint when due, the progress bar;
 * 5. `finishRun`: the report and the summary.
 *
 * What needs Deno stays here (files, the lock, signals, the progress bar, the device, rollout
 * workers); the session itself runs in a browser too, with the same records for the same config
 * and seed.
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

import { basename, extname } from "node:path";
import type { TaskRow } from "@rlvr/rewards";
import { getBackend, setBackend } from "@rlvr/tensor";
import type { Config } from "../config/types.ts";
import { configToYaml, type LoadedConfig } from "../config/load.ts";
import { needsReference } from "../config/mapping.ts";
import { ProgressBar, summaryTable } from "../progress.ts";
import { writeReport } from "../report/report.ts";
import { runSummary } from "../report/summary.ts";
import type { CheckpointInfo } from "../run/checkpoints.ts";
import { RunDir } from "../run/run_dir.ts";
import { type TrackerOptions, trackerOptions } from "../run/trackers.ts";
import type { MetricsSink } from "@rlvr/infra";
import {
  cpuMatmulLine,
  deviceLine,
  type DeviceRecord,
  recordDevice,
  selectTrainDevice,
  type TrainDevice,
} from "./device.ts";
import type { EvalResult } from "./eval.ts";
import { type Learner, loadLearner } from "./learner.ts";
import { heldOutProblems } from "./problems.ts";
import { promptFormat, promptIds } from "./prompt.ts";
import { type DataTask, fitDataTask, isDataTask } from "./data_task.ts";
import { contextWindowProblem, estimateTrainingMemory, memoryProblem } from "./policy.ts";
import { type RunDirHooks, RunDirSink } from "./run_dir_sink.ts";
import type { EvalLine, MetricsRecord } from "./run_sink.ts";
import { scheduledRollouts } from "./scheduled_rollouts.ts";
import { TrainingSession } from "./session.ts";
import { loadSamplingState } from "./state.ts";
import { type JobTask, jobTask } from "./job_runner.ts";
import type { RewardLike } from "./reward_set.ts";

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
  onStep?: (record: MetricsRecord) => void | Promise<void>;
  /** Called with each held-out evaluation, after it is written. */
  onEval?: (record: EvalLine) => void | Promise<void>;
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
  let job = await buildTask(config, options.rewards);
  const trackers = trackerOptions(config, { ...options, log });
  const resumed = loaded.resume === null ? null : await resumeRunDir(loaded.resume, trackers, log);
  let run: RunDir | null = resumed?.run ?? null;
  const checkpoint = resumed?.checkpoint ?? null;

  // The device: every tensor of the run (policy, reference, value head, rollout, scoring, the
  // update, AdamW's moments) is created on its backend, the default while the run lasts.
  let device: TrainDevice | null = null;
  const previous = getBackend();
  let result: Omit<RunResult, "dir">;
  let created = false;
  try {
    try {
      device = await selectTrainDevice(config.trainer.device, config.trainer.blas);
      setBackend(device.backend);
      // The model first: a new run's directory is created only once it has loaded and the run
      // is known to fit it, so a failure here leaves nothing behind.
      const learner = await loadLearner(config, checkpoint?.path ?? null);
      try {
        job = fitToModel(config, job, learner, device, options.memoryLimit, log);
        if (run === null) {
          run = await createRunDir(loaded, trackers);
          created = true;
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
 * A resumed run's directory, locked before anything in it is read or truncated, then truncated
 * to its latest sound checkpoint (null: none is complete, the run starts over); a damaged latest
 * checkpoint is moved aside with a warning. The lock is released again if this fails.
 */
async function resumeRunDir(
  path: string,
  trackers: TrackerOptions,
  log: (line: string) => void,
): Promise<{ run: RunDir; checkpoint: CheckpointInfo | null }> {
  const run = await RunDir.open(path, { ...trackers, lock: true });
  try {
    const info = await run.resume();
    for (const c of info.corruptCheckpoints) {
      log(
        `warning: checkpoint step-${c.step} of ${run.path} is damaged (${c.reason}); moved it to ${c.movedTo} and resuming from the one before`,
      );
    }
    log(
      `resume: ${run.path} from ${
        info.checkpoint === null
          ? "the start (no complete checkpoint)"
          : `step ${info.checkpoint.step}`
      }`,
    );
    return { run, checkpoint: info.checkpoint };
  } catch (e) {
    await run.unlock();
    throw e;
  }
}

/**
 * A new run's directory, locked, named by `output.name` (else the recipe's file name, else
 * `run`; suffixed when taken), with the resolved `config.yaml`.
 */
async function createRunDir(loaded: LoadedConfig, trackers: TrackerOptions): Promise<RunDir> {
  const { config } = loaded;
  const name = config.output.name ??
    (loaded.recipe !== null ? basename(loaded.recipe, extname(loaded.recipe)) : "run");
  const run = await RunDir.create(config.output.dir, name, { ...trackers, lock: true });
  await run.writeConfig(configToYaml(config));
  return run;
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

/**
 * The run's model side on its device (see the module doc): a training session writing to `run`,
 * the evaluation before training, the steps, the rollout source's summary. Takes the loaded
 * learner and disposes of it.
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
  const { start } = learner;
  log(
    `model: ${learner.description}; ${
      promptFormat(learner.tokenizer)
    } prompts; stops on token ids ${learner.init.eosTokenIds.join(", ")}; on ${device.device})`,
  );
  let session: TrainingSession | null = null;
  let ctrlC: { readonly pressed: boolean; remove(): void } | null = null;
  let before: EvalResult | null = null;
  let outcome: { interrupted: boolean; after: EvalResult | null };
  try {
    session = await TrainingSession.create(config, job, learner, {
      sink: new RunDirSink(run, hooksOf(options)),
      sampling: checkpointPath === null ? null : await loadSamplingState(checkpointPath),
      rollouts: (context) =>
        scheduledRollouts(context, { start, checkpointPath, runDir: run.path, log }),
      log,
    });
    if (session.sourceDescription !== null) log(session.sourceDescription);
    if (start === 0) before = await evaluateBefore(session, log);
    if (options.handleSignals ?? true) ctrlC = listenForCtrlC(log);
    outcome = await trainSteps(session, options, before, () => ctrlC?.pressed ?? false);
    const summary = await session.finish();
    if (summary !== null) log(summary);
  } finally {
    await session?.close();
    ctrlC?.remove();
    learner.dispose();
  }
  return {
    step: session.completed,
    interrupted: outcome.interrupted,
    before,
    after: outcome.after,
    device: deviceRecord(start, device),
  };
}

/** The caller's `onStep` and `onEval`, for the run directory's sink to call after writing. */
function hooksOf(options: RunOptions): RunDirHooks {
  return {
    ...(options.onStep !== undefined ? { onStep: options.onStep } : {}),
    ...(options.onEval !== undefined ? { onEval: options.onEval } : {}),
  };
}

/** The held-out evaluation of a new run before its first step (null without held-out problems). */
async function evaluateBefore(
  session: TrainingSession,
  log: (line: string) => void,
): Promise<EvalResult | null> {
  const before = await session.evaluate();
  if (before !== null) {
    log(
      `held-out before training: pass@1 ${pct(before.passAt1)}, pass@${before.k} ${
        pct(before.passAtK)
      } (${before.problems} problems x ${before.n} samples, ${before.seconds.toFixed(1)} s)`,
    );
  }
  return before;
}

/**
 * Ctrl-C (SIGINT) while training: the first press asks the loop to stop after the current step
 * (with a checkpoint, so the run can be resumed); a second one exits at once (130), so a stuck
 * run can still be killed.
 */
function listenForCtrlC(
  log: (line: string) => void,
): { readonly pressed: boolean; remove(): void } {
  let pressed = false;
  const onSigint = () => {
    if (pressed) Deno.exit(130);
    pressed = true;
    log("\ntrain: Ctrl-C - finishing this step and saving a checkpoint (Ctrl-C again to quit now)");
  };
  Deno.addSignalListener("SIGINT", onSigint);
  return {
    get pressed() {
      return pressed;
    },
    remove: () => Deno.removeSignalListener("SIGINT", onSigint),
  };
}

/**
 * The steps left: each `session.step()` (which evaluates when due), then whether to stop here
 * (Ctrl-C, `stopAfter`, `shouldStop`), a checkpoint when one is due or the run stops, and the
 * progress bar. Returns whether it stopped early and the last evaluation.
 */
async function trainSteps(
  session: TrainingSession,
  options: RunOptions,
  before: EvalResult | null,
  interrupted: () => boolean,
): Promise<{ interrupted: boolean; after: EvalResult | null }> {
  const { steps } = session.config.trainer;
  const progress = new ProgressBar({
    total: steps,
    start: session.start,
    ...(options.progress !== undefined ? { write: options.progress, tty: false } : {}),
  });
  let after = before;
  let stopped = false;
  while (!session.done) {
    const { step, record, evaluation } = await session.step();
    if (evaluation !== null) after = evaluation;
    const stopping = interrupted() ||
      (options.stopAfter !== undefined && step - session.start >= options.stopAfter) ||
      (await options.shouldStop?.(step) ?? false);
    if (session.checkpointDue() || stopping) {
      const dir = await session.checkpoint();
      await options.onCheckpoint?.(step, dir);
    }
    progress.update(step, {
      reward: record["reward/mean"] ?? null,
      pass1: after?.passAt1 ?? null,
      tokensPerS: record.tokens_per_s ?? null,
    });
    if (stopping && step < steps) {
      stopped = true;
      break;
    }
  }
  progress.finish({ pass1: after?.passAt1 ?? null });
  return { interrupted: stopped, after };
}

/** What `device.json` records of this process's device. */
function deviceRecord(start: number, device: TrainDevice): DeviceRecord {
  return {
    startStep: start,
    choice: device.choice,
    device: device.device,
    reason: device.reason,
    adapter: device.adapter,
    softwareAdapter: device.softwareAdapter,
  };
}
