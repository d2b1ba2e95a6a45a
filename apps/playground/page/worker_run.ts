/**
 * The page's side of a training run in a dedicated worker (`run_worker.ts`): the same
 * operations as {@link PlaygroundRun} (backend, create, run, stop, download, close) as messages
 * (`run_protocol.ts`), and the run's records mirrored into plain arrays the page draws from.
 *
 * Design decisions:
 * - **One worker per run**: Start makes a new one and terminates the last, so nothing of an
 *   earlier run (a WebGPU device, buffers) outlives it.
 * - **Records arrive once**: each progress message carries the records added since the last, and
 *   they are appended to {@link WorkerRun.metrics} and the others, whose identity never changes
 *   (the page's state holds them).
 * - **The elapsed time ticks on the page** between messages, from the worker's last figure.
 *
 * @module
 */

import type { Config } from "../../train/config/types.ts";
import type { EvalRecord, SampleRecord, StepMetrics } from "../../train/run/records.ts";
import type { BackendChoice } from "./knobs.ts";
import type { RunStatus } from "./playground_run.ts";
import type { BackendInfo, RunProgress, RunReply, RunRequest } from "./run_protocol.ts";

/** Distributes `Omit` over a union (each request without its id). */
type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;

/**
 * A training run in a worker (see the module doc).
 *
 * @example Usage
 * ```ts ignore
 * import { WorkerRun } from "./worker_run.ts";
 * const run = WorkerRun.start(new URL("run_worker.js", location.href));
 * const info = await run.backend("auto");
 * await run.create(config, files, "builtin:tiny");
 * await run.run(() => console.log(run.completed, run.status));
 * ```
 */
export class WorkerRun {
  /** The step records so far. */
  readonly metrics: StepMetrics[] = [];
  /** The evaluation records so far. */
  readonly evals: EvalRecord[] = [];
  /** The held-out sample records so far. */
  readonly evalSamples: SampleRecord[] = [];
  /** Steps completed. */
  completed = 0;
  /** `trainer.steps` (0 before {@link WorkerRun.create}). */
  steps = 0;
  /** What the run is doing. */
  status: RunStatus = "ready";
  readonly #worker: Worker;
  readonly #pending = new Map<
    number,
    { resolve: (r: RunReply) => void; reject: (e: Error) => void }
  >();
  #next = 1;
  #elapsed = 0;
  #at = 0;
  #onProgress: (() => void) | null = null;
  #closed = false;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.onmessage = (e: MessageEvent<RunReply>) => this.#receive(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      this.#failAll(new Error(`the training worker failed: ${e.message}`));
    };
  }

  /**
   * Starts the worker module at `url` (the bundled `run_worker.js`).
   *
   * @param url The worker's URL.
   * @returns The run's handle.
   */
  static start(url: URL): WorkerRun {
    return new WorkerRun(new Worker(url, { type: "module" }));
  }

  /** Milliseconds spent running, ticking between the worker's messages. */
  get elapsedMs(): number {
    const running = this.status === "running" || this.status === "stopping";
    return this.#elapsed + (running ? performance.now() - this.#at : 0);
  }

  /** Picks and creates the backend of `choice` in the worker. */
  async backend(choice: BackendChoice): Promise<BackendInfo> {
    const r = await this.#request({ type: "backend", choice });
    return (r as Extract<RunReply, { type: "backend" }>).info;
  }

  /** Creates the run on the worker's backend from the resolved config and the policy files. */
  async create(
    config: Config,
    files: ReadonlyMap<string, Uint8Array>,
    name: string,
  ): Promise<void> {
    const r = await this.#request({ type: "create", config, files: [...files], name });
    this.steps = (r as Extract<RunReply, { type: "created" }>).steps;
  }

  /**
   * Runs (or resumes) until done or stopped; `onProgress` is called after every step and
   * evaluation, once the records are in. With `stopAfter`, the worker stops by itself once that
   * many steps are complete (where {@link WorkerRun.stop}, asked from here, takes effect after
   * whichever step is in progress when the message arrives). Resolves with the status it ended
   * in.
   */
  async run(onProgress: () => void = () => {}, stopAfter?: number): Promise<RunStatus> {
    this.status = "running";
    this.#at = performance.now();
    this.#onProgress = onProgress;
    try {
      await this.#request({ type: "run", ...(stopAfter !== undefined ? { stopAfter } : {}) });
    } finally {
      this.#onProgress = null;
    }
    return this.status;
  }

  /** Asks the run to stop after the step in progress. */
  stop(): void {
    if (this.status !== "running") return;
    this.status = "stopping";
    this.#request({ type: "stop" }).catch(() => {});
  }

  /** The trained model as a zip in Hugging Face layout, with the tokenizer files it began with. */
  async modelZip(folder: string): Promise<Uint8Array> {
    const r = await this.#request({ type: "zip", folder });
    return (r as Extract<RunReply, { type: "zip" }>).bytes;
  }

  /** Frees the worker's run and backend, then ends the worker. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#request({ type: "close" });
    } catch {
      // a worker that failed has nothing left to free
    } finally {
      this.#closed = true;
      this.#worker.terminate();
      this.#failAll(new Error("WorkerRun: the run was closed"));
    }
  }

  #request(message: WithoutId<RunRequest>): Promise<RunReply> {
    if (this.#closed) return Promise.reject(new Error("WorkerRun: the run was closed"));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...message, id } as RunRequest);
    });
  }

  #apply(p: RunProgress): void {
    this.metrics.push(...p.metrics);
    this.evals.push(...p.evals);
    this.evalSamples.push(...p.evalSamples);
    this.completed = p.completed;
    // A stop asked for on the page stands until the worker says where the run ended.
    if (!(this.status === "stopping" && p.status === "running")) this.status = p.status;
    this.#elapsed = p.elapsedMs;
    this.#at = performance.now();
  }

  #receive(r: RunReply): void {
    if ("progress" in r && r.progress !== undefined) this.#apply(r.progress);
    if (r.type === "progress") {
      this.#onProgress?.();
      return;
    }
    const waiting = this.#pending.get(r.id);
    if (waiting === undefined) return;
    this.#pending.delete(r.id);
    if (r.type === "error") {
      this.status = "failed";
      waiting.reject(new Error(r.message));
    } else {
      waiting.resolve(r);
    }
  }

  #failAll(e: Error): void {
    for (const { reject } of this.#pending.values()) reject(e);
    this.#pending.clear();
    if (this.status === "running" || this.status === "stopping") this.status = "failed";
  }
}
