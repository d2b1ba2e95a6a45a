import assert from "node:assert/strict";
import { builtinTask, builtinTaskDescription, builtinTaskNames } from "./tasks.ts";

Deno.test("built-in tasks: each builds with default options, under its own name, and generates rows", async () => {
  assert.deepEqual(builtinTaskNames(), [
    "arithmetic",
    "countdown",
    "knights_knaves",
    "shortest_path",
    "sudoku4",
  ]);
  for (const name of builtinTaskNames()) {
    const task = await builtinTask(name)!({});
    assert.equal(task.name, name);
    const row = task.row(0, 0);
    assert.equal(row.task, name);
    assert.ok(task.verify(row, row.answer), `${name}: the reference answer verifies`);
    assert.ok(builtinTaskDescription(name)!.length > 10);
  }
});

Deno.test("built-in tasks: option names are strict, ranges are the generator's", async () => {
  const countdown = builtinTask("countdown")!;
  const r = countdown.options.safeParse({ count: [2, 4], maxNumbr: 10 });
  assert.equal(r.success, false);
  assert.deepEqual(countdown.options.parse({ count: [2, 4], useAll: true }), {
    count: [2, 4],
    useAll: true,
  });
  await assert.rejects(countdown({ count: 99 }), /count must be an integer in \[2, 8\]/);
  assert.equal(builtinTask("constructor"), undefined); // not an inherited property
});
