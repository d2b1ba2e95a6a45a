/**
 * Runs a program against its test cases in the sandboxes, in parallel through the shared pool.
 *
 * Design: every case is one pool task, so cases of one program run in parallel and cases of many
 * programs (a batch) share the same bound. JavaScript/TypeScript cases each get a fresh Deno
 * process (about 50 ms); Python cases reuse a warm interpreter of the same program (and the same
 * assertion snippets) when a slot has one. With `stopOnFirstFailure`, the first case that does
 * not pass aborts the rest: queued cases never start and running ones are killed; both report
 * `skipped`.
 *
 * @module
 */

import { type CodeCase, isAssertCase } from "./cases.ts";
import type { CodeLanguage } from "./extract.ts";
import { normalizeLanguage } from "./extract.ts";
import { defaultPool, type PoolSlot, type SandboxPool } from "./pool.ts";
import { PythonWorker } from "./python.ts";
import { type CaseResult, DEFAULT_LIMITS, type SandboxLimits } from "./result.ts";
import { runJsCase } from "./_js.ts";

/** Options of {@link runTests}. */
export interface RunTestsOptions extends Partial<SandboxLimits> {
  /** Stop at the first case that does not pass; the rest report `skipped` (default false). */
  stopOnFirstFailure?: boolean;
  /** The pool to run in (default: {@link defaultPool}). */
  pool?: SandboxPool;
  /** Aborts the run: queued cases are dropped and running ones killed (`skipped`). */
  signal?: AbortSignal;
  /** Compares actual with expected stdout (default `outputsMatch`: trailing whitespace ignored). */
  compare?: (actual: string, expected: string) => boolean;
}

/** The outcome of {@link runTests}. */
export interface TestReport {
  /** The language the program ran as. */
  language: CodeLanguage;
  /** One result per case, in the order of the cases. */
  results: CaseResult[];
  /** How many cases passed. */
  passed: number;
  /** How many cases there were. */
  total: number;
  /** `passed / total` (0 when there are no cases). */
  passRate: number;
  /** Whether there was at least one case and every case passed. */
  allPassed: boolean;
  /** Wall-clock milliseconds of the whole run. */
  ms: number;
}

function checkLimits(options: RunTestsOptions): SandboxLimits {
  const limits: SandboxLimits = {
    timeoutMs: options.timeoutMs ?? DEFAULT_LIMITS.timeoutMs,
    memoryMb: options.memoryMb ?? DEFAULT_LIMITS.memoryMb,
    outputLimitBytes: options.outputLimitBytes ?? DEFAULT_LIMITS.outputLimitBytes,
  };
  for (const [k, v] of Object.entries(limits)) {
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) {
      throw new RangeError(`runTests: ${k} must be a finite number > 0, got ${String(v)}`);
    }
  }
  return limits;
}

async function pythonCase(
  slot: PoolSlot,
  key: string,
  tests: readonly string[],
  code: string,
  testCase: CodeCase,
  limits: SandboxLimits,
  options: RunTestsOptions,
  signal: AbortSignal,
): Promise<CaseResult> {
  let worker = slot.resource instanceof PythonWorker && slot.resource.key === key
    ? slot.resource
    : null;
  if (worker !== null && !worker.alive) {
    slot.resource = null;
    await worker.close();
    worker = null;
  }
  if (worker === null) {
    worker = await PythonWorker.start(key, limits.memoryMb, tests, signal);
    slot.resource = worker;
  }
  const result = await worker.run(code, testCase, limits, {
    signal,
    ...(options.compare ? { compare: options.compare } : {}),
  });
  if (!worker.alive) {
    slot.resource = null;
    await worker.close();
  }
  return result;
}

const skipped = (): CaseResult => ({
  status: "skipped",
  ms: 0,
  stdout: "",
  stderr: "",
  message: "not run",
});

/**
 * Runs `code` (Python, JavaScript or TypeScript; aliases such as `py` or `ts` work) against
 * `cases` in sandboxes. Rejects only when the sandbox itself cannot run (bad limits, unknown
 * language, Pyodide missing); whatever the program does becomes a case status.
 *
 * @example Usage
 * ```ts
 * import { runTests } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * const code = "const n = Number(require('fs').readFileSync(0, 'utf8'));\nconsole.log(n * 2);";
 * const report = await runTests(code, "js", [
 *   { input: "2", output: "4" },
 *   { input: "5", output: "11" },
 * ]);
 * assert.deepEqual(report.results.map((r) => r.status), ["pass", "fail"]);
 * assert.equal(report.passRate, 0.5);
 * ```
 */
export async function runTests(
  code: string,
  language: CodeLanguage | string,
  cases: readonly CodeCase[],
  options: RunTestsOptions = {},
): Promise<TestReport> {
  const lang = normalizeLanguage(language);
  if (lang === null) throw new TypeError(`runTests: cannot run language "${language}"`);
  const limits = checkLimits(options);
  const pool = options.pool ?? defaultPool();
  const started = performance.now();
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  // A Python interpreter compiles its tests before the program runs (see `_py_toolkit.ts`), so
  // it serves one program with one set of assertion snippets.
  const tests = [...new Set(cases.filter(isAssertCase).map((c) => c.assert))];
  const key = lang === "python" ? `python:${limits.memoryMb}:${JSON.stringify(tests)}:${code}` : "";
  const results: CaseResult[] = cases.map(skipped);
  let infraError: unknown;
  try {
    await Promise.allSettled(cases.map((testCase, i) =>
      pool.run(async (slot) => {
        if (ctl.signal.aborted) return;
        const r = lang === "python"
          ? await pythonCase(slot, key, tests, code, testCase, limits, options, ctl.signal)
          : await runJsCase(code, lang, testCase, limits, {
            signal: ctl.signal,
            ...(options.compare ? { compare: options.compare } : {}),
          });
        results[i] = r;
        if (options.stopOnFirstFailure && r.status !== "pass" && r.status !== "skipped") {
          ctl.abort(new Error("stopped at the first failure"));
        }
      }, { key, signal: ctl.signal }).catch((e) => {
        if (!ctl.signal.aborted) {
          infraError ??= e;
          ctl.abort(e);
        }
      })
    ));
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  if (infraError !== undefined) throw infraError;
  const passed = results.filter((r) => r.status === "pass").length;
  return {
    language: lang,
    results,
    passed,
    total: cases.length,
    passRate: cases.length === 0 ? 0 : passed / cases.length,
    allPassed: cases.length > 0 && passed === cases.length,
    ms: performance.now() - started,
  };
}
