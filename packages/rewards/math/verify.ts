/**
 * `verifyMath`: extract the final answer from a completion, extract the gold answer from its
 * field, and decide equivalence, with a reason either way.
 *
 * Design decision: it never throws. Any internal failure is reported as `correct: false` with the
 * reason, so a reward built on it gives 0, never a spurious 1 and never a failed batch.
 *
 * It cannot be hung either, while staying synchronous: the inputs, then each answer, are checked
 * against the size budget (`budget.ts`) before anything but a linear scan reads them, extraction is
 * linear in the completion, and one deadline (`timeLimitMs`) covers extraction and comparison,
 * checked inside every loop that could run long. An over-budget input is "not verified":
 * `correct: false` with a reason that starts with `refused:`.
 *
 * @module
 */

import { budgetRefusal, DEFAULT_BUDGET } from "./budget.ts";
import type { Verdict } from "./cas.ts";
import { answersEquivalent, type EquivalenceOptions } from "./equivalence.ts";
import {
  DEFAULT_STRATEGIES,
  extractAnswerReport,
  extractChoiceLetter,
  extractGold,
  type ExtractionStrategy,
  type ExtractOptions,
} from "./extract.ts";
import { parseChoice } from "./parse.ts";

/** Options of {@linkcode verifyMath}: extraction, equivalence and gold handling. */
export interface MathVerifyOptions extends EquivalenceOptions, ExtractOptions {
  /**
   * Take the gold answer out of a full solution (its last `\boxed{}`, or the text after `####`)
   * before comparing (default `true`); `false` compares the gold string as it is.
   */
  extractGold?: boolean;
  /**
   * Longer extracted answers are refused unread (default `1000` characters).
   *
   * @deprecated Use `maxLength`, the same limit, which also applies to the gold answer (and wins
   * when both are set).
   */
  maxAnswerLength?: number;
}

/** The verdict of {@linkcode verifyMath}. */
export interface MathVerifyResult {
  /** Whether the completion's final answer is equivalent to the gold answer. */
  correct: boolean;
  /** The answer extracted from the completion, or `null` when none was found. */
  extracted: string | null;
  /** Why: which rule decided equality, or what differed or failed. */
  reason: string;
  /** The strategy that found the answer, or `null`. */
  strategy: ExtractionStrategy | null;
  /** The gold answer that was compared against. */
  gold: string;
}

const CHOICE_STRATEGIES: readonly ExtractionStrategy[] = [
  "boxed",
  "tag",
  "hash",
  "phrase",
  "choice",
];

/**
 * Verifies a completion against a gold answer: extracts the final answer (last `\boxed{}` by
 * default, then `<answer>` tags, `####`, "the answer is", the last math or number), and compares
 * it with the gold answer exactly, numerically or symbolically. When the gold answer is a
 * multiple-choice letter, the fallbacks look for a committed letter instead of a number. The
 * whole call runs under one time limit (`timeLimitMs`, default 3000 ms), and inputs over the size
 * budget ({@linkcode MathBudget}: `maxInputLength`, `maxLength`, `maxDepth`, `maxExponent`,
 * `maxDigits`) are refused before any computation, with a reason that starts with `refused:`.
 *
 * @example Usage
 * ```ts
 * import { verifyMath } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const r = verifyMath("So the area is $\\boxed{\\dfrac{\\sqrt{2}}{2}}$.", "\\frac{1}{\\sqrt2}");
 * assert.equal(r.correct, true);
 * assert.equal(r.extracted, "\\dfrac{\\sqrt{2}}{2}");
 * assert.equal(verifyMath("\\boxed{0.333}", "\\frac13").correct, false);
 * assert.equal(verifyMath("I think it's (B).", "B").correct, true);
 * assert.equal(verifyMath("no idea", "5").extracted, null);
 * assert.match(verifyMath("\\boxed{1e999999}", "1e999998").reason, /^refused: .*maxExponent/);
 * ```
 */
export function verifyMath(
  completion: string,
  gold: string,
  options: MathVerifyOptions = {},
): MathVerifyResult {
  const start = performance.now();
  const timeLimitMs = options.timeLimitMs ?? 3000;
  const maxLength = options.maxLength ?? options.maxAnswerLength ?? DEFAULT_BUDGET.maxLength;
  const maxInput = options.maxInputLength ?? DEFAULT_BUDGET.maxInputLength;
  const o: MathVerifyOptions = { ...options, maxLength };
  let goldAnswer = "";
  const refused = (what: string, reason: string, extracted: string | null = null) => ({
    correct: false,
    extracted,
    reason: `refused: ${what} has ${reason}`,
    strategy: null,
    gold: goldAnswer,
  });
  try {
    const goldText = String(gold);
    const text = String(completion);
    if (goldText.length > maxInput) {
      const n = goldText.length;
      return refused("the gold field", `${n} characters, more than maxInputLength (${maxInput})`);
    }
    if (text.length > maxInput) {
      const n = text.length;
      return refused("the completion", `${n} characters, more than maxInputLength (${maxInput})`);
    }
    goldAnswer = options.extractGold === false ? goldText.trim() : extractGold(goldText);
    if (goldAnswer === "") {
      return {
        correct: false,
        extracted: null,
        reason: "empty gold answer",
        strategy: null,
        gold: "",
      };
    }
    // Before `parseChoice`, which normalises the text (superlinear in its nesting).
    const goldRefusal = budgetRefusal(goldAnswer, o);
    if (goldRefusal) return refused("the gold answer", goldRefusal);
    const goldChoice = parseChoice(goldAnswer);
    const strategies = options.strategies ??
      (goldChoice !== null ? CHOICE_STRATEGIES : DEFAULT_STRATEGIES);
    const report = extractAnswerReport(text, { ...options, strategies });
    if (!report.extraction) {
      return {
        correct: false,
        extracted: null,
        reason: report.reason,
        strategy: null,
        gold: goldAnswer,
      };
    }
    const { answer, strategy } = report.extraction;
    const answerRefusal = budgetRefusal(answer, o);
    if (answerRefusal) return { ...refused("the answer", answerRefusal, answer), strategy };
    const left = timeLimitMs - (performance.now() - start);
    if (left <= 0) {
      return {
        correct: false,
        extracted: answer,
        reason: `time limit (${timeLimitMs} ms) reached during extraction`,
        strategy,
        gold: goldAnswer,
      };
    }
    let verdict: Verdict = answersEquivalent(goldAnswer, answer, { ...o, timeLimitMs: left });
    if (!verdict.equal && goldChoice !== null && parseChoice(answer) === null) {
      // "The answer is the second one, (C)": a letter inside the answer counts when it is the only
      // letter named there ("(A) or (B)" commits to nothing).
      const letter = extractChoiceLetter(answer);
      const named = new Set(answer.match(/(?<![A-Za-z\\])[A-J](?![A-Za-z])/g) ?? []);
      if (letter !== null && named.size === 1) {
        verdict = letter === goldChoice
          ? { equal: true, reason: "same choice" }
          : { equal: false, reason: `choice ${letter} vs ${goldChoice}` };
      }
    }
    return {
      correct: verdict.equal,
      extracted: answer,
      reason: verdict.reason,
      strategy,
      gold: goldAnswer,
    };
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return {
      correct: false,
      extracted: null,
      reason: `internal error: ${msg}`,
      strategy: null,
      gold: goldAnswer,
    };
  }
}
