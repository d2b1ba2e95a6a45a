/**
 * Repetition penalty: the fraction of repeated n-grams in a completion.
 *
 * Design: follows open-r1's `repetition_penalty_reward`: the text is lower-cased and split on
 * whitespace, `fraction = 1 − distinct n-grams / total n-grams`, and the reward is
 * `fraction · maxPenalty` (`maxPenalty` ≤ 0, default −1), so a text with no repeated n-gram
 * scores 0 and one that repeats a single n-gram forever approaches `maxPenalty`. A text with
 * fewer than `n` tokens scores 0. Pass `tokenize` to count in model tokens instead of words.
 *
 * @module
 */

import { checkFunction, checkName, checkNumber, checkOptions, show } from "./_check.ts";
import { defineReward } from "./define.ts";
import type { Reward, Row } from "./types.ts";

/** Splits a text into tokens for n-gram counting. */
export type Tokenizer = (text: string) => readonly string[];

/** The default tokenizer: lower-cased whitespace-separated words. */
function words(text: string): string[] {
  const t = String(text).toLowerCase().trim();
  return t === "" ? [] : t.split(/\s+/);
}

/**
 * `1 − distinct / total` over the n-grams of `tokens` (0 when there are fewer than `n`).
 *
 * @example Usage
 * ```ts
 * import { repeatedNgramFraction } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * // bigrams: "a b", "b a", "a b", "b a" → 2 distinct of 4
 * assert.equal(repeatedNgramFraction(["a", "b", "a", "b", "a"], 2), 0.5);
 * assert.equal(repeatedNgramFraction(["a", "b", "c"], 2), 0);
 * assert.equal(repeatedNgramFraction(["a"], 2), 0);
 * ```
 */
export function repeatedNgramFraction(tokens: readonly string[], n: number): number {
  const size = checkNumber("repeatedNgramFraction", "n", n, { min: 1, integer: true });
  if (!Array.isArray(tokens)) {
    throw new TypeError(
      `repeatedNgramFraction: tokens must be an array of strings, got ${show(tokens)}`,
    );
  }
  const total = tokens.length - size + 1;
  if (total <= 0) return 0;
  const seen = new Set<string>();
  for (let i = 0; i < total; i++) seen.add(JSON.stringify(tokens.slice(i, i + size)));
  return 1 - seen.size / total;
}

/** Options of {@link repetitionPenalty}. */
export interface RepetitionOptions {
  /** n-gram size (integer >= 1; default 3). */
  n?: number;
  /** The penalty at full repetition (finite, <= 0; default −1). */
  maxPenalty?: number;
  /** Tokenizer (default: lower-cased whitespace split). */
  tokenize?: Tokenizer;
  /** Metric key (default `"repetition"`). */
  name?: string;
}

/**
 * Repetition penalty: `repeatedNgramFraction(tokens, n) · maxPenalty`, in `[maxPenalty, 0]`.
 *
 * @example Usage
 * ```ts
 * import { repetitionPenalty, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const rep = repetitionPenalty({ n: 2 });
 * const r = await scoreRewards([rep], [
 *   { prompt: "", completion: "the cat sat on the mat", row: {} },
 *   { prompt: "", completion: "a b a b a", row: {} },
 * ]);
 * assert.deepEqual(r.totals, [0, -0.5]);
 * ```
 */
export function repetitionPenalty<R extends Row = Row>(options?: RepetitionOptions): Reward<R> {
  const owner = "repetitionPenalty";
  const opts = checkOptions<RepetitionOptions>(
    owner,
    options,
    "{n?, maxPenalty?, tokenize?, name?}",
  );
  const n = checkNumber(owner, "options.n", opts.n ?? 3, { min: 1, integer: true });
  const maxPenalty = checkNumber(owner, "options.maxPenalty", opts.maxPenalty ?? -1, { max: 0 });
  const tokenize = opts.tokenize === undefined ? words : checkFunction<Tokenizer>(
    owner,
    "options.tokenize",
    opts.tokenize,
    "a function (text) => string[]",
  );
  const name = checkName(owner, "options.name", opts.name ?? "repetition");
  return defineReward<R>(
    name,
    ({ completion }) => repeatedNgramFraction(tokenize(completion), n) * maxPenalty + 0,
  );
}
