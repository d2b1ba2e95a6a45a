/**
 * The built-in multi-turn environments a config can name (`task.env.name`): `calc` (arithmetic
 * with a calculator tool) and `qa` (multi-hop questions over the shipped BM25 corpus, answers
 * with citations), both from `@rlvr/rewards`.
 *
 * Design decision: like the built-in tasks (`tasks.ts`), the options are checked by name and
 * type here with strict schemas, and by range by building the environment, whose own message
 * names the field; `@rlvr/rewards` is imported only when an environment is built. Like the
 * tasks, the environments are a `Registry` of `@rlvr/common`: each entry is the environment's
 * builder with its schema and description attached.
 *
 * @module
 */

import { Registry } from "@rlvr/common";
import type { ArithmeticOptions, ArithmeticRow, TaskRow } from "@rlvr/rewards";
import type { Environment } from "@rlvr/rewards/env";
import { z } from "zod";
import { int } from "./_zod.ts";
import { BUILTIN_TASKS } from "./tasks.ts";

import { promptText } from "../demo/format.ts";

const rewards = () => import("@rlvr/rewards/env");

const knob = z.union([int(), z.tuple([int(), int()])], {
  error: "use an integer or an inclusive [min, max] range of integers",
});

/** What a built-in environment is built from besides its options. */
export interface EnvBuildContext {
  /** Policy turns per episode. */
  maxTurns: number;
  /** Call syntax: `compact` (a char-level model: `{EXPR}`) or `tagged` (`<calc>EXPR</calc>`). */
  syntax: "compact" | "tagged";
}

/**
 * A built-in environment: called with its options and the {@link EnvBuildContext}, it builds the
 * environment; it carries its option schema and description (internal: exposes zod).
 */
export interface BuiltinEnv {
  /** Builds it. */
  (options: Record<string, unknown>, ctx: EnvBuildContext): Promise<Environment>;
  /** Strict schema of the options. */
  readonly options: z.ZodType<Record<string, unknown>>;
  /** One line for `--help` and the README. */
  readonly description: string;
}

/**
 * The built-in environments by name, in the order `--help` lists them (internal: `@rlvr/train`
 * exports none of it; an unknown name is `BUILTIN_ENVS.get`'s error, which lists the names).
 *
 * @example Usage
 * ```ts
 * import { BUILTIN_ENVS } from "./envs.ts";
 * import assert from "node:assert/strict";
 * assert.equal(BUILTIN_ENVS.get("qa").options.safeParse({ k: 0 }).success, false);
 * assert.throws(
 *   () => BUILTIN_ENVS.get("calculator", "task.env.name"),
 *   /^RangeError: task\.env\.name: unknown built-in environment "calculator"; valid keys: calc, qa, shapes_calc$/,
 * );
 * ```
 */
export const BUILTIN_ENVS: Registry<BuiltinEnv> = new Registry<BuiltinEnv>(
  "built-in environment",
);

/** Registers a built-in environment: its builder with its schema and description attached. */
function registerEnv(
  name: string,
  options: BuiltinEnv["options"],
  description: string,
  build: (options: Record<string, unknown>, ctx: EnvBuildContext) => Promise<Environment>,
): void {
  BUILTIN_ENVS.register(name, Object.assign(build, { options, description }));
}

registerEnv(
  "calc",
  z.strictObject({
    digits: knob.optional(),
    operators: z.array(z.enum(["+", "-", "*", "/"])).min(1).optional(),
    chainLength: knob.optional(),
  }),
  "arithmetic with a calculator tool (digits, operators, chainLength; default 3-digit + and 2-digit *)",
  async (o, ctx) => {
    const r = await rewards();
    const task = Object.keys(o).length > 0 ? o as ArithmeticOptions : undefined;
    return r.calcEnv({
      ...(task !== undefined ? { task } : {}),
      syntax: ctx.syntax,
      maxTurns: ctx.maxTurns,
      // The compact syntax is for char-level models: the prompt is the bare expression.
      ...(ctx.syntax === "compact" ? { render: (row: ArithmeticRow) => promptText(row) } : {}),
    }) as unknown as Environment<TaskRow>;
  },
);
registerEnv(
  "qa",
  z.strictObject({ k: int().min(1).optional() }),
  "multi-hop questions over the shipped corpus with a BM25 search tool (k)",
  async (o, ctx) => {
    const r = await rewards();
    const corpus = await r.loadCorpus(r.SHIPPED_CORPUS_DIR);
    return r.multiHopQaEnv({
      corpus,
      maxTurns: ctx.maxTurns,
      ...(o.k !== undefined ? { k: o.k as number } : {}),
    }) as unknown as Environment<TaskRow>;
  },
);

registerEnv(
  "shapes_calc",
  // The counting task's own options, checked by its schema.
  BUILTIN_TASKS.get("count_shapes").options,
  "visual: count_shapes with a calculator tool, each row's image before the question (count_shapes' options); needs a vision-language policy",
  async (o, ctx) => {
    const { shapesCalcEnv } = await import("@rlvr/rewards/vision");
    return shapesCalcEnv({
      task: o,
      syntax: ctx.syntax,
      maxTurns: ctx.maxTurns,
    }) as unknown as Environment<TaskRow>;
  },
);

/**
 * Names of the built-in environments.
 *
 * @example Usage
 * ```ts
 * import { builtinEnvNames } from "./envs.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(builtinEnvNames(), ["calc", "qa", "shapes_calc"]);
 * ```
 */
export function builtinEnvNames(): string[] {
  return BUILTIN_ENVS.names();
}

/**
 * A built-in environment by name, or undefined.
 *
 * @example Usage
 * ```ts
 * import { builtinEnv } from "./envs.ts";
 * import assert from "node:assert/strict";
 * const env = await builtinEnv("calc")!({ digits: 3, operators: ["+"] }, { maxTurns: 3, syntax: "compact" });
 * assert.equal(env.stop[0], "}");
 * assert.equal(builtinEnv("toString"), undefined);
 * ```
 */
export function builtinEnv(name: string): BuiltinEnv | undefined {
  return BUILTIN_ENVS.has(name) ? BUILTIN_ENVS.get(name) : undefined;
}
