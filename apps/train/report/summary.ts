/**
 * The summary numbers of a run, computed from its records: shown at the top of the report and
 * as the final table of `deno task train`.
 *
 * Design decision: every number is derived from `metrics.jsonl`/`eval.jsonl` here, in one
 * place, so the report and the terminal can never disagree, and a number that cannot be
 * computed (no eval yet) is shown as `-` rather than as 0.
 *
 * @module
 */

import type { EvalRecord, StepMetrics } from "../run/records.ts";

/** One row of the summary: a label and its formatted value. */
export interface SummaryRow {
  /** What the number is. */
  metric: string;
  /** The formatted value (`-` when it cannot be computed). */
  value: string;
}

function finite(values: readonly (number | null | undefined)[]): number[] {
  return values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
}

/**
 * Formats a number with about 4 significant digits (`-` for null).
 *
 * @example Usage
 * ```ts
 * import { formatNumber } from "./summary.ts";
 * import assert from "node:assert/strict";
 * assert.equal(formatNumber(0.123456), "0.1235");
 * assert.equal(formatNumber(1234.5), "1235");
 * assert.equal(formatNumber(2e-6), "2.000e-6");
 * assert.equal(formatNumber(null), "-");
 * ```
 */
export function formatNumber(value: number | null | undefined): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return "-";
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 1e6 || abs < 1e-3) return value.toExponential(3);
  if (abs >= 1000) return value.toFixed(0);
  return String(Number(value.toPrecision(4)));
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

function sum(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
}

/**
 * The summary rows of a run: steps, first and last reward mean, first, last and best held-out
 * pass@1 and the last pass@k, mean entropy and KL over the last 10% of steps, mean tokens/s
 * and total rollout and train time.
 *
 * @example Usage
 * ```ts
 * import { runSummary } from "./summary.ts";
 * import assert from "node:assert/strict";
 * const rows = runSummary(
 *   [{ step: 1, "reward/mean": 0.25 }, { step: 2, "reward/mean": 0.5 }],
 *   [{ step: 2, "pass@1": 0.4, "pass@k": 0.7, k: 4, n: 4 }],
 * );
 * const get = (m: string) => rows.find((r) => r.metric === m)!.value;
 * assert.equal(get("steps"), "2");
 * assert.equal(get("reward/mean first -> last"), "0.25 -> 0.5");
 * assert.equal(get("held-out pass@1 best"), "0.4 (step 2)");
 * assert.equal(get("time/train_s total"), "-");
 * ```
 */
export function runSummary(
  metrics: readonly Partial<StepMetrics>[],
  evals: readonly Partial<EvalRecord>[],
): SummaryRow[] {
  const col = (key: string) => metrics.map((m) => m[key] as number | null | undefined);
  const rewards = finite(col("reward/mean"));
  const tail = metrics.slice(Math.floor(metrics.length * 0.9));
  const tailMean = (key: string) => mean(finite(tail.map((m) => m[key] as number | null)));
  const pass1 = evals.filter((e) => typeof e["pass@1"] === "number");
  let best: Partial<EvalRecord> | undefined;
  for (const e of pass1) if (best === undefined || e["pass@1"]! > best["pass@1"]!) best = e;
  const lastEval = evals.at(-1);
  const lastStep = metrics.at(-1)?.step;
  return [
    { metric: "steps", value: lastStep === undefined ? "0" : String(metrics.length) },
    { metric: "last step", value: lastStep === undefined ? "-" : String(lastStep) },
    {
      metric: "reward/mean first -> last",
      value: rewards.length === 0
        ? "-"
        : `${formatNumber(rewards[0])} -> ${formatNumber(rewards.at(-1))}`,
    },
    {
      metric: "held-out pass@1 first -> last",
      value: pass1.length === 0
        ? "-"
        : `${formatNumber(pass1[0]!["pass@1"])} -> ${formatNumber(pass1.at(-1)!["pass@1"])}`,
    },
    {
      metric: "held-out pass@1 best",
      value: best === undefined ? "-" : `${formatNumber(best["pass@1"])} (step ${best.step})`,
    },
    {
      metric: "held-out pass@k last",
      value: lastEval === undefined || typeof lastEval["pass@k"] !== "number"
        ? "-"
        : `${formatNumber(lastEval["pass@k"])} (k=${lastEval.k}, n=${lastEval.n})`,
    },
    { metric: "entropy (last 10%)", value: formatNumber(tailMean("entropy")) },
    { metric: "kl (last 10%)", value: formatNumber(tailMean("kl")) },
    { metric: "tokens_per_s mean", value: formatNumber(mean(finite(col("tokens_per_s")))) },
    { metric: "time/rollout_s total", value: formatNumber(sum(finite(col("time/rollout_s")))) },
    { metric: "time/train_s total", value: formatNumber(sum(finite(col("time/train_s")))) },
  ];
}
