/**
 * The Web Worker side of a rollout worker (started by `worker_executor.ts`; not imported by
 * anything else). It holds its own copy of the policy and the task's verifier, and answers three
 * requests, one at a time, in the order they arrive:
 *
 * - `init` `{config}`: builds the task, or the `task.env` environment (`jobTask`), and loads
 *   `config.model.checkpoint` on the device `trainer.device` selects, as the trainer does;
 * - `weights` `{snapshot}`: verifies the SHA-256 and loads the weights in place
 *   (`applySnapshot`, refusing to go back in version); a mismatch answers with a
 *   `WeightChecksumError` and leaves the weights as they were;
 * - `job` `{job}`: samples the job's rows and scores them (`runRolloutJob`: completions, or
 *   episodes with `task.env`), so rewards, including a code sandbox's and an environment's, are
 *   computed here, off the trainer's thread; answers `{rollout, version}`.
 *
 * And one message that is not a request: `offer` `{snapshot}` (partial rollouts,
 * `rollout.partial`), newer weights for the job running, which loads them between two decoding
 * steps (`partial.ts`). It is never answered; a checksum mismatch fails the job.
 *
 * Design decisions:
 * - Requests are chained on one promise, so a `weights` message followed by a `job` message
 *   always runs the job under the new weights, however long either takes.
 * - An `offer` skips the chain (it must reach a job that is running), and a partial job yields
 *   to the event loop after every sampling step so that the offer can arrive; the weights are
 *   written only by the job itself, between two steps, so nothing else sees them change.
 *
 * @module
 */

import { applySnapshot, WeightChecksumError, type WeightSnapshot } from "@rlvr/infra";
import { createCpuBackend, setBackend, type Tensor } from "@rlvr/tensor";
import type { Config } from "../config/types.ts";
import { rolloutSchedule } from "../config/mapping.ts";
import { selectTrainDevice } from "./device.ts";
import { jobTask, type JobWorkspace, runRolloutJob } from "./job_runner.ts";
import type { PartialRollouts } from "./partial.ts";
import { loadPolicy } from "./policy.ts";
import type { Rollout } from "./rollout.ts";
import type { RolloutJob } from "./rollout_job.ts";
import { VisionInputs } from "./vision.ts";

/** A request from the executor. */
export type WorkerRequest =
  | { id: number; type: "init"; config: Config }
  | { id: number; type: "weights"; snapshot: WeightSnapshot }
  | { id: number; type: "job"; job: RolloutJob; hold?: WorkerHold };

/** Newer weights for the running job (partial rollouts); not a request, never answered. */
export interface WorkerOffer {
  /** The message kind. */
  type: "offer";
  /** The weights. */
  snapshot: WeightSnapshot;
}

/**
 * A test hook of partial jobs: no interruption before the token at completion index `at`, and
 * there the job waits for an offer, so that a test interrupts it at a known step whatever the
 * machine's speed.
 */
export interface WorkerHold {
  /** Completion index of the token after which the job waits for an offer. */
  at: number;
}

/** What a `job` request answers. */
export interface WorkerJobResult {
  /** The batch. */
  rollout: Rollout;
  /** The version the worker holds after the job (newer than at its start if it was offered). */
  version: number;
}

/** The answer to a request. */
export type WorkerResponse =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WorkerError };

/** An error crossing the worker boundary (a `WeightChecksumError` keeps its digests). */
export interface WorkerError {
  /** The error's class name. */
  name: string;
  /** Its message. */
  message: string;
  /** `WeightChecksumError` only: the snapshot's version and both digests. */
  checksum?: { version: number; expected: string; actual: string };
}

interface State extends JobWorkspace {
  /** What a snapshot writes: the decoder's parameters, and a vision tower's. */
  weights: Map<string, Tensor>;
  version: number;
}

let state: State | null = null;
/** The newest offered snapshot not loaded yet (partial rollouts). */
let offered: WeightSnapshot | null = null;
let offerWaiters: (() => void)[] = [];

async function handle(req: WorkerRequest): Promise<unknown> {
  if (req.type === "init") {
    const config = req.config;
    const { task, env, rewards } = await jobTask(config);
    const device = await selectTrainDevice(config.trainer.device, config.trainer.blas);
    // On the CPU several rollout workers and the trainer share the cores: one matmul thread
    // each (the thread count never changes a result bit, see @rlvr/tensor's CPU backend).
    setBackend(
      device.device === "cpu"
        ? createCpuBackend({ threads: 1, blas: config.trainer.blas })
        : device.backend,
    );
    const p = await loadPolicy(config.model.checkpoint);
    // A vision-language policy: the snapshots carry the tower's visual.* tensors too.
    const tower = p.vision?.model.tower.params ?? null;
    state = {
      config,
      task,
      env,
      rewards,
      model: p.model,
      tokenizer: p.tokenizer,
      eosTokenIds: p.eosTokenIds,
      images: p.vision === null
        ? null
        : new VisionInputs(p.vision.model, { processor: p.vision.processor }),
      weights: tower === null ? p.model.params : new Map([...p.model.params, ...tower]),
      version: -1,
    };
    return { device: device.device };
  }
  if (state === null) throw new Error(`rollout worker: ${req.type} before init`);
  if (req.type === "weights") {
    state.version = await applySnapshot(
      state.weights,
      req.snapshot,
      state.version >= 0 ? { currentVersion: state.version } : {},
    );
    if (offered !== null && offered.version <= state.version) offered = null;
    return state.version;
  }
  const partial = rolloutSchedule(state.config).partial ? partialHook(state, req.hold) : undefined;
  const rollout = await runRolloutJob(state, req.job, partial);
  return { rollout, version: state.version } satisfies WorkerJobResult;
}

// One turn of the event loop, through a message, not a timer (nested timers are clamped to 4 ms).
const tick = new MessageChannel();
const ticks: (() => void)[] = [];
tick.port1.onmessage = () => ticks.shift()?.();

function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    ticks.push(resolve);
    tick.port2.postMessage(null);
  });
}

/** The running job's view of the offered weights (see `partial.ts`). */
function partialHook(s: State, hold: WorkerHold | undefined): PartialRollouts {
  // With the test hook, interruptions start at the held token, once an offer has arrived.
  let armed = hold === undefined;
  return {
    version: () => s.version,
    pending: () => armed && offered !== null && offered.version > s.version,
    async between(at: number) {
      if (armed || at !== hold!.at) return await nextTask();
      while (offered === null || offered.version <= s.version) {
        await new Promise<void>((resolve) => offerWaiters.push(resolve));
      }
      armed = true;
    },
    async apply() {
      const snap = offered!;
      offered = null;
      s.version = await applySnapshot(s.weights, snap, { currentVersion: s.version });
      return s.version;
    },
  };
}

function onOffer(offer: WorkerOffer): void {
  if (offered === null || offer.snapshot.version > offered.version) offered = offer.snapshot;
  const w = offerWaiters;
  offerWaiters = [];
  for (const f of w) f();
}

/**
 * The worker's global scope, typed here: a published module may not switch its own file to the
 * `deno.worker` lib with a triple-slash directive (JSR rejects directives that change globals).
 */
interface WorkerScope {
  onmessage: ((e: MessageEvent<WorkerRequest | WorkerOffer>) => void) | null;
  postMessage(message: WorkerResponse): void;
}
const scope = globalThis as unknown as WorkerScope;

let chain: Promise<void> = Promise.resolve();
scope.onmessage = (e: MessageEvent<WorkerRequest | WorkerOffer>) => {
  const msg = e.data;
  if (msg.type === "offer") return onOffer(msg);
  const req = msg;
  chain = chain.then(async () => {
    let res: WorkerResponse;
    try {
      res = { id: req.id, ok: true, value: await handle(req) };
    } catch (err) {
      const error: WorkerError = err instanceof Error
        ? { name: err.name, message: err.message }
        : { name: "Error", message: String(err) };
      if (err instanceof WeightChecksumError) {
        error.checksum = { version: err.version, expected: err.expected, actual: err.actual };
      }
      res = { id: req.id, ok: false, error };
    }
    scope.postMessage(res);
  });
};
