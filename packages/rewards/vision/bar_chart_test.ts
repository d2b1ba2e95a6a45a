import assert from "node:assert/strict";
import { type BarChartRow, barChartTask, drawBarChart } from "./bar_chart.ts";
import { COLORS } from "./palette.ts";
import { checkVisionTask, decodeRowImage, isColor } from "./_test_utils.ts";

const perturb = (row: BarChartRow) => {
  if (row.question === "tallest") {
    return [...row.labels.filter((l) => l !== row.answer), "Z", `${row.answer}${row.answer}`, "1"];
  }
  const d = Number(row.answer);
  return [String(d + 1), String(d - 1), String(-d), row.compare![0], "A-B"];
};

Deno.test("barChartTask: properties over hundreds of rows (deterministic, verified, adversarial)", async () => {
  await checkVisionTask(barChartTask(), { perturb, draw: drawBarChart });
  await checkVisionTask(barChartTask({ bars: [2, 8], maxValue: 99, size: [168, 140] }), {
    perturb,
    draw: drawBarChart,
    rows: 100,
  });
});

/** Bar values read back from the pixels: each bar's height in its centre column, inverted. */
function readBars(row: BarChartRow): number[] {
  const image = decodeRowImage(row);
  const color = COLORS[row.color];
  const columns: number[] = [];
  for (let x = 0; x < image.width; x++) {
    let h = 0;
    for (let y = 0; y < image.height; y++) if (isColor(image, x, y, color)) h++;
    columns.push(h);
  }
  // Runs of coloured columns are the bars, left to right.
  const heights: number[] = [];
  for (let x = 0; x < columns.length;) {
    if (columns[x] === 0) {
      x++;
      continue;
    }
    const start = x;
    while (x < columns.length && columns[x]! > 0) x++;
    heights.push(columns[Math.floor((start + x) / 2)]!);
  }
  const plot = row.height - 23; // the documented layout: 11 pixel rows above, 12 below
  return heights.map((h) => {
    for (let v = 1; v <= row.maxValue; v++) {
      if (Math.floor((v * plot) / row.maxValue) === h) return v;
    }
    return -1;
  });
}

Deno.test("barChartTask: the picture ranks the bars exactly; the answer follows from the pixels", () => {
  const task = barChartTask({ bars: [2, 7], maxValue: 50 });
  for (const row of task.rows(5, 80)) {
    const values = readBars(row);
    assert.deepEqual(values, row.values, row.id);
    if (row.question === "tallest") {
      assert.equal(row.labels[values.indexOf(Math.max(...values))], row.answer);
    } else {
      const [a, b] = row.compare!.map((l) => values[row.labels.indexOf(l)]!);
      assert.equal(String(a! - b!), row.answer);
    }
  }
});

Deno.test("barChartTask: questions, answers and the difficulty formula", () => {
  const tallest = barChartTask({ bars: 4, maxValue: 9, questions: ["tallest"] });
  for (const row of tallest.rows(1, 50)) {
    const top = Math.max(...row.values);
    assert.equal(row.values.filter((v) => v === top).length, 1, "a unique tallest bar");
    assert.equal(row.difficulty, 4 + 1);
    assert.ok(tallest.verify(row, `Bar ${row.answer}`));
    assert.ok(tallest.verify(row, row.answer.toLowerCase()));
  }
  const diff = barChartTask({ bars: 3, maxValue: 80, questions: ["difference"] });
  for (const row of diff.rows(1, 50)) {
    assert.ok(Number(row.answer) > 0);
    assert.equal(row.difficulty, 3 + 2 + 2);
    assert.match(
      row.prompt,
      /By how much does the value of bar [A-C] exceed the value of bar [A-C]\?/,
    );
  }
  // Monotone in the knobs.
  const d = (o: Parameters<typeof barChartTask>[0]) => barChartTask(o).row(0, 0).difficulty;
  assert.ok(d({ bars: 3, questions: ["tallest"] }) < d({ bars: 5, questions: ["tallest"] }));
  assert.ok(d({ bars: 5, questions: ["tallest"] }) < d({ bars: 8, questions: ["tallest"] }));
  assert.ok(
    d({ maxValue: 9, questions: ["tallest"] }) < d({ maxValue: 80, questions: ["tallest"] }),
  );
  // Few values, many bars: still a unique maximum.
  for (
    const row of barChartTask({ bars: 12, maxValue: 2, questions: ["tallest"], size: 224 }).rows(
      0,
      20,
    )
  ) {
    assert.equal(row.values.filter((v) => v === 2).length, 1);
  }
});

Deno.test("barChartTask: bad knobs name the field and the fix", () => {
  assert.throws(
    () => barChartTask({ bars: 13 }),
    /barChartTask: options.bars must be an integer in \[2, 12\], got 13/,
  );
  assert.throws(
    () => barChartTask({ maxValue: 1 }),
    /options.maxValue must be an integer in \[2, 999\], got 1/,
  );
  assert.throws(
    () => barChartTask({ questions: ["mean" as "tallest"] }),
    /options.questions must be a non-empty array of "tallest", "difference", got \["mean"\]/,
  );
  assert.throws(
    () => barChartTask({ maxValue: 50, size: 56 }),
    /fewer than options.maxValue = 50.*raise options.size or lower options.maxValue/,
  );
  assert.throws(
    () => barChartTask({ bars: 12, maxValue: 80 }),
    /too narrow for values of 2 digits/,
  );
});
