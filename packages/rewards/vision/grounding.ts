/**
 * Grounding: "Give the bounding box of the blue triangle as x1,y1,x2,y2 in pixels", over a
 * scene of coloured shapes in which exactly one has that colour and kind.
 *
 * Design: a row draws a subset of `colors` shape colours and `kinds` shape kinds, makes one
 * (colour, kind) pair the target and places the target once plus `shapes − 1` shapes of the
 * other pairs (so distractors often share its colour or its kind), never overlapping (see
 * `drawShapes`). The answer is the target's box `[x, y, x + size, y + size]` in pixel-edge
 * coordinates ({@link shapeBox}); the verifier parses the answered box ({@link parseBox}) and
 * accepts it when its IoU with the target's box, recomputed from `row.shapes[row.target]`, is
 * at least `minIou` (default 0.5, the usual detection threshold). {@link iouReward} is the
 * continuous version: the IoU itself, 0 for a missing or malformed box. Coordinates are pixels
 * of the image as drawn; keep the sides multiples of 28 so a Qwen2-VL-style processor does not
 * resize it (or rescale the boxes if it does). Difficulty is
 * `shapes + max(width, height) / targetSize`: more shapes to search and a smaller target.
 *
 * @module
 */

import { toDataUrl } from "@rlvr/image";
import { checkName, checkNumber, checkOptions } from "../_check.ts";
import { defineReward } from "../define.ts";
import { extractFinalAnswer } from "../extract.ts";
import { draw, type Knob } from "../tasks/_knob.ts";
import { defineTask, type Task } from "../tasks/task.ts";
import type { Reward } from "../types.ts";
import { drawVocabulary, layout, place, sceneKey, vocabularyOptions } from "./_scene.ts";
import { imageSize, knobOr } from "./_util.ts";
import { boxIou, parseBox } from "./box.ts";
import { drawShapes, type Shape, shapeBox } from "./shapes.ts";
import type { ImageSizeOption, VisionRow } from "./vision_row.ts";

/** A row of {@link groundingTask}; its image is `drawShapes(width, height, shapes)`. */
export interface GroundingRow extends VisionRow {
  /** Every shape in the image, top to bottom, left to right. */
  shapes: Shape[];
  /** Index in `shapes` of the shape asked about (the only one of its colour and kind). */
  target: number;
  /** The target's box `[x1, y1, x2, y2]` (equal to `shapeBox(shapes[target])`). */
  box: [number, number, number, number];
}

/** Knobs of {@link groundingTask}. */
export interface GroundingOptions {
  /** Shapes per image, the target included, 1–30 (default `[3, 6]`). */
  shapes?: Knob;
  /** Shape colours in play per row, 1–6 (default 3). */
  colors?: number;
  /** Shape kinds in play per row, 1–4 (default 3). */
  kinds?: number;
  /** Side of a shape in pixels, 6–200 (default `[12, 24]`); a range is drawn per shape. */
  shapeSize?: Knob;
  /** Image side or `[width, height]` (default 112). */
  size?: ImageSizeOption;
  /** Smallest IoU the verifier accepts, in (0, 1] (default 0.5). */
  minIou?: number;
  /** Task name (default `"grounding"`). */
  name?: string;
}

function targetBox(row: GroundingRow) {
  return shapeBox(row.shapes[row.target]!);
}

/**
 * The grounding task (see the module doc for the knobs and the difficulty).
 *
 * @example Usage
 * ```ts
 * import { groundingTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const task = groundingTask({ shapes: 4 });
 * const row = task.row(0, 0);
 * const [x1, y1, x2, y2] = row.box;
 * assert.ok(task.verify(row, row.answer));
 * assert.ok(task.verify(row, `[${x1 + 1}, ${y1}, ${x2}, ${y2 - 1}]`)); // IoU >= 0.5
 * assert.ok(!task.verify(row, `${x2},${y2},${x2 + 20},${y2 + 20}`)); // beside it
 * ```
 */
export function groundingTask(options?: GroundingOptions): Task<GroundingRow> {
  const owner = "groundingTask";
  const opts = checkOptions<GroundingOptions>(
    owner,
    options,
    "{shapes?, colors?, kinds?, shapeSize?, size?, minIou?, name?}",
  );
  const count = knobOr(owner, "options.shapes", opts.shapes, [3, 6], 1, 30);
  const { colors, kinds } = vocabularyOptions(owner, opts);
  const sizes = knobOr(owner, "options.shapeSize", opts.shapeSize, [12, 24], 6, 200);
  const [width, height] = imageSize(owner, "options.size", opts.size, 112);
  const minIou = checkNumber(owner, "options.minIou", opts.minIou ?? 0.5, {
    min: 0,
    minExclusive: true,
    max: 1,
  });
  const name = checkName(owner, "options.name", opts.name ?? "grounding");
  if (colors * kinds === 1 && count[1] > 1) {
    throw new RangeError(
      `${owner}: options.shapes must be 1 when options.colors and options.kinds are both 1 ` +
        `(the target must be the only shape of its colour and kind), got ${count[1]}; ` +
        `raise colors or kinds`,
    );
  }
  const grid = layout(width, height, sizes[1]);
  if (count[1] > grid.cols * grid.rows) {
    throw new RangeError(
      `${owner}: up to ${count[1]} shapes (options.shapes) do not fit a ${width}×${height} ` +
        `image with shapes up to ${sizes[1]} pixels (room for ${grid.cols * grid.rows}); ` +
        `raise options.size, lower options.shapeSize or lower options.shapes`,
    );
  }
  return defineTask<GroundingRow>({
    name,
    generate(rng) {
      const { palette, shapeKinds } = drawVocabulary(rng, colors, kinds);
      const goal = { color: palette[0]!, kind: shapeKinds[0]! };
      const others = palette.flatMap((color) => shapeKinds.map((kind) => ({ color, kind })))
        .filter((s) => s.color !== goal.color || s.kind !== goal.kind);
      const n = draw(rng, count);
      const specs = [goal, ...Array.from({ length: n - 1 }, () => rng.pick(others))];
      // Placement sorts the shapes; the target is the only one of its colour and kind.
      const placed = place(rng, grid, specs, sizes);
      const target = placed.findIndex((s) => s.color === goal.color && s.kind === goal.kind);
      const shape = placed[target]!;
      const box: [number, number, number, number] = [
        shape.x,
        shape.y,
        shape.x + shape.size,
        shape.y + shape.size,
      ];
      return {
        width,
        height,
        shapes: placed,
        target,
        box,
        images: [toDataUrl(drawShapes(width, height, placed))],
        prompt: `The image is ${width}×${height} pixels: x runs from 0 at the left edge to ` +
          `${width} at the right edge and y from 0 at the top edge to ${height} at the bottom ` +
          `edge. Give the bounding box of the ${goal.color} ${goal.kind} as x1,y1,x2,y2 (its ` +
          `top-left corner, then its bottom-right corner, in pixels) inside <answer></answer>.`,
        answer: box.join(","),
        difficulty: n + Math.max(width, height) / shape.size,
      };
    },
    key: (row) => `${row.width}x${row.height}|${row.target}|${sceneKey(row.shapes)}`,
    verify(row, answer) {
      const got = parseBox(answer);
      return got !== null && boxIou(got, targetBox(row)) >= minIou;
    },
  });
}

/** Options of {@link iouReward}. */
export interface IouRewardOptions {
  /** The grounding task's name: rows of other tasks score `null` (default `"grounding"`). */
  task?: string;
  /** The reward's name (default `"grounding_iou"`). */
  name?: string;
}

/**
 * A continuous grounding reward: the IoU of the answered box (`<answer>x1,y1,x2,y2</answer>`
 * or `\boxed{…}`) with the target's box of a {@link groundingTask} row, in [0, 1]; 0 when the
 * answer is missing or not a box, `null` on rows of other tasks.
 *
 * @example Usage
 * ```ts
 * import { groundingTask, iouReward } from "@rlvr/rewards/vision";
 * import { scoreRewards } from "@rlvr/rewards/core";
 * import assert from "node:assert/strict";
 * const task = groundingTask();
 * const row = task.row(0, 0);
 * const [x1, y1, x2, y2] = row.box;
 * const half = `${x1},${y1},${(x1 + x2) / 2},${y2}`; // the left half of the box
 * const r = await scoreRewards([iouReward()], [
 *   { prompt: row.prompt, completion: `<answer>${row.answer}</answer>`, row },
 *   { prompt: row.prompt, completion: `<answer>${half}</answer>`, row },
 *   { prompt: row.prompt, completion: "<answer>the blue one</answer>", row },
 *   { prompt: "2+2?", completion: "<answer>4</answer>", row: { task: "arithmetic" } },
 * ]);
 * assert.deepEqual(r.outcomes["grounding_iou"]!.map((o) => o.value), [1, 0.5, 0, null]);
 * ```
 */
export function iouReward(options?: IouRewardOptions): Reward {
  const owner = "iouReward";
  const opts = checkOptions<IouRewardOptions>(owner, options, "{task?, name?}");
  const task = checkName(owner, "options.task", opts.task ?? "grounding");
  const name = checkName(owner, "options.name", opts.name ?? "grounding_iou");
  return defineReward(name, ({ completion, row }) => {
    if (row.task !== task) return null;
    const answer = typeof completion === "string" ? extractFinalAnswer(completion) : null;
    const got = answer === null ? null : parseBox(answer);
    return got === null ? 0 : boxIou(got, targetBox(row as GroundingRow));
  });
}
