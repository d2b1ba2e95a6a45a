/**
 * Countdown (the TinyZero task): combine the given numbers with `+ − × ÷` and parentheses to
 * hit a target exactly.
 *
 * Design: the target is built from a random expression over a random subset of the numbers
 * (all of them with `useAll`), so every row is solvable; the stored `answer` is that
 * expression, but the verifier accepts any expression that (1) parses in the safe grammar of
 * `parseExpression` (no unary minus, no `eval`), (2) uses each given number at most as often as
 * it was given (exactly as often with `useAll`), and (3) evaluates exactly (as a fraction) to
 * the target. A trailing `= target` is allowed, and LaTeX `\times`, `\cdot`, `\div` are read.
 * Targets are integers in `[minTarget, maxTarget]` and never one of the numbers. Difficulty is
 * the number of numbers given.
 *
 * @module
 */

import { checkName, checkNumber, checkOptions, show } from "../_check.ts";
import { draw, type Knob, knob } from "./_knob.ts";
import {
  evaluateExpression,
  type Expr,
  expressionLiterals,
  formatExpression,
  fraction,
  fractionEquals,
  type Op,
  parseExpression,
  parseFraction,
} from "./expr.ts";
import type { Rng } from "./rng.ts";
import { defineTask, type Task, type TaskRow } from "./task.ts";

/** A row of {@link countdownTask}. */
export interface CountdownRow extends TaskRow {
  /** The numbers available, each usable at most once (as often as it is listed). */
  numbers: number[];
  /** The value to reach. */
  target: number;
  /** Whether every number must be used. */
  useAll: boolean;
}

/** Knobs of {@link countdownTask}. */
export interface CountdownOptions {
  /** How many numbers are given, 2–8 (default 4); a range is drawn per row. */
  count?: Knob;
  /** Numbers are drawn from [1, maxNumber] (integer 2–10 000; default 99). */
  maxNumber?: number;
  /** Smallest target (integer >= 1; default 1). */
  minTarget?: number;
  /** Largest target (integer >= minTarget; default 100). */
  maxTarget?: number;
  /** Operators the generator uses (default all four; the verifier always accepts all four). */
  operators?: readonly Op[];
  /** Every number must be used exactly once (default false: at most once). */
  useAll?: boolean;
  /** Task name (default `"countdown"`). */
  name?: string;
}

function treeOver(rng: Rng, leaves: readonly number[], operators: readonly Op[]): Expr {
  if (leaves.length === 1) return { kind: "num", value: BigInt(leaves[0]!) };
  const split = rng.int(1, leaves.length - 1);
  return {
    kind: "bin",
    op: rng.pick(operators),
    left: treeOver(rng, leaves.slice(0, split), operators),
    right: treeOver(rng, leaves.slice(split), operators),
  };
}

/**
 * Checks a Countdown answer (see the module doc); exported for callers with their own rows.
 *
 * @example Usage
 * ```ts
 * import { checkCountdown } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const problem = { numbers: [3, 4, 6, 25], target: 42, useAll: false };
 * assert.ok(checkCountdown(problem, "(3 + 4) * 6"));
 * assert.ok(checkCountdown(problem, "6 × (4 + 3) = 42"));
 * assert.ok(!checkCountdown(problem, "6 * 7")); // 7 is not given
 * assert.ok(!checkCountdown(problem, "(3 + 4) * 6 + 3 - 3")); // 3 used twice
 * ```
 */
export function checkCountdown(
  problem: { numbers: readonly number[]; target: number; useAll?: boolean },
  answer: string,
): boolean {
  let text = String(answer)
    .replace(/\\times|\\cdot/g, "*")
    .replace(/\\div/g, "/")
    .replace(/\\left|\\right/g, "")
    .replace(/^\$+|\$+$/g, "")
    .trim();
  const eq = text.split("=");
  if (eq.length > 2) return false;
  if (eq.length === 2) {
    const rhs = parseFraction(eq[1]!);
    if (rhs === null || !fractionEquals(rhs, fraction(BigInt(problem.target)))) return false;
    text = eq[0]!;
  }
  let e: Expr;
  try {
    e = parseExpression(text);
  } catch {
    return false;
  }
  const available = new Map<string, number>();
  for (const n of problem.numbers) available.set(String(n), (available.get(String(n)) ?? 0) + 1);
  const used = expressionLiterals(e);
  for (const lit of used) {
    const k = String(lit);
    const left = available.get(k) ?? 0;
    if (left === 0) return false;
    available.set(k, left - 1);
  }
  if (problem.useAll === true && used.length !== problem.numbers.length) return false;
  try {
    return fractionEquals(evaluateExpression(e), fraction(BigInt(problem.target)));
  } catch {
    return false; // divided by zero
  }
}

/**
 * The Countdown task (see the module doc for the rules and knobs).
 *
 * @example Usage
 * ```ts
 * import { countdownTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = countdownTask({ count: 4, maxTarget: 100 });
 * const row = task.row(1, 0);
 * assert.equal(row.numbers.length, 4);
 * assert.ok(task.verify(row, row.answer)); // the generator's own expression
 * assert.ok(!task.verify(row, `(${row.answer}) + 1`));
 * ```
 */
export function countdownTask(options?: CountdownOptions): Task<CountdownRow> {
  const owner = "countdownTask";
  const opts = checkOptions<CountdownOptions>(
    owner,
    options,
    "{count?, maxNumber?, minTarget?, maxTarget?, operators?, useAll?, name?}",
  );
  const count = knob(owner, "options.count", opts.count, 4, 2, 8);
  const maxNumber = checkNumber(owner, "options.maxNumber", opts.maxNumber ?? 99, {
    min: 2,
    max: 10_000,
    integer: true,
  });
  const minTarget = checkNumber(owner, "options.minTarget", opts.minTarget ?? 1, {
    min: 1,
    integer: true,
  });
  const maxTarget = checkNumber(owner, "options.maxTarget", opts.maxTarget ?? 100, {
    min: minTarget,
    integer: true,
  });
  const operators = opts.operators ?? ["+", "-", "*", "/"];
  if (
    !Array.isArray(operators) || operators.length === 0 ||
    operators.some((o) => !["+", "-", "*", "/"].includes(o))
  ) {
    throw new TypeError(
      `${owner}: options.operators must be a non-empty array of "+", "-", "*", "/", got ${
        show(operators)
      }`,
    );
  }
  const useAll = opts.useAll === true;
  const name = checkName(owner, "options.name", opts.name ?? "countdown");
  const attempts = 2000;
  return defineTask<CountdownRow>({
    name,
    generate(rng) {
      for (let attempt = 0; attempt < attempts; attempt++) {
        const n = draw(rng, count);
        const numbers = Array.from({ length: n }, () => rng.int(1, maxNumber));
        const k = useAll ? n : rng.int(2, n);
        const leaves = rng.shuffle(numbers).slice(0, k);
        const e = treeOver(rng, leaves, operators);
        let value;
        try {
          value = evaluateExpression(e);
        } catch {
          continue;
        }
        if (value.den !== 1n) continue;
        const target = Number(value.num);
        if (target < minTarget || target > maxTarget || numbers.includes(target)) continue;
        const list = numbers.join(", ");
        const rule = useAll ? "each number exactly once" : "each number at most once";
        return {
          numbers,
          target,
          useAll,
          prompt: `Using the numbers [${list}], write an expression that equals ${target}. ` +
            `You may use +, -, *, / and parentheses, and ${rule}. ` +
            `Put only the expression inside <answer></answer>, e.g. <answer>(1 + 2) * 3</answer>.`,
          answer: formatExpression(e),
          difficulty: n,
        };
      }
      throw new RangeError(
        `${owner}: no target in [${minTarget}, ${maxTarget}] found in ${attempts} draws; ` +
          `widen options.minTarget/maxTarget or raise options.maxNumber`,
      );
    },
    key: (row) => `${[...row.numbers].sort((a, b) => a - b).join(",")}->${row.target}`,
    verify: (row, answer) => checkCountdown(row, answer),
  });
}
