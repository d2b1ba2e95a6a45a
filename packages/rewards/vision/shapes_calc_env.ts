/**
 * A multi-turn environment over images: counting shapes ({@link countShapesTask}) with a
 * calculator tool. Each episode's row carries its image (`images`, a PNG data URL) as a task
 * row does; the first observation is the question, the policy may call the calculator (to add
 * up counts it read off the image, say) and ends with its answer, which the task's verifier
 * scores. It is the environment API's image case: the rollout engine puts the row's images
 * before the question (`apps/train`'s episodes with a vision-language policy), the environment
 * itself only ever sees text.
 *
 * @module
 */

import { checkName, checkNumber, checkOptions } from "../_check.ts";
import { calculatorTool } from "../env/calculator.ts";
import { COMPACT_SYNTAX, TAGGED_SYNTAX } from "../env/calc_env.ts";
import { syntaxHint, type ToolEnvironment, verifiedToolEnv } from "../env/_episode.ts";
import { type CountShapesOptions, type CountShapesRow, countShapesTask } from "./count_shapes.ts";

/** Options of {@link shapesCalcEnv}. */
export interface ShapesCalcEnvOptions {
  /** The counting task's options (default `countShapesTask`'s). */
  task?: CountShapesOptions;
  /**
   * `"compact"` (default): the question alone (`green triangles?`, as a char-level policy such
   * as `builtin:tiny-vl` was taught), `{EXPR}` calls, `RESULT|` observations; `"tagged"`: the
   * task's own prompt with a line on `<calc>EXPR</calc>` calls and `<answer>…</answer>`.
   */
  syntax?: "compact" | "tagged";
  /** Actions per episode, >= 1 (default 3). */
  maxTurns?: number;
  /** The environment's and the task's name (default `"shapes_calc"`). */
  name?: string;
}

/**
 * The shapes-with-a-calculator environment (see the module doc). A final answer scores 1 when
 * the verifier of the counting task accepts it (the inside of `<answer>…</answer>` when the
 * reply has one), else 0.
 *
 * @param options Task, syntax, turns and name.
 * @returns The environment; its `task` rows carry their images.
 *
 * @example Usage
 * ```ts
 * import { shapesCalcEnv } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const env = shapesCalcEnv({ task: { count: [1, 3] } });
 * const row = env.task.row(0, 0);
 * assert.equal(row.images.length, 1);
 * const episode = env.reset(row, { seed: 0 });
 * assert.equal(episode.prompt, `${row.targetColor} ${row.targetKind}s?`);
 * const sum = await episode.step("{1+1}"); // a tool call: its result comes back
 * assert.deepEqual([sum.observation, sum.done], ["2|", false]);
 * const end = await episode.step(`<answer>${row.answer}</answer>`);
 * assert.equal(end.done, true);
 * assert.equal(await episode.finalReward(), 1);
 * ```
 */
export function shapesCalcEnv(options?: ShapesCalcEnvOptions): ToolEnvironment<CountShapesRow> {
  const owner = "shapesCalcEnv";
  const opts = checkOptions<ShapesCalcEnvOptions>(
    owner,
    options,
    "{task?, syntax?, maxTurns?, name?}",
  );
  const name = checkName(owner, "options.name", opts.name ?? "shapes_calc");
  if (opts.syntax !== undefined && opts.syntax !== "compact" && opts.syntax !== "tagged") {
    throw new RangeError(
      `${owner}: options.syntax must be "compact" or "tagged", got ${JSON.stringify(opts.syntax)}`,
    );
  }
  const tagged = opts.syntax === "tagged";
  const syntax = tagged ? TAGGED_SYNTAX : COMPACT_SYNTAX;
  const maxTurns = checkNumber(owner, "options.maxTurns", opts.maxTurns ?? 3, {
    min: 1,
    integer: true,
  });
  const tool = calculatorTool();
  const task = countShapesTask({ ...(opts.task ?? {}), name });
  const render = (row: CountShapesRow) =>
    tagged
      ? `${row.prompt}\n\n${syntaxHint(syntax, tool)}`
      : `${row.targetColor} ${row.targetKind}s?`;
  return verifiedToolEnv({ name, task, syntax, tool, limits: {}, maxTurns, render });
}
