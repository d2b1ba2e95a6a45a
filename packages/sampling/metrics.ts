/**
 * Evaluation metrics over sampled responses: unbiased pass@k, avg@k, maj@k (majority vote),
 * percentile-bootstrap confidence intervals over problems, and the chi-square goodness-of-fit
 * test (with the regularized incomplete gamma function it needs) used to validate samplers.
 *
 * Design: every metric is computed per problem from that problem's `n` samples, then averaged
 * over problems; the uncertainty that matters for comparing checkpoints is over *problems*, so
 * {@link bootstrapCI} resamples problems (not samples) with a seeded {@link CounterRng}, which
 * makes an interval a pure function of the scores, the seed and the options.
 *
 * - pass@k is the unbiased estimator of Chen et al. (arXiv 2107.03374),
 *   `1 − C(n−c, k)/C(n, k)`, never formed from binomials: the ratio is a product of factors in
 *   [0, 1], so it neither overflows nor cancels (the same numbers as `@rlvr/advantage`'s
 *   `passAtK`, which this package does not import).
 * - avg@k (mean@k) estimates the expected mean score of k samples. That expectation is the
 *   per-sample expected score whatever k is, and its unbiased minimum-variance estimate from
 *   `n ≥ k` samples is the mean of all `n` scores (as pass@k uses all n); `k` is checked.
 * - maj@k votes over the first `k` samples (generation order). Ties go to the answer that
 *   appears first among them (Python's `Counter(answers).most_common(1)` rule); `null` and
 *   `undefined` answers (nothing extracted) abstain, and a problem where every sample abstains
 *   scores 0.
 *
 * @module
 */

import { checkFiniteArray, checkKnownFields, checkNumber, isArrayLike, show } from "./_args.ts";
import { CounterRng } from "./rng.ts";

/** `C(a, k) / C(b, k)` for integers `0 ≤ a ≤ b`, `k ≥ 0`, as a product of factors in [0, 1]. */
function binomialRatio(a: number, b: number, k: number): number {
  if (k > a) return 0;
  let r = 1;
  if (b - a <= k) {
    for (let i = a + 1; i <= b; i++) r *= 1 - k / i;
  } else {
    for (let j = 0; j < k; j++) r *= (a - j) / (b - j);
  }
  return r;
}

/**
 * The unbiased pass@k estimator from `n` samples of which `c` are correct:
 * `pass@k = 1 − C(n−c, k) / C(n, k)`, computed stably as a product of factors in [0, 1]
 * (exactly 1 when `n − c < k`, 0 when `c = 0`). Needs integers `n ≥ 1`, `0 ≤ c ≤ n`,
 * `1 ≤ k ≤ n`.
 *
 * @example Usage
 * ```ts
 * import { passAtK } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(passAtK(5, 2, 3), 0.9); // 1 − C(3,3)/C(5,3) = 1 − 1/10
 * assert.equal(passAtK(10, 0, 5), 0);
 * assert.equal(passAtK(10, 10, 5), 1);
 * assert.ok(Math.abs(passAtK(4, 1, 1) - 0.25) < 1e-15); // pass@1 = c/n
 * ```
 */
export function passAtK(n: number, c: number, k: number): number {
  const owner = "passAtK";
  checkNumber(owner, "n", n, { min: 1, integer: true });
  checkNumber(owner, "c", c, { min: 0, max: n, integer: true });
  checkNumber(owner, "k", k, { min: 1, max: n, integer: true });
  return 1 - binomialRatio(n - c, n, k);
}

/**
 * avg@k (mean@k): the expected mean score of k samples, estimated from a problem's `n ≥ k`
 * sample scores by their mean over all `n` (unbiased, and of least variance; the expectation
 * does not depend on `k`). Scores may be any finite numbers (e.g. 0/1 correctness or partial
 * credit). `k` defaults to `n`.
 *
 * @example Usage
 * ```ts
 * import { avgAtK } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(avgAtK([1, 0, 1, 1]), 0.75);
 * assert.equal(avgAtK([1, 0, 1, 1], 2), 0.75); // the same estimate, with k checked ≤ n
 * ```
 */
export function avgAtK(scores: ArrayLike<number>, k?: number): number {
  const owner = "avgAtK";
  const s = checkFiniteArray(owner, "scores", scores, 1);
  if (k !== undefined) checkNumber(owner, "k", k, { min: 1, max: s.length, integer: true });
  let sum = 0;
  for (let i = 0; i < s.length; i++) sum += s[i]!;
  return sum / s.length;
}

/** An extracted answer: a string or finite number; `null`/`undefined` when none was found. */
export type Answer = string | number | null | undefined;

/** The result of {@link majorityVote}. */
export interface Vote {
  /** The winning answer (`null` when every sample abstained). */
  answer: string | number | null;
  /** Its number of votes among the first k samples. */
  votes: number;
  /** The index of its first occurrence (−1 when every sample abstained). */
  index: number;
}

function checkAnswers(owner: string, answers: unknown): readonly Answer[] {
  if (!Array.isArray(answers)) {
    throw new TypeError(
      `${owner}: answers must be an array of strings, finite numbers or null, got ${show(answers)}`,
    );
  }
  for (let i = 0; i < answers.length; i++) {
    const a: unknown = answers[i];
    if (
      a !== null && a !== undefined && typeof a !== "string" &&
      !(typeof a === "number" && Number.isFinite(a))
    ) {
      throw new TypeError(
        `${owner}: answers[${i}] is ${
          show(a)
        }; answers must be strings, finite numbers, or null for "no answer"`,
      );
    }
  }
  return answers as readonly Answer[];
}

/**
 * Majority vote over the first `k` answers (default all). Answers are compared with `===`
 * (normalise them first, e.g. to canonical strings: `1` and `"1"` differ); `null`/`undefined`
 * abstain. Ties go to the answer whose first occurrence is earliest.
 *
 * @example Usage
 * ```ts
 * import { majorityVote } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual(majorityVote(["7", "3", "3", "7", null]), { answer: "7", votes: 2, index: 0 });
 * assert.deepEqual(majorityVote(["7", "3", "3", "7"], 3), { answer: "3", votes: 2, index: 1 });
 * assert.deepEqual(majorityVote([null, undefined]), { answer: null, votes: 0, index: -1 });
 * ```
 */
export function majorityVote(answers: readonly Answer[], k?: number): Vote {
  const owner = "majorityVote";
  const a = checkAnswers(owner, answers);
  const K = k === undefined ? a.length : checkNumber(owner, "k", k, {
    min: 1,
    max: Math.max(1, a.length),
    integer: true,
  });
  const counts = new Map<string | number, { votes: number; index: number }>();
  for (let i = 0; i < Math.min(K, a.length); i++) {
    const x = a[i];
    if (x === null || x === undefined) continue;
    const e = counts.get(x);
    if (e) e.votes++;
    else counts.set(x, { votes: 1, index: i });
  }
  let best: Vote = { answer: null, votes: 0, index: -1 };
  // Map iterates in first-occurrence order, so `>` keeps the earliest answer on ties.
  for (const [answer, e] of counts) {
    if (e.votes > best.votes) best = { answer, votes: e.votes, index: e.index };
  }
  return best;
}

/**
 * maj@k for one problem: 1 if the majority answer of the first `k` samples is correct, else 0.
 * `correct[i]` says whether sample `i`'s answer is correct; the winner's correctness is that of
 * its first occurrence. Ties and abstentions as in {@link majorityVote}; all abstaining scores 0.
 *
 * @example Usage
 * ```ts
 * import { majAtK } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const answers = ["12", "10", "12", null, "10"];
 * const correct = [true, false, true, false, false];
 * assert.equal(majAtK(answers, correct, 3), 1); // "12" ×2 beats "10" ×1
 * assert.equal(majAtK(answers, correct), 1); // tie 2–2: "12" appeared first
 * assert.equal(majAtK(["10", "12"], [false, true], 2), 0); // tie: "10" first
 * ```
 */
export function majAtK(
  answers: readonly Answer[],
  correct: readonly boolean[],
  k?: number,
): number {
  const owner = "majAtK";
  const a = checkAnswers(owner, answers);
  if (!Array.isArray(correct) || correct.length !== a.length) {
    throw new RangeError(
      `${owner}: correct must be an array of ${a.length} booleans (one per answer), got ${
        show(correct)
      }`,
    );
  }
  for (let i = 0; i < correct.length; i++) {
    if (typeof correct[i] !== "boolean") {
      throw new TypeError(`${owner}: correct[${i}] is ${show(correct[i])}; it must be a boolean`);
    }
  }
  if (k !== undefined) checkNumber(owner, "k", k, { min: 1, max: a.length, integer: true });
  const v = majorityVote(a, k);
  return v.index >= 0 && correct[v.index] ? 1 : 0;
}

/** Options of {@link bootstrapCI}. */
export interface BootstrapOptions {
  /** Number of bootstrap resamples (default 10000; at least 2). */
  resamples?: number;
  /** Coverage of the interval, in (0, 1) (default 0.95). */
  level?: number;
  /** RNG seed, an integer in [0, 2^53) (default 0). */
  seed?: number;
  /**
   * The statistic of a resample (default: the mean). It receives a `Float64Array` it may
   * reorder; it must return a finite number.
   */
  statistic?: (values: Float64Array) => number;
}

/** A point estimate with its bootstrap interval. */
export interface ConfidenceInterval {
  /** The statistic of the data itself. */
  estimate: number;
  /** Lower end: the `(1 − level)/2` quantile of the resampled statistics. */
  lower: number;
  /** Upper end: the `(1 + level)/2` quantile of the resampled statistics. */
  upper: number;
  /** The requested coverage. */
  level: number;
  /** The number of resamples. */
  resamples: number;
  /** The standard deviation of the resampled statistics (bootstrap standard error). */
  standardError: number;
}

function mean(v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]!;
  return s / v.length;
}

/** Type-7 (linear interpolation; NumPy's default) quantile of sorted values. */
function quantileSorted(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/**
 * A percentile-bootstrap confidence interval over problems: resamples the per-problem values
 * with replacement `resamples` times (seeded: the same inputs give the same interval), computes
 * the statistic (default the mean) of each resample, and returns the `(1 ∓ level)/2` quantiles
 * (linear interpolation, NumPy's default) around the statistic of the data. Feed it per-problem
 * pass@k, avg@k or maj@k scores.
 *
 * @example Usage
 * ```ts
 * import { bootstrapCI, passAtK } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const counts = [[16, 3], [16, 0], [16, 16], [16, 9], [16, 1], [16, 12]]; // [n, c] per problem
 * const perProblem = counts.map(([n, c]) => passAtK(n!, c!, 4));
 * const ci = bootstrapCI(perProblem, { resamples: 2000, level: 0.9, seed: 1 });
 * assert.ok(ci.lower <= ci.estimate && ci.estimate <= ci.upper);
 * assert.deepEqual(bootstrapCI(perProblem, { resamples: 2000, level: 0.9, seed: 1 }), ci);
 * ```
 */
export function bootstrapCI(
  values: ArrayLike<number>,
  options: BootstrapOptions = {},
): ConfidenceInterval {
  const owner = "bootstrapCI";
  const v = checkFiniteArray(owner, "values", values, 1);
  if (typeof options !== "object" || options === null) {
    throw new TypeError(
      `${owner}: options must be {resamples?, level?, seed?, statistic?}, got ${show(options)}`,
    );
  }
  checkKnownFields(owner, "options", options, ["resamples", "level", "seed", "statistic"]);
  const B = checkNumber(owner, "resamples", options.resamples ?? 10000, {
    min: 2,
    integer: true,
  });
  const level = checkNumber(owner, "level", options.level ?? 0.95, {
    min: 0,
    max: 1,
    minExclusive: true,
    maxExclusive: true,
  });
  const statistic = options.statistic ?? mean;
  if (typeof statistic !== "function") {
    throw new TypeError(
      `${owner}: statistic must be a function (values: Float64Array) => number, got ${
        show(statistic)
      }`,
    );
  }
  const rng = new CounterRng(options.seed ?? 0);
  const n = v.length;
  const data = Float64Array.from(v);
  const run = (x: Float64Array, what: string): number => {
    const s = statistic(x);
    if (typeof s !== "number" || !Number.isFinite(s)) {
      throw new RangeError(`${owner}: statistic returned ${show(s)} on ${what}; it must be finite`);
    }
    return s;
  };
  const estimate = run(data.slice(), "the data");
  const stats = new Float64Array(B);
  const resample = new Float64Array(n);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < n; i++) resample[i] = data[rng.nextInt(n)]!;
    stats[b] = run(resample, `resample ${b}`);
  }
  let m = 0;
  for (let b = 0; b < B; b++) m += stats[b]!;
  m /= B;
  let ss = 0;
  for (let b = 0; b < B; b++) ss += (stats[b]! - m) ** 2;
  stats.sort();
  return {
    estimate,
    lower: quantileSorted(stats, (1 - level) / 2),
    upper: quantileSorted(stats, (1 + level) / 2),
    level,
    resamples: B,
    standardError: Math.sqrt(ss / (B - 1)),
  };
}

// ---------------------------------------------------------------------------------------------
// Chi-square goodness of fit

const LANCZOS = [
  0.99999999999980993,
  676.5203681218851,
  -1259.1392167224028,
  771.32342877765313,
  -176.61502916214059,
  12.507343278686905,
  -0.13857109526572012,
  9.9843695780195716e-6,
  1.5056327351493116e-7,
];

/**
 * `ln Γ(x)` for `x > 0` (Lanczos approximation, g = 7, nine terms; relative error about
 * 1e-15).
 *
 * @example Usage
 * ```ts
 * import { lnGamma } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.ok(Math.abs(lnGamma(5) - Math.log(24)) < 1e-13); // Γ(5) = 4!
 * assert.ok(Math.abs(lnGamma(0.5) - Math.log(Math.sqrt(Math.PI))) < 1e-14);
 * ```
 */
export function lnGamma(x: number): number {
  checkNumber("lnGamma", "x", x, { min: 0, minExclusive: true });
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Series for P(a, x), valid (fast) for x < a + 1. */
function gammaPSeries(a: number, x: number): number {
  let term = 1 / a;
  let sum = term;
  for (let n = 1; n < 100000; n++) {
    term *= x / (a + n);
    sum += term;
    if (Math.abs(term) < Math.abs(sum) * 1e-16) break;
  }
  return sum * Math.exp(-x + a * Math.log(x) - lnGamma(a));
}

/** Continued fraction (modified Lentz) for Q(a, x), valid (fast) for x ≥ a + 1. */
function gammaQFraction(a: number, x: number): number {
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 100000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x + a * Math.log(x) - lnGamma(a)) * h;
}

function checkGammaArgs(owner: string, a: number, x: number): void {
  checkNumber(owner, "a", a, { min: 0, minExclusive: true });
  if (typeof x !== "number" || Number.isNaN(x) || x < 0) {
    throw new RangeError(`${owner}: x must be a number >= 0 (Infinity allowed), got ${show(x)}`);
  }
}

/**
 * The regularized lower incomplete gamma function `P(a, x) = γ(a, x)/Γ(a)` for `a > 0`,
 * `x ≥ 0` (series for `x < a + 1`, Lentz continued fraction otherwise; about 1e-14 absolute).
 *
 * @example Usage
 * ```ts
 * import { regularizedGammaP } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.ok(Math.abs(regularizedGammaP(1, 2) - (1 - Math.exp(-2))) < 1e-15); // a = 1: 1 − e^−x
 * ```
 */
export function regularizedGammaP(a: number, x: number): number {
  checkGammaArgs("regularizedGammaP", a, x);
  if (x === 0) return 0;
  if (x === Infinity) return 1;
  return x < a + 1 ? gammaPSeries(a, x) : 1 - gammaQFraction(a, x);
}

/**
 * The regularized upper incomplete gamma function `Q(a, x) = 1 − P(a, x)`, computed directly
 * in its tail (no cancellation for small `Q`).
 *
 * @example Usage
 * ```ts
 * import { regularizedGammaQ } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.ok(Math.abs(regularizedGammaQ(1, 50) / Math.exp(-50) - 1) < 1e-12);
 * ```
 */
export function regularizedGammaQ(a: number, x: number): number {
  checkGammaArgs("regularizedGammaQ", a, x);
  if (x === 0) return 1;
  if (x === Infinity) return 0;
  return x < a + 1 ? 1 - gammaPSeries(a, x) : gammaQFraction(a, x);
}

/**
 * The chi-square CDF with `df > 0` degrees of freedom: `P(df/2, x/2)`.
 *
 * @example Usage
 * ```ts
 * import { chiSquareCdf } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.ok(Math.abs(chiSquareCdf(3.841458820694124, 1) - 0.95) < 1e-12); // the 5% critical value
 * ```
 */
export function chiSquareCdf(x: number, df: number): number {
  checkNumber("chiSquareCdf", "df", df, { min: 0, minExclusive: true });
  return regularizedGammaP(df / 2, Math.max(0, x) / 2);
}

/**
 * The chi-square survival function (upper tail, the p-value of a statistic `x`):
 * `Q(df/2, x/2)`.
 *
 * @example Usage
 * ```ts
 * import { chiSquareSurvival } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.ok(Math.abs(chiSquareSurvival(18.307038053275146, 10) - 0.05) < 1e-12);
 * ```
 */
export function chiSquareSurvival(x: number, df: number): number {
  checkNumber("chiSquareSurvival", "df", df, { min: 0, minExclusive: true });
  return regularizedGammaQ(df / 2, Math.max(0, x) / 2);
}

/** The result of {@link chiSquareTest}. */
export interface ChiSquareResult {
  /** Pearson's statistic `Σ (O − E)² / E` over the bins with `E > 0`. */
  statistic: number;
  /** Degrees of freedom: bins with `E > 0`, minus 1, minus `ddof`. */
  df: number;
  /** `P(χ²_df ≥ statistic)`; 0 if a bin with `E = 0` was observed. */
  pValue: number;
  /** The smallest expected count (the test wants about 5 or more in every bin). */
  minExpected: number;
}

/**
 * Pearson's chi-square goodness-of-fit test of observed counts against expected probabilities
 * (scaled to the observed total; they need not sum to exactly 1). Bins with expected
 * probability 0 are left out of the statistic and the degrees of freedom, unless something was
 * observed there: then the statistic is `Infinity` and the p-value 0. `ddof` subtracts
 * estimated parameters from the degrees of freedom (SciPy's `chisquare(ddof=)`).
 *
 * @example Usage
 * ```ts
 * import { chiSquareTest } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const r = chiSquareTest([18, 22, 20, 40], [0.2, 0.2, 0.2, 0.4]);
 * assert.equal(r.df, 3);
 * assert.ok(Math.abs(r.statistic - 0.4) < 1e-12); // (4 + 4 + 0 + 0)/20
 * assert.ok(r.pValue > 0.9);
 * ```
 */
export function chiSquareTest(
  observed: ArrayLike<number>,
  expected: ArrayLike<number>,
  options: { ddof?: number } = {},
): ChiSquareResult {
  const owner = "chiSquareTest";
  const o = checkFiniteArray(owner, "observed", observed, 2);
  const e = checkFiniteArray(owner, "expected", expected, 2);
  if (!isArrayLike(e) || e.length !== o.length) {
    throw new RangeError(
      `${owner}: expected has ${e.length} bins but observed has ${o.length}; they must match`,
    );
  }
  const ddof = checkNumber(owner, "ddof", options.ddof ?? 0, { min: 0, integer: true });
  let total = 0;
  let mass = 0;
  for (let i = 0; i < o.length; i++) {
    if (o[i]! < 0) throw new RangeError(`${owner}: observed[${i}] is ${o[i]}; counts must be >= 0`);
    if (e[i]! < 0) {
      throw new RangeError(`${owner}: expected[${i}] is ${e[i]}; probabilities must be >= 0`);
    }
    total += o[i]!;
    mass += e[i]!;
  }
  if (mass <= 0) throw new RangeError(`${owner}: expected sums to 0; it needs positive mass`);
  let statistic = 0;
  let bins = 0;
  let minExpected = Infinity;
  for (let i = 0; i < o.length; i++) {
    const E = (e[i]! / mass) * total;
    if (E === 0) {
      if (o[i]! > 0) statistic = Infinity;
      continue;
    }
    bins++;
    minExpected = Math.min(minExpected, E);
    statistic += (o[i]! - E) ** 2 / E;
  }
  const df = bins - 1 - ddof;
  if (df < 1) {
    throw new RangeError(
      `${owner}: ${bins} bins with positive expected probability and ddof ${ddof} leave ${df} degrees of freedom; it needs at least 1`,
    );
  }
  const pValue = statistic === Infinity ? 0 : chiSquareSurvival(statistic, df);
  return { statistic, df, pValue, minExpected };
}
