/**
 * A code interpreter tool: runs the policy's JavaScript or Python snippet in the rewards sandbox
 * (a real, permission-less subprocess; see `code/`) and answers what it printed.
 *
 * Design decisions:
 * - **The sandbox is the code verifier's**: `runTests` with one stdin/stdout case whose
 *   comparison accepts any output, so the snippet runs exactly as a code-reward program does
 *   (JavaScript/TypeScript in a fresh `deno run` with no permissions; Python in Pyodide inside
 *   such a process; never the system Python), through the shared sandbox pool.
 * - **Limits are enforced from outside**: the process is SIGKILLed at `timeoutMs` (wall
 *   clock), at `memoryMb` resident memory, or when it writes more than `outputLimitBytes`; a
 *   `while (true) {}` is killed at the limit. The default `timeoutMs` (3 s) is below
 *   `callTool`'s default (5 s), so the sandbox's own, clearer message wins; keep it that way
 *   when you change either. The sandbox limit counts the run only; starting a Python
 *   interpreter (about 0.3 s from the Pyodide snapshot, seconds for the very first one, more on
 *   a loaded machine) counts against `callTool`'s limit, so call `preparePython()` at start-up
 *   and give Python calls a generous `timeoutMs` in `callTool`. When `callTool` gives up first
 *   or the episode is aborted, the `AbortSignal` kills the process.
 * - **The answer**: the snippet's stdout; on failure, then its stderr after a `[stderr]` line;
 *   and always a last line with the exit status: `[exit: ok]`, `[exit: error]` (an exception
 *   or a non-zero exit; when stderr is empty, the sandbox's message, e.g. a Python traceback or
 *   `exited with code 3`, is shown after an `[error]` line), `[exit: timeout, killed
 *   after 3000 ms]`, `[exit: memory, …]` or `[exit: output_limit, …]`.
 *
 * @module
 */

import { checkChoice, checkName, checkNumber, checkOptions } from "../_check.ts";
import type { SandboxPool } from "../code/pool.ts";
import { DEFAULT_LIMITS } from "../code/result.ts";
import { runTests } from "../code/run.ts";
import type { Tool } from "./tool.ts";

/** Options of {@link codeInterpreterTool}. */
export interface CodeInterpreterOptions {
  /** The snippet's language: `"js"` (JavaScript) or `"python"`. */
  language: "js" | "python";
  /** Wall-clock limit per run in ms (default 3000). */
  timeoutMs?: number;
  /** Memory limit in MiB (default 512; Pyodide alone takes about 200). */
  memoryMb?: number;
  /** Most bytes of stdout and of stderr each; more kills the run (default 65536). */
  outputLimitBytes?: number;
  /** The sandbox pool (default: the shared one). */
  pool?: SandboxPool;
  /** The tool's name (default `"python"` or `"js"`). */
  name?: string;
}

/**
 * The code interpreter tool (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { callTool, codeInterpreterTool } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const js = codeInterpreterTool({ language: "js", timeoutMs: 2000 });
 * assert.equal((await callTool(js, "console.log(6 * 7)")).text, "42\n[exit: ok]");
 * const bad = await callTool(js, "throw new Error('nope')");
 * assert.match(bad.text, /\[stderr\]\n[\s\S]*nope[\s\S]*\n\[exit: error\]$/);
 * ```
 */
export function codeInterpreterTool(options: CodeInterpreterOptions): Tool {
  const owner = "codeInterpreterTool";
  const opts = checkOptions<CodeInterpreterOptions>(
    owner,
    options,
    "{language, timeoutMs?, memoryMb?, outputLimitBytes?, pool?, name?}",
  );
  const language = checkChoice(owner, "options.language", opts.language, ["js", "python"]);
  const timeoutMs = checkNumber(owner, "options.timeoutMs", opts.timeoutMs ?? 3000, {
    min: 1,
  });
  const memoryMb = checkNumber(
    owner,
    "options.memoryMb",
    opts.memoryMb ?? DEFAULT_LIMITS.memoryMb,
    { min: 16 },
  );
  const outputLimitBytes = checkNumber(
    owner,
    "options.outputLimitBytes",
    opts.outputLimitBytes ?? 65536,
    { min: 1, integer: true },
  );
  const name = checkName(owner, "options.name", opts.name ?? language);
  const runLanguage = language === "js" ? "javascript" : "python";
  return Object.freeze({
    name,
    description: `Runs a ${
      language === "js" ? "JavaScript" : "Python"
    } snippet in a sandbox and answers what it printed (limit ${timeoutMs / 1000} s)`,
    async call(input: string, { signal }: { signal: AbortSignal }): Promise<string> {
      const report = await runTests(input, runLanguage, [{ input: "", output: "" }], {
        timeoutMs,
        memoryMb,
        outputLimitBytes,
        signal,
        compare: () => true,
        ...(opts.pool ? { pool: opts.pool } : {}),
      });
      const r = report.results[0]!;
      if (r.status === "skipped") throw new Error("the run was aborted");
      const parts: string[] = [];
      if (r.stdout !== "") parts.push(r.stdout.replace(/\n$/, ""));
      if (r.status !== "pass" && r.stderr.trim() !== "") {
        parts.push("[stderr]", r.stderr.replace(/\n$/, ""));
      }
      if (r.status === "pass" || r.status === "fail") parts.push("[exit: ok]");
      else if (r.status === "error") {
        if (r.stderr.trim() === "" && r.message) parts.push("[error]", r.message.trimEnd());
        parts.push("[exit: error]");
      } else parts.push(`[exit: ${r.status}, ${r.message ?? "killed"}]`);
      return parts.join("\n");
    },
  });
}
