/**
 * The built-in procedural tasks a config can name (`task.name`), each with a strict schema of
 * its options and a constructor from `@rlvr/rewards`.
 *
 * Design decisions: the task generators check the *ranges* of their options but ignore option
 * names they do not know, so a misspelt knob (`maxNumbr`) would silently fall back to a
 * default. The option *names* and *types* are therefore checked here with strict zod objects
 * mirroring each generator's options interface, and the ranges by actually constructing the
 * task (the generator's own message, which names the field and the allowed range, is shown).
 * `@rlvr/rewards` is imported lazily, when a task is built, because it is the slowest package
 * to load and a config that fails its schema should fail before loading it. The tasks are a
 * `Registry` of `@rlvr/common`, the workspace's one idiom for named functions: each entry is the
 * task's builder with its schema and description attached, and an unknown name is the registry's
 * error (every valid name, and a "did you mean").
 *
 * @module
 */

import type {
  ArithmeticOptions,
  CountdownOptions,
  KnightsOptions,
  ShortestPathOptions,
  SudokuOptions,
  Task,
} from "@rlvr/rewards";
import { Registry } from "@rlvr/common";
import { z } from "zod";
import { int } from "./_zod.ts";

// `@rlvr/rewards` (math verifier, code sandbox, CAS) takes most of the start-up time of
// `deno task train`; it is imported when a task is built, so a config that fails its schema
// fails before it is loaded.
const rewards = () => import("@rlvr/rewards");
// The visual tasks draw PNGs; their module is loaded only when one is built.
const visionTasks = () => import("@rlvr/rewards/vision");

const knob = z.union([int(), z.tuple([int(), int()])], {
  error: "use an integer or an inclusive [min, max] range of integers",
});
const imageSize = z.union([int(), z.tuple([int(), int()])], {
  error: "use an image side in pixels or [width, height]",
});
const operators = z.array(z.enum(["+", "-", "*", "/"])).min(1);

/**
 * A built-in task: called with its options, it builds the task (rejecting with the generator's
 * message on an out-of-range option); it carries its option schema and description (internal:
 * exposes zod types).
 */
export interface BuiltinTask {
  /** Builds the task; rejects with the generator's message on an out-of-range option. */
  (options: Record<string, unknown>): Promise<Task>;
  /** Strict schema of the options (every option optional; the generator has defaults). */
  readonly options: z.ZodType<Record<string, unknown>>;
  /** One line for `--help` and the README. */
  readonly description: string;
}

/**
 * The built-in tasks by name, in alphabetical order (internal: `@rlvr/train` exports none of
 * it; an unknown name is `BUILTIN_TASKS.get`'s error, which lists the names).
 *
 * @example Usage
 * ```ts
 * import { BUILTIN_TASKS } from "./tasks.ts";
 * import assert from "node:assert/strict";
 * assert.equal((await BUILTIN_TASKS.get("sudoku4")({ holes: 4 })).name, "sudoku4");
 * assert.throws(
 *   () => BUILTIN_TASKS.get("sudoku", "task.name"),
 *   /^RangeError: task\.name: unknown built-in task "sudoku"; valid keys: arithmetic, bar_chart, clock, count_shapes, countdown, grid_path, grounding, knights_knaves, shortest_path, sudoku4 \(did you mean "sudoku4"\?\)$/,
 * );
 * ```
 */
export const BUILTIN_TASKS: Registry<BuiltinTask> = new Registry<BuiltinTask>("built-in task");

/** Registers a built-in task: its builder with its schema and description attached. */
function registerTask(
  name: string,
  options: BuiltinTask["options"],
  description: string,
  build: (options: Record<string, unknown>) => Promise<Task>,
): void {
  BUILTIN_TASKS.register(name, Object.assign(build, { options, description }));
}

// The casts below hand zod-checked plain data to the generators, whose option types are
// structurally what the schemas accept.
// Registered in alphabetical order (the registry lists them so). The visual tasks (rows carry
// `images: [PNG data URL]`) need a vision-language policy (`model.checkpoint: builtin:tiny-vl`
// or a Qwen2-VL folder).
registerTask(
  "arithmetic",
  z.strictObject({
    digits: knob.optional(),
    operators: operators.optional(),
    chainLength: knob.optional(),
    parentheses: z.boolean().optional(),
  }),
  "integer arithmetic expressions (digits, operators, chainLength, parentheses)",
  async (o) => (await rewards()).arithmeticTask(o as ArithmeticOptions) as unknown as Task,
);
registerTask(
  "bar_chart",
  z.strictObject({
    bars: knob.optional(),
    maxValue: int().optional(),
    questions: z.array(z.enum(["tallest", "difference"])).min(1).optional(),
    size: imageSize.optional(),
  }),
  "visual: read a bar chart's tallest bar or a difference (bars, maxValue, questions, size); needs a vision-language policy",
  async (o) => (await visionTasks()).barChartTask(o) as unknown as Task,
);
registerTask(
  "clock",
  z.strictObject({
    step: int().optional(),
    numbers: z.boolean().optional(),
    size: imageSize.optional(),
  }),
  "visual: read the time on an analogue clock (step, numbers, size); needs a vision-language policy",
  async (o) => (await visionTasks()).clockTask(o) as unknown as Task,
);
registerTask(
  "count_shapes",
  z.strictObject({
    count: knob.optional(),
    distractors: knob.optional(),
    colors: int().optional(),
    kinds: int().optional(),
    shapeSize: knob.optional(),
    size: imageSize.optional(),
  }),
  "visual: count the shapes of one colour and kind (count, distractors, colors, kinds, shapeSize, size); needs a vision-language policy",
  async (o) => (await visionTasks()).countShapesTask(o) as unknown as Task,
);
registerTask(
  "countdown",
  z.strictObject({
    count: knob.optional(),
    maxNumber: int().optional(),
    minTarget: int().optional(),
    maxTarget: int().optional(),
    operators: operators.optional(),
    useAll: z.boolean().optional(),
  }),
  "reach a target with + - * / over given numbers (count, maxNumber, minTarget, maxTarget, operators, useAll)",
  async (o) => (await rewards()).countdownTask(o as CountdownOptions) as unknown as Task,
);
registerTask(
  "grid_path",
  z.strictObject({
    side: knob.optional(),
    walls: z.number().optional(),
    size: imageSize.optional(),
  }),
  "visual: shortest path length through a drawn maze (side, walls, size); needs a vision-language policy",
  async (o) => (await visionTasks()).gridPathTask(o) as unknown as Task,
);
registerTask(
  "grounding",
  z.strictObject({
    shapes: knob.optional(),
    colors: int().optional(),
    kinds: int().optional(),
    shapeSize: knob.optional(),
    size: imageSize.optional(),
    minIou: z.number().optional(),
  }),
  "visual: answer the bounding box of a described shape, IoU-verified (shapes, colors, kinds, shapeSize, size, minIou); needs a vision-language policy",
  async (o) => (await visionTasks()).groundingTask(o) as unknown as Task,
);

registerTask(
  "knights_knaves",
  z.strictObject({ people: knob.optional(), compound: z.number().optional() }),
  "knights and knaves logic puzzles (people, compound)",
  async (o) => (await rewards()).knightsKnavesTask(o as KnightsOptions) as unknown as Task,
);
registerTask(
  "shortest_path",
  z.strictObject({
    nodes: knob.optional(),
    density: z.number().optional(),
    maxWeight: int().optional(),
  }),
  "shortest path length in a small weighted graph (nodes, density, maxWeight)",
  async (o) => (await rewards()).shortestPathTask(o as ShortestPathOptions) as unknown as Task,
);
registerTask(
  "sudoku4",
  z.strictObject({ holes: knob.optional() }),
  "4x4 sudoku (holes)",
  async (o) => (await rewards()).sudokuTask(o as SudokuOptions) as unknown as Task,
);

/**
 * The names of the built-in tasks, sorted.
 *
 * @example Usage
 * ```ts
 * import { builtinTaskNames } from "./tasks.ts";
 * import assert from "node:assert/strict";
 * assert.ok(builtinTaskNames().includes("countdown"));
 * ```
 */
export function builtinTaskNames(): string[] {
  return BUILTIN_TASKS.names().sort();
}

/**
 * The one-line description of a built-in task (its options in parentheses), or undefined.
 *
 * @example Usage
 * ```ts
 * import { builtinTaskDescription } from "./tasks.ts";
 * import assert from "node:assert/strict";
 * assert.match(builtinTaskDescription("sudoku4")!, /holes/);
 * ```
 */
export function builtinTaskDescription(name: string): string | undefined {
  return builtinTask(name)?.description;
}

/**
 * The built-in task called `name`, or undefined (internal: its schema is a zod type).
 *
 * @example Usage
 * ```ts
 * import { builtinTask } from "./tasks.ts";
 * import assert from "node:assert/strict";
 * const countdown = builtinTask("countdown")!;
 * assert.equal((await countdown({ count: 3 })).name, "countdown");
 * assert.equal(countdown.options.safeParse({ cnt: 3 }).success, false); // unknown option
 * assert.equal(builtinTask("chess"), undefined);
 * ```
 */
export function builtinTask(name: string): BuiltinTask | undefined {
  return BUILTIN_TASKS.has(name) ? BUILTIN_TASKS.get(name) : undefined;
}
