import assert from "node:assert/strict";
import { type CountShapesRow, countShapesTask } from "./count_shapes.ts";
import { COLORS } from "./palette.ts";
import { drawShapes } from "./shapes.ts";
import { checkVisionTask, classify, components, decodeRowImage } from "./_test_utils.ts";

const perturb = (row: CountShapesRow) => {
  const n = Number(row.answer);
  return [String(n + 1), String(n - 1), `${n}1`, `${n}.5`, "banana", `${row.targetColor}`];
};
const draw = (row: CountShapesRow) => drawShapes(row.width, row.height, row.shapes);

Deno.test("countShapesTask: properties over hundreds of rows (deterministic, verified, adversarial)", async () => {
  await checkVisionTask(countShapesTask(), { perturb, draw });
  await checkVisionTask(
    countShapesTask({ count: [0, 12], distractors: [0, 12], colors: 6, kinds: 4, size: 168 }),
    { perturb, draw, rows: 100 },
  );
});

Deno.test("countShapesTask: the image holds exactly the answer's number of target shapes", () => {
  const task = countShapesTask({
    count: [0, 8],
    distractors: [2, 8],
    colors: 4,
    kinds: 4,
    size: 140,
  });
  for (const row of task.rows(11, 60)) {
    const image = decodeRowImage(row);
    const blobs = components(image, COLORS[row.targetColor]);
    const targets = blobs.filter((c) => classify(c) === row.targetKind);
    assert.equal(targets.length, Number(row.answer), `${row.id}: ${row.prompt}`);
    // Every shape is a separate blob of its own colour, and nothing overlaps.
    let total = 0;
    for (const name of new Set(row.shapes.map((s) => s.color))) {
      total += components(image, COLORS[name]).length;
    }
    assert.equal(total, row.shapes.length);
    for (const s of row.shapes) {
      assert.ok(s.x >= 0 && s.y >= 0 && s.x + s.size <= row.width && s.y + s.size <= row.height);
    }
  }
});

Deno.test("countShapesTask: knobs shape the rows; difficulty follows its formula and is monotone", () => {
  const fixed = countShapesTask({ count: 3, distractors: 2, colors: 2, kinds: 3 });
  for (const row of fixed.rows(0, 30)) {
    assert.equal(row.answer, "3");
    assert.equal(row.shapes.length, 5);
    assert.equal(new Set(row.shapes.map((s) => s.color)).size <= 2, true);
    assert.equal(row.difficulty, 1 + 3 + 5 + 1 + 2);
  }
  const mean = (o: Parameters<typeof countShapesTask>[0]) => {
    const rows = countShapesTask(o).rows(3, 200);
    return rows.reduce((a, r) => a + r.difficulty, 0) / rows.length;
  };
  const byCount = [2, 5, 10].map((m) => mean({ count: [0, m] }));
  assert.ok(byCount[0]! < byCount[1]! && byCount[1]! < byCount[2]!, `${byCount}`);
  const byColors = [1, 3, 6].map((colors) => mean({ colors }));
  assert.ok(byColors[0]! < byColors[1]! && byColors[1]! < byColors[2]!, `${byColors}`);
  const bySize = countShapesTask({ size: [56, 84], count: 2, distractors: 1 }).row(0, 0);
  assert.equal(bySize.width, 56);
  assert.equal(bySize.height, 84);
});

Deno.test("countShapesTask: bad knobs name the field and the fix", () => {
  assert.throws(
    () => countShapesTask({ count: 41 }),
    /countShapesTask: options.count must be an integer in \[0, 40\], got 41/,
  );
  assert.throws(
    () => countShapesTask({ colors: 7 }),
    /options.colors must be an integer in \[1, 6\], got 7/,
  );
  assert.throws(
    () => countShapesTask({ colors: 1, kinds: 1 }),
    /options.distractors must be 0 when/,
  );
  assert.ok(countShapesTask({ colors: 1, kinds: 1, distractors: 0 }).row(0, 0));
  assert.throws(
    () => countShapesTask({ count: 30, size: 56 }),
    /do not fit a 56×56 image.*raise options.size/,
  );
  assert.throws(
    () => countShapesTask({ size: 20 }),
    /options.size must be an integer in \[28, 1024\], got 20/,
  );
  assert.throws(
    () => countShapesTask({ size: [56, 2000] }),
    /options.size\[1\] must be an integer in \[28, 1024\], got 2000/,
  );
});
