/**
 * Shared checks for the visual task tests (private to tests).
 *
 * @module
 */

import assert from "node:assert/strict";
import { decodeImage, parseDataUrl, type RgbImage } from "@rlvr/image";
import { scoreRewards } from "../runner.ts";
import type { Task } from "../tasks/task.ts";
import { checkTaskProperties } from "../tasks/_test_utils.ts";
import type { Rgb } from "./raster.ts";
import type { VisionRow } from "./vision_row.ts";

/** The image of a row, decoded from its PNG data URL. */
export function decodeRowImage(row: VisionRow, index = 0): RgbImage {
  return decodeImage(parseDataUrl(row.images[index]!).bytes);
}

/** `true` when pixel `(x, y)` of `image` is `color`. */
export function isColor(image: RgbImage, x: number, y: number, color: Rgb): boolean {
  const i = 3 * (y * image.width + x);
  return image.data[i] === color[0] && image.data[i + 1] === color[1] &&
    image.data[i + 2] === color[2];
}

/** A 4-connected component of pixels of one colour. */
export interface Component {
  /** Pixel count. */
  size: number;
  /** Tight box `[x1, y1, x2, y2]` (x2, y2 exclusive). */
  box: [number, number, number, number];
  /** Pixels per row of the box, top to bottom. */
  rowCounts: number[];
}

/** The 4-connected components of the pixels of `color`. */
export function components(image: RgbImage, color: Rgb): Component[] {
  const { width, height } = image;
  const seen = new Uint8Array(width * height);
  const out: Component[] = [];
  for (let start = 0; start < width * height; start++) {
    if (seen[start] || !isColor(image, start % width, Math.floor(start / width), color)) continue;
    const pixels: number[] = [];
    const stack = [start];
    seen[start] = 1;
    while (stack.length > 0) {
      const p = stack.pop()!;
      pixels.push(p);
      const x = p % width;
      const y = Math.floor(p / width);
      for (const [nx, ny] of [[x - 1, y], [x + 1, y], [x, y - 1], [x, y + 1]] as const) {
        if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
        const q = ny * width + nx;
        if (seen[q] || !isColor(image, nx, ny, color)) continue;
        seen[q] = 1;
        stack.push(q);
      }
    }
    const xs = pixels.map((p) => p % width);
    const ys = pixels.map((p) => Math.floor(p / width));
    const box: [number, number, number, number] = [
      Math.min(...xs),
      Math.min(...ys),
      Math.max(...xs) + 1,
      Math.max(...ys) + 1,
    ];
    const rowCounts = new Array(box[3] - box[1]).fill(0);
    for (const y of ys) rowCounts[y - box[1]]++;
    out.push({ size: pixels.length, box, rowCounts });
  }
  return out;
}

/** The shape kind a component looks like, from its fill ratio and its widest row. */
export function classify(c: Component): string {
  const w = c.box[2] - c.box[0];
  const h = c.box[3] - c.box[1];
  const fill = c.size / (w * h);
  if (fill > 0.95) return "square";
  if (fill > 0.65) return "circle";
  return c.rowCounts[c.rowCounts.length - 1]! >= 0.8 * w ? "triangle" : "diamond";
}

/** Answers that must score 0 on every row, quickly and without throwing. */
export const ADVERSARIAL: readonly string[] = [
  "",
  " ",
  "NaN",
  "-NaN",
  "Infinity",
  "-Infinity",
  "1e999",
  "-1e999",
  "1e3",
  "0x10",
  "null",
  "undefined",
  "true",
  "{}",
  "[]",
  "[[[[1,2,3,4]]]]]",
  "<answer>-7</answer>",
  "<answer><answer>-1</answer></answer>",
  "9".repeat(10_000),
  "1,".repeat(100_000),
  "(".repeat(100_000),
  "\u0000\u0001",
  "３",
  "١٢",
  "3\n4",
  "A B",
  "bar",
  "12:345",
  "99:99",
  "-0:-0",
];

/** Options of {@link checkVisionTask}. */
export interface VisionCheck<R extends VisionRow> {
  /** Wrong answers for a row (each must be rejected). */
  perturb(row: R): string[];
  /** Redraws a row's image from its structured fields. */
  draw(row: R): RgbImage;
  /** Rows in the loop (default 300). */
  rows?: number;
  /** Rows whose image is decoded and compared with `draw` (default 25). */
  decoded?: number;
}

/**
 * The properties every visual task has: the generic task properties (fast-check over random
 * seeds), then, over a loop of rows: determinism down to the image bytes, JSON round trips,
 * the own answer accepted and every perturbation rejected, the PNG decodes to the redrawn
 * image, adversarial answers and completions score 0 fast, other tasks' rows score `null`.
 */
export async function checkVisionTask<R extends VisionRow>(
  task: Task<R>,
  check: VisionCheck<NoInfer<R>>,
): Promise<void> {
  await checkTaskProperties(task, check.perturb, 25);
  const count = check.rows ?? 300;
  const decoded = check.decoded ?? 25;
  for (let i = 0; i < count; i++) {
    const seed = 1000 + i * 7919;
    const row = task.row(seed, i % 17);
    assert.deepEqual(task.row(seed, i % 17), row, "same seed, same row (image bytes included)");
    assert.deepEqual(JSON.parse(JSON.stringify(row)), row, "rows are plain JSON");
    assert.equal(row.images.length, 1);
    assert.ok(row.images[0]!.startsWith("data:image/png;base64,"));
    assert.ok(row.prompt.includes("the image") || row.prompt.includes("The image"));
    assert.ok(task.verify(row, row.answer), `own answer accepted: ${row.answer}`);
    assert.ok(task.verify(row, ` ${row.answer} `), "surrounding spaces are ignored");
    for (const w of check.perturb(row)) {
      assert.ok(!task.verify(row, w), `row ${seed}/${i % 17}: perturbed answer rejected: ${w}`);
    }
    if (i < decoded) {
      const image = decodeRowImage(row);
      assert.equal(image.width, row.width);
      assert.equal(image.height, row.height);
      assert.deepEqual(image.data, check.draw(row).data, "the PNG is the redrawn image");
    }
  }
  const rows = task.rows(7, 5);
  for (const row of rows) {
    for (const bad of ADVERSARIAL) {
      const t0 = performance.now();
      assert.equal(task.verify(row, bad), false, `adversarial ${JSON.stringify(bad.slice(0, 20))}`);
      assert.ok(performance.now() - t0 < 50, "verify is fast on adversarial answers");
    }
    for (const bad of [42, null, undefined, NaN, {}, ["1"]]) {
      assert.equal(task.verify(row, bad as unknown as string), false);
    }
  }
  const row = rows[0]!;
  const completions = [
    ...ADVERSARIAL.map((a) => `<answer>${a}</answer>`),
    `<answer><answer>${row.answer}</answer>`.repeat(1000),
    `<answer>${"<answer>".repeat(10_000)}`,
    "\\boxed{".repeat(10_000),
    `${"x".repeat(1_000_000)}<answer>wrong</answer>`,
  ];
  const t0 = performance.now();
  const r = await scoreRewards([task.reward], [
    ...completions.map((completion) => ({ prompt: row.prompt, completion, row })),
    {
      prompt: "2+2?",
      completion: `<answer>${row.answer}</answer>`,
      row: { ...row, task: "other" },
    },
  ]);
  assert.ok(performance.now() - t0 < 5000, "adversarial completions are scored fast");
  assert.deepEqual(
    r.outcomes[task.name]!.map((o) => o.value),
    [...completions.map(() => 0), null],
    "adversarial completions score 0; another task's row is not applicable",
  );
  assert.equal(r.failures.length, 0);
}
