/**
 * A tool-using math environment: arithmetic problems that are hard to do in one's head (by
 * default 3-digit additions and 2-digit multiplications), a calculator tool, and the arithmetic
 * task's verifier on the final answer.
 *
 * Design decisions:
 * - **One environment, two spellings.** `syntax: "compact"` suits a tiny character-level model:
 *   a call is `{EXPR}` (stop string `}`), its result comes back as `1036|`, and a turn without a
 *   call is the final answer (its trimmed text, or what is inside its `<answer>…</answer>`
 *   if it has one, as the task's default prompt asks), e.g. prompt `518+518=`, actions `{518+518}`
 *   then `1036`. `syntax: "tagged"` suits a chat model: `<calc>EXPR</calc>` (stop `</calc>`),
 *   `<result>…</result>`, and the final answer in `<answer>…</answer>`. Any other spelling is a
 *   {@link CallSyntax} object. Parsing rules: see {@link toolEpisode}'s module (`_episode.ts`):
 *   the first call of an action runs; an unclosed call is malformed (error observation, the
 *   episode goes on); the last allowed turn ends the episode even on a call.
 * - **Rewards.** `finalReward()` is 1 when the final answer verifies with the arithmetic task's
 *   verifier (any spelling of the exact value: `3/4`, `0.75`), else 0, and 0 without an answer
 *   (e.g. the turns ran out); no turn rewards. `success()` is `finalReward() === 1`.
 * - **The tool is replaceable** (`tool` option) and every call goes through `callTool` with
 *   `toolLimits`, so a stub that hangs or floods (tests), or the code interpreter, plugs in.
 * - The prompt is `render(row)`; the default is the task's prompt followed by one line that
 *   explains the call syntax (the train app passes the tiny model's compact renderer instead).
 * - The environment has no randomness of its own: the episode seed is only recorded.
 *
 * @module
 */

import { checkFunction, checkName, checkNumber, checkOptions, show } from "../_check.ts";
import { type ArithmeticOptions, type ArithmeticRow, arithmeticTask } from "../tasks/arithmetic.ts";
import { defineTask, type Task } from "../tasks/task.ts";
import { calculatorTool } from "./calculator.ts";
import {
  type CallSyntax,
  checkSyntax,
  syntaxHint,
  type ToolEnvironment,
  verifiedToolEnv,
} from "./_episode.ts";
import type { Tool, ToolLimits } from "./tool.ts";

/** `{EXPR}` calls, `RESULT|` observations, the bare trimmed text as the final answer. */
export const COMPACT_SYNTAX: CallSyntax = Object.freeze({
  callOpen: "{",
  callClose: "}",
  resultOpen: "",
  resultClose: "|",
});

/** `<calc>EXPR</calc>` calls, `<result>…</result>` observations, `<answer>…</answer>`. */
export const TAGGED_SYNTAX: CallSyntax = Object.freeze({
  callOpen: "<calc>",
  callClose: "</calc>",
  resultOpen: "<result>",
  resultClose: "</result>",
  answerOpen: "<answer>",
  answerClose: "</answer>",
});

/** Options of {@link calcEnv}. */
export interface CalcEnvOptions {
  /**
   * Arithmetic task knobs (see `arithmeticTask`). When absent, rows mix (50/50, seeded)
   * 3-digit additions `abc + def` and 2-digit multiplications `ab * cd`.
   */
  task?: ArithmeticOptions;
  /** `"compact"` (default), `"tagged"` or a {@link CallSyntax}. */
  syntax?: "compact" | "tagged" | CallSyntax;
  /** The prompt text of a row (default: the row's prompt plus a line on the call syntax). */
  render?: (row: ArithmeticRow) => string;
  /** Actions per episode, >= 1 (default 3). */
  maxTurns?: number;
  /** The tool (default {@link calculatorTool}). */
  tool?: Tool;
  /** Limits of every tool call (default `callTool`'s: 5 s, 2000 characters). */
  toolLimits?: Omit<ToolLimits, "signal">;
  /** The environment's and the mixed task's name (default `"calc"`). */
  name?: string;
}

function resolveSyntax(owner: string, syntax: CalcEnvOptions["syntax"]): CallSyntax {
  if (syntax === undefined || syntax === "compact") return COMPACT_SYNTAX;
  if (syntax === "tagged") return TAGGED_SYNTAX;
  return checkSyntax(owner, syntax);
}

/** The default task: 3-digit additions and 2-digit multiplications, mixed by the row's seed. */
function mixedTask(name: string): Task<ArithmeticRow> {
  const add = arithmeticTask({ digits: 3, operators: ["+"], chainLength: 1, name });
  const mul = arithmeticTask({ digits: 2, operators: ["*"], chainLength: 1, name });
  return defineTask<ArithmeticRow>({
    name,
    generate(rng) {
      const sub = rng.chance(0.5) ? add : mul;
      const { id: _id, task: _task, ...fields } = sub.row(rng.int(0, 0x7fffffff), 0);
      return fields;
    },
    key: add.key,
    verify: add.verify, // recomputes the value from row.expression: the same for both
  });
}

/**
 * The calculator environment (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { calcEnv } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const env = calcEnv({ render: (row) => `${row.expression.replaceAll(" ", "")}=` });
 * const row = env.task.row(0, 0);
 * const episode = env.reset(row, { seed: 0 });
 * assert.equal(episode.prompt, `${row.expression.replaceAll(" ", "")}=`);
 * const call = await episode.step(`{${row.expression}}`);
 * assert.deepEqual([call.observation, call.done], [`${row.answer}|`, false]);
 * const final = await episode.step(row.answer);
 * assert.equal(final.done, true);
 * assert.equal(await episode.finalReward(), 1);
 * assert.ok(episode.success());
 * ```
 */
export function calcEnv(options?: CalcEnvOptions): ToolEnvironment<ArithmeticRow> {
  const owner = "calcEnv";
  const opts = checkOptions<CalcEnvOptions>(
    owner,
    options,
    "{task?, syntax?, render?, maxTurns?, tool?, toolLimits?, name?}",
  );
  const name = checkName(owner, "options.name", opts.name ?? "calc");
  const syntax = resolveSyntax(owner, opts.syntax);
  const maxTurns = checkNumber(owner, "options.maxTurns", opts.maxTurns ?? 3, {
    min: 1,
    integer: true,
  });
  const tool = opts.tool ?? calculatorTool();
  if (typeof tool !== "object" || tool === null || typeof tool.call !== "function") {
    throw new TypeError(
      `${owner}: options.tool must be a Tool {name, description, call}, got ${show(tool)}`,
    );
  }
  const render = opts.render === undefined
    ? (row: ArithmeticRow) => `${row.prompt}\n\n${syntaxHint(syntax, tool)}`
    : checkFunction<(row: ArithmeticRow) => string>(
      owner,
      "options.render",
      opts.render,
      "a function (row) => prompt text",
    );
  const limits = { ...(opts.toolLimits ?? {}) };
  const task = opts.task === undefined ? mixedTask(name) : arithmeticTask({ name, ...opts.task });
  return verifiedToolEnv({ name, task, syntax, tool, limits, maxTurns, render });
}
