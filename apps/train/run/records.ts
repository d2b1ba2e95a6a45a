/**
 * The records of a run directory: one {@link StepMetrics} per training step in
 * `metrics.jsonl`, one {@link EvalRecord} per evaluation in `eval.jsonl`, and
 * {@link SampleRecord}s at intervals in `samples.jsonl`; plus the checks applied when they are
 * written.
 *
 * Design decision: metric names are veRL/TRL-style slash keys (`reward/mean`,
 * `clip_frac/high`), the same strings in the JSONL, the report and the progress line, so a
 * metric is found by grep everywhere. A step record must carry every key of
 * {@link REQUIRED_METRICS} (a number, or null where a value does not exist, e.g. `kl` when no
 * reference model is used) so plots never silently miss a series; extra keys are allowed.
 *
 * @module
 */

/** The keys every `metrics.jsonl` record has. */
export const REQUIRED_METRICS: readonly string[] = Object.freeze([
  "step",
  "reward/mean",
  "reward/std",
  "frac_zero_std_groups",
  "response_length/mean",
  "entropy",
  "kl",
  "clip_frac/low",
  "clip_frac/high",
  "grad_norm",
  "lr",
  "tokens_per_s",
  "time/rollout_s",
  "time/train_s",
]);

/** One training step's metrics (`metrics.jsonl`). */
export interface StepMetrics {
  /** The step (integer >= 0), strictly increasing through the file. */
  step: number;
  /** Any metric: a number, or null where it does not exist. */
  [key: string]: number | null;
}

/** One evaluation on held-out problems (`eval.jsonl`). */
export interface EvalRecord {
  /** The training step the evaluated policy had completed. */
  step: number;
  /** Mean over problems of the unbiased pass@1 estimate from `n` samples. */
  "pass@1": number;
  /** Mean over problems of the unbiased pass@k estimate from `n` samples. */
  "pass@k": number;
  /** The k of pass@k. */
  k: number;
  /** Samples per problem. */
  n: number;
  /** Extra fields (problem count, mean length, ...). */
  [key: string]: number | string | null;
}

/** One sampled completion (`samples.jsonl`). */
export interface SampleRecord {
  /** The training step it was sampled at. */
  step: number;
  /** The prompt as the model saw it. */
  prompt: string;
  /** The completion. */
  completion: string;
  /** Its total reward. */
  reward: number;
  /** Extra fields (reference answer, reward components, ...). */
  [key: string]: unknown;
}

function isStep(x: unknown): x is number {
  return typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
}

/**
 * Checks a step record before it is written; throws naming the key and the fix.
 *
 * @example Usage
 * ```ts
 * import { checkStepMetrics, REQUIRED_METRICS } from "./records.ts";
 * import assert from "node:assert/strict";
 * const record = Object.fromEntries(REQUIRED_METRICS.map((k) => [k, 0]));
 * checkStepMetrics(record);
 * assert.throws(() => checkStepMetrics({ ...record, kl: undefined }), /missing "kl"/);
 * assert.throws(() => checkStepMetrics({ ...record, lr: "high" }), /"lr" must be a number or null/);
 * ```
 */
export function checkStepMetrics(record: Record<string, unknown>): asserts record is StepMetrics {
  if (!isStep(record.step)) {
    throw new TypeError(
      `metrics: step must be an integer >= 0, got ${JSON.stringify(record.step)}`,
    );
  }
  for (const key of REQUIRED_METRICS) {
    if (!(key in record) || record[key] === undefined) {
      throw new TypeError(
        `metrics: step ${record.step} is missing "${key}"; every record needs ${
          REQUIRED_METRICS.join(", ")
        } (use null for a value that does not exist)`,
      );
    }
  }
  for (const [key, value] of Object.entries(record)) {
    if (value !== null && (typeof value !== "number" || !Number.isFinite(value))) {
      throw new TypeError(
        `metrics: step ${record.step}: "${key}" must be a number or null, got ${
          typeof value === "number" ? String(value) : JSON.stringify(value)
        } (write null for a missing or non-finite value)`,
      );
    }
  }
}

/**
 * Checks an eval record before it is written.
 *
 * @example Usage
 * ```ts
 * import { checkEvalRecord } from "./records.ts";
 * import assert from "node:assert/strict";
 * checkEvalRecord({ step: 10, "pass@1": 0.25, "pass@k": 0.5, k: 4, n: 4 });
 * assert.throws(() => checkEvalRecord({ step: 10, "pass@1": 1.5, "pass@k": 1, k: 4, n: 4 }), /pass@1/);
 * assert.throws(() => checkEvalRecord({ step: 10, "pass@1": 0.5, "pass@k": 1, k: 8, n: 4 }), /k must be/);
 * ```
 */
export function checkEvalRecord(record: Record<string, unknown>): asserts record is EvalRecord {
  if (!isStep(record.step)) {
    throw new TypeError(`eval: step must be an integer >= 0, got ${JSON.stringify(record.step)}`);
  }
  for (const key of ["pass@1", "pass@k"]) {
    const v = record[key];
    if (typeof v !== "number" || !(v >= 0 && v <= 1)) {
      throw new RangeError(
        `eval: step ${record.step}: "${key}" must be a number in [0, 1], got ${JSON.stringify(v)}`,
      );
    }
  }
  const { k, n } = record;
  if (!isStep(n) || n < 1) {
    throw new RangeError(`eval: n must be an integer >= 1, got ${JSON.stringify(n)}`);
  }
  if (!isStep(k) || k < 1 || k > n) {
    throw new RangeError(`eval: k must be an integer in [1, n = ${n}], got ${JSON.stringify(k)}`);
  }
}

/**
 * Checks a sample record before it is written.
 *
 * @example Usage
 * ```ts
 * import { checkSampleRecord } from "./records.ts";
 * import assert from "node:assert/strict";
 * checkSampleRecord({ step: 0, prompt: "1+1?", completion: "<answer>2</answer>", reward: 1 });
 * assert.throws(() => checkSampleRecord({ step: 0, prompt: "p", completion: 2, reward: 1 }), /completion/);
 * ```
 */
export function checkSampleRecord(
  record: Record<string, unknown>,
): asserts record is SampleRecord {
  if (!isStep(record.step)) {
    throw new TypeError(
      `samples: step must be an integer >= 0, got ${JSON.stringify(record.step)}`,
    );
  }
  for (const key of ["prompt", "completion"]) {
    if (typeof record[key] !== "string") {
      throw new TypeError(
        `samples: step ${record.step}: ${key} must be a string, got ${typeof record[key]}`,
      );
    }
  }
  if (typeof record.reward !== "number" || !Number.isFinite(record.reward)) {
    throw new TypeError(
      `samples: step ${record.step}: reward must be a finite number, got ${
        JSON.stringify(record.reward)
      }`,
    );
  }
}
