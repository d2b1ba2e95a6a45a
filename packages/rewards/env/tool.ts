/**
 * Tools an agent calls during an episode, and {@link callTool}, the one way to call them: it
 * turns every failure into an observation the episode can go on with.
 *
 * Design decisions:
 * - **A tool's failure is an observation, not an exception.** A tool that throws answers
 *   `error: <message>`; one that does not answer within `timeoutMs` is abandoned (its
 *   `AbortSignal` fires) and answers `error: <tool> timed out after <s> s`; an answer longer
 *   than `maxOutputChars` is cut, with a note saying how long it was. The policy sees what
 *   happened and the episode continues; the status is returned for metrics.
 * - The timeout cuts off anything that waits (I/O, a subprocess, a stuck promise). A tool
 *   that burns the CPU synchronously cannot be interrupted in the same thread, so CPU-bound
 *   tools (the code interpreter) run in a subprocess sandbox that enforces its own limits.
 *
 * @module
 */

/** What a tool gets besides its input. */
export interface ToolContext {
  /** Fires when the call is abandoned (timeout, or the episode was aborted). */
  signal: AbortSignal;
}

/** A tool: text in, text out. */
export interface Tool {
  /** The name the policy calls it by. */
  readonly name: string;
  /** One line for prompts and docs. */
  readonly description: string;
  /** Runs the tool on `input`. */
  call(input: string, context: ToolContext): Promise<string> | string;
}

/** Limits of {@link callTool}. */
export interface ToolLimits {
  /** Milliseconds before the call is abandoned (default 5000). */
  timeoutMs?: number;
  /** Characters of output kept (default 2000). */
  maxOutputChars?: number;
  /** Aborts the call from outside (the episode's signal). */
  signal?: AbortSignal;
}

/** How a tool call ended. */
export type ToolStatus = "ok" | "truncated" | "error" | "timeout";

/** What {@link callTool} returns. */
export interface ToolResult {
  /** The observation text (the output, possibly cut, or the error line). */
  text: string;
  /** How the call ended. */
  status: ToolStatus;
  /** Characters the tool returned (before cutting; 0 on error). */
  outputChars: number;
  /** Milliseconds the call took. */
  ms: number;
}

/** Default {@link ToolLimits}. */
export const DEFAULT_TOOL_LIMITS: Readonly<Required<Omit<ToolLimits, "signal">>> = Object.freeze({
  timeoutMs: 5000,
  maxOutputChars: 2000,
});

function checkLimit(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`callTool: ${name} must be a finite number > 0, got ${value}`);
  }
  return value;
}

/**
 * Calls `tool` on `input` within `limits` (see the module doc); never throws for the tool's
 * sake (only for invalid limits).
 *
 * @example Usage
 * ```ts
 * import { callTool, type Tool } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const echo: Tool = { name: "echo", description: "repeats", call: (s) => s.repeat(3) };
 * assert.deepEqual((await callTool(echo, "ab")).text, "ababab");
 * const flood: Tool = { name: "flood", description: "10 MB", call: () => "x".repeat(10_000_000) };
 * const r = await callTool(flood, "", { maxOutputChars: 5 });
 * assert.equal(r.status, "truncated");
 * assert.match(r.text, /^xxxxx\n\[output cut: 10000000 characters, first 5 shown\]$/);
 * const boom: Tool = { name: "boom", description: "throws", call: () => { throw new Error("bad input"); } };
 * assert.equal((await callTool(boom, "")).text, "error: boom failed: bad input");
 * const hang: Tool = { name: "hang", description: "never answers", call: () => new Promise(() => {}) };
 * const h = await callTool(hang, "", { timeoutMs: 20 });
 * assert.deepEqual([h.status, h.text], ["timeout", "error: hang timed out after 0.02 s"]);
 * ```
 */
export async function callTool(
  tool: Tool,
  input: string,
  limits: ToolLimits = {},
): Promise<ToolResult> {
  const timeoutMs = checkLimit("timeoutMs", limits.timeoutMs ?? DEFAULT_TOOL_LIMITS.timeoutMs);
  const maxChars = checkLimit(
    "maxOutputChars",
    limits.maxOutputChars ?? DEFAULT_TOOL_LIMITS.maxOutputChars,
  );
  const started = performance.now();
  const controller = new AbortController();
  const outer = limits.signal;
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = Symbol("timeout");
  const done = (text: string, status: ToolStatus, outputChars = 0): ToolResult => ({
    text,
    status,
    outputChars,
    ms: performance.now() - started,
  });
  try {
    if (outer?.aborted) return done(`error: ${tool.name} was aborted`, "error");
    const timeout = new Promise<typeof timedOut>((resolve) => {
      timer = setTimeout(() => resolve(timedOut), timeoutMs);
    });
    const aborted = new Promise<typeof timedOut>((resolve) => {
      controller.signal.addEventListener("abort", () => resolve(timedOut), { once: true });
    });
    let out: unknown;
    try {
      out = await Promise.race([
        Promise.resolve().then(() => tool.call(input, { signal: controller.signal })),
        timeout,
        aborted,
      ]);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      return done(`error: ${tool.name} failed: ${message}`, "error");
    }
    if (out === timedOut) {
      if (outer?.aborted) return done(`error: ${tool.name} was aborted`, "error");
      controller.abort(new Error(`${tool.name} timed out`));
      return done(`error: ${tool.name} timed out after ${timeoutMs / 1000} s`, "timeout");
    }
    if (typeof out !== "string") {
      return done(
        `error: ${tool.name} returned ${out === null ? "null" : typeof out}, not text`,
        "error",
      );
    }
    if (out.length > maxChars) {
      return done(
        `${
          out.slice(0, maxChars)
        }\n[output cut: ${out.length} characters, first ${maxChars} shown]`,
        "truncated",
        out.length,
      );
    }
    return done(out, "ok", out.length);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onAbort);
  }
}
