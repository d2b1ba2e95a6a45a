/**
 * The metrics `deno task eval` reports, each with a 95% confidence interval: pass@1, pass@k,
 * avg@k and maj@k, computed per problem with `@rlvr/sampling`'s estimators and averaged over
 * problems.
 *
 * Design decisions:
 * - **pass@1 and pass@k** are the unbiased estimators of Chen et al. (`passAtK(n, c, k)`), the
 *   numbers `deno task train` logs.
 * - **avg@k** is `avgAtK`: the mean of all n sample rewards of a problem, the unbiased estimate
 *   of the expected score of one sample. With the 0/1 verifier reward it equals pass@1 exactly
 *   (both are c/n per problem); it is reported because it would differ from pass@1 for a
 *   partial-credit reward.
 * - **maj@k** is `majAtK` over the first k samples (generation order) of a problem: the most
 *   frequent final answer wins; a tie goes to the answer that appeared first; a sample with no
 *   answer abstains, and a problem where all abstain scores 0. Answers are compared by
 *   {@link voteKey} (`normalizeAnswer`'s value with units, currency and LaTeX spelling removed,
 *   numbers by exact value), so `18`, `$18` and `18.0` are one vote.
 * - **Confidence intervals**: `bootstrapCI`, the percentile bootstrap over problems (problems
 *   resampled with replacement, {@link CI_RESAMPLES} times, seeded), which is the uncertainty
 *   that matters when comparing checkpoints on a finite problem set. The interval is a pure
 *   function of the per-problem scores and the seed.
 *
 * @module
 */

import { extractFinalAnswer, normalizeAnswer, parseNumber, type Task } from "@rlvr/rewards";
import { avgAtK, bootstrapCI, type ConfidenceInterval, majAtK, passAtK } from "@rlvr/sampling";
import type { TaskRow } from "@rlvr/rewards";

/** Bootstrap resamples of every interval. */
export const CI_RESAMPLES = 10_000;

/** Coverage of every interval. */
export const CI_LEVEL = 0.95;

/** The interval method, as printed and written to `eval.jsonl`. */
export const CI_METHOD = "percentile bootstrap over problems";

/** One problem's samples, in sample order. */
export interface ProblemSamples {
  /** The verifier reward of each sample (0 or 1). */
  rewards: readonly number[];
  /** The final answer of each sample (`null`: none found, an abstention in maj@k). */
  answers: readonly (string | null)[];
}

/** The metric names, in report order. */
export const EVAL_METRICS = ["pass@1", "pass@k", "avg@k", "maj@k"] as const;

/** A metric name. */
export type EvalMetricName = typeof EVAL_METRICS[number];

/** What {@link evalMetrics} returns. */
export interface EvalMetrics {
  /** Samples per problem. */
  n: number;
  /** The k of pass@k, avg@k and maj@k. */
  k: number;
  /** Problems. */
  problems: number;
  /** Each metric with its interval. */
  metrics: Record<EvalMetricName, ConfidenceInterval>;
  /** How the intervals were made. */
  ci: { method: string; level: number; resamples: number; seed: number };
}

/** Options of {@link evalMetrics}. */
export interface EvalMetricsOptions {
  /** Bootstrap seed (default 0). */
  seed?: number;
  /** Bootstrap resamples (default {@link CI_RESAMPLES}). */
  resamples?: number;
}

/**
 * The key a final answer votes with in maj@k: numbers by exact value (`18.0` and `18` agree),
 * anything else by `normalizeAnswer`'s value (units, currency, `\text{}` and spacing removed),
 * with a `%` kept; `null` (no answer) stays `null`.
 *
 * @example Usage
 * ```ts
 * import { voteKey } from "./eval_metrics.ts";
 * import assert from "node:assert/strict";
 * assert.equal(voteKey("18"), voteKey("\\$18.00"));
 * assert.notEqual(voteKey("18"), voteKey("19"));
 * assert.equal(voteKey(null), null);
 * ```
 */
export function voteKey(answer: string | null): string | null {
  if (answer === null) return null;
  try {
    const { value, percent } = normalizeAnswer(answer);
    const num = parseNumber(value);
    const base = num === null
      ? value
      : num.kind === "finite"
      ? `${num.value.num}/${num.value.den}`
      : `${num.sign}inf`;
    return percent ? `${base}%` : base;
  } catch {
    return answer.trim();
  }
}

/**
 * The final answer of a completion as the task's verifier reads it: a task with an
 * `extract(row, completion)` method (a dataset task) says it; otherwise the text inside
 * `<answer>` tags or `\boxed{}`, else the trimmed completion (what `completionReward` gives the
 * verifier). `null` when there is none.
 *
 * @example Usage
 * ```ts
 * import { finalAnswer } from "./eval_metrics.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const row = task.row(0, 0);
 * assert.equal(finalAnswer(task, row, " 12 "), "12");
 * assert.equal(finalAnswer(task, row, "so <answer>7</answer>"), "7");
 * assert.equal(finalAnswer(task, row, ""), null);
 * ```
 */
export function finalAnswer<R extends TaskRow>(
  task: Task<R>,
  row: R,
  completion: string,
): string | null {
  const extract = (task as { extract?: unknown }).extract;
  if (typeof extract === "function") {
    return (extract as (row: R, completion: string) => string | null).call(task, row, completion);
  }
  const answer = extractFinalAnswer(completion) ?? completion.trim();
  return answer === "" ? null : answer;
}

/**
 * pass@1, pass@k, avg@k and maj@k over problems, each with its 95% percentile-bootstrap
 * interval (see the module doc). Every problem needs the same number n >= k of samples.
 *
 * @example Usage
 * ```ts
 * import { evalMetrics } from "./eval_metrics.ts";
 * import assert from "node:assert/strict";
 * const m = evalMetrics([
 *   { rewards: [1, 0, 0, 1], answers: ["4", "5", "5", "4"] }, // tie 2-2: "4" came first
 *   { rewards: [0, 0, 0, 0], answers: ["1", null, "2", "2"] },
 * ], 4, { resamples: 200 });
 * assert.equal(m.metrics["pass@1"].estimate, 0.25);
 * assert.equal(m.metrics["avg@k"].estimate, 0.25); // = pass@1 for 0/1 rewards
 * assert.equal(m.metrics["pass@k"].estimate, 0.5);
 * assert.equal(m.metrics["maj@k"].estimate, 0.5);
 * assert.ok(m.metrics["pass@k"].lower <= 0.5 && m.metrics["pass@k"].upper >= 0.5);
 * ```
 */
export function evalMetrics(
  problems: readonly ProblemSamples[],
  k: number,
  options: EvalMetricsOptions = {},
): EvalMetrics {
  if (problems.length === 0) {
    throw new RangeError("evalMetrics: no problems; evaluate at least one");
  }
  const n = problems[0]!.rewards.length;
  problems.forEach((p, i) => {
    if (p.rewards.length !== n || p.answers.length !== n) {
      throw new RangeError(
        `evalMetrics: problem ${i} has ${p.rewards.length} rewards and ${p.answers.length} answers; every problem needs n = ${n} of each`,
      );
    }
  });
  if (!Number.isInteger(k) || k < 1 || k > n) {
    throw new RangeError(`evalMetrics: k must be an integer in [1, n = ${n}], got ${k}`);
  }
  const per: Record<EvalMetricName, number[]> = {
    "pass@1": [],
    "pass@k": [],
    "avg@k": [],
    "maj@k": [],
  };
  for (const p of problems) {
    const correct = p.rewards.map((r) => r > 0);
    const c = correct.filter(Boolean).length;
    per["pass@1"].push(passAtK(n, c, 1));
    per["pass@k"].push(passAtK(n, c, k));
    per["avg@k"].push(avgAtK(p.rewards, k));
    per["maj@k"].push(majAtK(p.answers.map(voteKey), correct, k));
  }
  const seed = options.seed ?? 0;
  const resamples = options.resamples ?? CI_RESAMPLES;
  const metrics = Object.fromEntries(
    EVAL_METRICS.map((name) => [
      name,
      bootstrapCI(per[name], { resamples, level: CI_LEVEL, seed }),
    ]),
  ) as Record<EvalMetricName, ConfidenceInterval>;
  return {
    n,
    k,
    problems: problems.length,
    metrics,
    ci: { method: CI_METHOD, level: CI_LEVEL, resamples, seed },
  };
}
