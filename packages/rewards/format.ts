/**
 * The `<think>…</think><answer>…</answer>` format reward (DeepSeek-R1's format reward).
 *
 * Design: two modes, because strict format rewards can hinder zero-RL (SimpleRL-Zoo) while a
 * strict layout makes answers reliable to parse.
 *
 * - `strict`: the whole completion is exactly one `<think>…</think>` block followed by exactly
 *   one `<answer>…</answer>` block. Only whitespace may appear before, between and after them,
 *   no block contains another think/answer tag, and the answer is not empty.
 * - `relaxed`: `<think>`, `</think>`, `<answer>`, `</answer>` all occur, in that order (their
 *   first occurrences); anything may surround them.
 *
 * With `thinkInPrompt: true` the prompt already ends with `<think>` (the R1-Zero template), so
 * the completion is expected to start inside the thinking block, without its own `<think>`.
 *
 * @module
 */

import { checkChoice, checkName, checkOptions } from "./_check.ts";
import { defineReward } from "./define.ts";
import type { Reward, Row } from "./types.ts";

/** How strictly {@link formatReward} checks the layout. */
export type FormatMode = "strict" | "relaxed";

/** Options of {@link formatReward} and {@link checkFormat}. */
export interface FormatOptions {
  /** `"strict"` (default) or `"relaxed"`; see the module doc. */
  mode?: FormatMode;
  /** The prompt already opened `<think>`; the completion must not repeat it (default false). */
  thinkInPrompt?: boolean;
  /** Metric key (default `"format"`). */
  name?: string;
}

/** The parts of a completion in the think/answer layout. */
export interface ThinkAnswer {
  /** The text inside `<think>…</think>`. */
  think: string;
  /** The text inside `<answer>…</answer>`. */
  answer: string;
}

const TAGS = /<\/?(?:think|answer)>/i;

/**
 * Parses a completion in the strict layout (whitespace around the two blocks allowed); `null`
 * when it is not exactly `<think>…</think><answer>…</answer>`.
 *
 * @example Usage
 * ```ts
 * import { parseThinkAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseThinkAnswer("<think>2+2</think>\n<answer>4</answer>"), {
 *   think: "2+2",
 *   answer: "4",
 * });
 * assert.equal(parseThinkAnswer("hi <think>a</think><answer>4</answer>"), null);
 * ```
 */
export function parseThinkAnswer(completion: string, thinkInPrompt = false): ThinkAnswer | null {
  const text = thinkInPrompt ? `<think>${completion}` : completion;
  const m = /^\s*<think>([\s\S]*?)<\/think>\s*<answer>([\s\S]*?)<\/answer>\s*$/.exec(text);
  if (!m) return null;
  const think = m[1]!, answer = m[2]!;
  if (TAGS.test(think) || TAGS.test(answer) || answer.trim() === "") return null;
  return { think, answer };
}

/**
 * True when `completion` follows the layout in the given mode (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { checkFormat } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const loose = "Sure! <think>hmm</think> then <answer>4</answer> done";
 * assert.equal(checkFormat(loose, { mode: "strict" }), false);
 * assert.equal(checkFormat(loose, { mode: "relaxed" }), true);
 * ```
 */
export function checkFormat(completion: string, options?: FormatOptions): boolean {
  const opts = checkOptions<FormatOptions>("checkFormat", options, "{mode?, thinkInPrompt?}");
  const mode = checkChoice<FormatMode>("checkFormat", "options.mode", opts.mode ?? "strict", [
    "strict",
    "relaxed",
  ]);
  const inPrompt = opts.thinkInPrompt === true;
  if (typeof completion !== "string") return false;
  if (mode === "strict") return parseThinkAnswer(completion, inPrompt) !== null;
  const text = inPrompt ? `<think>${completion}` : completion;
  let at = 0;
  for (const tag of ["<think>", "</think>", "<answer>", "</answer>"]) {
    const j = text.indexOf(tag, at);
    if (j < 0) return false;
    at = j + tag.length;
  }
  return true;
}

/**
 * Format reward: 1 when the completion follows the think/answer layout, else 0 (see the module
 * doc for `strict` and `relaxed`).
 *
 * @example Usage
 * ```ts
 * import { formatReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const r = await scoreRewards([formatReward()], [
 *   { prompt: "", completion: "<think>2+2=4</think><answer>4</answer>", row: {} },
 *   { prompt: "", completion: "4", row: {} },
 * ]);
 * assert.deepEqual(r.totals, [1, 0]);
 * ```
 */
export function formatReward<R extends Row = Row>(options?: FormatOptions): Reward<R> {
  const opts = checkOptions<FormatOptions>(
    "formatReward",
    options,
    "{mode?, thinkInPrompt?, name?}",
  );
  checkChoice("formatReward", "options.mode", opts.mode ?? "strict", ["strict", "relaxed"]);
  const name = checkName("formatReward", "options.name", opts.name ?? "format");
  return defineReward<R>(name, ({ completion }) => (checkFormat(completion, opts) ? 1 : 0));
}
