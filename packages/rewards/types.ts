/**
 * The reward contract every verifier, shaping term and judge in this package implements.
 *
 * A reward sees the completion text, the prompt and every field of the dataset row (so a verifier
 * reads `row.answer`, a code reward reads `row.tests`), may be synchronous or asynchronous, and
 * scores either one sample (`score`) or a whole batch (`scoreBatch`, for judges and pooled
 * sandboxes). It returns a number, or `null` for "not applicable" (e.g. a code reward on a math
 * row), which composition treats as absent rather than as zero. Rewards never need to catch their
 * own errors: the runner turns an exception or a timeout into a configurable score and a recorded
 * reason, so one bad sample never fails a batch.
 *
 * @module
 */

/** A dataset row: any JSON-like fields (`answer`, `tests`, `difficulty` ...). */
export type Row = Record<string, unknown>;

/** One sample to score. */
export interface RewardInput<R extends Row = Row> {
  /** The model's completion (the response only, without the prompt). */
  completion: string;
  /** The prompt the completion answers (rendered text). */
  prompt: string;
  /** Every field of the dataset row the prompt came from. */
  row: R;
}

/** A score, or `null` when the reward does not apply to this sample. */
export type RewardValue = number | null;

/** Passed to every call: abort when the runner's timeout fires. */
export interface RewardContext {
  /** Aborted when the call's time budget is spent; long-running rewards should stop then. */
  signal: AbortSignal;
}

/** Scores one sample. */
export type ScoreFn<R extends Row = Row> = (
  input: RewardInput<R>,
  ctx: RewardContext,
) => RewardValue | Promise<RewardValue>;

/** Scores a batch; must return one value per input, in order. */
export type ScoreBatchFn<R extends Row = Row> = (
  inputs: readonly RewardInput<R>[],
  ctx: RewardContext,
) => readonly RewardValue[] | Promise<readonly RewardValue[]>;

/** A named reward: per-sample `score`, batched `scoreBatch`, or both (batch preferred). */
export interface Reward<R extends Row = Row> {
  /** Stable name, used as the metric key (`math`, `format`, `code_pass_rate` ...). */
  readonly name: string;
  /** Per-sample scorer. */
  readonly score?: ScoreFn<R>;
  /** Batched scorer (preferred by the runner when present). */
  readonly scoreBatch?: ScoreBatchFn<R>;
  /** Time budget per call in milliseconds (the runner's default applies when omitted). */
  readonly timeoutMs?: number;
}

/** How one reward call ended. */
export type RewardStatus = "ok" | "null" | "error" | "timeout";

/** The outcome of scoring one sample with one reward. */
export interface RewardOutcome {
  /** The score used downstream: the returned number, or the fallback on error/timeout/invalid. */
  value: number | null;
  /** How the call ended. */
  status: RewardStatus;
  /** Why it failed, for `error` and `timeout` (the exception message, or the limit). */
  reason?: string;
  /** Wall-clock milliseconds the call took. */
  ms: number;
}

/**
 * A reward built from other rewards (`weightedSum`, `gated`, `normalizeThenSum`, `clip`,
 * `scale`). The runner scores each component on its own, with its own time budget, fallback and
 * metrics (recorded under `composite/component`), then calls `combine` with the component values
 * (after fallbacks; `null` where a component does not apply). Its `scoreBatch` does the same with
 * the runner's defaults, so a composite also works when called directly.
 */
export interface CompositeReward<R extends Row = Row> extends Reward<R> {
  /** The rewards combined, scored before `combine` is called. Names are unique. */
  readonly components: readonly Reward<R>[];
  /**
   * Combines component values: `parts[k][i]` is component `k`'s value on sample `i`. Returns
   * one value per input. Must be synchronous and pure.
   */
  combine(
    parts: readonly (readonly RewardValue[])[],
    inputs: readonly RewardInput<R>[],
  ): RewardValue[];
}
