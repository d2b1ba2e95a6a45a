/**
 * One training run of the playground: a {@link TrainingSession} (`apps/train/loop/session.ts`)
 * with a {@link MemorySink}, on the policy loaded from the checkpoint files the page fetched,
 * driven step by step so that the page can stop between steps and resume the same session.
 *
 * Design decisions:
 * - **The same session as `deno task train`**: the config is a recipe resolved by the config
 *   loader with the knobs applied, the task is built as `jobTask` builds it
 *   (`builtin_job.ts`), the learner is `learnerFromPolicy` on `policyFromFiles` (a reference
 *   model, when the recipe's KL needs one, is a second load of the same files); so the records
 *   are those of `deno task train` with the same config, bit for bit on the same kernels.
 * - **Nothing here needs a browser or Deno**: the page's entry (`app.ts`) wires it to the DOM,
 *   and `playground_run_test.ts` runs it in Deno against `runTraining`.
 * - **Stop is between steps**: {@link PlaygroundRun.stop} asks the loop to return after the step
 *   in progress; {@link PlaygroundRun.run} continues the same session from there, so a stopped
 *   and resumed run computes exactly what an uninterrupted one does.
 * - **The backend is the default one** while the run lasts (`setBackend`), as `deno task train`
 *   makes its device the default: every tensor the session creates lands there.
 *
 * @module
 */

import type { FileContents } from "@rlvr/policy";
import { type Backend, setBackend } from "@rlvr/tensor";
import type { Config } from "../../train/config/types.ts";
import { builtinSessionJob } from "../../train/loop/builtin_job.ts";
import type { EvalResult } from "../../train/loop/eval.ts";
import type { Learner } from "../../train/loop/learner.ts";
import { policyFromFiles } from "../../train/loop/policy_files.ts";
import { learnerFromPolicy } from "../../train/loop/policy_learner.ts";
import { MemorySink } from "../../train/loop/run_sink.ts";
import { type SessionStep, TrainingSession } from "../../train/loop/session.ts";

/** Options of {@link PlaygroundRun.create}. */
export interface PlaygroundRunOptions {
  /** The resolved config, knobs applied. */
  config: Config;
  /** The files of `config.model.checkpoint`'s folder (`fetchPolicyFiles`). */
  files: FileContents;
  /** What messages call the checkpoint (default `config.model.checkpoint`). */
  name?: string;
  /** The backend to compute on; made the default backend. */
  backend: Backend;
  /** Log lines of the session (failed reward calls; default: none). */
  log?: (line: string) => void;
}

/** What a run is doing. */
export type RunStatus = "ready" | "running" | "stopping" | "stopped" | "done" | "failed";

/** Callbacks of {@link PlaygroundRun.run}. */
export interface RunCallbacks {
  /** After each held-out evaluation (the one before training too). */
  onEval?: (step: number, result: EvalResult) => void;
  /** After each step. */
  onStep?: (step: SessionStep) => void;
  /**
   * Awaited after each step and evaluation, before the next: a page yields to the browser here
   * (so it paints and sees a click on Stop). Default: nothing.
   */
  pause?: () => Promise<void>;
}

/**
 * A training run driven step by step (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { loadConfig } from "@rlvr/train";
 * import { createCpuBackend, getBackend, setBackend } from "@rlvr/tensor";
 * import { PlaygroundRun } from "./playground_run.ts";
 * import assert from "node:assert/strict";
 * const { config } = await loadConfig({
 *   steps: "2",
 *   set: ["rollout.batchSize=8", "rollout.groupSize=4", "algorithm.microBatchSize=8",
 *     "trainer.evalProblems=2", "trainer.evalSamples=2", "trainer.evalK=2"],
 * });
 * const dir = new URL("../../train/checkpoints/tiny/", import.meta.url);
 * const files: Record<string, Uint8Array> = {};
 * for (const f of ["config.json", "generation_config.json", "model.safetensors",
 *   "tokenizer.json", "tokenizer_config.json"]) files[f] = await Deno.readFile(new URL(f, dir));
 * const previous = getBackend();
 * const run = await PlaygroundRun.create({
 *   config, files, backend: createCpuBackend({ blas: "wasm", threads: 1 }),
 * });
 * assert.equal(await run.run(), "done");
 * assert.deepEqual(run.sink.metrics.map((r) => r.step), [1, 2]);
 * assert.deepEqual(run.sink.evals.map((r) => r.step), [0, 2]);
 * await run.close();
 * setBackend(previous);
 * ```
 */
export class PlaygroundRun {
  /** The config the run trains with. */
  readonly config: Config;
  /** The session. */
  readonly session: TrainingSession;
  /** Its records (metrics, evaluations, samples). */
  readonly sink: MemorySink;
  /** The learner (policy, optimizer), disposed by {@link close}. */
  readonly learner: Learner;
  /** The backend it computes on. */
  readonly backend: Backend;
  #status: RunStatus = "ready";
  #stop = false;
  #evaluatedBefore = false;
  #elapsed = 0;
  #since: number | null = null;
  #closed = false;

  private constructor(
    config: Config,
    session: TrainingSession,
    sink: MemorySink,
    backend: Backend,
  ) {
    this.config = config;
    this.session = session;
    this.sink = sink;
    this.learner = session.learner;
    this.backend = backend;
  }

  /** Loads the policy and the task and creates the session (see the module doc). */
  static async create(options: PlaygroundRunOptions): Promise<PlaygroundRun> {
    const { config, files, backend } = options;
    const name = options.name ?? config.model.checkpoint;
    setBackend(backend);
    const job = await builtinSessionJob(config);
    const learner = await learnerFromPolicy(config, await policyFromFiles(files, name), {
      copy: () => policyFromFiles(files, name),
    });
    const sink = new MemorySink();
    try {
      const session = await TrainingSession.create(config, job, learner, {
        sink,
        log: options.log ?? (() => {}),
      });
      return new PlaygroundRun(config, session, sink, backend);
    } catch (e) {
      learner.dispose();
      throw e;
    }
  }

  /** What the run is doing. */
  get status(): RunStatus {
    return this.#status;
  }

  /** Steps completed. */
  get completed(): number {
    return this.session.completed;
  }

  /** `trainer.steps`. */
  get steps(): number {
    return this.config.trainer.steps;
  }

  /** Milliseconds spent running (evaluating and training; not the time stopped). */
  get elapsedMs(): number {
    return this.#elapsed + (this.#since === null ? 0 : performance.now() - this.#since);
  }

  /**
   * Runs until the last step or until {@link stop}: the held-out evaluation before training
   * (once, when the run has held-out problems), then the steps, each evaluating when due.
   * Called again after a stop, continues the same session. Returns the status it ended in
   * (`done` or `stopped`); a failure sets `failed` and rethrows.
   *
   * @param callbacks What to call after evaluations and steps.
   * @returns `done` or `stopped`.
   */
  async run(callbacks: RunCallbacks = {}): Promise<RunStatus> {
    if (this.#closed) throw new Error("PlaygroundRun.run: the run is closed; start a new one");
    if (this.#status === "running" || this.#status === "stopping") {
      throw new Error("PlaygroundRun.run: already running; stop it first");
    }
    if (this.#status === "done" || this.#status === "failed") {
      throw new Error(`PlaygroundRun.run: the run is ${this.#status}; start a new one`);
    }
    const pause = callbacks.pause ?? (() => Promise.resolve());
    this.#status = "running";
    this.#stop = false;
    this.#since = performance.now();
    try {
      if (!this.#evaluatedBefore && this.session.start === 0) {
        this.#evaluatedBefore = true;
        const before = await this.session.evaluate();
        if (before !== null) callbacks.onEval?.(0, before);
        await pause();
      }
      while (!this.session.done && !this.#stop) {
        const step = await this.session.step();
        callbacks.onStep?.(step);
        if (step.evaluation !== null) callbacks.onEval?.(step.step, step.evaluation);
        await pause();
      }
      this.#status = this.session.done ? "done" : "stopped";
      return this.#status;
    } catch (e) {
      this.#status = "failed";
      throw e;
    } finally {
      this.#elapsed += performance.now() - this.#since;
      this.#since = null;
    }
  }

  /** Asks a running loop to stop after the step in progress (a no-op otherwise). */
  stop(): void {
    if (this.#status !== "running") return;
    this.#stop = true;
    this.#status = "stopping";
  }

  /** Stops the session and frees the learner. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop = true;
    await this.session.close();
    this.learner.dispose();
  }
}
