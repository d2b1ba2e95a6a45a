/**
 * The compact prompt/answer format of the default task for the shipped char-level policy.
 *
 * Design decision: a char-level model of ~150K parameters cannot read the task's English
 * instructions, so an arithmetic row is shown as its expression without spaces followed by `=`
 * (`7*8=`) and the model answers with the bare result and `<eos>` (`56`). The answer is still
 * scored by the task's own verifier (`task.verify`), on the text inside `<answer>` tags when the
 * completion has them and on the trimmed completion otherwise, so a model that writes the tagged
 * format is scored the same way. Countdown and Knights and Knaves rows get compact prompts too
 * (`compactPrompt` of `cot.ts`); rows of other tasks keep their full prompt. The alphabet is
 * printable ASCII plus newline, so any task's prompt can be encoded.
 *
 * @module
 */

import { CharTokenizer } from "@rlvr/policy";
import { extractFinalAnswer, type Task, type TaskRow } from "@rlvr/rewards";
import { compactPrompt } from "./cot.ts";

/** The characters of the tiny policy's tokenizer: newline and printable ASCII, in id order. */
export const TINY_ALPHABET: readonly string[] = Object.freeze([
  "\n",
  ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)),
]);

/**
 * A fresh tokenizer over {@link TINY_ALPHABET} (the one saved with the shipped checkpoint).
 *
 * @example Usage
 * ```ts
 * import { tinyTokenizer } from "./format.ts";
 * import assert from "node:assert/strict";
 * const tok = tinyTokenizer();
 * assert.equal(tok.decode(tok.encode("7*8=", { addSpecialTokens: false })), "7*8=");
 * assert.equal(tok.vocabSize, 7 + 96);
 * ```
 */
export function tinyTokenizer(): CharTokenizer {
  return new CharTokenizer(TINY_ALPHABET);
}

/**
 * The prompt text of a task row: `expression=` without spaces for rows with an `expression`
 * (arithmetic), the compact form of `cot.ts` for Countdown (`3,5,7>22=`) and Knights and
 * Knaves rows (`Alice:Bob-;Bob:Alice=?`), `red circles?` for a shape-counting row (the image
 * comes before it, see `loop/prompt.ts`), the task's own prompt otherwise.
 *
 * @example Usage
 * ```ts
 * import { promptText } from "./format.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * assert.equal(promptText(row), row.expression.replaceAll(" ", "") + "=");
 * ```
 */
export function promptText(row: TaskRow): string {
  const expression = row.expression;
  if (typeof expression === "string") return `${expression.replaceAll(" ", "")}=`;
  if (typeof row.targetColor === "string" && typeof row.targetKind === "string") {
    return `${row.targetColor} ${row.targetKind}s?`;
  }
  return compactPrompt(row) ?? row.prompt;
}

/**
 * The target completion text of a row for supervised training: the reference answer (the
 * tokenizer adds nothing; the trainer appends `<eos>`).
 *
 * @example Usage
 * ```ts
 * import { answerText } from "./format.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * assert.equal(answerText(row), row.answer);
 * ```
 */
export function answerText(row: TaskRow): string {
  return row.answer;
}

/**
 * The verifiable reward of a completion: 1 when the task's verifier accepts its answer (inside
 * `<answer>` tags if present, else the trimmed completion), 0 otherwise.
 *
 * @example Usage
 * ```ts
 * import { completionReward } from "./format.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const row = task.row(0, 0);
 * assert.equal(completionReward(task, row, row.answer), 1);
 * assert.equal(completionReward(task, row, `<answer>${row.answer}</answer>`), 1);
 * assert.equal(completionReward(task, row, `${row.answer}0`), 0);
 * ```
 */
export function completionReward<R extends TaskRow>(
  task: Task<R>,
  row: R,
  completion: string,
): number {
  const answer = extractFinalAnswer(completion) ?? completion.trim();
  if (answer === "") return 0;
  return task.verify(row, answer) ? 1 : 0;
}
