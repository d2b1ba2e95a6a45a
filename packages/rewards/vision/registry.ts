/**
 * The visual tasks by name, so a training config can name one (`"clock"`) with its options.
 *
 * @module
 */

import { show } from "../_check.ts";
import type { Task } from "../tasks/task.ts";
import { type BarChartOptions, type BarChartRow, barChartTask } from "./bar_chart.ts";
import { type ClockOptions, type ClockRow, clockTask } from "./clock.ts";
import { type CountShapesOptions, type CountShapesRow, countShapesTask } from "./count_shapes.ts";
import { type GridPathOptions, type GridPathRow, gridPathTask } from "./grid_path.ts";
import { type GroundingOptions, type GroundingRow, groundingTask } from "./grounding.ts";
import type { VisionRow } from "./vision_row.ts";

/** The factory of each visual task, by name (see {@link visionTasks}). */
export interface VisionTaskFactories {
  /** {@link countShapesTask}. */
  readonly count_shapes: (options?: CountShapesOptions) => Task<CountShapesRow>;
  /** {@link barChartTask}. */
  readonly bar_chart: (options?: BarChartOptions) => Task<BarChartRow>;
  /** {@link gridPathTask}. */
  readonly grid_path: (options?: GridPathOptions) => Task<GridPathRow>;
  /** {@link clockTask}. */
  readonly clock: (options?: ClockOptions) => Task<ClockRow>;
  /** {@link groundingTask}. */
  readonly grounding: (options?: GroundingOptions) => Task<GroundingRow>;
}

/**
 * Every visual task's factory under its default name (which is also its rows' `task`).
 *
 * @example Usage
 * ```ts
 * import { visionTasks } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.deepEqual(Object.keys(visionTasks), [
 *   "count_shapes", "bar_chart", "grid_path", "clock", "grounding",
 * ]);
 * const task = visionTasks.clock({ step: 60 });
 * assert.equal(task.row(0, 0).minute, 0);
 * ```
 */
export const visionTasks: VisionTaskFactories = Object.freeze({
  count_shapes: countShapesTask,
  bar_chart: barChartTask,
  grid_path: gridPathTask,
  clock: clockTask,
  grounding: groundingTask,
});

/** The name of a visual task in {@link visionTasks}. */
export type VisionTaskName = keyof VisionTaskFactories;

/**
 * Builds the visual task called `name` (a key of {@link visionTasks}) with `options` (checked
 * by the task's factory). Throws a TypeError listing the names when `name` is unknown.
 *
 * @example Usage
 * ```ts
 * import { visionTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const config = { task: "grid_path", options: { side: 5, walls: 0.2 } };
 * const task = visionTask(config.task, config.options);
 * const row = task.row(0, 0);
 * assert.equal(row.task, "grid_path");
 * assert.ok(task.verify(row, row.answer));
 * assert.throws(() => visionTask("sudoku"), /must be one of "count_shapes"/);
 * ```
 */
export function visionTask(name: string, options?: object): Task<VisionRow> {
  if (typeof name !== "string" || !Object.hasOwn(visionTasks, name)) {
    throw new TypeError(
      `visionTask: name must be one of ${
        Object.keys(visionTasks).map((n) => JSON.stringify(n)).join(", ")
      }, got ${show(name)}`,
    );
  }
  const factory = visionTasks[name as VisionTaskName] as (options?: object) => Task<VisionRow>;
  return factory(options);
}
