import assert from "node:assert/strict";
import { scoreRewards } from "../runner.ts";
import { visionTask, visionTasks } from "./registry.ts";

Deno.test("visionTask: every name builds its task; rewards ignore each other's rows", async () => {
  const tasks = Object.keys(visionTasks).map((name) => visionTask(name));
  const rows = tasks.map((t) => t.row(0, 0));
  for (const [i, t] of tasks.entries()) {
    assert.equal(t.name, Object.keys(visionTasks)[i]);
    assert.equal(rows[i]!.task, t.name);
  }
  const r = await scoreRewards(
    tasks.map((t) => t.reward),
    rows.map((row) => ({ prompt: row.prompt, completion: `<answer>${row.answer}</answer>`, row })),
  );
  // Each row is scored 1 by its own task's reward and null by the others: totals are 1.
  assert.deepEqual(r.totals, rows.map(() => 1));
  for (const t of tasks) {
    const values = r.outcomes[t.name]!.map((o) => o.value);
    assert.equal(values.filter((v) => v === 1).length, 1);
    assert.equal(values.filter((v) => v === null).length, tasks.length - 1);
  }
});

Deno.test("visionTask: options are passed on and checked; unknown names list the choices", () => {
  assert.equal(visionTask("clock", { step: 60 }).row(0, 0).answer.endsWith(":00"), true);
  assert.throws(
    () => visionTask("clock", { step: 7 }),
    /clockTask: options.step must be a divisor of 60/,
  );
  assert.throws(
    () => visionTask("maze"),
    /visionTask: name must be one of "count_shapes", "bar_chart", "grid_path", "clock", "grounding", got "maze"/,
  );
  assert.throws(() => visionTask("toString"), /name must be one of/);
});
