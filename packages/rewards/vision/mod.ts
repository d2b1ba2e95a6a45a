/**
 * `@rlvr/rewards/vision`: procedurally drawn visual reasoning tasks with verifiers, for RL of
 * small vision-language models: counting shapes, reading bar charts, solving grid mazes,
 * reading analog clocks and grounding (a shape's bounding box, with a continuous IoU reward);
 * plus the small integer-exact rasterizer and 5×7 bitmap font they draw with.
 *
 * Design: every task is a seeded `Task` (see `@rlvr/rewards/tasks`): row `i` of seed `s` is the
 * same everywhere, its `images` are PNG data URLs (so rows stay JSON) drawn from the row's
 * structured fields by the task's exported drawing function, its prompt refers to "the image"
 * and asks for `<answer>…</answer>`, and its verifier recomputes the answer from those fields.
 * Images are small (112 pixels a side by default; any size is an option, multiples of 28 suit
 * Qwen2-VL's 14-pixel patches merged 2×2) with crisp solid colours. Importing this module pulls
 * in `@rlvr/image` (the PNG encoder) but neither the math CAS nor the code sandbox.
 *
 * @example Usage
 * ```ts
 * import { countShapesTask, iouReward, visionTask } from "@rlvr/rewards/vision";
 * import { scoreRewards } from "@rlvr/rewards/core";
 * import assert from "node:assert/strict";
 * const count = countShapesTask({ count: [1, 6] });
 * const grounding = visionTask("grounding");
 * const a = count.row(0, 0);
 * const b = grounding.row(0, 0);
 * assert.equal(a.images.length, 1);
 * const r = await scoreRewards([count.reward, grounding.reward, iouReward()], [
 *   { prompt: a.prompt, completion: `<answer>${a.answer}</answer>`, row: a },
 *   { prompt: b.prompt, completion: `<answer>${b.answer}</answer>`, row: b },
 * ]);
 * assert.deepEqual(r.totals, [1, 2]); // count: 1; grounding: 1 + IoU 1
 * ```
 *
 * @module
 */

export type { RgbImage } from "@rlvr/image";
export type {
  Reward,
  RewardContext,
  RewardInput,
  RewardValue,
  Row,
  ScoreBatchFn,
  ScoreFn,
} from "../types.ts";
export type { Task, TaskRow } from "../tasks/task.ts";
export type { Knob } from "../tasks/_knob.ts";
export type { ImageSizeOption, VisionRow } from "./vision_row.ts";
export {
  drawLine,
  fillCircle,
  fillPolygon,
  fillRect,
  fillTriangle,
  getPixel,
  type Point,
  type Rgb,
  setPixel,
} from "./raster.ts";
export {
  drawText,
  FONT_CHARS,
  GLYPH_HEIGHT,
  GLYPH_WIDTH,
  type TextOptions,
  textWidth,
} from "./font.ts";
export { type ColorName, COLORS, SHAPE_COLORS, type ShapeColor } from "./palette.ts";
export { type Box, boxIou, parseBox } from "./box.ts";
export {
  drawShape,
  drawShapes,
  type Shape,
  SHAPE_KINDS,
  shapeBox,
  type ShapeKind,
} from "./shapes.ts";
export { type CountShapesOptions, type CountShapesRow, countShapesTask } from "./count_shapes.ts";
export {
  type BarChart,
  type BarChartOptions,
  type BarChartRow,
  barChartTask,
  type BarQuestion,
  drawBarChart,
} from "./bar_chart.ts";
export {
  drawGridPath,
  gridDistance,
  type GridPathDrawing,
  type GridPathOptions,
  type GridPathRow,
  gridPathTask,
} from "./grid_path.ts";
export {
  type ClockDrawing,
  type ClockOptions,
  type ClockRow,
  clockTask,
  type ClockTime,
  drawClock,
  parseClockTime,
} from "./clock.ts";
export {
  type GroundingOptions,
  type GroundingRow,
  groundingTask,
  iouReward,
  type IouRewardOptions,
} from "./grounding.ts";
export {
  visionTask,
  type VisionTaskFactories,
  type VisionTaskName,
  visionTasks,
} from "./registry.ts";
export { shapesCalcEnv, type ShapesCalcEnvOptions } from "./shapes_calc_env.ts";
export type { Environment, Episode, ResetOptions, StepResult } from "../env/types.ts";
export type { ToolEnvironment, ToolEpisode } from "../env/_episode.ts";
