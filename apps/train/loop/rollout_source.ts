/**
 * Where a training step's batch comes from: one interface, {@link RolloutSource}, and its three
 * kinds, so the loop asks "the next batch" and never which mode it is in.
 *
 * - {@link syncRollouts}: single-turn completions sampled on the trainer's thread with the
 *   current weights (`rollout.mode: sync`);
 * - {@link episodeRollouts}: multi-turn episodes of a `task.env` environment on the trainer's
 *   thread;
 * - `scheduledRollouts` (`scheduled_rollouts.ts`): jobs run by rollout workers (Web Workers,
 *   or remote workers over NATS) under versioned weight snapshots, through the staleness gate
 *   (`rollout.mode: one_step_off | async`): completions, or `task.env` episodes (the worker
 *   builds the environment; the records get the same `episode/*` metrics); with `model.lora`
 *   the snapshots hold the merged weights (`policySnapshot`); with `rollout.partial` a running
 *   job switches to newly published weights (`partial.ts`).
 *
 * Design decision: a source owns everything its mode needs across steps (the scheduler, the
 * weight publishing after each update, what a checkpoint must keep), so the loop's steps take
 * the same inputs in every mode. The sources on the trainer's thread live here, with nothing
 * that needs Deno, so the training session (`session.ts`) runs them in a browser too; the
 * scheduled one (workers, NATS, files) is in a file of its own that only `deno task train` loads.
 *
 * @module
 */

import type { CausalLM, Tokenizer } from "@rlvr/policy";
import type { Task, TaskRow } from "@rlvr/rewards";
import type { Environment } from "@rlvr/rewards/env";
import type { Config } from "../config/types.ts";
import { collectEpisodes, type EpisodeItem } from "./episode.ts";
import type { RowStream } from "./prompt_source.ts";
import type { RewardSet } from "./reward_set.ts";
import { episodeIo } from "./prompt.ts";
import { collectRollout, type Rollout, type RolloutItem } from "./rollout.ts";
import { episodeOptionsOf, rolloutOptionsOf } from "./rollout_job.ts";
import type { SchedulerState } from "./scheduler.ts";
import type { VisionInputs } from "./vision.ts";

/** One step's batch and what its source adds to the step's metrics record. */
export interface StepBatch {
  /** The batch. */
  rollout: Rollout;
  /** Source-specific metrics (`rollout/*` of the asynchronous modes, `episode/*`). */
  record: Record<string, number>;
  /** Seconds the trainer waited for the batch (asynchronous modes), else null. */
  waitS: number | null;
}

/** Where a step's batch comes from (see the module doc). */
export interface RolloutSource {
  /** A line for the run's header, or null. */
  readonly description: string | null;
  /** The batch of `step` (1-based). */
  next(step: number): Promise<StepBatch>;
  /** Called after the update of `step`: rollout workers get the new weights. */
  afterUpdate(step: number): Promise<void>;
  /**
   * Runs `write` with what a checkpoint must keep of the source (the scheduler's outstanding
   * batches, after the jobs in flight finish), or null.
   */
  checkpoint<T>(write: (state: SchedulerState | null) => Promise<T>): Promise<T>;
  /** At the end of a run: writes the source's summary files and returns a log line, or null. */
  finish(): Promise<string | null>;
  /** Stops workers. */
  close(): Promise<void>;
}

/** What every source needs. */
export interface SourceContext {
  /** The resolved config. */
  config: Config;
  /** The policy (sampled from on the trainer's thread, or published to workers). */
  model: CausalLM;
  /** Its tokenizer. */
  tokenizer: Tokenizer;
  /** The training problems (the data position is the trainer's; see prompt_source.ts). */
  stream: RowStream<TaskRow>;
  /** Samples per problem of a round (DARS budgets), or undefined for `rollout.groupSize` each. */
  groupSizes?: (rows: readonly TaskRow[]) => number[];
  /** The run's rewards (`rewards:`), or undefined for the task's verifier. */
  rewards?: RewardSet;
  /** Token ids that end a completion. */
  eosTokenIds: readonly number[];
  /** A vision-language policy's images (sampling here, snapshots for rollout workers), or null. */
  vision?: VisionInputs | null;
}

const local = {
  description: null,
  afterUpdate: () => Promise.resolve(),
  checkpoint: <T>(write: (state: SchedulerState | null) => Promise<T>) => write(null),
  finish: () => Promise.resolve(null),
  close: () => Promise.resolve(),
};

/**
 * Single-turn completions sampled on the trainer's thread (`rollout.mode: sync`).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { loadPolicy } from "./policy.ts";
 * import { heldOutProblems, TrainStream } from "./problems.ts";
 * import { syncRollouts } from "./rollout_source.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * config.rollout.batchSize = 4;
 * config.rollout.groupSize = 2;
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const { model, tokenizer, eosTokenIds } = await loadPolicy("builtin:tiny");
 * const stream = new TrainStream(task, 0, heldOutProblems(task, 4));
 * const source = syncRollouts({ config, model, tokenizer, stream, eosTokenIds }, task);
 * const { rollout } = await source.next(1);
 * assert.equal(rollout.items.length, 4);
 * model.dispose();
 * ```
 */
export function syncRollouts<R extends TaskRow>(
  ctx: SourceContext,
  task: Task<R>,
): RolloutSource {
  return {
    ...local,
    async next(step) {
      const budget = ctx.config.sampling?.budget ?? null;
      const rollout = await collectRollout(
        ctx.model,
        ctx.tokenizer,
        task,
        ctx.stream as RowStream<TaskRow> as RowStream<R>,
        {
          ...rolloutOptionsOf(ctx.config, step, ctx.eosTokenIds),
          ...(ctx.rewards !== undefined ? { rewards: ctx.rewards } : {}),
          ...(ctx.vision != null ? { vision: ctx.vision } : {}),
          ...(ctx.groupSizes !== undefined && budget !== null
            ? {
              groupSizes: ctx.groupSizes,
              slotSize: Math.max(budget.max, ctx.config.rollout.groupSize),
            }
            : {}),
        },
      );
      return { rollout, record: {}, waitS: null };
    },
  };
}

// Where the run loop has always imported it from (it lives with the prompt formats).
export { episodeIo };

/**
 * Multi-turn episodes of `env` on the trainer's thread (`task.env`, `rollout.mode: sync`).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { agentCalcEnv } from "../demo/pretrain_agent.ts";
 * import { loadPolicy } from "./policy.ts";
 * import { heldOutProblems, TrainStream } from "./problems.ts";
 * import { episodeRollouts } from "./rollout_source.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * config.rollout.batchSize = 4;
 * config.rollout.groupSize = 2;
 * const env = agentCalcEnv();
 * const { model, tokenizer, eosTokenIds } = await loadPolicy("builtin:tiny");
 * const stream = new TrainStream(env.task, 0, heldOutProblems(env.task, 4));
 * const source = episodeRollouts({ config, model, tokenizer, stream, eosTokenIds }, env);
 * const { rollout, record } = await source.next(1);
 * assert.equal(rollout.items.length, 4);
 * assert.ok(record["episode/turns"]! >= 1);
 * model.dispose();
 * ```
 */
export function episodeRollouts(ctx: SourceContext, env: Environment): RolloutSource {
  const { config } = ctx;
  const io = episodeIo(ctx.tokenizer);
  return {
    ...local,
    async next(step) {
      const e = await collectEpisodes(
        ctx.model,
        ctx.tokenizer,
        env,
        ctx.stream.take(config.rollout.batchSize / config.rollout.groupSize),
        { ...episodeOptionsOf(config, step, ctx.eosTokenIds), ...io, vision: ctx.vision ?? null },
      );
      return { rollout: { ...e, rounds: 1 }, record: episodeMetrics(e.items), waitS: null };
    },
  };
}

/**
 * The `episode/turns` (mean policy turns) and `episode/success` (fraction of successful
 * episodes) of a batch of episodes, wherever they were run.
 *
 * @example Usage
 * ```ts
 * import { type EpisodeItem } from "./episode.ts";
 * import { episodeMetrics } from "./rollout_source.ts";
 * import assert from "node:assert/strict";
 * const items = [{ turns: 1, success: true }, { turns: 2, success: false }] as EpisodeItem[];
 * assert.deepEqual(episodeMetrics(items), { "episode/turns": 1.5, "episode/success": 0.5 });
 * ```
 */
export function episodeMetrics(items: readonly RolloutItem[]): Record<string, number> {
  const episodes = items as readonly Partial<EpisodeItem>[];
  return {
    "episode/turns": episodes.reduce((n, it) => n + (it.turns ?? 0), 0) /
      Math.max(1, items.length),
    "episode/success": episodes.filter((it) => it.success === true).length /
      Math.max(1, items.length),
  };
}
