/**
 * Where a training session's output goes: {@link RunSink}, the four record streams of a run
 * (`metrics`, `eval`, `eval_samples`, `samples`) and the checkpoint hook, and
 * {@link MemorySink}, which keeps them in arrays (a browser tab, tests). `deno task train`
 * writes them to its run directory through `RunDirSink` (`run_dir_sink.ts`).
 *
 * Design decisions:
 * - **The records are the run directory's**, checked by the same functions
 *   (`run/records.ts`), so what a page plots and what `metrics.jsonl` holds are the same objects
 *   and a record `RunDir` would refuse fails in memory too.
 * - **A checkpoint hook gets the live learner**, not bytes: a run directory writes files from it,
 *   the memory sink copies the trained tensors and the optimizer's moments
 *   (`memory_checkpoint.ts`); either way it must read them before it returns, since the next step
 *   changes them.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import {
  checkEvalRecord,
  checkSampleRecord,
  checkStepMetrics,
  type EvalRecord,
  type SampleRecord,
  type StepMetrics,
} from "../run/records.ts";
import type { Learner } from "./learner.ts";
import { captureCheckpoint, type MemoryCheckpoint } from "./memory_checkpoint.ts";
import type { SchedulerState } from "./scheduler.ts";
import type { SamplingCheckpoint } from "./state.ts";
import { rowImageSources } from "./vision.ts";
import type { TaskRow } from "@rlvr/rewards";

/** A step's metrics record (`metrics.jsonl`): the step and every metric, null where none exists. */
export type MetricsRecord = Readonly<Record<string, number | null>>;

/** A held-out evaluation's record (`eval.jsonl`): step, pass@1, pass@k, k, n, problems, ... */
export type EvalLine = Readonly<Record<string, number>>;

/** What a session knows of its progress, and what resuming it needs besides the learner. */
export interface SessionState {
  /** Training steps completed. */
  step: number;
  /** `trainer.seed` (every draw is keyed by it, so it is the whole random state). */
  seed: number;
  /** The training stream's position to continue from. */
  dataPosition: number;
  /**
   * The prompt source and the adaptive KL coefficient, when the run has `sampling` strategies
   * or `algorithm.kl.target` (a checkpoint's `sampling.json`), else null.
   */
  sampling: SamplingCheckpoint | null;
}

/** What the checkpoint hook of a {@link RunSink} receives. */
export interface SessionCheckpoint extends SessionState {
  /** The resolved config of the run. */
  config: Config;
  /** The learner as it is after step {@link SessionState.step}: read it before returning. */
  learner: Learner;
  /** The rollout scheduler's outstanding batches (asynchronous modes), else null. */
  rollouts: SchedulerState | null;
}

/** Where a training session's records and checkpoints go (see the module doc). */
export interface RunSink {
  /** A step's metrics, once per step, steps increasing. */
  appendMetrics(record: MetricsRecord): Promise<void>;
  /** A held-out evaluation (step 0 before training). */
  appendEval(record: EvalLine): Promise<void>;
  /** A held-out completion: the first sample of each of the first problems, per evaluation. */
  appendEvalSample(record: SampleRecord): Promise<void>;
  /** A training completion, at `trainer.samplesEvery`. */
  appendSample(record: SampleRecord): Promise<void>;
  /** Keeps a checkpoint; returns where it is (a folder, or a name for one held in memory). */
  checkpoint(checkpoint: SessionCheckpoint): Promise<string>;
}

/** The largest image data URL a sample record carries (a report shows it inline). */
const SAMPLE_IMAGE_CHARS = 64 * 1024;

/**
 * `{ images }`: a row's image data URLs for a sample record (those up to 64 KiB; file paths and
 * larger images are left out), or `{}`.
 *
 * @example Usage
 * ```ts
 * import { sampleImages } from "./run_sink.ts";
 * import assert from "node:assert/strict";
 * const row = { id: "r", task: "t", prompt: "p", answer: "a", difficulty: 0 };
 * assert.deepEqual(sampleImages(row), {});
 * assert.deepEqual(sampleImages({ ...row, images: ["data:image/png;base64,AA==", "a.png"] }), {
 *   images: ["data:image/png;base64,AA=="],
 * });
 * ```
 */
export function sampleImages(row: TaskRow): { images?: string[] } {
  const images = rowImageSources(row).filter((s) =>
    /^data:image\//i.test(s) && s.length <= SAMPLE_IMAGE_CHARS
  );
  return images.length === 0 ? {} : { images };
}

/**
 * A {@link RunSink} in memory: the records in arrays, checked as a run directory checks them,
 * and the latest checkpoint as a {@link MemoryCheckpoint} (the trained tensors and the
 * optimizer's moments copied), from which `resumeLearner` continues a run in a new session.
 *
 * @example Usage
 * ```ts
 * import { MemorySink } from "./run_sink.ts";
 * import assert from "node:assert/strict";
 * const sink = new MemorySink();
 * await sink.appendEval({ step: 0, "pass@1": 0.25, "pass@k": 0.5, k: 4, n: 4 });
 * assert.deepEqual(sink.evals.map((r) => r.step), [0]);
 * await assert.rejects(
 *   sink.appendEval({ step: 1, "pass@1": 2, "pass@k": 0.5, k: 4, n: 4 }),
 *   /pass@1/,
 * );
 * ```
 */
export class MemorySink implements RunSink {
  /** The step records, in order. */
  readonly metrics: StepMetrics[] = [];
  /** The evaluation records, in order. */
  readonly evals: EvalRecord[] = [];
  /** The held-out completions, in order. */
  readonly evalSamples: SampleRecord[] = [];
  /** The training completions, in order. */
  readonly samples: SampleRecord[] = [];
  /** The steps checkpointed, in order. */
  readonly checkpointSteps: number[] = [];
  /** The latest checkpoint, or null before the first. */
  latest: MemoryCheckpoint | null = null;

  /** Appends a step record (checked; steps must increase, as in `metrics.jsonl`). */
  appendMetrics(record: MetricsRecord): Promise<void> {
    return this.#push(this.metrics, { ...record }, (r) => {
      checkStepMetrics(r);
      const last = this.metrics.at(-1)?.step;
      if (last !== undefined && r.step <= last) {
        throw new RangeError(
          `MemorySink.appendMetrics: step ${r.step} after step ${last}; steps must increase (continue a run in a new session with a new sink)`,
        );
      }
    });
  }

  /** Appends an evaluation record (checked). */
  appendEval(record: EvalLine): Promise<void> {
    return this.#push(this.evals, { ...record }, checkEvalRecord);
  }

  /** Appends a held-out completion (checked as a sample). */
  appendEvalSample(record: SampleRecord): Promise<void> {
    return this.#push(this.evalSamples, { ...record }, checkSampleRecord);
  }

  /** Appends a training completion (checked). */
  appendSample(record: SampleRecord): Promise<void> {
    return this.#push(this.samples, { ...record }, checkSampleRecord);
  }

  /** Copies the checkpoint into {@link latest}; returns `memory:step-N`. */
  async checkpoint(checkpoint: SessionCheckpoint): Promise<string> {
    this.latest = await captureCheckpoint(checkpoint);
    this.checkpointSteps.push(checkpoint.step);
    return `memory:step-${checkpoint.step}`;
  }

  #push<T>(
    list: T[],
    record: Record<string, unknown>,
    check: (r: Record<string, unknown>) => void,
  ): Promise<void> {
    try {
      check(record);
    } catch (e) {
      return Promise.reject(e);
    }
    list.push(record as T);
    return Promise.resolve();
  }
}
