/**
 * The rollout scheduler of the asynchronous modes (`rollout.mode`): it keeps rollout executors
 * busy with jobs under the newest weights the trainer published, and hands the trainer one batch
 * per step through the staleness gate of `@rlvr/infra`.
 *
 * Versions: the policy version is the number of updates applied, so the trainer at step `s`
 * (1-based) holds version `s - 1`, and a batch's staleness is `s - 1 - policyVersion`.
 *
 * - **`one_step_off`** (one executor; η = 1): while the trainer trains step `s` on the batch
 *   generated under version `s - 2`, the executor generates step `s + 1`'s batch under version
 *   `s - 1`. Jobs are dispatched only from {@link RolloutScheduler.next}, with key = step, so a
 *   run is deterministic, as a synchronous one is, and every batch but the first is exactly one
 *   version old.
 * - **`async`** (η = `rollout.maxStaleness`, any number of executors): an idle executor starts a
 *   job as soon as admission allows, under the newest weights, and batches are consumed in the
 *   order they finish (AReaL's design). Admission counts the versions a new job will wait: one
 *   per outstanding batch (in flight or waiting) and one for the update being computed, and
 *   starts the job only when that count is at most η, so a batch started at version v is
 *   normally consumed by version v + η (η = 0 is synchronous training on a worker). When
 *   executors finish out of order a batch can still arrive too old, and the gate drops it or
 *   sends its rows back (`rollout.stalePolicy`), counted in the metrics, never used.
 *
 * Design decisions:
 * - **The gate is the only place a batch enters the trainer**, and `next` also asserts the bound
 *   on what it returns, so "no batch is used with staleness > η" holds by construction and is
 *   checked at run time.
 * - **Weights are snapshotted eagerly** when the trainer publishes a version (before it starts
 *   changing them again), and an executor loads the newest snapshot before each job whose version
 *   differs from its own; one snapshot's bytes serve every executor.
 * - **Partial rollouts** (`partial`): a published snapshot also goes to every executor running
 *   a job (`offer`), which switches to it between two decoding steps; a batch's `policyVersion`
 *   is then the oldest version among its tokens, so the gate bounds the staleness of its oldest
 *   token, and `newestVersion` the newest.
 * - **Checkpoints wait for the jobs in flight** ({@link RolloutScheduler.checkpoint}): no job is
 *   dispatched while the trainer saves, every outstanding batch is saved with its version, and a
 *   resumed run continues with exactly those batches (one-step-off resumes bit for bit).
 *
 * @module
 */

import type { StalenessGate, StalenessGateState, WeightSnapshot } from "@rlvr/infra";
import type { TaskRow } from "@rlvr/rewards";
import type { RolloutExecutor, RolloutJob, VersionedRollout } from "./rollout_job.ts";

/** The asynchronous rollout modes (`sync` does not use a scheduler). */
export type AsyncRolloutMode = "one_step_off" | "async";

/** What a checkpoint keeps of the scheduler. */
export interface SchedulerState {
  /** Key of the next new job. */
  nextKey: number;
  /** Batches generated and not yet consumed, in completion order. */
  ready: VersionedRollout[];
  /** Jobs sent back for regeneration, not yet dispatched again. */
  retry: RolloutJob[];
  /** The staleness gate (counts and histogram). */
  gate: StalenessGateState;
}

/** Options of {@link RolloutScheduler}. */
export interface SchedulerOptions {
  /** The mode. */
  mode: AsyncRolloutMode;
  /** The executors (one for `one_step_off`). */
  executors: readonly RolloutExecutor[];
  /** The gate: η and the stale policy. */
  gate: StalenessGate;
  /** The rows of a new job (taken from the trainer's stream). */
  takeRows: () => TaskRow[];
  /**
   * Partial rollouts (`rollout.partial`): every published snapshot is also offered to the
   * executors running a job, which switch to it between decoding steps (default false).
   */
  partial?: boolean;
  /** Restored state (resume), without the gate (pass the restored gate as `gate`). */
  restore?: Omit<SchedulerState, "gate">;
}

/** What {@link RolloutScheduler.next} returns. */
export interface ScheduledBatch {
  /** The batch and its version. */
  batch: VersionedRollout;
  /** Trainer version minus the batch's policy version. */
  staleness: number;
  /** Seconds the trainer waited for it. */
  waitS: number;
  /** Batches still waiting after this one was taken. */
  queueDepth: number;
  /** Jobs running. */
  inFlight: number;
}

/**
 * Schedules rollout jobs on executors and gates what the trainer consumes (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { type RolloutExecutor } from "./rollout_job.ts";
 * import { RolloutScheduler } from "./scheduler.ts";
 * import { StalenessGate, type WeightSnapshot } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * // A stand-in executor: its "rollout" is empty, tagged by the scheduler with its version.
 * const ex: RolloutExecutor = {
 *   name: "w0", version: -1,
 *   sync(s: WeightSnapshot) { (this as { version: number }).version = s.version; return Promise.resolve(); },
 *   run() {
 *     const rollout = { items: [], fracZeroStdGroups: 0, rounds: 1, generatedTokens: 0, seconds: 0 };
 *     return Promise.resolve({ rollout, policyVersion: this.version });
 *   },
 *   close: () => Promise.resolve(),
 * };
 * const snap = (version: number): WeightSnapshot => ({ version, bytes: new Uint8Array(), checksum: "" });
 * const s = new RolloutScheduler({
 *   mode: "one_step_off", executors: [ex], gate: new StalenessGate({ maxStaleness: 1 }),
 *   takeRows: () => [],
 * });
 * s.publish(snap(0));
 * assert.equal((await s.next(0, 3)).batch.policyVersion, 0); // step 1: generated under v0
 * s.publish(snap(1));
 * const b = await s.next(1, 2); // step 2: generated under v0 while step 1 trained
 * assert.deepEqual([b.batch.policyVersion, b.staleness], [0, 1]);
 * await s.close();
 * ```
 */
export class RolloutScheduler {
  /** The mode. */
  readonly mode: AsyncRolloutMode;
  /** The gate every batch passes. */
  readonly gate: StalenessGate;
  /** Whether running jobs are offered new weights (see {@link SchedulerOptions.partial}). */
  readonly partial: boolean;
  readonly #executors: readonly RolloutExecutor[];
  readonly #takeRows: () => TaskRow[];
  #idle: RolloutExecutor[];
  #ready: VersionedRollout[] = [];
  #retry: RolloutJob[] = [];
  #inFlight = 0;
  #nextKey = 1;
  #latest: WeightSnapshot | null = null;
  #want = 1;
  #paused = false;
  #training = false;
  #error: Error | null = null;
  #waiters: (() => void)[] = [];

  /** A scheduler over `options.executors` (see the module doc). */
  constructor(options: SchedulerOptions) {
    if (options.executors.length === 0) {
      throw new RangeError("RolloutScheduler: executors is empty; pass at least one executor");
    }
    if (options.mode === "one_step_off" && options.executors.length !== 1) {
      throw new RangeError(
        `RolloutScheduler: one_step_off runs one executor, got ${options.executors.length}; ` +
          `use mode async for more`,
      );
    }
    this.partial = options.partial ?? false;
    const deaf = options.executors.filter((e) => e.offer === undefined);
    if (this.partial && deaf.length > 0) {
      throw new RangeError(
        `RolloutScheduler: partial rollouts need executors that take weights in the middle of ` +
          `a job, and ${deaf.map((e) => e.name).join(", ")} cannot (remote NATS workers); ` +
          `set rollout.partial to false or use Web Workers`,
      );
    }
    this.mode = options.mode;
    this.gate = options.gate;
    this.#executors = options.executors;
    this.#idle = [...options.executors];
    this.#takeRows = options.takeRows;
    if (options.restore !== undefined) {
      this.#nextKey = options.restore.nextKey;
      this.#ready = [...options.restore.ready];
      this.#retry = [...options.restore.retry];
    }
  }

  /**
   * The trainer's version `snapshot.version` is ready: new jobs run under it, and with partial
   * rollouts the running ones switch to it.
   */
  publish(snapshot: WeightSnapshot): void {
    this.#latest = snapshot;
    this.#training = false;
    if (this.partial) {
      for (const ex of this.#executors) if (!this.#idle.includes(ex)) ex.offer!(snapshot);
    }
    if (this.mode === "async") this.#pump();
  }

  /**
   * The batch for the trainer at version `trainerVersion`, which will consume `remaining` more
   * batches including this one (so that no job is started that nobody will use).
   */
  async next(trainerVersion: number, remaining: number): Promise<ScheduledBatch> {
    const started = performance.now();
    if (this.#latest === null) {
      throw new Error("RolloutScheduler: no weights published; call publish() before next()");
    }
    this.#want = remaining;
    for (;;) {
      if (this.mode === "one_step_off") {
        if (this.#ready.length === 0 && this.#inFlight === 0) this.#dispatchNew();
      } else {
        this.#pump();
      }
      await this.#until(() => this.#ready.length > 0);
      const batch = this.#ready.shift()!;
      const decision = this.gate.decide(batch, trainerVersion);
      if (decision === "use") {
        const staleness = trainerVersion - batch.policyVersion;
        if (staleness > this.gate.maxStaleness) {
          throw new Error(
            `RolloutScheduler: batch of job ${batch.job.id} has staleness ${staleness} > η ` +
              `${this.gate.maxStaleness}; this is a bug in the gate`,
          );
        }
        this.#want = remaining - 1;
        this.#training = true;
        if (this.mode === "one_step_off") {
          if (this.#want > 0 && this.#ready.length === 0 && this.#inFlight === 0) {
            this.#dispatchNew();
          }
        } else {
          this.#pump();
        }
        return {
          batch,
          staleness,
          waitS: (performance.now() - started) / 1000,
          queueDepth: this.#ready.length,
          inFlight: this.#inFlight,
        };
      }
      if (decision === "regenerate") this.#retry.push(batch.job);
    }
  }

  /**
   * Runs `save` with every outstanding batch finished and nothing dispatched meanwhile (see the
   * module doc), passing the state to store.
   */
  async checkpoint<T>(save: (state: SchedulerState) => Promise<T>): Promise<T> {
    this.#paused = true;
    try {
      await this.#until(() => this.#inFlight === 0);
      return await save(this.state());
    } finally {
      this.#paused = false;
      if (this.mode === "async") this.#pump();
    }
  }

  /** The state a checkpoint keeps (call when nothing is in flight, see `checkpoint`). */
  state(): SchedulerState {
    return {
      nextKey: this.#nextKey,
      ready: [...this.#ready],
      retry: [...this.#retry],
      gate: this.gate.toJSON(),
    };
  }

  /** Closes every executor (after the jobs in flight have finished or failed). */
  async close(): Promise<void> {
    this.#paused = true;
    await Promise.all(this.#executors.map((e) => e.close()));
  }

  /** Resolves when `ready()` holds, rejects when a job failed. */
  async #until(ready: () => boolean): Promise<void> {
    for (;;) {
      if (this.#error !== null) throw this.#error;
      if (ready()) return;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  /**
   * Async admission: a new job is consumed after every outstanding batch and after the update
   * being computed, if any, each one version; so it starts only while that count is at most η
   * (and while the trainer still wants more batches than are outstanding).
   */
  #pump(): void {
    while (
      this.#latest !== null && !this.#paused && this.#error === null && this.#idle.length > 0
    ) {
      const outstanding = this.#inFlight + this.#ready.length;
      if (outstanding >= this.#want) return;
      if (outstanding + (this.#training ? 1 : 0) > this.gate.maxStaleness) return;
      const job = this.#retry.shift() ?? this.#newJob();
      this.#dispatch(this.#idle.shift()!, job);
    }
  }

  #dispatchNew(): void {
    const ex = this.#idle.shift();
    if (ex === undefined) throw new Error("RolloutScheduler: no idle executor (a bug)");
    this.#dispatch(ex, this.#newJob());
  }

  #newJob(): RolloutJob {
    const key = this.#nextKey++;
    return { id: key, key, rows: this.#takeRows() };
  }

  #dispatch(ex: RolloutExecutor, job: RolloutJob): void {
    const snap = this.#latest!; // publish() comes first: checked by next(), and pump needs it
    this.#inFlight++;
    (async () => {
      if (ex.version !== snap.version) await ex.sync(snap);
      const { rollout, policyVersion, newestVersion } = await ex.run(job);
      this.#ready.push({
        job,
        policyVersion,
        ...(newestVersion !== undefined ? { newestVersion } : {}),
        worker: ex.name,
        rollout,
      });
    })().catch((e: unknown) => {
      this.#error ??= e instanceof Error ? e : new Error(String(e));
    }).finally(() => {
      this.#inFlight--;
      this.#idle.push(ex);
      this.#wake();
      if (this.mode === "async") this.#pump();
    });
  }
}
