/**
 * The reward runner: scores a batch of samples with several rewards and never fails the batch
 * because of one sample.
 *
 * Design: every call (one sample of a per-sample reward, or one whole batch of a batched reward)
 * runs under its own time budget (an AbortSignal that fires at the limit, raced against the
 * call) and a shared concurrency limit. An exception, a timeout, or a returned value that is not
 * a finite number or `null` scores the fallback `onError` (0 by default; `null` makes the sample
 * "not applicable" for that reward) and is recorded with its reason in a {@link RewardOutcome}.
 * Composite rewards (`weightedSum`, `gated` ...) are opened up: each component is scored as a
 * reward of its own, recorded under `composite/component`, then combined; a reward object used
 * by several composites is scored once per call. Per-sample totals sum the top-level rewards,
 * treating `null` as absent. A synchronous reward that loops forever cannot be interrupted
 * (JavaScript has no preemption); make long computations async and honour `ctx.signal`.
 *
 * @module
 */

import { checkNumber, checkOptions, show } from "./_check.ts";
import {
  checkReward,
  DEFAULT_CONCURRENCY,
  DEFAULT_TIMEOUT_MS,
  evaluate,
  Limiter,
} from "./_evaluate.ts";
import type { Reward, RewardInput, RewardOutcome, RewardStatus, Row } from "./types.ts";

/** Options of {@link scoreRewards}. */
export interface ScoreOptions {
  /** Time budget per call in ms (> 0 or `Infinity`; default 10 000). A reward's own `timeoutMs` wins. */
  timeoutMs?: number;
  /** Score given on error, timeout or an invalid value (default 0; `null` = not applicable). */
  onError?: number | null;
  /** Most reward calls in flight at once, over all rewards (integer >= 1; default 32). */
  concurrency?: number;
  /** Aborts every pending call; they are recorded as errors and the batch still completes. */
  signal?: AbortSignal;
}

/** Summary of one reward over the batch. */
export interface RewardMetrics {
  /** Mean of the non-null values (fallbacks included), or null when every value is null. */
  mean: number | null;
  /** Smallest non-null value, or null. */
  min: number | null;
  /** Largest non-null value, or null. */
  max: number | null;
  /** Number of samples. */
  count: number;
  /** Calls that returned a finite number. */
  ok: number;
  /** Calls that returned `null` (not applicable). */
  nulls: number;
  /** Calls that threw or returned an invalid value. */
  errors: number;
  /** Calls that ran out of time. */
  timeouts: number;
  /** Mean wall-clock ms per sample (a batched call's time is shared by its samples). */
  msMean: number;
}

/** One failed call, for logs. */
export interface RewardFailure {
  /** The reward's path (`name`, or `composite/component`). */
  reward: string;
  /** The sample's index in the inputs. */
  index: number;
  /** `error` or `timeout`. */
  status: RewardStatus;
  /** Why it failed. */
  reason: string;
}

/** What {@link scoreRewards} returns. */
export interface ScoreResult {
  /** Outcomes per reward path (top-level names and `composite/component`), one per input. */
  outcomes: Record<string, RewardOutcome[]>;
  /** Per-sample sum of the top-level rewards' values, `null` counting as absent (0 if all null). */
  totals: number[];
  /** Metrics per reward path, plus `total` for the totals (so no top-level reward may be named `total`). */
  metrics: Record<string, RewardMetrics>;
  /** Every error and timeout, in reward then sample order. */
  failures: RewardFailure[];
}

/**
 * Summarises outcomes into {@link RewardMetrics} (exported for callers that assemble their own
 * results, e.g. across several batches).
 *
 * @example Usage
 * ```ts
 * import { summarize } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const m = summarize([
 *   { value: 1, status: "ok", ms: 2 },
 *   { value: null, status: "null", ms: 0 },
 *   { value: 0, status: "timeout", reason: "timed out after 10 ms", ms: 10 },
 * ]);
 * assert.deepEqual([m.mean, m.nulls, m.timeouts, m.msMean], [0.5, 1, 1, 4]);
 * ```
 */
export function summarize(outcomes: readonly RewardOutcome[]): RewardMetrics {
  let sum = 0, n = 0, ms = 0, ok = 0, nulls = 0, errors = 0, timeouts = 0;
  let min: number | null = null, max: number | null = null;
  for (const o of outcomes) {
    ms += o.ms;
    if (o.status === "ok") ok++;
    else if (o.status === "null") nulls++;
    else if (o.status === "error") errors++;
    else timeouts++;
    if (o.value !== null) {
      sum += o.value;
      n++;
      min = min === null ? o.value : Math.min(min, o.value);
      max = max === null ? o.value : Math.max(max, o.value);
    }
  }
  return {
    mean: n === 0 ? null : sum / n,
    min,
    max,
    count: outcomes.length,
    ok,
    nulls,
    errors,
    timeouts,
    msMean: outcomes.length === 0 ? 0 : ms / outcomes.length,
  };
}

/**
 * Scores every input with every reward. Rewards may be per-sample or batched, synchronous or
 * asynchronous; each call gets `timeoutMs` (or the reward's own) and an AbortSignal. The result
 * holds each reward's outcomes (value, status, reason, ms), per-sample totals (sum of the
 * top-level values, `null` = absent), metrics per reward and a list of failures. It rejects
 * only for malformed arguments (not an array, a reward without `score`/`scoreBatch`, duplicate
 * names), never because of a sample.
 *
 * @example Usage
 * ```ts
 * import { defineReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const exact = defineReward("exact", ({ completion, row }) => (completion === row.answer ? 1 : 0));
 * const broken = defineReward("broken", () => {
 *   throw new Error("boom");
 * });
 * const hangs = defineReward("hangs", () => new Promise<number>(() => {}), { timeoutMs: 20 });
 * const inputs = [
 *   { prompt: "1+1", completion: "2", row: { answer: "2" } },
 *   { prompt: "2+2", completion: "5", row: { answer: "4" } },
 * ];
 * const result = await scoreRewards([exact, broken, hangs], inputs);
 * assert.deepEqual(result.totals, [1, 0]); // errors and timeouts score 0 by default
 * assert.equal(result.outcomes.broken![0]!.reason, "boom");
 * assert.equal(result.outcomes.hangs![1]!.status, "timeout");
 * assert.equal(result.metrics.exact!.mean, 0.5);
 * assert.equal(result.metrics.broken!.errors, 2);
 * ```
 */
export async function scoreRewards<R extends Row = Row>(
  rewards: readonly Reward<R>[],
  inputs: readonly RewardInput<R>[],
  options?: ScoreOptions,
): Promise<ScoreResult> {
  const owner = "scoreRewards";
  const opts = checkOptions<ScoreOptions>(
    owner,
    options,
    "{timeoutMs?, onError?, concurrency?, signal?}",
  );
  if (!Array.isArray(rewards)) {
    throw new TypeError(`${owner}: rewards must be an array of rewards, got ${show(rewards)}`);
  }
  if (!Array.isArray(inputs)) {
    throw new TypeError(
      `${owner}: inputs must be an array of {completion, prompt, row}, got ${show(inputs)}`,
    );
  }
  const names = new Set<string>();
  rewards.forEach((r, k) => {
    checkReward(owner, `rewards[${k}]`, r);
    if (r.name === "total") {
      throw new TypeError(
        `${owner}: rewards[${k}].name "total" is reserved for the per-sample totals' metrics; rename the reward`,
      );
    }
    if (names.has(r.name)) {
      throw new TypeError(
        `${owner}: rewards[${k}].name "${r.name}" is used twice; give each reward a distinct name (it is the metric key)`,
      );
    }
    names.add(r.name);
  });
  const timeoutMs = checkNumber(owner, "options.timeoutMs", opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, {
    min: 0,
    minExclusive: true,
    allowInfinity: true,
  });
  const onError = opts.onError === undefined
    ? 0
    : opts.onError === null
    ? null
    : checkNumber(owner, "options.onError", opts.onError);
  const concurrency = checkNumber(
    owner,
    "options.concurrency",
    opts.concurrency ?? DEFAULT_CONCURRENCY,
    { min: 1, integer: true, allowInfinity: true },
  );
  if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) {
    throw new TypeError(
      `${owner}: options.signal must be an AbortSignal, got ${show(opts.signal)}`,
    );
  }

  const outcomes: Record<string, RewardOutcome[]> = {};
  const settings = {
    timeoutMs,
    onError,
    limiter: new Limiter(concurrency),
    memo: new Map(),
    record: (path: string, o: readonly RewardOutcome[]) => {
      outcomes[path] ??= [...o];
    },
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
  const top = await Promise.all(rewards.map((r) => evaluate(r, inputs, r.name, settings)));

  const totals = inputs.map((_, i) => {
    let t = 0;
    for (const o of top) t += o[i]!.value ?? 0;
    return t;
  });
  const metrics: Record<string, RewardMetrics> = {};
  const failures: RewardFailure[] = [];
  for (const [path, list] of Object.entries(outcomes)) {
    metrics[path] = summarize(list);
    list.forEach((o, index) => {
      if (o.status === "error" || o.status === "timeout") {
        failures.push({ reward: path, index, status: o.status, reason: o.reason ?? "" });
      }
    });
  }
  metrics.total = summarize(totals.map((value) => ({ value, status: "ok", ms: 0 })));
  return { outcomes, totals, metrics, failures };
}

/**
 * Flattens {@link ScoreResult.metrics} into `prefix/path/stat` numbers for a logger
 * (null means are left out).
 *
 * @example Usage
 * ```ts
 * import { defineReward, flattenMetrics, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const one = defineReward("one", () => 1);
 * const flat = flattenMetrics(await scoreRewards([one], [{ prompt: "", completion: "", row: {} }]));
 * assert.equal(flat["rewards/one/mean"], 1);
 * assert.equal(flat["rewards/one/errors"], 0);
 * assert.equal(flat["rewards/total/mean"], 1);
 * ```
 */
export function flattenMetrics(result: ScoreResult, prefix = "rewards"): Record<string, number> {
  const flat: Record<string, number> = {};
  for (const [path, m] of Object.entries(result.metrics)) {
    for (const [stat, v] of Object.entries(m)) {
      if (typeof v === "number") flat[`${prefix}/${path}/${stat}`] = v;
    }
  }
  return flat;
}
