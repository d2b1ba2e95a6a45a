import assert from "node:assert/strict";
import { builtinTask, builtinTaskDescription, builtinTaskNames } from "./tasks.ts";

Deno.test("built-in tasks: each builds with default options, under its own name, and generates rows", async () => {
  assert.deepEqual(builtinTaskNames(), [
    "arithmetic",
    "bar_chart",
    "clock",
    "count_shapes",
    "countdown",
    "grid_path",
    "grounding",
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

Deno.test("built-in tasks: the visual tasks take their generators' options and carry images", async () => {
  const count = builtinTask("count_shapes")!;
  assert.equal(count.options.safeParse({ size: 56, count: [3, 6], colours: 2 }).success, false);
  const task = await count({ size: 56, count: [3, 6], shapeSize: [8, 10] });
  const row = task.row(0, 0) as unknown as Record<string, unknown>;
  assert.match((row.images as string[])[0]!, /^data:image\/png;base64,/);
  assert.ok(Number(row.answer) >= 3 && Number(row.answer) <= 6);
  await assert.rejects(count({ count: 99 }), /count/);
  assert.equal(builtinTask("grounding")!.options.safeParse({ minIou: 0.5 }).success, true);
});
