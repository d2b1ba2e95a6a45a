/**
 * The {@link SessionJob} of a config that trains on a built-in procedural task, built without
 * the file system: what `jobTask` (`job_runner.ts`) builds for such a config, for a browser tab.
 *
 * Design decision: `jobTask` also builds dataset tasks, `task.env` environments and `rewards:`
 * sections, which read files or load reward modules by path; a tab has none of those, so
 * {@link builtinSessionJob} builds the built-in task alone (the same registry, `BUILTIN_TASKS`,
 * the same options) and refuses the rest, naming the key. {@link builtinJobProblem} says so
 * before anything is loaded.
 *
 * @module
 */

import { BUILTIN_TASKS } from "../config/tasks.ts";
import type { Config } from "../config/types.ts";
import type { SessionJob } from "./session.ts";

/**
 * Why {@link builtinSessionJob} cannot build the job of `config`, or null when it can: a
 * dataset (`task.data`), an environment (`task.env`), a `rewards:` section, or no `task.name`.
 *
 * @param config A resolved config.
 * @returns The reason, naming the key, or null.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { builtinJobProblem } from "./builtin_job.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.equal(builtinJobProblem(config), null);
 * assert.match(builtinJobProblem({ ...config, rewards: [] })!, /^rewards:/);
 * ```
 */
export function builtinJobProblem(config: Config): string | null {
  const t = config.task;
  if (t.data != null) {
    return `task.data: ${t.data.path} is a dataset file, which needs a file system; use a ` +
      `built-in task (task.name)`;
  }
  if (t.env != null) {
    return `task.env: ${t.env.name} is a multi-turn environment; only single-turn built-in ` +
      `tasks (task.name) run without deno task train`;
  }
  if (config.rewards != null) {
    return `rewards: a rewards section loads reward modules; use the task's own verifier ` +
      `(remove rewards:)`;
  }
  if (t.name == null) return `task.name: not set; name a built-in task (e.g. arithmetic)`;
  return null;
}

/**
 * The job of a config whose task is a built-in one: the task `BUILTIN_TASKS` builds from
 * `task.name` and `task.options`, no environment, the task's verifier (see the module doc).
 *
 * @param config A resolved config ({@link builtinJobProblem} null).
 * @returns The job for `TrainingSession.create`.
 * @throws Error with {@link builtinJobProblem}'s reason for any other config.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { builtinSessionJob } from "./builtin_job.ts";
 * import assert from "node:assert/strict";
 * const job = await builtinSessionJob(await validateConfig(defaultConfig()));
 * assert.equal(job.task.name, "arithmetic");
 * assert.equal(job.env, null);
 * ```
 */
export async function builtinSessionJob(config: Config): Promise<SessionJob> {
  const problem = builtinJobProblem(config);
  if (problem !== null) throw new Error(`builtinSessionJob: ${problem}`);
  const build = BUILTIN_TASKS.get(config.task.name!, "task.name");
  return { task: await build(config.task.options ?? {}), env: null, rewards: null };
}
