import assert from "node:assert/strict";
import { loadConfig } from "../config/load.ts";
import { builtinJobProblem, builtinSessionJob } from "./builtin_job.ts";
import { jobTask } from "./job_runner.ts";

Deno.test("builtinSessionJob: the task jobTask builds for a built-in task, row for row", async () => {
  for (const recipe of ["grpo", "grpo_cot"]) {
    const { config } = await loadConfig({ config: recipe });
    const mine = await builtinSessionJob(config);
    const theirs = await jobTask(config);
    assert.equal(mine.task.name, theirs.task.name);
    assert.equal(mine.env, null);
    assert.equal(mine.rewards, null);
    for (let i = 0; i < 20; i++) {
      const row = mine.task.row(7, i);
      assert.deepEqual(row, theirs.task.row(7, i), `${recipe} row ${i}`);
      assert.equal(mine.task.verify(row, row.answer), theirs.task.verify(row, row.answer));
      assert.equal(mine.task.verify(row, "x"), theirs.task.verify(row, "x"));
    }
  }
});

Deno.test("builtinSessionJob refuses datasets, environments and rewards sections, naming the key", async () => {
  const { config } = await loadConfig({ config: "agent_calc" });
  assert.match(builtinJobProblem(config)!, /^task\.env: calc is a multi-turn environment/);
  await assert.rejects(builtinSessionJob(config), /^Error: builtinSessionJob: task\.env/);
  const grpo = (await loadConfig({ config: "grpo" })).config;
  const data = {
    ...grpo,
    task: {
      ...grpo.task,
      name: null,
      data: {
        path: "x.jsonl",
        format: "jsonl" as const,
        promptField: "prompt",
        answerField: "answer",
        testFraction: 0.1,
      },
    },
  };
  assert.match(builtinJobProblem(data)!, /^task\.data: x\.jsonl is a dataset file/);
  assert.match(
    builtinJobProblem({ ...grpo, rewards: [{ type: "length" }] } as typeof grpo)!,
    /^rewards:/,
  );
  assert.match(
    builtinJobProblem({ ...grpo, task: { ...grpo.task, name: null } })!,
    /^task\.name: not set/,
  );
});
