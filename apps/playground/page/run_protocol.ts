/**
 * The messages between the playground page (`worker_run.ts`) and its training worker
 * (`run_worker.ts`): requests carry an `id` that their one reply repeats; a running session also
 * sends `progress` messages with the records it added since the last one.
 *
 * @module
 */

import type { Config } from "../../train/config/types.ts";
import type { EvalRecord, SampleRecord, StepMetrics } from "../../train/run/records.ts";
import type { PlaygroundBackend } from "./backend.ts";
import type { BackendChoice } from "./knobs.ts";
import type { RunStatus } from "./playground_run.ts";

/** What the page knows of the worker's backend: everything but the backend object. */
export type BackendInfo = Omit<PlaygroundBackend, "backend" | "release">;

/** A request of the page. */
export type RunRequest =
  | { id: number; type: "backend"; choice: BackendChoice }
  | { id: number; type: "create"; config: Config; files: [string, Uint8Array][]; name: string }
  | { id: number; type: "run"; stopAfter?: number }
  | { id: number; type: "stop" }
  | { id: number; type: "zip"; folder: string }
  | { id: number; type: "close" };

/** Where a run is, sent with every reply and progress message. */
export interface RunProgress {
  /** Steps completed. */
  completed: number;
  /** What the run is doing. */
  status: RunStatus;
  /** Milliseconds spent running. */
  elapsedMs: number;
  /** Step records added since the last message. */
  metrics: StepMetrics[];
  /** Evaluation records added since the last message. */
  evals: EvalRecord[];
  /** Held-out sample records added since the last message. */
  evalSamples: SampleRecord[];
}

/** A message of the worker. */
export type RunReply =
  | { id: number; type: "backend"; info: BackendInfo }
  | { id: number; type: "created"; steps: number; progress: RunProgress }
  | { id: number; type: "ended"; progress: RunProgress }
  | { id: number; type: "stopping"; progress: RunProgress }
  | { id: number; type: "zip"; bytes: Uint8Array }
  | { id: number; type: "closed" }
  | { id: number; type: "error"; message: string; progress?: RunProgress }
  | { id: -1; type: "progress"; progress: RunProgress };
