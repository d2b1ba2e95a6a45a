/**
 * `verifyMath`: extract the final answer from a completion, extract the gold answer from its
 * field, and decide equivalence, with a reason either way.
 *
 * Design decision: it never throws. Any internal failure is reported as `correct: false` with the
 * reason, so a reward built on it gives 0, never a spurious 1 and never a failed batch.
 *
 * @module
 */

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
  /** Longer extracted answers are rejected unread (default `1000` characters). */
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
 * whole comparison runs under one time limit (`timeLimitMs`, default 3000 ms).
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
 * ```
 */
export function verifyMath(
  completion: string,
  gold: string,
  options: MathVerifyOptions = {},
): MathVerifyResult {
  let goldAnswer = "";
  try {
    goldAnswer = options.extractGold === false ? String(gold).trim() : extractGold(String(gold));
    if (goldAnswer === "") {
      return {
        correct: false,
        extracted: null,
        reason: "empty gold answer",
        strategy: null,
        gold: "",
      };
    }
    const goldChoice = parseChoice(goldAnswer);
    const strategies = options.strategies ??
      (goldChoice !== null ? CHOICE_STRATEGIES : DEFAULT_STRATEGIES);
    const report = extractAnswerReport(String(completion), { ...options, strategies });
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
    const limit = options.maxAnswerLength ?? 1000;
    if (answer.length > limit) {
      return {
        correct: false,
        extracted: answer,
        reason: `extracted answer longer than ${limit} characters`,
        strategy,
        gold: goldAnswer,
      };
    }
    let verdict: Verdict = answersEquivalent(goldAnswer, answer, options);
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
