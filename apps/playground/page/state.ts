/**
 * What the playground page publishes on `window.__playground` for tests and for a curious user
 * in the console: its status, the backend, the knobs and `--set` flags of the run, the records
 * so far and the errors. Plain data (JSON), refreshed after every step.
 *
 * @module
 */

import type { EvalRecord, SampleRecord, StepMetrics } from "../../train/run/records.ts";
import type { Knobs } from "./knobs.ts";

/** `window.__playground` (see the module doc). */
export interface PlaygroundState {
  /** `loading` (fetching the policy), `ready`, then the run's status. */
  status: "loading" | "ready" | "running" | "stopping" | "stopped" | "done" | "failed";
  /** The backend of the current run, or null before the first. */
  backend: {
    device: "webgpu" | "wasm";
    choice: string;
    adapter: string | null;
    reason: string;
    line: string;
  } | null;
  /** The knobs of the current run, or null. */
  knobs: Knobs | null;
  /**
   * The `deno task train` command's arguments that make the same run: `--config <recipe>`, then
   * `--set key=value` per knob and for the device.
   */
  trainArgs: string[];
  /** Steps completed. */
  step: number;
  /** `trainer.steps` of the current run. */
  steps: number;
  /** Milliseconds spent running. */
  elapsedMs: number;
  /** The step records (`metrics.jsonl`). */
  records: StepMetrics[];
  /** The evaluation records (`eval.jsonl`). */
  evals: EvalRecord[];
  /** The held-out completions logged at each evaluation (`eval_samples.jsonl`). */
  evalSamples: SampleRecord[];
  /** Everything that went wrong (also logged with `console.error`). */
  errors: string[];
  /** Knob values the form refused (shown next to the form; not errors of the page). */
  problems: string[];
  /** Whether the current run finished all its steps. */
  done: boolean;
}

/**
 * The state of a page that has not loaded its policy yet.
 *
 * @returns A fresh state.
 *
 * @example Usage
 * ```ts
 * import { initialState } from "./state.ts";
 * import assert from "node:assert/strict";
 * const s = initialState();
 * assert.equal(s.status, "loading");
 * assert.deepEqual(s.records, []);
 * ```
 */
export function initialState(): PlaygroundState {
  return {
    status: "loading",
    backend: null,
    knobs: null,
    trainArgs: [],
    step: 0,
    steps: 0,
    elapsedMs: 0,
    records: [],
    evals: [],
    evalSamples: [],
    errors: [],
    problems: [],
    done: false,
  };
}
