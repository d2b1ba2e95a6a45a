/**
 * RLCR's calibration reward (Damani et al., "Beyond Binary Rewards", arXiv 2507.16806):
 * correctness minus the Brier score of the confidence the model states,
 * `R = c − (q − c)²` with `c = 1[correct]` and `q ∈ [0, 1]`.
 *
 * Design: the confidence is read from `<confidence>0.8</confidence>` by default (the last such
 * tag; a percentage such as `80%` is read as 0.8); pass `parseConfidence` for another format.
 * A missing or unreadable confidence (no tag, not a number, outside [0, 1]) is handled by
 * `missingConfidence`:
 *
 * - `"worst"` (default): the worst Brier score, 1, so `R = c − 1` (0 if correct, −1 if not):
 *   omitting the confidence is never better than stating any confidence;
 * - a number `q0` in [0, 1]: that confidence is assumed;
 * - `"null"`: the reward does not apply (`null`).
 *
 * Correctness comes from a reward (correct when `>= correctThreshold`, default 1) or a
 * predicate; a `null` correctness makes the reward `null`.
 *
 * @module
 */

import { checkFunction, checkName, checkNumber, checkOptions, show } from "./_check.ts";
import { checkCorrectness, type Correctness, correctOne } from "./_correct.ts";
import { defineReward } from "./define.ts";
import type { Reward, Row } from "./types.ts";

/**
 * Reads the last `<confidence>…</confidence>` as a number in [0, 1] (`0.8`, `.8`, `80%`);
 * `null` when absent or invalid.
 *
 * @example Usage
 * ```ts
 * import { parseConfidence } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(parseConfidence("<answer>4</answer><confidence>0.8</confidence>"), 0.8);
 * assert.equal(parseConfidence("<confidence> 75% </confidence>"), 0.75);
 * assert.equal(parseConfidence("<confidence>1.5</confidence>"), null);
 * assert.equal(parseConfidence("no tag"), null);
 * ```
 */
export function parseConfidence(text: string): number | null {
  let last: string | null = null;
  for (const m of String(text).matchAll(/<confidence>([\s\S]*?)<\/confidence>/gi)) last = m[1]!;
  if (last === null) return null;
  const m = /^\s*([0-9]*\.?[0-9]+)\s*(%?)\s*$/.exec(last);
  if (!m) return null;
  const q = Number(m[1]) / (m[2] === "%" ? 100 : 1);
  return Number.isFinite(q) && q >= 0 && q <= 1 ? q : null;
}

/**
 * The RLCR reward of one sample: `c − (q − c)²` (`c` = 1 if correct else 0, `q` the confidence).
 *
 * @example Usage
 * ```ts
 * import { rlcrScore } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(rlcrScore(true, 1), 1);
 * assert.equal(rlcrScore(false, 0), 0);
 * assert.ok(Math.abs(rlcrScore(true, 0.8) - 0.96) < 1e-12);
 * assert.ok(Math.abs(rlcrScore(false, 0.8) - -0.64) < 1e-12);
 * ```
 */
export function rlcrScore(correct: boolean, confidence: number): number {
  const q = checkNumber("rlcrScore", "confidence", confidence, { min: 0, max: 1 });
  const c = correct ? 1 : 0;
  return c - (q - c) ** 2 + 0;
}

/** Options of {@link rlcrReward}. */
export interface RlcrOptions<R extends Row = Row> {
  /** Whether the answer is correct: a reward (correct when `>= correctThreshold`) or a predicate. */
  correct: Correctness<R>;
  /** A reward counts as correct at or above this value (default 1). */
  correctThreshold?: number;
  /** Reads the confidence from the completion (default {@link parseConfidence}). */
  parseConfidence?: (completion: string) => number | null;
  /** What a missing confidence means: `"worst"` (default), an assumed number in [0, 1], or `"null"`. */
  missingConfidence?: "worst" | "null" | number;
  /** Metric key (default `"rlcr"`). */
  name?: string;
}

/**
 * RLCR calibration reward: correctness minus the Brier score of the stated confidence (see the
 * module doc for parsing and missing confidences).
 *
 * @example Usage
 * ```ts
 * import { rlcrReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const rlcr = rlcrReward({ correct: ({ completion, row }) => completion.includes(`${row.answer}<`) });
 * const r = await scoreRewards([rlcr], [
 *   { prompt: "", completion: "<answer>4</answer><confidence>1</confidence>", row: { answer: 4 } },
 *   { prompt: "", completion: "<answer>5</answer><confidence>0.5</confidence>", row: { answer: 4 } },
 *   { prompt: "", completion: "<answer>5</answer>", row: { answer: 4 } },
 * ]);
 * assert.deepEqual(r.totals, [1, -0.25, -1]);
 * ```
 */
export function rlcrReward<R extends Row = Row>(options: RlcrOptions<R>): Reward<R> {
  const owner = "rlcrReward";
  const opts = checkOptions<RlcrOptions<R>>(
    owner,
    options,
    "{correct, correctThreshold?, parseConfidence?, missingConfidence?, name?}",
  );
  const correct = checkCorrectness<R>(owner, "options.correct", opts.correct);
  const threshold = checkNumber(owner, "options.correctThreshold", opts.correctThreshold ?? 1);
  const parse = opts.parseConfidence === undefined
    ? parseConfidence
    : checkFunction<(t: string) => number | null>(
      owner,
      "options.parseConfidence",
      opts.parseConfidence,
      "a function (completion) => number in [0, 1] | null",
    );
  const missing = opts.missingConfidence ?? "worst";
  if (
    missing !== "worst" && missing !== "null" &&
    !(typeof missing === "number" && missing >= 0 && missing <= 1)
  ) {
    throw new RangeError(
      `${owner}: options.missingConfidence must be "worst", "null" or a number in [0, 1], got ${
        show(missing)
      }`,
    );
  }
  const name = checkName(owner, "options.name", opts.name ?? "rlcr");
  return defineReward<R>(name, async (input, ctx) => {
    const ok = await correctOne(correct, input, ctx, threshold);
    if (ok === null) return null;
    let q = parse(input.completion);
    if (q !== null && !(typeof q === "number" && q >= 0 && q <= 1)) {
      throw new RangeError(
        `${owner}: options.parseConfidence returned ${
          show(q)
        }; it must return a number in [0, 1] or null`,
      );
    }
    if (q === null) {
      if (missing === "null") return null;
      if (missing === "worst") return (ok ? 1 : 0) - 1 + 0;
      q = missing;
    }
    return rlcrScore(ok, q);
  });
}
