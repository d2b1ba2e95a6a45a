/**
 * Outcomes and limits shared by the JavaScript/TypeScript and Python sandboxes.
 *
 * Design: a case's status says who is to blame and for what, so that training logs can tell a
 * wrong answer (`fail`) from a crash (`error`), a hang (`timeout`), a memory bomb (`memory`) and
 * an output flood (`output_limit`). Failures of the sandbox itself (no Deno binary, Pyodide
 * missing) are not statuses: they throw, so that the reward runner records an error instead of
 * scoring the model for an infrastructure fault.
 *
 * @module
 */

/**
 * How one test case ended.
 *
 * - `pass`: correct output / every assertion held.
 * - `fail`: wrong output, a failed assertion, or exiting before the assertions ran.
 * - `error`: an exception, a compile/syntax error or a non-zero exit (see `message`).
 * - `timeout`: killed at the wall-clock limit.
 * - `memory`: killed at the memory limit, or died of out-of-memory (`MemoryError`, V8 heap).
 * - `output_limit`: wrote more than the output limit to stdout or stderr; killed.
 * - `skipped`: not run (an earlier case failed with early stopping on, or the run was aborted).
 */
export type CaseStatus =
  | "pass"
  | "fail"
  | "error"
  | "timeout"
  | "memory"
  | "output_limit"
  | "skipped";

/** The outcome of one test case. */
export interface CaseResult {
  /** How it ended. */
  status: CaseStatus;
  /** Wall-clock milliseconds the case took (0 when skipped). */
  ms: number;
  /** What the program wrote to stdout (truncated at the output limit). */
  stdout: string;
  /** What the program wrote to stderr (truncated at the output limit). */
  stderr: string;
  /** Why it did not pass: the exception or compile error, the limit hit, or the mismatch. */
  message?: string;
}

/** Resource limits of one test case. */
export interface SandboxLimits {
  /** Wall-clock limit per case in ms; the process is SIGKILLed at it (default 5000). */
  timeoutMs: number;
  /**
   * Memory limit per process in MiB (default 512): the V8 heap limit of the child and, on
   * Linux, its resident memory (polled every 20 ms, which includes the runtime itself: about
   * 50 MiB for Deno, 200 MiB for Deno + Pyodide).
   */
  memoryMb: number;
  /** Most bytes kept of stdout and of stderr each; writing more kills the case (default 1 MiB). */
  outputLimitBytes: number;
}

/**
 * The default limits: 5 s, 512 MiB, 1 MiB of output.
 *
 * @example Usage
 * ```ts
 * import { DEFAULT_LIMITS } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * assert.equal(DEFAULT_LIMITS.timeoutMs, 5000);
 * ```
 */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  timeoutMs: 5000,
  memoryMb: 512,
  outputLimitBytes: 1 << 20,
});
