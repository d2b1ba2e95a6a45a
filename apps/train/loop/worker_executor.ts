/**
 * A rollout executor in a Web Worker: the trainer's handle on `rollout_worker.ts`. Each worker
 * holds its own copy of the policy, receives weights as checksummed snapshots
 * (`@rlvr/infra` `snapshot`) and answers jobs with scored rollouts.
 *
 * Design decisions:
 * - **Requests are promises matched by id**; a worker that dies (an uncaught error, `close()`)
 *   rejects every pending request with the reason, so the trainer fails with a message instead
 *   of waiting forever.
 * - **Errors keep their class across the boundary where the trainer acts on it**: a checksum
 *   mismatch in the worker is re-thrown here as a `WeightChecksumError` with both digests, so a
 *   corrupted weight transfer is reported, never trained on.
 * - Snapshot bytes are copied to the worker (structured clone), not transferred: the trainer
 *   sends the same snapshot to every worker.
 * - **Partial rollouts** (`rollout.partial`): `offer` sends weights past the worker's request
 *   chain to the job running; the job answers with the version it ended on, which becomes the
 *   executor's `version`, and the batch's version is the oldest among its tokens'.
 *
 * @module
 */

import { WeightChecksumError, type WeightSnapshot } from "@rlvr/infra";
import type { Config } from "../config/types.ts";
import { rolloutSchedule } from "../config/mapping.ts";
import {
  batchVersions,
  type ExecutedJob,
  type RolloutExecutor,
  type RolloutJob,
} from "./rollout_job.ts";
import type {
  WorkerError,
  WorkerHold,
  WorkerJobResult,
  WorkerOffer,
  WorkerRequest,
  WorkerResponse,
} from "./rollout_worker.ts";

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; what: string };

/** Distributes the `Omit` over a union (each request without its id). */
type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;

function toError(name: string, e: WorkerError): Error {
  if (e.checksum !== undefined) {
    return new WeightChecksumError(
      e.checksum.version,
      e.checksum.expected,
      e.checksum.actual,
      `sent to rollout worker ${name}`,
    );
  }
  const err = new Error(`rollout worker ${name}: ${e.message}`);
  err.name = e.name;
  return err;
}

/**
 * A rollout worker in a Web Worker (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { loadPolicy } from "./policy.ts";
 * import { WorkerExecutor } from "./worker_executor.ts";
 * import { snapshot } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const w = await WorkerExecutor.start("w0", config);
 * const { model } = await loadPolicy("builtin:tiny");
 * await w.sync(await snapshot(model.params, 0));
 * assert.equal(w.version, 0);
 * await w.close();
 * model.dispose();
 * ```
 */
export class WorkerExecutor implements RolloutExecutor {
  /** The worker's name (`w0`, `w1`, ...). */
  readonly name: string;
  /** The device the worker computes on (as `trainer.device` selected it there). */
  device = "";
  #version = -1;
  #partial = false;
  #worker: Worker;
  #pending = new Map<number, Pending>();
  #nextId = 0;
  #dead: Error | null = null;

  private constructor(name: string) {
    this.name = name;
    this.#worker = new Worker(new URL("./rollout_worker.ts", import.meta.url).href, {
      type: "module",
    });
    this.#worker.onmessage = (e: MessageEvent<WorkerResponse>) => {
      const res = e.data;
      const p = this.#pending.get(res.id);
      if (p === undefined) return;
      this.#pending.delete(res.id);
      if (res.ok) p.resolve(res.value);
      else p.reject(toError(this.name, res.error));
    };
    this.#worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      this.#fail(new Error(`rollout worker ${this.name} crashed: ${e.message}`));
    };
  }

  /** Starts a worker and initialises it with `config` (task, policy, device). */
  static async start(name: string, config: Config): Promise<WorkerExecutor> {
    const w = new WorkerExecutor(name);
    w.#partial = rolloutSchedule(config).partial;
    try {
      const r = await w.#request({ type: "init", config }, "init") as { device: string };
      w.device = r.device;
    } catch (e) {
      await w.close();
      throw e;
    }
    return w;
  }

  /** Version of the weights the worker holds (-1 before the first sync). */
  get version(): number {
    return this.#version;
  }

  /** Sends a snapshot; rejects with `WeightChecksumError` when the worker's check fails. */
  async sync(snapshot: WeightSnapshot): Promise<void> {
    this.#version = await this.#request({ type: "weights", snapshot }, "weights") as number;
  }

  /**
   * Runs a job under the weights the worker holds; with partial rollouts (`rollout.partial`)
   * under newer ones too, as they are offered, and then `policyVersion` is the oldest version
   * among the batch's tokens and `newestVersion` the newest.
   *
   * @param job The job.
   * @param options `hold`: a test hook of partial rollouts, which makes the job wait for an
   *   offer after the token at completion index `hold.at` and interrupt there, and not before.
   */
  async run(job: RolloutJob, options: { hold?: WorkerHold } = {}): Promise<ExecutedJob> {
    const start = this.#version;
    const hold = options.hold !== undefined ? { hold: options.hold } : {};
    const r = await this.#request(
      { type: "job", job, ...hold },
      `job ${job.id}`,
    ) as WorkerJobResult;
    this.#version = r.version;
    if (!this.#partial) return { rollout: r.rollout, policyVersion: start };
    const { oldest, newest } = batchVersions(r.rollout, start);
    return { rollout: r.rollout, policyVersion: oldest, newestVersion: newest };
  }

  /**
   * Partial rollouts: sends newer weights to the job running (or the next one), which loads
   * them between two decoding steps; not answered (a checksum mismatch fails the job with a
   * `WeightChecksumError`). Ignored once the worker is closed.
   */
  offer(snapshot: WeightSnapshot): void {
    if (this.#dead !== null) return;
    this.#worker.postMessage({ type: "offer", snapshot } satisfies WorkerOffer);
  }

  /** Terminates the worker; pending requests reject. */
  close(): Promise<void> {
    this.#fail(new Error(`rollout worker ${this.name} was closed`));
    return Promise.resolve();
  }

  #fail(err: Error): void {
    if (this.#dead === null) {
      this.#dead = err;
      this.#worker.terminate();
    }
    for (const p of this.#pending.values()) p.reject(new Error(`${p.what}: ${err.message}`));
    this.#pending.clear();
  }

  #request(req: WithoutId<WorkerRequest>, what: string): Promise<unknown> {
    if (this.#dead !== null) return Promise.reject(this.#dead);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, what: `rollout worker ${this.name} ${what}` });
      this.#worker.postMessage({ ...req, id } as WorkerRequest);
    });
  }
}
