import assert from "node:assert/strict";
import { scoreRewards } from "../runner.ts";
import { boxIou, parseBox } from "./box.ts";
import { type GroundingRow, groundingTask, iouReward } from "./grounding.ts";
import { COLORS } from "./palette.ts";
import { drawShapes, shapeBox } from "./shapes.ts";
import {
  ADVERSARIAL,
  checkVisionTask,
  classify,
  components,
  decodeRowImage,
} from "./_test_utils.ts";

const perturb = (row: GroundingRow) => {
  const [x1, y1, x2, y2] = row.box;
  const s = x2 - x1;
  return [
    `${x1 + s},${y1},${x2 + s},${y2}`, // beside it: IoU 0
    `${x1 + s / 2},${y1 + s / 2},${x2 + s / 2},${y2 + s / 2}`, // IoU 1/7
    `${x2},${y2},${x1},${y1}`, // corners swapped
    `${x1},${y1},${x2}`,
    `0,0,${row.width},${row.height}`, // the whole image
  ];
};
const draw = (row: GroundingRow) => drawShapes(row.width, row.height, row.shapes);

Deno.test("groundingTask: properties over hundreds of rows (deterministic, verified, adversarial)", async () => {
  await checkVisionTask(groundingTask(), { perturb, draw });
  await checkVisionTask(
    groundingTask({ shapes: [1, 12], colors: 6, kinds: 4, size: 168, shapeSize: [10, 30] }),
    {
      perturb,
      draw,
      rows: 100,
    },
  );
});

Deno.test("groundingTask: the target is the only shape of its kind and colour in the pixels; its box matches", () => {
  const task = groundingTask({ shapes: [2, 8], colors: 3, kinds: 4 });
  for (const row of task.rows(13, 60)) {
    const target = row.shapes[row.target]!;
    assert.deepEqual(row.box, shapeBox(target));
    assert.equal(
      row.shapes.filter((s) => s.color === target.color && s.kind === target.kind).length,
      1,
    );
    assert.ok(row.prompt.includes(`${target.color} ${target.kind}`));
    const blobs = components(decodeRowImage(row), COLORS[target.color])
      .filter((c) => classify(c) === target.kind);
    assert.equal(blobs.length, 1, row.id);
    const tight = blobs[0]!.box;
    assert.ok(boxIou(tight, row.box) >= 0.8, `${tight} vs ${row.box}`);
    assert.ok(task.verify(row, tight.join(",")), "the tight pixel box is accepted");
    // The last pixel inclusive convention is accepted too.
    assert.ok(
      task.verify(row, [row.box[0], row.box[1], row.box[2] - 1, row.box[3] - 1].join(", ")),
    );
  }
});

Deno.test("groundingTask: minIou sets the threshold; difficulty formula and monotone in shapes", () => {
  const strict = groundingTask({ minIou: 0.9 });
  const loose = groundingTask({ minIou: 0.1 });
  const row = strict.row(0, 0);
  const [x1, y1, x2, y2] = row.box;
  const s = x2 - x1;
  const shifted = `${x1 + s / 4},${y1},${x2 + s / 4},${y2}`; // IoU 0.6
  assert.ok(!strict.verify(row, shifted));
  assert.ok(groundingTask().verify(row, shifted));
  assert.ok(loose.verify(row, `${x1 + s / 2},${y1},${x2 + s / 2},${y2}`)); // IoU 1/3
  for (const r of groundingTask({ shapes: 4, shapeSize: 16 }).rows(0, 20)) {
    assert.equal(r.difficulty, 4 + 112 / 16);
  }
  const mean = (shapes: number) => {
    const rows = groundingTask({ shapes }).rows(1, 100);
    return rows.reduce((a, r) => a + r.difficulty, 0) / rows.length;
  };
  assert.ok(mean(2) < mean(5) && mean(5) < mean(10));
  assert.ok(
    groundingTask({ shapeSize: 24 }).row(0, 0).difficulty <
      groundingTask({ shapeSize: 12 }).row(0, 0).difficulty,
  );
});

Deno.test("iouReward: the IoU of the answered box; 0 when malformed; null on other tasks", async () => {
  const task = groundingTask();
  const rows = task.rows(3, 30);
  const inputs = rows.flatMap((row) => {
    const [x1, y1, x2, y2] = row.box;
    return [
      { prompt: row.prompt, completion: `<answer>${row.answer}</answer>`, row },
      { prompt: row.prompt, completion: `\\boxed{${x1},${y1},${(x1 + x2) / 2},${y2}}`, row },
      { prompt: row.prompt, completion: `<answer>${x1},${y1},${x2}</answer>`, row },
      { prompt: row.prompt, completion: "no answer", row },
    ];
  });
  const r = await scoreRewards([iouReward()], [
    ...inputs,
    { prompt: "q", completion: "<answer>1,2,3,4</answer>", row: { task: "count_shapes" } },
    { prompt: "q", completion: "<answer>1,2,3,4</answer>", row: {} },
  ]);
  const want = rows.flatMap(() => [1, 0.5, 0, 0]);
  assert.deepEqual(r.outcomes["grounding_iou"]!.map((o) => o.value), [...want, null, null]);
  const custom = iouReward({ task: "ground2", name: "iou2" });
  assert.equal(custom.name, "iou2");
  const g2 = groundingTask({ name: "ground2" }).row(0, 0);
  const r2 = await scoreRewards([custom, iouReward()], [
    { prompt: "", completion: `<answer>${g2.answer}</answer>`, row: g2 },
  ]);
  assert.deepEqual(r2.totals, [1], "the default reward sees another task's row as null");
  assert.equal(r2.outcomes["grounding_iou"]![0]!.value, null);
  // Adversarial answers: 0, fast, no failure.
  const row = rows[0]!;
  const t0 = performance.now();
  const r3 = await scoreRewards(
    [iouReward()],
    ADVERSARIAL.map((a) => ({
      prompt: row.prompt,
      completion: `<answer>${a}</answer>`,
      row,
    })),
  );
  assert.ok(performance.now() - t0 < 2000);
  assert.ok(r3.totals.every((v) => v === 0));
  assert.equal(r3.failures.length, 0);
  assert.throws(
    () => iouReward({ task: "" }),
    /iouReward: options.task must be a non-empty string/,
  );
  assert.equal(parseBox(row.answer)!.length, 4);
});

Deno.test("groundingTask: bad knobs name the field and the fix", () => {
  assert.throws(
    () => groundingTask({ minIou: 0 }),
    /groundingTask: options.minIou must be a finite number in \(0, 1\], got 0/,
  );
  assert.throws(() => groundingTask({ colors: 1, kinds: 1 }), /options.shapes must be 1 when/);
  assert.ok(groundingTask({ colors: 1, kinds: 1, shapes: 1 }).row(0, 0));
  assert.throws(() => groundingTask({ shapes: 30, size: 56 }), /do not fit a 56×56 image/);
  assert.throws(
    () => groundingTask({ shapeSize: [20, 10] }),
    /options.shapeSize\[1\] must be an integer in \[20, 200\], got 10/,
  );
});
