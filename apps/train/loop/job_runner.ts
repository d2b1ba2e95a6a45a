/**
 * What a rollout worker does with a job (`rollout_worker.ts`, for Web Workers and, through them,
 * remote NATS workers): builds the run's task, or its `task.env` environment, from the config as
 * the trainer does, and turns a job's rows into a batch under the weights the worker holds:
 * single-turn completions (`collectRollout`) or multi-turn episodes (`collectEpisodes`), with
 * the options the synchronous loop uses (`rolloutOptionsOf`, `episodeOptionsOf`), so a worker's
 * batch is the one the trainer's thread would have sampled under the same weights.
 *
 * @module
 */

import type { CausalLM, Tokenizer } from "@rlvr/policy";
import type { Task } from "@rlvr/rewards";
import type { Environment } from "@rlvr/rewards/env";
import type { Config } from "../config/types.ts";
import { BUILTIN_ENVS } from "../config/envs.ts";
import { collectEpisodes } from "./episode.ts";
import type { PartialRollouts } from "./partial.ts";
import { episodeIo } from "./prompt.ts";
import { collectRollout, type Rollout } from "./rollout.ts";
import { episodeOptionsOf, listStream, type RolloutJob, rolloutOptionsOf } from "./rollout_job.ts";
import { trainingTask } from "./task.ts";
import type { VisionInputs } from "./vision.ts";
import { type RewardLike, RewardSet } from "./reward_set.ts";

/** The task a run samples: the environment's (`task.env`) or a single-turn one, and the env. */
export interface JobTask {
  /** The task whose rows jobs carry. */
  task: Task;
  /** The environment, or null for single-turn training. */
  env: Environment | null;
  /** The run's rewards (`rewards:`), or null for the task's verifier. */
  rewards: RewardSet | null;
}

/**
 * The run's task as the trainer builds it: `task.env`'s environment and its task, else the
 * built-in task or dataset (`trainingTask`).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { jobTask } from "./job_runner.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const { task, env } = await jobTask(config);
 * assert.equal(env, null);
 * assert.ok(task.row(0, 0).prompt.length > 0);
 * ```
 */
export async function jobTask(
  config: Config,
  inline?: ReadonlyMap<string, RewardLike>,
): Promise<JobTask> {
  const e = config.task.env;
  if (e == null) {
    const task = await trainingTask(config);
    const rewards = config.rewards == null ? null : await RewardSet.fromSpecs(config.rewards, {
      task,
      ...(inline !== undefined ? { inline } : {}),
    });
    return { task, env: null, rewards };
  }
  const build = BUILTIN_ENVS.get(e.name, "task.env.name");
  const env = await build(e.options, { maxTurns: e.maxTurns, syntax: e.syntax });
  return { task: env.task, env, rewards: null };
}

/** What {@link runRolloutJob} samples with. */
export interface JobWorkspace extends JobTask {
  /** The resolved config. */
  config: Config;
  /** The policy, holding the weights of the version the job runs under. */
  model: CausalLM;
  /** Its tokenizer. */
  tokenizer: Tokenizer;
  /** Token ids that end a completion (or a turn). */
  eosTokenIds: readonly number[];
  /**
   * A vision-language policy's image inputs (single-turn jobs), or null/undefined for a text
   * policy. (Not `vision`: that is `loadPolicy`'s tower, which a workspace is often spread from.)
   */
  images?: VisionInputs | null;
}

/**
 * The batch of `job`: episodes of `ws.env` on the job's rows, or completions of `ws.task`;
 * with `partial`, completions switch to newer weights between decoding steps (`partial.ts`).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { jobTask, runRolloutJob } from "./job_runner.ts";
 * import { loadPolicy } from "./policy.ts";
 * import { jobRowCount } from "./rollout_job.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * config.rollout.batchSize = 4;
 * config.rollout.groupSize = 2;
 * const t = await jobTask(config);
 * const p = await loadPolicy(config.model.checkpoint);
 * const rows = t.task.rows(0, jobRowCount(config));
 * const r = await runRolloutJob({ ...t, ...p, config }, { id: 1, key: 1, rows });
 * assert.equal(r.items.length, 4);
 * p.model.dispose();
 * ```
 */
export async function runRolloutJob(
  ws: JobWorkspace,
  job: RolloutJob,
  partial?: PartialRollouts,
): Promise<Rollout> {
  const { config } = ws;
  if (ws.env === null) {
    return await collectRollout(ws.model, ws.tokenizer, ws.task, listStream(job.rows), {
      ...rolloutOptionsOf(config, job.key, ws.eosTokenIds),
      ...(partial !== undefined ? { partial } : {}),
      ...(ws.rewards !== null ? { rewards: ws.rewards } : {}),
      vision: ws.images ?? null,
    });
  }
  if (partial !== undefined) {
    throw new Error(
      "rollout.partial: true with task.env is not supported (the config check refuses it); " +
        "set rollout.partial to false",
    );
  }
  const prompts = config.rollout.batchSize / config.rollout.groupSize;
  const e = await collectEpisodes(
    ws.model,
    ws.tokenizer,
    ws.env,
    listStream(job.rows).take(prompts),
    {
      ...episodeOptionsOf(config, job.key, ws.eosTokenIds),
      ...episodeIo(ws.tokenizer),
      vision: ws.images ?? null,
    },
  );
  return { ...e, rounds: 1 };
}
