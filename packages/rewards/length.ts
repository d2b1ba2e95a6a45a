/**
 * Length shaping: DAPO's soft overlong punishment, Kimi k1.5's group length reward and L1's
 * target-length penalty, plus the token counters they share.
 *
 * Design: lengths are measured in tokens by a {@link TokenCounter} the caller supplies, which
 * sees the text and the whole input (so a rollout engine that attached token ids can return
 * their count exactly). Without one, the fallback counts whitespace-separated words
 * ({@link wordCount}); {@link charCount} is the other built-in fallback. Neither equals a BPE
 * token count (English runs ≈ 0.75 words or ≈ 4 characters per token), so set the limits in the
 * unit the counter measures. Each shaping term is returned on its own, to be combined with the
 * accuracy reward via `weightedSum`.
 *
 * @module
 */

import { checkFunction, checkName, checkNumber, checkOptions, show } from "./_check.ts";
import { checkCorrectness, correctBatch, type Correctness } from "./_correct.ts";
import { defineBatchReward, defineReward } from "./define.ts";
import type { Reward, RewardInput, Row } from "./types.ts";

/** Counts the tokens of a completion; sees the input too (e.g. to read attached token ids). */
export type TokenCounter<R extends Row = Row> = (text: string, input: RewardInput<R>) => number;

/**
 * The fallback token counter: the number of whitespace-separated words.
 *
 * @example Usage
 * ```ts
 * import { wordCount } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(wordCount("  two\nwords "), 2);
 * assert.equal(wordCount(""), 0);
 * ```
 */
export function wordCount(text: string): number {
  const t = String(text).trim();
  return t === "" ? 0 : t.split(/\s+/).length;
}

/**
 * A token counter that counts UTF-16 code units (`text.length`).
 *
 * @example Usage
 * ```ts
 * import { charCount } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(charCount("abc d"), 5);
 * ```
 */
export function charCount(text: string): number {
  return String(text).length;
}

function counterOf<R extends Row>(owner: string, counter: unknown): TokenCounter<R> {
  if (counter === undefined) return wordCount;
  return checkFunction<TokenCounter<R>>(
    owner,
    "options.countTokens",
    counter,
    "a function (text, input) => number of tokens",
  );
}

function lengthOf<R extends Row>(
  owner: string,
  count: TokenCounter<R>,
  input: RewardInput<R>,
): number {
  const n = count(input.completion, input);
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) {
    throw new RangeError(
      `${owner}: countTokens returned ${show(n)}; a token counter must return a finite number >= 0`,
    );
  }
  return n;
}

/** Limits of DAPO's soft overlong punishment. */
export interface OverlongLimits {
  /** `L_max`: the length at and beyond which the penalty is −1 (> 0). */
  maxLength: number;
  /** `L_cache`: the width of the linear buffer before `L_max` (in [0, maxLength]). */
  cacheLength: number;
}

function checkLimits(owner: string, limits: unknown): OverlongLimits {
  const l = checkOptions<OverlongLimits>(owner, limits, "{maxLength, cacheLength}");
  const maxLength = checkNumber(owner, "maxLength", l.maxLength, { min: 0, minExclusive: true });
  const cacheLength = checkNumber(owner, "cacheLength", l.cacheLength, { min: 0, max: maxLength });
  return { maxLength, cacheLength };
}

/**
 * DAPO's soft overlong punishment (Yu et al., arXiv 2503.14476, eq. 13) of a length `|y|`:
 *
 * ```
 * R = 0                                  |y| ≤ L_max − L_cache
 * R = ((L_max − L_cache) − |y|) / L_cache    L_max − L_cache < |y| ≤ L_max
 * R = −1                                 |y| > L_max
 * ```
 *
 * so the penalty falls linearly from 0 to −1 over the buffer and is −1 at `L_max` exactly.
 *
 * @example Usage
 * ```ts
 * import { dapoOverlongPenalty } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const limits = { maxLength: 100, cacheLength: 20 };
 * assert.equal(dapoOverlongPenalty(80, limits), 0);
 * assert.equal(dapoOverlongPenalty(90, limits), -0.5);
 * assert.equal(dapoOverlongPenalty(100, limits), -1);
 * assert.equal(dapoOverlongPenalty(150, limits), -1);
 * ```
 */
export function dapoOverlongPenalty(length: number, limits: OverlongLimits): number {
  const { maxLength, cacheLength } = checkLimits("dapoOverlongPenalty", limits);
  const n = checkNumber("dapoOverlongPenalty", "length", length, { min: 0 });
  const start = maxLength - cacheLength;
  if (n <= start) return 0;
  if (n > maxLength) return -1;
  // A tiny cacheLength makes maxLength − cacheLength round, so the ratio can leave [−1, 0] by an ulp.
  return Math.max(-1, (start - n) / cacheLength);
}

/** Options of {@link dapoOverlongReward}. */
export interface OverlongOptions<R extends Row = Row> extends OverlongLimits {
  /** Token counter (default {@link wordCount}). */
  countTokens?: TokenCounter<R>;
  /** Metric key (default `"overlong"`). */
  name?: string;
}

/**
 * DAPO's soft overlong punishment as a reward (see {@link dapoOverlongPenalty}); add it to the
 * accuracy reward with `weightedSum`.
 *
 * @example Usage
 * ```ts
 * import { dapoOverlongReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const overlong = dapoOverlongReward({ maxLength: 4, cacheLength: 2 }); // in words
 * const r = await scoreRewards([overlong], [
 *   { prompt: "", completion: "a b", row: {} },
 *   { prompt: "", completion: "a b c", row: {} },
 *   { prompt: "", completion: "a b c d e", row: {} },
 * ]);
 * assert.deepEqual(r.totals, [0, -0.5, -1]);
 * ```
 */
export function dapoOverlongReward<R extends Row = Row>(options: OverlongOptions<R>): Reward<R> {
  const owner = "dapoOverlongReward";
  const opts = checkOptions<OverlongOptions<R>>(
    owner,
    options,
    "{maxLength, cacheLength, countTokens?, name?}",
  );
  const limits = checkLimits(owner, opts);
  const count = counterOf<R>(owner, opts.countTokens);
  const name = checkName(owner, "options.name", opts.name ?? "overlong");
  return defineReward<R>(
    name,
    (input) => dapoOverlongPenalty(lengthOf(owner, count, input), limits),
  );
}

/**
 * Kimi k1.5's length reward factors for one group of responses to the same prompt (Kimi Team,
 * arXiv 2501.12599, §2.3.3): `λ_i = 0.5 − (len_i − min_len)/(max_len − min_len)`, in
 * `[−0.5, 0.5]`, shortest 0.5, longest −0.5. When all lengths are equal (or the group has one
 * response) every λ is 0.
 *
 * @example Usage
 * ```ts
 * import { kimiLengthLambdas } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(kimiLengthLambdas([10, 20, 30]), [0.5, 0, -0.5]);
 * assert.deepEqual(kimiLengthLambdas([7, 7]), [0, 0]);
 * ```
 */
export function kimiLengthLambdas(lengths: readonly number[]): number[] {
  if (!Array.isArray(lengths)) {
    throw new TypeError(
      `kimiLengthLambdas: lengths must be an array of numbers, got ${show(lengths)}`,
    );
  }
  lengths.forEach((l, i) => checkNumber("kimiLengthLambdas", `lengths[${i}]`, l, { min: 0 }));
  if (lengths.length === 0) return [];
  const lo = Math.min(...lengths), hi = Math.max(...lengths);
  if (hi === lo) return lengths.map(() => 0);
  return lengths.map((l) => 0.5 - (l - lo) / (hi - lo));
}

/** Options of {@link kimiLengthReward}. */
export interface KimiLengthOptions<R extends Row = Row> {
  /** Whether each sample is correct: a reward (correct when `>= correctThreshold`) or a predicate. */
  correct: Correctness<R>;
  /** A reward counts as correct at or above this value (default 1). */
  correctThreshold?: number;
  /** Token counter (default {@link wordCount}). */
  countTokens?: TokenCounter<R>;
  /** Group key: responses with the same key are one group (default: the prompt). */
  groupBy?: (input: RewardInput<R>) => string;
  /** Metric key (default `"kimi_length"`). */
  name?: string;
}

/**
 * Kimi k1.5's length reward (a batched reward): within each group (same prompt by default),
 * `λ` from {@link kimiLengthLambdas}; a correct response gets `λ`, an incorrect one
 * `min(0, λ)`, so short correct answers are promoted and long wrong ones penalised, but a wrong
 * answer is never rewarded for being short. Where correctness is `null` the reward is `null`.
 * A correctness check that fails counts as incorrect (the runner's default fallback of 0).
 *
 * @example Usage
 * ```ts
 * import { kimiLengthReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const length = kimiLengthReward({ correct: ({ completion }) => completion.endsWith("4") });
 * const r = await scoreRewards([length], [
 *   { prompt: "2+2?", completion: "4", row: {} }, // shortest, correct: 0.5
 *   { prompt: "2+2?", completion: "so it is 4", row: {} }, // longest, correct: -0.5
 *   { prompt: "2+2?", completion: "five", row: {} }, // short but wrong: min(0, 0.5) = 0
 * ]);
 * assert.deepEqual(r.totals, [0.5, -0.5, 0]);
 * ```
 */
export function kimiLengthReward<R extends Row = Row>(options: KimiLengthOptions<R>): Reward<R> {
  const owner = "kimiLengthReward";
  const opts = checkOptions<KimiLengthOptions<R>>(
    owner,
    options,
    "{correct, correctThreshold?, countTokens?, groupBy?, name?}",
  );
  const correct = checkCorrectness<R>(owner, "options.correct", opts.correct);
  const threshold = checkNumber(owner, "options.correctThreshold", opts.correctThreshold ?? 1);
  const count = counterOf<R>(owner, opts.countTokens);
  const groupBy = opts.groupBy === undefined
    ? (x: RewardInput<R>) => x.prompt
    : checkFunction<(x: RewardInput<R>) => string>(
      owner,
      "options.groupBy",
      opts.groupBy,
      "a function (input) => string",
    );
  const name = checkName(owner, "options.name", opts.name ?? "kimi_length");
  return defineBatchReward<R>(name, async (inputs, ctx) => {
    const lengths = inputs.map((x) => lengthOf(owner, count, x));
    const ok = await correctBatch(correct, inputs, ctx, threshold);
    const groups = new Map<string, number[]>();
    inputs.forEach((x, i) => {
      const key = String(groupBy(x));
      const g = groups.get(key);
      if (g) g.push(i);
      else groups.set(key, [i]);
    });
    const out: (number | null)[] = inputs.map(() => null);
    for (const members of groups.values()) {
      const lambdas = kimiLengthLambdas(members.map((i) => lengths[i]!));
      members.forEach((i, k) => {
        const c = ok[i];
        out[i] = c === null || c === undefined ? null : c ? lambdas[k]! : Math.min(0, lambdas[k]!);
      });
    }
    return out;
  });
}

/** Options of {@link l1LengthReward}. */
export interface L1LengthOptions<R extends Row = Row> {
  /** `α`, the penalty per token of distance to the target (finite, >= 0; default 0.0003, L1's value). */
  alpha?: number;
  /** Row field holding the target length `n_gold` (default `"targetLength"`). */
  targetField?: string;
  /** Reads the target another way (overrides `targetField`), e.g. from the prompt. */
  target?: (input: RewardInput<R>) => number;
  /** Token counter (default {@link wordCount}). */
  countTokens?: TokenCounter<R>;
  /** Metric key (default `"l1_length"`). */
  name?: string;
}

/**
 * L1's target-length penalty (Aggarwal & Welleck, arXiv 2503.04697, LCPO-Exact):
 * `−α · |n_gold − n_y|`, with `n_gold` read from the row (`row.targetLength` by default; the
 * prompt should state it, e.g. "Think for 512 tokens"). L1's full reward adds the accuracy
 * reward: `weightedSum([{reward: accuracy, weight: 1}, {reward: l1LengthReward(), weight: 1}])`.
 * A row without a valid target is an error (recorded by the runner, naming the field).
 *
 * @example Usage
 * ```ts
 * import { l1LengthReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const l1 = l1LengthReward({ alpha: 0.1 });
 * const r = await scoreRewards([l1], [
 *   { prompt: "", completion: "a b c", row: { targetLength: 3 } },
 *   { prompt: "", completion: "a", row: { targetLength: 3 } },
 * ]);
 * assert.deepEqual(r.totals, [0, -0.2]);
 * ```
 */
export function l1LengthReward<R extends Row = Row>(options?: L1LengthOptions<R>): Reward<R> {
  const owner = "l1LengthReward";
  const opts = checkOptions<L1LengthOptions<R>>(
    owner,
    options,
    "{alpha?, targetField?, target?, countTokens?, name?}",
  );
  const alpha = checkNumber(owner, "options.alpha", opts.alpha ?? 0.0003, { min: 0 });
  const field = checkName(owner, "options.targetField", opts.targetField ?? "targetLength");
  const target = opts.target === undefined
    ? undefined
    : checkFunction<(x: RewardInput<R>) => number>(
      owner,
      "options.target",
      opts.target,
      "a function (input) => target length",
    );
  const count = counterOf<R>(owner, opts.countTokens);
  const name = checkName(owner, "options.name", opts.name ?? "l1_length");
  return defineReward<R>(name, (input) => {
    const gold = target ? target(input) : input.row[field];
    if (typeof gold !== "number" || !Number.isFinite(gold) || gold < 0) {
      throw new RangeError(
        `${owner}: ${target ? "options.target returned" : `row.${field} is`} ${
          show(gold)
        }; the target length must be a finite number >= 0 (set row.${field} or pass options.target)`,
      );
    }
    return 0 - alpha * Math.abs(gold - lengthOf(owner, count, input)); // 0, never -0
  });
}
