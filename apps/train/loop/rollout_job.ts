/**
 * A rollout job: the unit of work a rollout executor (a Web Worker, a remote worker over NATS, or
 * the trainer's own thread) runs for the asynchronous modes of `deno task train`. A job is the
 * rows of one training batch and a draw key; its result is a {@link Rollout} tagged with the
 * policy version that generated it.
 *
 * Design decisions:
 * - **The trainer takes the rows, the executor samples them.** Rows come from the trainer's one
 *   `TrainStream` when the job is created, so the data position is the trainer's alone (saved
 *   in its checkpoint), whatever the number of executors or the order they finish in. With
 *   DAPO's dynamic sampling a job carries the rows of every round it may need
 *   (`prompts × (1 + maxRetries)`); the rows a job does not use are skipped, not revisited.
 * - **A job's draws are keyed by its key** (the `step` of `collectRollout`'s keys): the key of a
 *   job in one-step-off mode is the step it trains, so a run is a pure function of the config,
 *   as in sync mode; a regenerated job keeps its rows and key (its samples differ through the
 *   newer weights).
 * - **Every executor builds the rollout options with {@link rolloutOptionsOf}**, the function the
 *   synchronous loop uses too, so a worker samples exactly what the trainer's thread would.
 *
 * @module
 */

import type { TaskRow } from "@rlvr/rewards";
import type { WeightSnapshot } from "@rlvr/infra";
import type { Config } from "../config/types.ts";
import { estimatorNeeds, samplingParams } from "../config/mapping.ts";
import type { EpisodeOptions } from "./episode.ts";
import type { Rollout, RolloutOptions } from "./rollout.ts";

/** One job: the rows of a batch and the key of its draws. */
export interface RolloutJob {
  /** Job number, unique within a run (1, 2, ...). */
  id: number;
  /** The draw key (`collectRollout`'s `step`). */
  key: number;
  /** The prompts, in order (see the module doc for dynamic sampling). */
  rows: TaskRow[];
}

/** A finished job: its rollout and the policy version that generated it. */
export interface VersionedRollout {
  /** The job. */
  job: RolloutJob;
  /**
   * Version of the weights the executor held (trainer updates applied); with partial rollouts,
   * the oldest version among the batch's tokens (what the staleness gate judges).
   */
  policyVersion: number;
  /** Partial rollouts only: the newest version among the batch's tokens. */
  newestVersion?: number;
  /** The executor's name (`w0`, `w1`, `nats:<id>` ...). */
  worker: string;
  /** The batch. */
  rollout: Rollout;
}

/** What {@link RolloutExecutor.run} returns. */
export interface ExecutedJob {
  /** The batch. */
  rollout: Rollout;
  /** The version that generated it (partial rollouts: the oldest among its tokens). */
  policyVersion: number;
  /** Partial rollouts only: the newest version among its tokens. */
  newestVersion?: number;
}

/**
 * Something that runs rollout jobs under weights it is sent: a Web Worker
 * (`worker_executor.ts`) or a test double. Calls on one executor are serialised by the
 * scheduler: `sync` and `run` never overlap; only `offer` reaches a running job.
 */
export interface RolloutExecutor {
  /** A short name for metrics and logs. */
  readonly name: string;
  /** Version of the weights it holds (-1 before the first {@link RolloutExecutor.sync}). */
  readonly version: number;
  /** Loads a snapshot (checksum verified; a mismatch rejects with `WeightChecksumError`). */
  sync(snapshot: WeightSnapshot): Promise<void>;
  /**
   * Runs a job under the weights it holds, or newer ones (a remote worker may sync on its own),
   * and says which version generated it.
   */
  run(job: RolloutJob): Promise<ExecutedJob>;
  /**
   * Partial rollouts (`rollout.partial`): hands newer weights to the job running, which loads
   * them between two decoding steps (checksum verified; a mismatch fails the job with
   * `WeightChecksumError`) and continues under them. Absent: the executor cannot take weights
   * in the middle of a job.
   */
  offer?(snapshot: WeightSnapshot): void;
  /** Stops it (pending calls reject). */
  close(): Promise<void>;
}

/**
 * The oldest and newest policy versions among a batch's tokens (`tokenVersions`, partial
 * rollouts), or `fallback` for both when no item carries versions.
 *
 * @example Usage
 * ```ts
 * import { type Rollout, type RolloutItem } from "./rollout.ts";
 * import { batchVersions } from "./rollout_job.ts";
 * import assert from "node:assert/strict";
 * const item = (tokenVersions: number[]) => ({ tokenVersions }) as RolloutItem;
 * const r = { items: [item([3, 3, 4]), item([3])] } as Rollout;
 * assert.deepEqual(batchVersions(r, 3), { oldest: 3, newest: 4 });
 * assert.deepEqual(batchVersions({ ...r, items: [] }, 5), { oldest: 5, newest: 5 });
 * ```
 */
export function batchVersions(
  rollout: Rollout,
  fallback: number,
): { oldest: number; newest: number } {
  let oldest = Infinity;
  let newest = -Infinity;
  for (const it of rollout.items) {
    for (const v of it.tokenVersions ?? []) {
      if (v < oldest) oldest = v;
      if (v > newest) newest = v;
    }
  }
  return oldest === Infinity ? { oldest: fallback, newest: fallback } : { oldest, newest };
}

/**
 * Prompts per sampling round and the rows a job needs (`prompts × rounds`, see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { jobRowCount } from "./rollout_job.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.equal(jobRowCount(config), config.rollout.batchSize / config.rollout.groupSize);
 * ```
 */
export function jobRowCount(config: Config): number {
  const r = config.rollout;
  const rounds = 1 + (r.dynamicSampling.enabled ? r.dynamicSampling.maxRetries : 0);
  return (r.batchSize / r.groupSize) * rounds;
}

/**
 * The `collectRollout` options of a config for draw key `key` (shared by the synchronous loop and
 * every executor, see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { rolloutOptionsOf } from "./rollout_job.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const o = rolloutOptionsOf(config, 7, [2]);
 * assert.equal(o.step, 7);
 * assert.equal(o.batchSize, config.rollout.batchSize);
 * ```
 */
export function rolloutOptionsOf(
  config: Config,
  key: number,
  eosTokenIds: readonly number[],
): RolloutOptions {
  return {
    step: key,
    seed: config.trainer.seed,
    batchSize: config.rollout.batchSize,
    groupSize: config.rollout.groupSize,
    maxNewTokens: config.rollout.maxNewTokens,
    sampling: samplingParams(config),
    ...(config.rollout.decodeLoop === undefined ? {} : { decodeLoop: config.rollout.decodeLoop }),
    dynamicRetries: config.rollout.dynamicSampling.enabled
      ? config.rollout.dynamicSampling.maxRetries
      : null,
    overlong: config.algorithm.overlong.enabled
      ? { buffer: config.algorithm.overlong.buffer, penalty: config.algorithm.overlong.penalty }
      : null,
    formatWeight: config.task.formatWeight,
    eosTokenIds,
    ...(estimatorNeeds(config).baseline ? { greedyBaseline: true } : {}),
    ...(estimatorNeeds(config).turns ? { stepTurns: true } : {}),
  };
}

/**
 * The `collectEpisodes` options of a config for draw key `key` (`task.env`; shared by the
 * synchronous loop and every executor, as {@link rolloutOptionsOf}); the prompt's rendering
 * (`episodeIo`) is the tokenizer's and is added by the caller.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { episodeOptionsOf } from "./rollout_job.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const o = episodeOptionsOf(config, 7, [2]);
 * assert.equal(o.step, 7);
 * assert.equal(o.groupSize, config.rollout.groupSize);
 * ```
 */
export function episodeOptionsOf(
  config: Config,
  key: number,
  eosTokenIds: readonly number[],
): EpisodeOptions {
  return {
    step: key,
    seed: config.trainer.seed,
    groupSize: config.rollout.groupSize,
    maxNewTokens: config.rollout.maxNewTokens,
    sampling: samplingParams(config),
    eosTokenIds,
  };
}

/**
 * A stream over a fixed list of rows (a job's), for `collectRollout`; taking more than the list
 * holds is a bug in the job's size and throws.
 *
 * @example Usage
 * ```ts
 * import { listStream } from "./rollout_job.ts";
 * import assert from "node:assert/strict";
 * const s = listStream([1, 2, 3]);
 * assert.deepEqual(s.take(2), [1, 2]);
 * assert.throws(() => s.take(2), /holds 3 rows/);
 * ```
 */
export function listStream<T>(rows: readonly T[]): { take(count: number): T[] } {
  let at = 0;
  return {
    take(count: number): T[] {
      if (at + count > rows.length) {
        throw new RangeError(
          `listStream: a job holds ${rows.length} rows, asked for ${count} more after ${at}; ` +
            `jobs must be built with jobRowCount(config) rows`,
        );
      }
      const out = rows.slice(at, at + count);
      at += count;
      return out;
    },
  };
}
