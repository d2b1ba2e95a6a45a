import assert from "node:assert/strict";
import { loadConfig } from "../config/load.ts";
import { additionRows, withTempDir, writeJsonl } from "./_test_data.ts";
import { isDataTask } from "./data_task.ts";
import { HELD_OUT_SEED } from "./problems.ts";
import { taskFromConfig, trainingTask } from "./task.ts";

const quiet = { log: () => {} };

Deno.test("taskFromConfig: a built-in task by name and options, or the dataset of task.data", async () => {
  const { config } = await loadConfig({ set: ["task.name=countdown", "task.options.count=3"] });
  const countdown = await taskFromConfig(config.task);
  assert.equal(countdown.name, "countdown");
  assert.ok(!isDataTask(countdown));
  await withTempDir(async (dir) => {
    // 40 rows so that testFraction 0.25 leaves both splits non-empty.
    const path = await writeJsonl(`${dir}/add.jsonl`, additionRows(40));
    const loaded = await loadConfig({
      data: path,
      set: ["task.data.promptField=question", "task.data.testFraction=0.25"],
    });
    const task = await taskFromConfig(loaded.config.task, quiet);
    assert.ok(isDataTask(task));
    assert.equal(task.path, path);
    assert.equal(task.train.length + task.test.length, 40);
  });
  // A section that skipped the schema: the built-in task registry's error names the key.
  await assert.rejects(
    taskFromConfig({ name: "countdwon", formatWeight: 0 }),
    /^RangeError: task\.name: unknown built-in task "countdwon"; valid keys: arithmetic, bar_chart, clock, count_shapes, countdown, .* \(did you mean "countdown"\?\)$/,
  );
});

Deno.test("trainingTask: refuses the held-out seed, an empty split and more eval problems than test rows", async () => {
  await withTempDir(async (dir) => {
    const path = await writeJsonl(`${dir}/add.jsonl`, additionRows(40));
    const load = (...set: string[]) =>
      loadConfig({
        data: path,
        set: ["task.data.promptField=question", "task.data.testFraction=0.25", ...set],
      });
    const ok = await load("trainer.evalProblems=4");
    const task = await trainingTask(ok.config, quiet);
    assert.ok(isDataTask(task) && task.testProblems >= 4);

    await assert.rejects(
      trainingTask(
        (await load("trainer.evalProblems=4", `trainer.seed=${HELD_OUT_SEED}`)).config,
        quiet,
      ),
      /trainer\.seed: 1000003 is the seed of a dataset's held-out rows/,
    );
    await assert.rejects(
      trainingTask((await load("trainer.evalProblems=40")).config, quiet),
      new RegExp(
        `trainer\\.evalProblems: 40 is more than the ${task.testProblems} distinct held-out problems of ${path} \\(40 usable rows, task\\.data\\.testFraction 0\\.25\\); set trainer\\.evalProblems to ${task.testProblems} or fewer`,
      ),
    );
    // testFraction 0.999 sends all 40 rows to the test split.
    await assert.rejects(
      trainingTask(
        (await load("task.data.testFraction=0.999", "trainer.evalProblems=4")).config,
        quiet,
      ),
      /the training split of .* is empty; lower task\.data\.testFraction/,
    );
    await assert.rejects(
      trainingTask(
        (await load("task.data.testFraction=0.001", "trainer.evalProblems=1")).config,
        quiet,
      ),
      /the test split of .* is empty, so there is nothing to evaluate on/,
    );
  });
});
