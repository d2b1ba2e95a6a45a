/**
 * The {@link Task} a config's `task` section names: a built-in procedural task (`task.name`
 * with `task.options`) or a dataset file (`task.data`, see `data_task.ts`).
 *
 * Design decision: `deno task train` and `deno task eval` both build their task here, so an
 * evaluation of `--task`/`--data` sees exactly the rows and the verifier the training run saw
 * (for a dataset, the same test split). {@link trainingTask} adds what only training needs of a
 * dataset: a training split, enough held-out rows for `trainer.evalProblems`, and a
 * `trainer.seed` other than the held-out stream's (see `data_task.ts`); each is checked before
 * the run directory or the model is touched, with a message naming the key and the fix.
 *
 * @module
 */

import type { Task } from "@rlvr/rewards";
import { BUILTIN_TASKS, builtinTaskNames } from "../config/tasks.ts";
import type { Config, TaskSection } from "../config/types.ts";
import { dataTask, type DataTaskOptions, isDataTask } from "./data_task.ts";
import { HELD_OUT_SEED } from "./problems.ts";

/**
 * Builds the task of a validated `task` section.
 *
 * @example Usage
 * ```ts
 * import { taskFromConfig } from "./task.ts";
 * import assert from "node:assert/strict";
 * const task = await taskFromConfig({ name: "arithmetic", options: { digits: 1 }, formatWeight: 0 });
 * assert.equal(task.name, "arithmetic");
 * ```
 */
export async function taskFromConfig(
  section: TaskSection,
  options: DataTaskOptions = {},
): Promise<Task> {
  if (section.data !== undefined) {
    return (await dataTask(section.data, options)) as unknown as Task;
  }
  if (section.name == null) {
    throw new Error(
      `task: neither task.name nor task.data is set; use a built-in task (${
        builtinTaskNames().join(", ")
      }) or --data <file>`,
    );
  }
  const build = BUILTIN_TASKS.get(section.name, "task.name");
  return await build(section.options ?? {});
}

/**
 * The task of a training run: {@link taskFromConfig}, plus, for a dataset, the checks that
 * training on it can work (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { trainingTask } from "./task.ts";
 * import assert from "node:assert/strict";
 * const task = await trainingTask(await validateConfig(defaultConfig()));
 * assert.equal(task.name, "arithmetic");
 * ```
 */
export async function trainingTask(config: Config, options: DataTaskOptions = {}): Promise<Task> {
  const task = await taskFromConfig(config.task, options);
  if (!isDataTask(task)) return task;
  const { trainer } = config;
  const where = `${task.path} (${task.train.length + task.test.length} usable rows, ` +
    `task.data.testFraction ${task.testFraction})`;
  if (trainer.seed === HELD_OUT_SEED) {
    throw new Error(
      `trainer.seed: ${HELD_OUT_SEED} is the seed of a dataset's held-out rows, so training with it would draw test rows; use another seed (e.g. --seed 0)`,
    );
  }
  if (task.train.length === 0) {
    throw new Error(
      `task.data: the training split of ${where} is empty; lower task.data.testFraction or add rows`,
    );
  }
  if (task.testProblems === 0) {
    throw new Error(
      `task.data: the test split of ${where} is empty, so there is nothing to evaluate on; raise task.data.testFraction or add rows`,
    );
  }
  if (trainer.evalProblems > task.testProblems) {
    throw new Error(
      `trainer.evalProblems: ${trainer.evalProblems} is more than the ${task.testProblems} distinct held-out problems of ${where}; set trainer.evalProblems to ${task.testProblems} or fewer, or raise task.data.testFraction`,
    );
  }
  return task;
}
