/**
 * The code verifier: run a completion's program against unit tests or stdin/stdout cases in a
 * sandbox and score it.
 *
 * Design: the sandbox is a process, not a language runtime. JavaScript/TypeScript runs in a fresh
 * `deno run` (the binary running us) with no permission at all, no remote/npm modules, no
 * config, a cleared environment, an empty `DENO_DIR` and an import map that blocks local modules
 * (Deno does not permission-check module imports); Python runs in Pyodide (CPython on
 * WebAssembly, npm `pyodide`, offline) inside such a process whose only permission is reading
 * the Pyodide package. The parent enforces the limits from outside: SIGKILL at the wall-clock
 * limit, a V8 heap limit plus a resident-memory watchdog, and output caps. System Python is never
 * used: it is not a sandbox. The parent needs `--allow-run` (to start `Deno.execPath()`),
 * `--allow-write` and `--allow-read` (temporary files) and, for the memory watchdog, read access
 * to `/proc`.
 *
 * Tests are stdin/stdout cases `{ input, output }` or assertion snippets `{ assert }` (see
 * {@link parseTests}); each case ends `pass`, `fail`, `error`, `timeout`, `memory`,
 * `output_limit` or `skipped` ({@link CaseStatus}).
 *
 * The verdict is out of the program's reach: stdout of stdin/stdout cases is compared by the
 * parent; an assertion case passes only on a signal the program cannot forge, read or suppress
 * (a secret line written from a reaction the program cannot reach, in a realm whose intrinsics
 * are locked, for JavaScript; the runner's own call of the pre-compiled tests returning, for
 * Python, whose bridge to JavaScript is cut). Early exits, patched assertions, builtins or
 * serialisation, objects equal to everything and reading the tests all fail; the package README
 * ("Verdict integrity") says what is trusted and what is left.
 *
 * Entry points: {@link codeReward} (the reward), {@link runTests} (one program, its cases, a
 * report), {@link extractCode} (the program in a completion), {@link parseTests} (the tests field
 * of a row), {@link SandboxPool} (bounded parallelism) and {@link preparePython} (warm-up).
 *
 * @example Usage
 * ```ts
 * import { codeReward } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * const reward = codeReward({ language: "js" });
 * const f = "`".repeat(3); // a Markdown fence
 * const completion = `${f}js\nconst [a, b] = require("fs").readFileSync(0, "utf8").split(" ");\n` +
 *   `console.log(Number(a) + Number(b));\n${f}`;
 * const row = { tests: [{ input: "1 2", output: "3" }, { input: "5 5", output: "10" }] };
 * const ctx = { signal: new AbortController().signal };
 * assert.equal(await reward.score!({ completion, prompt: "", row }, ctx), 1);
 * ```
 *
 * @module
 */

export type {
  Reward,
  RewardContext,
  RewardInput,
  RewardValue,
  Row,
  ScoreBatchFn,
  ScoreFn,
} from "../types.ts";
export {
  type AssertCase,
  type CodeCase,
  type IoCase,
  isAssertCase,
  normalizeOutput,
  outputsMatch,
  parseTests,
} from "./cases.ts";
export {
  type CodeBlock,
  codeBlocks,
  type CodeLanguage,
  extractCode,
  extractCodeBlock,
  normalizeLanguage,
} from "./extract.ts";
export {
  defaultPool,
  type PoolOptions,
  type PoolRunOptions,
  type PoolSlot,
  SandboxPool,
  type SlotResource,
} from "./pool.ts";
export { preparePython, type PythonInfo } from "./python.ts";
export { type CaseResult, type CaseStatus, DEFAULT_LIMITS, type SandboxLimits } from "./result.ts";
export {
  codeReward,
  type CodeRewardMode,
  type CodeRewardOptions,
  type CodeSource,
} from "./reward.ts";
export { runTests, type RunTestsOptions, type TestReport } from "./run.ts";
