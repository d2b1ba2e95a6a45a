/**
 * A training run as an object a page drives step by step: {@link TrainingSession} holds what a
 * run builds around its learner (the held-out problems, the training stream under the
 * `sampling` strategies, the adaptive KL controller, the rollout source, the held-out
 * evaluator, the learning-rate schedule) and writes its records and checkpoints to a
 * {@link RunSink}. `deno task train` (`run.ts`) drives one with a run directory as its sink; a
 * browser tab drives one with a {@link MemorySink}, and gets the same records for the same
 * config and seed.
 *
 * A run is, in order:
 *
 * 1. `TrainingSession.create(config, job, learner)`;
 * 2. `evaluate()` before the first step (a new run with held-out problems);
 * 3. `step()` until `done`: draw and collect the batch → `trainStep` (`trainer.ts`: score →
 *    advantages → mini-batch updates) → publish the weights → the metrics record and the
 *    samples → the held-out evaluation when due (`trainer.evalEvery`, the last step);
 * 4. `checkpoint()` when `checkpointDue()` (or when stopping early), `finish()`, `close()`.
 *
 * Design decisions:
 * - **Nothing here needs Deno**: no files, signals, subprocesses or device choice. The caller
 *   resolves the config (YAML files are Deno's), builds the task and loads the learner (from
 *   files or fetched bytes), picks the backend, and supplies the rollout source of the
 *   asynchronous modes (`rollouts`: workers and NATS are Deno's); everything the session writes
 *   goes through the sink.
 * - **Same records whatever drives it**: a record depends on the config, the seed and the step
 *   alone (every draw is keyed by `(seed, step, sequence, position)`, the learning rate is a
 *   function of the step), and evaluations and checkpoints change neither the weights nor the
 *   data position, so a page that evaluates less often still trains the same steps. Bits match
 *   across platforms on the same kernels: `deno task train` on the CPU takes its gradient
 *   matmuls from the machine's BLAS by default (`trainer.blas: auto`), which a browser lacks, so
 *   a tab matches `deno task train --set trainer.blas=wasm` (the tab's CPU backend with
 *   `blas: "wasm"`) record for record.
 * - **Resume is exact**: a session created with a learner resumed from step N (its weights,
 *   optimizer moments, step and data position) and that checkpoint's `sampling` state computes
 *   the steps after N as an uninterrupted session does.
 *
 * @module
 */

import type { Task, TaskRow } from "@rlvr/rewards";
import type { Environment } from "@rlvr/rewards/env";
import { AdaptiveKlController } from "@rlvr/objectives";
import {
  constantSchedule,
  cosineSchedule,
  linearDecay,
  linearWarmup,
  type LrFactor,
} from "@rlvr/tensor";
import type { Config } from "../config/types.ts";
import { rolloutSchedule } from "../config/mapping.ts";
import type { EvalResult } from "./eval.ts";
import { evalRecord, heldOutEvaluator } from "./held_out.ts";
import type { Learner } from "./learner.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { PromptSource, usesStrategies } from "./prompt_source.ts";
import type { RewardSet } from "./reward_set.ts";
import {
  episodeRollouts,
  type RolloutSource,
  type SourceContext,
  type StepBatch,
  syncRollouts,
} from "./rollout_source.ts";
import {
  MemorySink,
  type MetricsRecord,
  type RunSink,
  sampleImages,
  type SessionState,
} from "./run_sink.ts";
import type { SamplingCheckpoint } from "./state.ts";
import { stepRecord } from "./step_record.ts";
import { trainStep } from "./trainer.ts";

/** What a session trains on: the task, or the environment that brings one, and the rewards. */
export interface SessionJob {
  /** The task (an environment's own task with `env`). */
  task: Task<TaskRow>;
  /** A multi-turn environment (`task.env`), or null. */
  env: Environment | null;
  /** The `rewards:` section's rewards, or null for the task's verifier. */
  rewards: RewardSet | null;
}

/** Options of {@link TrainingSession.create}. */
export interface SessionOptions {
  /** Where records and checkpoints go (default: a new {@link MemorySink}). */
  sink?: RunSink;
  /**
   * The `sampling` state of the checkpoint the learner was resumed from (its `sampling.json`,
   * or a memory checkpoint's `sampling`), or null/absent for a new run or a run without
   * sampling strategies and adaptive KL.
   */
  sampling?: SamplingCheckpoint | null;
  /**
   * Starts the rollout source of an asynchronous `rollout.mode` (`one_step_off`, `async`):
   * rollout workers, which `deno task train` runs (`scheduled_rollouts.ts`). Without it such a
   * config is refused; `sync` needs none.
   */
  rollouts?: (context: SourceContext) => Promise<RolloutSource>;
  /** Log lines: failed reward calls (default console.log). */
  log?: (line: string) => void;
}

/** What {@link TrainingSession.step} returns. */
export interface SessionStep {
  /** The step taken (1-based; also the steps completed). */
  step: number;
  /** Its metrics record, as the sink received it. */
  record: MetricsRecord;
  /** The held-out evaluation after it when one was due, else null. */
  evaluation: EvalResult | null;
}

/** What the constructor takes: the parts {@link TrainingSession.create} builds. */
interface SessionParts {
  config: Config;
  learner: Learner;
  sink: RunSink;
  held: TaskRow[];
  prompts: PromptSource<TaskRow>;
  kl: AdaptiveKlController | null;
  source: RolloutSource;
  evaluate: (step: number) => Promise<EvalResult>;
  log: (line: string) => void;
}

/**
 * A training run driven step by step (see the module doc). The learner stays the caller's:
 * {@link TrainingSession.close} stops the rollout source, and the caller disposes the learner.
 *
 * @example Usage
 * ```ts
 * import { loadConfig } from "@rlvr/train";
 * import { jobTask } from "./job_runner.ts";
 * import { loadLearner } from "./learner.ts";
 * import { MemorySink } from "./run_sink.ts";
 * import { TrainingSession } from "./session.ts";
 * import assert from "node:assert/strict";
 * const { config } = await loadConfig({
 *   steps: "2", device: "cpu",
 *   set: ["rollout.batchSize=4", "rollout.groupSize=4", "algorithm.microBatchSize=4",
 *     "trainer.evalProblems=2", "trainer.evalSamples=2", "trainer.evalK=2",
 *     "rollout.maxNewTokens=4"],
 * });
 * const learner = await loadLearner(config, null);
 * const sink = new MemorySink();
 * const session = await TrainingSession.create(config, await jobTask(config), learner, { sink });
 * await session.evaluate();
 * while (!session.done) await session.step();
 * await session.checkpoint();
 * await session.close();
 * learner.dispose();
 * assert.deepEqual(sink.metrics.map((r) => r.step), [1, 2]);
 * assert.deepEqual(sink.evals.map((r) => r.step), [0, 2]);
 * assert.equal(sink.latest?.step, 2);
 * ```
 */
export class TrainingSession {
  /** The resolved config. */
  readonly config: Config;
  /** The learner (policy, reference, optimizer), the caller's to dispose. */
  readonly learner: Learner;
  /** Where records and checkpoints go. */
  readonly sink: RunSink;
  /** Steps completed before this session (the learner's; 0 for a new run). */
  readonly start: number;
  /** The held-out problems (none when `trainer.evalProblems` is 0). */
  readonly heldOut: readonly TaskRow[];
  /** A line describing the rollout source (workers, staleness), or null for `sync`. */
  readonly sourceDescription: string | null;
  readonly #prompts: PromptSource<TaskRow>;
  readonly #kl: AdaptiveKlController | null;
  readonly #source: RolloutSource;
  readonly #evaluate: (step: number) => Promise<EvalResult>;
  readonly #lrFactor: LrFactor;
  readonly #log: (line: string) => void;
  #completed: number;
  #closed = false;

  private constructor(p: SessionParts) {
    this.config = p.config;
    this.learner = p.learner;
    this.sink = p.sink;
    this.start = p.learner.start;
    this.heldOut = p.held;
    this.sourceDescription = p.source.description;
    this.#prompts = p.prompts;
    this.#kl = p.kl;
    this.#source = p.source;
    this.#evaluate = p.evaluate;
    this.#lrFactor = lrFactor(p.config);
    this.#log = p.log;
    this.#completed = p.learner.start;
  }

  /**
   * A session of `config` training `learner` (new, or resumed: its `start` and `dataPosition`)
   * on `job`; see {@link SessionOptions}. Throws for an asynchronous `rollout.mode` without
   * `rollouts`.
   */
  static async create(
    config: Config,
    job: SessionJob,
    learner: Learner,
    options: SessionOptions = {},
  ): Promise<TrainingSession> {
    const t = config.trainer;
    const sink = options.sink ?? new MemorySink();
    // trainer.evalProblems 0: no held-out evaluation at all (no eval records, no before/after).
    const held = t.evalProblems > 0 ? heldOutProblems(job.task, t.evalProblems) : [];
    const stream = new TrainStream<TaskRow>(
      job.task,
      t.seed,
      held,
      config.task.trainProblems ?? null,
      learner.dataPosition,
    );
    const saved = options.sampling ?? null;
    const prompts = new PromptSource<TaskRow>(
      job.task,
      stream,
      config.sampling,
      t.seed,
      saved?.prompts ?? null,
    );
    const source = await startRollouts(config, job, learner, prompts, options.rollouts);
    return new TrainingSession({
      config,
      learner,
      sink,
      held,
      prompts,
      kl: adaptiveKl(config, saved),
      source,
      evaluate: heldOutEvaluator(config, learner, job, held, sink),
      log: options.log ?? ((line) => console.log(line)),
    });
  }

  /** Steps completed (in total, including those before a resume). */
  get completed(): number {
    return this.#completed;
  }

  /** Whether all `trainer.steps` are done. */
  get done(): boolean {
    return this.#completed >= this.config.trainer.steps;
  }

  /**
   * Evaluates the policy as it is on the held-out problems and sends the record (step:
   * {@link completed}) to the sink; null, recording nothing, when there are none
   * (`trainer.evalProblems` 0).
   */
  async evaluate(): Promise<EvalResult | null> {
    if (this.heldOut.length === 0) return null;
    const step = this.#completed;
    const result = await this.#evaluate(step);
    await this.sink.appendEval(evalRecord(step, result));
    return result;
  }

  /**
   * Takes the next training step (see the module doc) and, when due, evaluates after it.
   * Throws once {@link done}.
   */
  async step(): Promise<SessionStep> {
    const steps = this.config.trainer.steps;
    if (this.done) {
      throw new Error(
        `TrainingSession.step: all ${steps} steps of trainer.steps are done; raise trainer.steps to train further`,
      );
    }
    this.#assertOpen("step");
    const step = this.#completed + 1;
    const record = await this.#train(step);
    this.#completed = step;
    const evaluation = this.#evalDue(step) ? await this.evaluate() : null;
    return { step, record, evaluation };
  }

  /** Whether a checkpoint is due after the steps completed (`trainer.saveEvery`, the last step). */
  checkpointDue(): boolean {
    const { saveEvery, steps } = this.config.trainer;
    const step = this.#completed;
    return (saveEvery > 0 && step % saveEvery === 0) || step === steps;
  }

  /**
   * Sends a checkpoint of the steps completed to the sink (with an asynchronous source, once
   * the jobs in flight have finished); returns where the sink keeps it.
   */
  async checkpoint(): Promise<string> {
    this.#assertOpen("checkpoint");
    return await this.#source.checkpoint((rollouts) =>
      // The state is read here, after the jobs in flight finished taking rows.
      this.sink.checkpoint({
        ...this.state(),
        config: this.config,
        learner: this.learner,
        rollouts,
      })
    );
  }

  /** The session's progress: steps, seed, data position and the sampling state. */
  state(): SessionState {
    const kl = this.#kl;
    const keepsSampling = usesStrategies(this.config.sampling) || kl !== null;
    return {
      step: this.#completed,
      seed: this.config.trainer.seed,
      dataPosition: this.#prompts.position,
      sampling: keepsSampling
        ? { prompts: this.#prompts.state(), klCoef: kl?.value ?? null }
        : null,
    };
  }

  /** At the end of a run: the rollout source's summary line (asynchronous modes), or null. */
  async finish(): Promise<string | null> {
    return await this.#source.finish();
  }

  /** Stops the rollout source (workers); the learner is left to the caller. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#source.close();
  }

  #assertOpen(what: string): void {
    if (this.#closed) {
      throw new Error(
        `TrainingSession.${what}: the session is closed; create a new one (resumed from a checkpoint) to continue`,
      );
    }
  }

  #evalDue(step: number): boolean {
    const { evalEvery, steps } = this.config.trainer;
    return this.heldOut.length > 0 && ((evalEvery > 0 && step % evalEvery === 0) || step === steps);
  }

  /**
   * One training step: draw and collect the batch → record what was drawn (pass rates, GRESO,
   * replay store) and mix in replayed responses → update (score, advantages, mini-batch steps)
   * with this step's KL coefficient → publish the weights → the metrics record and samples.
   */
  async #train(step: number): Promise<MetricsRecord> {
    const { config, learner } = this;
    const prompts = this.#prompts;
    const lr = config.optimizer.lr * this.#lrFactor(step - 1);
    prompts.setStep(step);
    const batch = await this.#source.next(step);
    this.#logRewardFailures(step, batch);
    prompts.observe(batch.rollout.items, step);
    const items = prompts.mixReplay(batch.rollout.items, step);
    const started = performance.now();
    learner.optimizer.lr = lr;
    const klCoef = this.#kl?.value ?? null;
    const u = await trainStep({
      config: klCoef === null ? config : withKlCoef(config, klCoef),
      model: learner.model,
      ref: learner.ref,
      optimizer: learner.optimizer,
      step,
      vision: learner.vision,
    }, items);
    await this.#source.afterUpdate(step);
    const trainS = (performance.now() - started) / 1000;
    if (this.#kl !== null && u.kl !== null) this.#kl.update(u.kl, items.length);
    const mixed = { ...batch, rollout: { ...batch.rollout, items } };
    const record = {
      ...stepRecord(config, step, lr, mixed, u, { trainS }),
      ...(klCoef !== null ? { kl_coef: klCoef } : {}),
      ...prompts.metrics(),
    };
    await this.sink.appendMetrics(record);
    await this.#logSamples(step, batch);
    return record;
  }

  /** Sends the first samples of a step's batch (as drawn, before replay) when they are due. */
  async #logSamples(step: number, batch: StepBatch): Promise<void> {
    const t = this.config.trainer;
    if (!(t.samplesEvery > 0 && (step % t.samplesEvery === 0 || step === 1))) return;
    for (const it of batch.rollout.items.slice(0, t.samplesCount)) {
      await this.sink.appendSample({
        step,
        prompt: it.prompt,
        completion: it.text,
        reward: it.reward,
        answer: it.row.answer,
        ...sampleImages(it.row),
      });
    }
  }

  /** Logs the reward calls that failed in a step (the samples were left out of its batch). */
  #logRewardFailures(step: number, batch: StepBatch): void {
    const failures = batch.rollout.rewardStats?.failures ?? [];
    const shown = 3;
    for (const f of failures.slice(0, shown)) {
      this.#log(
        `reward: step ${step}, sample ${f.sample}: ${f.reward} ${f.status}: ${f.reason} (scored null, left out of the update)`,
      );
    }
    if (failures.length > shown) {
      this.#log(`reward: step ${step}: ${failures.length - shown} more failed reward calls`);
    }
  }
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

/** The adaptive KL controller of `algorithm.kl.target` (β restored when resuming), or null. */
function adaptiveKl(
  config: Config,
  saved: SamplingCheckpoint | null,
): AdaptiveKlController | null {
  const kl = config.algorithm.kl;
  if (kl.target == null) return null;
  return new AdaptiveKlController({
    initCoef: saved?.klCoef ?? kl.beta,
    target: kl.target,
    horizon: kl.horizon ?? 10000,
  });
}

/** `config` with `algorithm.kl.beta` replaced (the adaptive controller's β for one step). */
function withKlCoef(config: Config, beta: number): Config {
  return { ...config, algorithm: { ...config.algorithm, kl: { ...config.algorithm.kl, beta } } };
}

/**
 * The rollout source of the config's mode (see rollout_source.ts): completions or episodes on
 * this thread for `sync`, the caller's `rollouts` otherwise.
 */
async function startRollouts(
  config: Config,
  job: SessionJob,
  learner: Learner,
  prompts: PromptSource<TaskRow>,
  rollouts: SessionOptions["rollouts"],
): Promise<RolloutSource> {
  const context: SourceContext = {
    config,
    model: learner.model,
    tokenizer: learner.tokenizer,
    stream: prompts,
    eosTokenIds: learner.init.eosTokenIds,
    vision: learner.vision,
    groupSizes: (rows) => prompts.groupSizes(rows, config.rollout.groupSize),
    ...(job.rewards !== null ? { rewards: job.rewards } : {}),
  };
  const mode = rolloutSchedule(config).mode;
  if (mode === "sync") {
    return job.env !== null ? episodeRollouts(context, job.env) : syncRollouts(context, job.task);
  }
  if (rollouts === undefined) {
    throw new Error(
      `rollout.mode: ${mode} needs rollout workers, which this session cannot start; use rollout.mode: sync, or pass the rollouts option (deno task train passes scheduledRollouts)`,
    );
  }
  return await rollouts(context);
}
