/**
 * The statistical rule that turns a study's numbers into its verdict, fixed before any run.
 *
 * Design decisions:
 * - **Paired by seed.** Every arm of a study runs with the same seeds, so seed `s` of arm A
 *   and seed `s` of arm B share their warm start, problem order and sampler stream up to the
 *   studied factor; a comparison is the per-seed difference B − A.
 * - **Percentile bootstrap over seeds** of the mean difference (10 000 resamples with a fixed
 *   generator, 95%): with 3 seeds the interval is coarse, and that coarseness is the honest
 *   answer; it is reported, never narrowed by picking seeds.
 * - **The verdict**: a comparison *holds* when its interval lies entirely on the claimed side
 *   (`>`: above 0, `<`: below 0, `>=`: above −margin, i.e. not worse by more than the margin);
 *   it is *refuted* when its interval lies entirely on the other side (`>`: below 0, `<`: above
 *   0, `>=`: below −margin). A study is `reproduced` when every comparison holds, `not
 *   reproduced` when any is refuted, and `inconclusive` otherwise.
 *
 * @module
 */

import { mulberry32 } from "@rlvr/common";

/** A mean and its bootstrap interval. */
export interface Interval {
  /** The mean of the values. */
  mean: number;
  /** Lower end of the interval. */
  low: number;
  /** Upper end of the interval. */
  high: number;
}

/**
 * The percentile-bootstrap interval of the mean of `values` (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { bootstrapMean } from "./verdict.ts";
 * import assert from "node:assert/strict";
 * const ci = bootstrapMean([1, 2, 3]);
 * assert.equal(ci.mean, 2);
 * assert.ok(ci.low >= 1 && ci.low <= 2 && ci.high >= 2 && ci.high <= 3);
 * ```
 */
export function bootstrapMean(
  values: readonly number[],
  options: { resamples?: number; level?: number; seed?: number } = {},
): Interval {
  if (values.length === 0 || values.some((v) => !Number.isFinite(v))) {
    throw new RangeError(
      `bootstrapMean: values must be finite numbers, at least one; got ${JSON.stringify(values)}`,
    );
  }
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const resamples = options.resamples ?? 10_000;
  const level = options.level ?? 0.95;
  const rand = mulberry32(options.seed ?? 12345);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[Math.floor(rand() * n)]!;
    means[r] = s / n;
  }
  means.sort();
  const at = (q: number) => means[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))]!;
  const tail = (1 - level) / 2;
  return { mean, low: Math.min(at(tail), mean), high: Math.max(at(1 - tail), mean) };
}

/** What a comparison claims of the difference B − A. */
export type Claim = ">" | "<" | ">=";

/** One comparison of a study (see the module doc). */
export interface Comparison {
  /** The metric compared (a key of the per-run numbers). */
  metric: string;
  /** The baseline arm A. */
  a: string;
  /** The arm B. */
  b: string;
  /** What the study's source claims of B − A. */
  claim: Claim;
  /** For `>=`: how much worse B may be and still count (default 0). */
  margin?: number;
}

/** A comparison with its numbers and outcome. */
export interface JudgedComparison extends Comparison {
  /** B − A per seed, in seed order. */
  differences: number[];
  /** The mean difference and its interval. */
  interval: Interval;
  /** Whether the interval lies on the claimed side, the other side, or across. */
  outcome: "holds" | "refuted" | "undecided";
}

/** A study's verdict. */
export type Verdict = "reproduced" | "not reproduced" | "inconclusive";

/**
 * Judges one comparison from per-seed values of its two arms.
 *
 * @example Usage
 * ```ts
 * import { judgeComparison } from "./verdict.ts";
 * import assert from "node:assert/strict";
 * const j = judgeComparison({ metric: "pass@1", a: "base", b: "rl", claim: ">" }, [0.1, 0.2, 0.1], [0.3, 0.4, 0.35]);
 * assert.equal(j.outcome, "holds");
 * ```
 */
export function judgeComparison(
  c: Comparison,
  a: readonly number[],
  b: readonly number[],
): JudgedComparison {
  if (a.length !== b.length || a.length === 0) {
    throw new RangeError(
      `judgeComparison: ${c.metric}: arms ${c.a} and ${c.b} need the same seeds, got ${a.length} and ${b.length} values`,
    );
  }
  const differences = a.map((x, i) => b[i]! - x);
  // A run that did not produce the number (no evaluation, a null metric) decides nothing.
  if (differences.some((d) => !Number.isFinite(d))) {
    return {
      ...c,
      differences,
      interval: { mean: NaN, low: NaN, high: NaN },
      outcome: "undecided",
    };
  }
  const interval = bootstrapMean(differences);
  const edge = c.claim === ">=" ? -(c.margin ?? 0) : 0;
  let outcome: JudgedComparison["outcome"] = "undecided";
  if (c.claim === "<") {
    if (interval.high < 0) outcome = "holds";
    else if (interval.low > 0) outcome = "refuted";
  } else {
    if (interval.low > edge) outcome = "holds";
    else if (interval.high < edge) outcome = "refuted";
  }
  return { ...c, differences, interval, outcome };
}

/**
 * The verdict of judged comparisons (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { verdictOf } from "./verdict.ts";
 * import assert from "node:assert/strict";
 * assert.equal(verdictOf([{ outcome: "holds" }, { outcome: "undecided" }]), "inconclusive");
 * assert.equal(verdictOf([{ outcome: "holds" }, { outcome: "refuted" }]), "not reproduced");
 * assert.equal(verdictOf([{ outcome: "holds" }]), "reproduced");
 * ```
 */
export function verdictOf(judged: readonly Pick<JudgedComparison, "outcome">[]): Verdict {
  if (judged.some((j) => j.outcome === "refuted")) return "not reproduced";
  if (judged.length > 0 && judged.every((j) => j.outcome === "holds")) return "reproduced";
  return "inconclusive";
}

/** The rule in words, as `result.json` and the report state it. */
export const VERDICT_RULE: string =
  "Per comparison, the per-seed difference B - A (arms run with the same seeds) and the 95% " +
  "percentile-bootstrap interval of its mean (10000 resamples). A comparison holds when the " +
  "interval lies entirely on the claimed side (> : above 0; < : below 0; >= : above -margin) " +
  "and is refuted when it lies entirely on the other side. Reproduced: every comparison holds; " +
  "not reproduced: some comparison is refuted; inconclusive: otherwise.";
