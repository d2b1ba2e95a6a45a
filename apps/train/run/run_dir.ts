/**
 * A run directory, `runs/<name>/`:
 *
 * ```
 * config.yaml         the fully resolved config (atomic write)
 * metrics.jsonl       one record per step          (append-only, one flushed line each)
 * eval.jsonl          one record per evaluation
 * samples.jsonl       sampled completions at intervals
 * eval_samples.jsonl  held-out completions of the first problems at each evaluation
 * checkpoints/step-N/ checkpoint files, then COMPLETE
 * report.html         written by the report
 * ```
 *
 * Design decisions: the step convention is that checkpoint `step-N` holds the state after step
 * N, and every record of step <= N was written before it, so resuming from `step-N` keeps the
 * records with step <= N and drops the rest, including what was logged after the checkpoint
 * and a line cut by the crash; the resumed run then re-logs steps N+1, ... and, when
 * training is deterministic, the files end up identical to an uninterrupted run. Appends
 * check that steps never go backwards in `metrics.jsonl`, so a resume that forgot to
 * truncate fails instead of writing a duplicate step.
 *
 * Trackers (`trackers.ts`): every record appended here also goes, after its JSONL line, to the
 * trackers the options name (TensorBoard event files in `tb/`, `metrics.csv` / `eval.csv`, the
 * console, `MetricsSink` objects), and resuming truncates their files to the same step.
 *
 * One writer at a time: with `lock: true` a `RunDir` holds the directory's `run.lock`
 * (`run_lock.ts`) until {@link RunDir.unlock}, taken before anything is read or truncated, so a
 * second `--resume` of a running run fails at once naming the holder's PID instead of
 * interleaving two runs' records. Creating a run claims its directory atomically: the
 * non-recursive `mkdir` of its `checkpoints/` folder succeeds for one process only, so two runs
 * started at once with one name get `name` and `name-2`, never one folder between them.
 *
 * Resuming checks the latest complete checkpoint (`verifyCheckpoint`) and falls back to the
 * previous one when it is damaged, moving the damaged one aside (`step-N.corrupt`).
 *
 * @module
 */

import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { writeFileAtomic } from "./atomic.ts";
import {
  beginCheckpoint,
  type CheckpointInfo,
  completeCheckpoint,
  latestCompleteCheckpoint,
  listCheckpoints,
  moveAside,
  removeIncomplete,
  verifyCheckpoint,
} from "./checkpoints.ts";
import { RunLock } from "./run_lock.ts";
import { JsonlWriter, readJsonl, truncateJsonl } from "./jsonl.ts";
import {
  checkEvalRecord,
  checkSampleRecord,
  checkStepMetrics,
  type EvalRecord,
  type SampleRecord,
  type StepMetrics,
} from "./records.ts";
import {
  RunTrackers,
  TRACKER_FILES,
  type TrackerOptions,
  type TrackerTruncation,
  truncateTrackers,
} from "./trackers.ts";

/** The file names of a run directory. */
export const RUN_FILES: Readonly<{
  config: string;
  metrics: string;
  eval: string;
  samples: string;
  evalSamples: string;
  checkpoints: string;
  report: string;
  tensorboard: string;
  metricsCsv: string;
  evalCsv: string;
}> = Object.freeze({
  config: "config.yaml",
  metrics: "metrics.jsonl",
  eval: "eval.jsonl",
  samples: "samples.jsonl",
  evalSamples: "eval_samples.jsonl",
  checkpoints: "checkpoints",
  report: "report.html",
  ...TRACKER_FILES,
});

/** The JSONL files of a run directory. */
export type RunStream = "metrics" | "eval" | "samples" | "evalSamples";

/** Options of {@link RunDir.open}: durability, the lock and trackers (see {@link TrackerOptions}). */
export interface OpenOptions extends TrackerOptions {
  /** fsync every JSONL line and event (default false). */
  durable?: boolean;
  /**
   * Take the directory's `run.lock` first and hold it until {@link RunDir.unlock} (default
   * false: a reader such as the report takes no lock). A directory another process holds
   * rejects with a `RunLockedError` naming its PID; a lock left by a process that died is taken
   * over with a warning (to `warn`).
   */
  lock?: boolean;
}

/** Options of {@link RunDir.create}: {@link OpenOptions} and what to do with an existing name. */
export interface CreateOptions extends OpenOptions {
  /**
   * What to do when `root/name` exists and is not empty (or another process claims it first):
   * `"suffix"` (default) picks `name-2`, `name-3`, ...; `"error"` throws.
   */
  ifExists?: "suffix" | "error";
}

/** A damaged checkpoint that {@link RunDir.resume} moved aside (inline in its API). */
type CorruptCheckpoint = ResumeInfo["corruptCheckpoints"][number];

/** What {@link RunDir.resume} did. */
export interface ResumeInfo {
  /** The checkpoint to load, or null to start from scratch (no complete checkpoint). */
  checkpoint: CheckpointInfo | null;
  /** Incomplete checkpoint steps that were deleted. */
  removedCheckpoints: number[];
  /**
   * Damaged complete checkpoints, latest first, moved aside to fall back to an earlier one:
   * the step, what is wrong (see `verifyCheckpoint`) and where it is now, relative to the run
   * directory (`checkpoints/step-N.corrupt`).
   */
  corruptCheckpoints: { step: number; reason: string; movedTo: string }[];
  /** Records dropped per file (including a partial last line, counted separately). */
  dropped: Record<RunStream, number>;
  /** Files whose partial last line was removed. */
  partialLines: RunStream[];
  /** What was dropped from the tracker files (`metrics.csv`, `eval.csv`, `tb/`). */
  trackers: TrackerTruncation;
}

async function isEmptyDir(path: string): Promise<boolean> {
  for await (const _ of Deno.readDir(path)) return false;
  return true;
}

/**
 * A run directory (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { RunDir } from "./run_dir.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * const run = await RunDir.create(root, "demo");
 * await run.writeConfig("trainer:\n  steps: 2\n");
 * await run.appendEval({ step: 0, "pass@1": 0.25, "pass@k": 0.5, k: 4, n: 4 });
 * assert.deepEqual((await run.readEval()).map((r) => r.step), [0]);
 * await run.close();
 * const again = await RunDir.create(root, "demo", { lock: true }); // exists: a suffixed name
 * assert.match(again.path, /demo-2$/);
 * await again.close();
 * await again.unlock();
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export class RunDir {
  /** The directory's absolute path. */
  readonly path: string;
  readonly #durable: boolean;
  readonly #writers = new Map<RunStream, Promise<JsonlWriter>>();
  readonly #trackers: RunTrackers;
  #lastStep: number | null | undefined = undefined;
  #lock: RunLock | null;

  private constructor(path: string, options: OpenOptions, lock: RunLock | null) {
    this.path = path;
    this.#durable = options.durable ?? false;
    this.#trackers = new RunTrackers(path, options, this.#durable);
    this.#lock = lock;
  }

  static async #lockOf(path: string, options: OpenOptions): Promise<RunLock | null> {
    if (options.lock !== true) return null;
    return await RunLock.acquire(path, options.warn !== undefined ? { warn: options.warn } : {});
  }

  /** Creates `root/name` (see {@link CreateOptions} for an existing one). */
  static async create(root: string, name: string, options: CreateOptions = {}): Promise<RunDir> {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
      throw new TypeError(
        `RunDir.create: name must be one directory name of letters, digits, '.', '_' and '-', got ${
          JSON.stringify(name)
        }`,
      );
    }
    await Deno.mkdir(resolve(root), { recursive: true });
    for (let n = 1;; n++) {
      const path = resolve(root, n === 1 ? name : `${name}-${n}`);
      if (await RunDir.#claim(path)) {
        return new RunDir(path, options, await RunDir.#lockOf(path, options));
      }
      if ((options.ifExists ?? "suffix") === "error") {
        throw new Error(
          `RunDir.create: ${path} already exists; pass --resume ${path} to continue it or --set output.name=<new name> for a new run`,
        );
      }
    }
  }

  /**
   * Claims `path` for a new run, atomically: whoever creates its `checkpoints/` (a mkdir that
   * is not recursive, so it fails when the folder exists) owns it. A missing folder is created
   * first and an empty one (made by hand) is reused; a folder with anything in it, or claimed
   * by another process between the two mkdirs, is not.
   */
  static async #claim(path: string): Promise<boolean> {
    try {
      await Deno.mkdir(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      if (!(await Deno.stat(path)).isDirectory || !(await isEmptyDir(path))) return false;
    }
    try {
      await Deno.mkdir(join(path, RUN_FILES.checkpoints));
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) return false;
      throw e;
    }
  }

  /**
   * Opens an existing run directory (it must contain `config.yaml`), taking its lock first with
   * `lock: true`.
   */
  static async open(path: string, options: OpenOptions = {}): Promise<RunDir> {
    const abs = resolve(path);
    if (!existsSync(join(abs, RUN_FILES.config))) {
      throw new Error(
        `RunDir.open: ${abs} has no ${RUN_FILES.config}; pass a directory created by deno task train`,
      );
    }
    return new RunDir(abs, options, await RunDir.#lockOf(abs, options));
  }

  /** Whether this object holds the directory's lock (`lock: true`, not yet unlocked). */
  get locked(): boolean {
    return this.#lock?.held ?? false;
  }

  /** Releases the directory's lock, if held (idempotent; {@link RunDir.close} keeps it). */
  async unlock(): Promise<void> {
    const lock = this.#lock;
    this.#lock = null;
    await lock?.release();
  }

  /** The path of one of the run's files. */
  file(name: keyof typeof RUN_FILES): string {
    return join(this.path, RUN_FILES[name]);
  }

  /** Writes `config.yaml` atomically. */
  async writeConfig(yaml: string): Promise<void> {
    await writeFileAtomic(this.file("config"), yaml);
  }

  /** Reads `config.yaml`. */
  async readConfigText(): Promise<string> {
    return await Deno.readTextFile(this.file("config"));
  }

  #writer(stream: RunStream): Promise<JsonlWriter> {
    let w = this.#writers.get(stream);
    if (w === undefined) {
      w = JsonlWriter.open(this.file(stream), { durable: this.#durable });
      this.#writers.set(stream, w);
      // A failed open (a partial last line) must not stick: the next append retries.
      w.catch(() => this.#writers.delete(stream));
    }
    return w;
  }

  /** Appends a step record (checked; steps must increase). */
  async appendMetrics(record: Record<string, unknown>): Promise<void> {
    checkStepMetrics(record);
    if (this.#lastStep === undefined) {
      this.#lastStep = (await this.readMetrics()).at(-1)?.step ?? null;
    }
    if (this.#lastStep !== null && record.step <= this.#lastStep) {
      throw new RangeError(
        `RunDir.appendMetrics: step ${record.step} after step ${this.#lastStep} in ${
          this.file("metrics")
        }; steps must increase (resume truncates the files to the checkpoint first)`,
      );
    }
    await (await this.#writer("metrics")).append(record);
    this.#lastStep = record.step;
    await this.#trackers.metrics(record);
  }

  /** Appends an eval record (checked). */
  async appendEval(record: Record<string, unknown>): Promise<void> {
    checkEvalRecord(record);
    await (await this.#writer("eval")).append(record);
    await this.#trackers.eval(record);
  }

  /** Appends a sample record (checked). */
  async appendSample(record: Record<string, unknown>): Promise<void> {
    checkSampleRecord(record);
    await (await this.#writer("samples")).append(record);
    await this.#trackers.sample(record);
  }

  /**
   * Appends a held-out sample record (checked as a sample; `step` is the evaluation's): the
   * same problems at every evaluation, so the report can show them before and after.
   */
  async appendEvalSample(record: Record<string, unknown>): Promise<void> {
    checkSampleRecord(record);
    await (await this.#writer("evalSamples")).append(record);
  }

  /** The complete held-out sample records. */
  async readEvalSamples(): Promise<SampleRecord[]> {
    return (await readJsonl<SampleRecord>(this.file("evalSamples"))).records;
  }

  /** The complete step records. */
  async readMetrics(): Promise<StepMetrics[]> {
    return (await readJsonl<StepMetrics>(this.file("metrics"))).records;
  }

  /** The complete eval records. */
  async readEval(): Promise<EvalRecord[]> {
    return (await readJsonl<EvalRecord>(this.file("eval"))).records;
  }

  /** The complete sample records. */
  async readSamples(): Promise<SampleRecord[]> {
    return (await readJsonl<SampleRecord>(this.file("samples"))).records;
  }

  /** The checkpoints, by step. */
  checkpoints(): Promise<CheckpointInfo[]> {
    return listCheckpoints(this.file("checkpoints"));
  }

  /** The latest complete checkpoint, or null. */
  latestCheckpoint(): Promise<CheckpointInfo | null> {
    return latestCompleteCheckpoint(this.file("checkpoints"));
  }

  /**
   * Creates `checkpoints/step-N/` and returns its path; write the files, then
   * {@link completeCheckpoint}. The trackers write what they hold back first (the step's
   * samples), so everything of steps <= N is on disk before the checkpoint exists.
   */
  async beginCheckpoint(step: number): Promise<string> {
    await this.#trackers.flush();
    return await beginCheckpoint(this.file("checkpoints"), step);
  }

  /** Writes the `COMPLETE` marker of `checkpoints/step-N/` (last, after its files). */
  completeCheckpoint(step: number, info: Record<string, unknown> = {}): Promise<void> {
    return completeCheckpoint(join(this.file("checkpoints"), `step-${step}`), { step, ...info });
  }

  /**
   * Keeps only the records with `step <= step` in the four JSONL files and the tracker files
   * and removes partial last lines (pass -1 to empty them). Open writers are closed first; the
   * next TensorBoard event file starts with a `SessionLog` START at `step + 1`.
   */
  async truncateAfter(
    step: number,
  ): Promise<Omit<ResumeInfo, "checkpoint" | "removedCheckpoints" | "corruptCheckpoints">> {
    await this.close();
    const dropped = { metrics: 0, eval: 0, samples: 0, evalSamples: 0 };
    const partialLines: RunStream[] = [];
    for (const stream of ["metrics", "eval", "samples", "evalSamples"] as const) {
      const r = await truncateJsonl<{ step: number }>(this.file(stream), (x) => x.step <= step);
      dropped[stream] = r.dropped;
      if (r.partialRemoved) partialLines.push(stream);
    }
    const trackers = await truncateTrackers(this.path, step);
    this.#trackers.resumedAfter(step);
    this.#lastStep = undefined;
    return { dropped, partialLines, trackers };
  }

  /**
   * Prepares a crashed or stopped run for resuming: deletes incomplete checkpoints, picks the
   * latest complete one that passes `verifyCheckpoint` (a damaged one is moved aside as
   * `step-N.corrupt` and reported in `corruptCheckpoints`, and the one before it is tried) and
   * truncates the JSONL files to its step (to nothing when there is none, for a restart from
   * scratch).
   */
  async resume(): Promise<ResumeInfo> {
    const removedCheckpoints = await removeIncomplete(this.file("checkpoints"));
    const corruptCheckpoints: CorruptCheckpoint[] = [];
    let checkpoint: CheckpointInfo | null = null;
    const complete = (await this.checkpoints()).filter((c) => c.complete).reverse();
    for (const c of complete) {
      const reason = await verifyCheckpoint(c.path);
      if (reason === null) {
        checkpoint = c;
        break;
      }
      // Moved, not deleted: the step is trained again and saved under its name, and the
      // damaged files stay for a look.
      const movedTo = await moveAside(c.path);
      corruptCheckpoints.push({ step: c.step, reason, movedTo: relative(this.path, movedTo) });
    }
    const t = await this.truncateAfter(checkpoint?.step ?? -1);
    return { checkpoint, removedCheckpoints, corruptCheckpoints, ...t };
  }

  /**
   * Closes the JSONL writers and the trackers' files, after writing what the trackers hold
   * back (the directory stays usable; writers reopen on the next append). Sinks given in the
   * options are not closed: they belong to the caller.
   */
  async close(): Promise<void> {
    const writers = [...this.#writers.values()];
    this.#writers.clear();
    for (const w of writers) await w.then((x) => x.close(), () => {});
    await this.#trackers.close();
  }
}
