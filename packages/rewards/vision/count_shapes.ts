/**
 * Counting: "How many red circles are in the image?" over a scene of coloured shapes.
 *
 * Design: a row draws a subset of `colors` shape colours and `kinds` shape kinds, makes one
 * (colour, kind) pair the target, and places `count` target shapes and `distractors` other
 * shapes (each a uniformly drawn other pair of the subsets, so many share the target's colour
 * or its kind) in distinct cells of the canvas, never overlapping (see `drawShapes`). The
 * count may be 0 (the question names something absent). The verifier reads an integer and
 * compares it with the number of target shapes in `row.shapes`. Difficulty is
 * `1 + count + shapes + (colors − 1) + (kinds − 1)`, with `shapes = count + distractors` of the
 * row and `colors`, `kinds` the options: more targets, more shapes to scan and more ways to
 * confuse them each add one.
 *
 * @module
 */

import { toDataUrl } from "@rlvr/image";
import { checkName, checkOptions } from "../_check.ts";
import { draw, type Knob } from "../tasks/_knob.ts";
import { defineTask, type Task } from "../tasks/task.ts";
import { drawVocabulary, layout, place, sceneKey, vocabularyOptions } from "./_scene.ts";
import { imageSize, knobOr, parseInteger } from "./_util.ts";
import type { ShapeColor } from "./palette.ts";
import { drawShapes, type Shape, type ShapeKind } from "./shapes.ts";
import type { ImageSizeOption, VisionRow } from "./vision_row.ts";

/** A row of {@link countShapesTask}; its image is `drawShapes(width, height, shapes)`. */
export interface CountShapesRow extends VisionRow {
  /** Every shape in the image, top to bottom, left to right. */
  shapes: Shape[];
  /** The colour asked about. */
  targetColor: ShapeColor;
  /** The kind asked about. */
  targetKind: ShapeKind;
}

/** Knobs of {@link countShapesTask}. */
export interface CountShapesOptions {
  /** Target shapes per image, 0–40 (default `[0, 5]`; its maximum is the largest answer). */
  count?: Knob;
  /** Other shapes per image, 0–40 (default `[1, 5]`). */
  distractors?: Knob;
  /** Shape colours in play per row, 1–6 (default 3). */
  colors?: number;
  /** Shape kinds in play per row, 1–4 (default 3). */
  kinds?: number;
  /** Side of a shape in pixels, 6–200 (default `[12, 18]`); a range is drawn per shape. */
  shapeSize?: Knob;
  /** Image side or `[width, height]` (default 112). */
  size?: ImageSizeOption;
  /** Task name (default `"count_shapes"`). */
  name?: string;
}

/** `true` when `shape` is of the row's target colour and kind. */
function isTarget(row: CountShapesRow, shape: Shape): boolean {
  return shape.color === row.targetColor && shape.kind === row.targetKind;
}

/**
 * The shape-counting task (see the module doc for the knobs and the difficulty).
 *
 * @example Usage
 * ```ts
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const task = countShapesTask({ count: [1, 4], colors: 2, kinds: 2, size: 84 });
 * const row = task.row(0, 0);
 * assert.ok(row.images[0]!.startsWith("data:image/png;base64,"));
 * assert.match(row.prompt, /How many \w+ \w+s are in the image\?/);
 * assert.ok(task.verify(row, row.answer));
 * assert.ok(!task.verify(row, String(Number(row.answer) + 1)));
 * ```
 */
export function countShapesTask(options?: CountShapesOptions): Task<CountShapesRow> {
  const owner = "countShapesTask";
  const opts = checkOptions<CountShapesOptions>(
    owner,
    options,
    "{count?, distractors?, colors?, kinds?, shapeSize?, size?, name?}",
  );
  const count = knobOr(owner, "options.count", opts.count, [0, 5], 0, 40);
  const distractors = knobOr(owner, "options.distractors", opts.distractors, [1, 5], 0, 40);
  const { colors, kinds } = vocabularyOptions(owner, opts);
  const sizes = knobOr(owner, "options.shapeSize", opts.shapeSize, [12, 18], 6, 200);
  const [width, height] = imageSize(owner, "options.size", opts.size, 112);
  const name = checkName(owner, "options.name", opts.name ?? "count_shapes");
  if (colors * kinds === 1 && distractors[1] > 0) {
    throw new RangeError(
      `${owner}: options.distractors must be 0 when options.colors and options.kinds are both 1 ` +
        `(every shape would be a target), got ${distractors[1]}; raise colors or kinds`,
    );
  }
  const grid = layout(width, height, sizes[1]);
  const most = count[1] + distractors[1];
  if (most > grid.cols * grid.rows) {
    throw new RangeError(
      `${owner}: up to ${most} shapes (options.count + options.distractors) do not fit a ` +
        `${width}×${height} image with shapes up to ${sizes[1]} pixels (room for ` +
        `${grid.cols * grid.rows}, one ${grid.cell}-pixel cell each); raise options.size, ` +
        `lower options.shapeSize or lower the counts`,
    );
  }
  return defineTask<CountShapesRow>({
    name,
    generate(rng) {
      const { palette, shapeKinds } = drawVocabulary(rng, colors, kinds);
      const targetColor = palette[0]!;
      const targetKind = shapeKinds[0]!;
      const others = palette.flatMap((color) => shapeKinds.map((kind) => ({ color, kind }))).filter(
        (s) => s.color !== targetColor || s.kind !== targetKind,
      );
      const n = draw(rng, count);
      const d = draw(rng, distractors);
      const specs = [
        ...Array.from({ length: n }, () => ({ color: targetColor, kind: targetKind })),
        ...Array.from({ length: d }, () => rng.pick(others)),
      ];
      const shapes = place(rng, grid, specs, sizes);
      return {
        width,
        height,
        shapes,
        targetColor,
        targetKind,
        images: [toDataUrl(drawShapes(width, height, shapes))],
        prompt: `The image shows coloured shapes on a white background. How many ${targetColor} ` +
          `${targetKind}s are in the image? Count only shapes that are both ${targetColor} and ` +
          `${targetKind}s. Give the number inside <answer></answer>.`,
        answer: String(n),
        difficulty: 1 + n + (n + d) + (colors - 1) + (kinds - 1),
      };
    },
    key: (row) =>
      `${row.width}x${row.height}|${row.targetColor} ${row.targetKind}|${sceneKey(row.shapes)}`,
    verify(row, answer) {
      const got = parseInteger(answer);
      return got !== null && got === row.shapes.filter((s) => isTarget(row, s)).length;
    },
  });
}
