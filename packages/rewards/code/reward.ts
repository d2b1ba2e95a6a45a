/**
 * The code reward: extract the program from a completion, run the row's tests in the sandbox,
 * score all-pass (0/1) or the pass rate.
 *
 * Design: only a per-sample `score` is provided. The runner already calls it for many samples
 * at once, and every case goes through the shared {@link SandboxPool}, so a batch runs in
 * parallel under one bound anyway, while a malformed row fails only its own sample. Because a
 * sample may wait in the pool's queue behind others, the reward's own call budget is unlimited
 * by default (`callTimeoutMs`): each case is bounded by `timeoutMs` instead. The score is `null`
 * (not applicable) when the row has no tests or names a language the sandbox cannot run, and 0
 * when the completion has no runnable code block.
 *
 * @module
 */

import type { Reward, RewardContext, RewardInput, RewardValue, Row } from "../types.ts";
import { parseTests } from "./cases.ts";
import { type CodeLanguage, extractCodeBlock, normalizeLanguage } from "./extract.ts";
import type { SandboxPool } from "./pool.ts";
import type { SandboxLimits } from "./result.ts";
import { runTests, type TestReport } from "./run.ts";

/** How the case results become a score. */
export type CodeRewardMode = "all_pass" | "pass_rate";

/**
 * Where the program comes from: `block`, the completion's last fenced code block; `completion`,
 * the whole completion; `prompt+completion`, the prompt followed by the completion (HumanEval's
 * layout, where the prompt holds the signature and the completion the body).
 */
export type CodeSource = "block" | "completion" | "prompt+completion";

/** Options of {@link codeReward}. */
export interface CodeRewardOptions<R extends Row = Row> extends Partial<SandboxLimits> {
  /** `all_pass`: 1 when every case passes, else 0 (default); `pass_rate`: passed / total. */
  mode?: CodeRewardMode;
  /**
   * Where the program comes from (default `block`); with `completion` and `prompt+completion`
   * the language must come from `language` or `languageField`.
   */
  source?: CodeSource;
  /** Row field holding the tests, in any shape `parseTests` reads (default `"tests"`). */
  testsField?: string;
  /** Row field naming the language (`"python"`, `"js"` ...); wins over the block's fence tag. */
  languageField?: string;
  /** The language of every row; wins over `languageField` and the fence tag. */
  language?: CodeLanguage | string;
  /** Stop at the first failing case (default: true in `all_pass` mode, false in `pass_rate`). */
  stopEarly?: boolean;
  /** Metric name (default `code_all_pass` / `code_pass_rate`). */
  name?: string;
  /** The pool to run in (default: the process-wide `defaultPool()`). */
  pool?: SandboxPool;
  /** Compares actual with expected stdout (default: equal after trailing-whitespace trim). */
  compare?: (actual: string, expected: string) => boolean;
  /** The reward's call budget in ms, i.e. `Reward.timeoutMs` (default `Infinity`). */
  callTimeoutMs?: number;
  /** Receives every sample's report (`null` when no code was found), e.g. for logging. */
  onReport?: (report: TestReport | null, input: RewardInput<R>) => void;
}

/**
 * A reward that runs the completion's last fenced code block against the row's tests in the
 * sandbox (Python via Pyodide, JavaScript/TypeScript via a permission-less Deno process).
 *
 * @example Usage
 * ```ts
 * import { codeReward } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * const reward = codeReward({ mode: "pass_rate", language: "ts" });
 * const row = { tests: ["assert.equal(double(2), 4)", "assert.equal(double(-1), -2)"] };
 * const f = "`".repeat(3); // a Markdown fence
 * const good = `${f}ts\nconst double = (x: number) => 2 * x;\n${f}`;
 * const bad = `${f}ts\nconst double = (x: number) => x + 2;\n${f}`;
 * const ctx = { signal: new AbortController().signal };
 * assert.equal(await reward.score!({ completion: good, prompt: "", row }, ctx), 1);
 * assert.equal(await reward.score!({ completion: bad, prompt: "", row }, ctx), 0.5);
 * assert.equal(await reward.score!({ completion: good, prompt: "", row: {} }, ctx), null);
 * ```
 */
export function codeReward<R extends Row = Row>(options: CodeRewardOptions<R> = {}): Reward<R> {
  const mode = options.mode ?? "all_pass";
  if (mode !== "all_pass" && mode !== "pass_rate") {
    throw new TypeError(`codeReward: mode must be "all_pass" or "pass_rate", got ${String(mode)}`);
  }
  const testsField = options.testsField ?? "tests";
  const stopEarly = options.stopEarly ?? mode === "all_pass";
  const fixed = options.language === undefined ? undefined : normalizeLanguage(options.language);
  if (fixed === null) {
    throw new TypeError(`codeReward: cannot run language "${options.language}"`);
  }
  const source = options.source ?? "block";
  if (source !== "block" && source !== "completion" && source !== "prompt+completion") {
    throw new TypeError(
      `codeReward: source must be "block", "completion" or "prompt+completion", got ${
        String(source)
      }`,
    );
  }
  if (source !== "block" && fixed === undefined && options.languageField === undefined) {
    throw new TypeError(
      `codeReward: source "${source}" has no fence tag to name the language; set language (e.g. "python") or languageField`,
    );
  }
  const callTimeoutMs = options.callTimeoutMs ?? Infinity;
  if (!(callTimeoutMs > 0)) {
    throw new RangeError(`codeReward: callTimeoutMs must be > 0, got ${callTimeoutMs}`);
  }

  async function score(input: RewardInput<R>, ctx: RewardContext): Promise<RewardValue> {
    const cases = parseTests(input.row[testsField]);
    if (cases === null) return null;
    let language: CodeLanguage | null | undefined = fixed;
    if (language === undefined && options.languageField !== undefined) {
      const named = input.row[options.languageField];
      if (typeof named === "string" && named.trim() !== "") {
        language = normalizeLanguage(named);
        if (language === null) return null; // a language the sandbox cannot run
      }
    }
    const block = source === "block" ? extractCodeBlock(input.completion, language ?? undefined) : {
      code: source === "completion" ? input.completion : input.prompt + input.completion,
      language: null,
    };
    const runAs = language ?? block?.language ?? null;
    if (block === null || runAs === null || block.code.trim() === "") {
      options.onReport?.(null, input);
      return 0;
    }
    const report = await runTests(block.code, runAs, cases, {
      stopOnFirstFailure: stopEarly,
      signal: ctx.signal,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.memoryMb === undefined ? {} : { memoryMb: options.memoryMb }),
      ...(options.outputLimitBytes === undefined
        ? {}
        : { outputLimitBytes: options.outputLimitBytes }),
      ...(options.pool === undefined ? {} : { pool: options.pool }),
      ...(options.compare === undefined ? {} : { compare: options.compare }),
    });
    options.onReport?.(report, input);
    return mode === "all_pass" ? (report.allPassed ? 1 : 0) : report.passRate;
  }

  return {
    name: options.name ?? `code_${mode}`,
    score,
    timeoutMs: callTimeoutMs,
  };
}
