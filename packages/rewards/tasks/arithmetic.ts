/**
 * Procedural arithmetic: evaluate an expression of integers with `+ − × ÷`, exactly.
 *
 * Design: knobs are the operand size (`digits`), the operator set, the number of operators
 * (`chainLength`) and whether the expression tree is random (`parentheses: true`, rendered with
 * the fewest parentheses that keep its structure) or a flat chain read with the usual
 * precedence. Values are exact fractions (see `parseExpression`), so with `/` the answer may be
 * a fraction; the verifier accepts any spelling of the same number (`3/4`, `0.75`,
 * `\frac{3}{4}`, `6/8`); it recomputes the value from `row.expression`. Expressions that divide
 * by zero are redrawn. Difficulty is the row's number of operators times the mean digit count of
 * its operands, plus the number of parenthesis pairs shown (`chainLength · digits` for fixed
 * knobs; with ranges it is the row's own, so a curriculum can order the rows of one task).
 *
 * @module
 */

import { checkName, checkOptions, show } from "../_check.ts";
import { draw, type Knob, knob } from "./_knob.ts";
import {
  evaluateExpression,
  type Expr,
  formatExpression,
  formatFraction,
  fractionEquals,
  type Op,
  parseExpression,
  parseFraction,
} from "./expr.ts";
import type { Rng } from "./rng.ts";
import { defineTask, type Task, type TaskRow } from "./task.ts";

/** A row of {@link arithmeticTask}. */
export interface ArithmeticRow extends TaskRow {
  /** The expression to evaluate. */
  expression: string;
}

/** Knobs of {@link arithmeticTask}. */
export interface ArithmeticOptions {
  /** Digits per operand, 1–12 (default 2); a `[min, max]` range is drawn per operand. */
  digits?: Knob;
  /** Operators to use (non-empty subset of `+ - * /`; default `+ - *`). */
  operators?: readonly Op[];
  /** Operators per expression, 1–20 (default 2); a range is drawn per row. */
  chainLength?: Knob;
  /** Random tree shapes with parentheses (default false: a flat chain). */
  parentheses?: boolean;
  /** Task name (default `"arithmetic"`). */
  name?: string;
}

const OPS: readonly Op[] = ["+", "-", "*", "/"];

function operand(rng: Rng, digits: readonly [number, number]): Expr {
  const d = draw(rng, digits);
  const lo = d === 1 ? 1 : 10 ** (d - 1);
  const value = lo + Math.floor(rng.next() * (10 ** d - lo));
  return { kind: "num", value: BigInt(value) };
}

function tree(
  rng: Rng,
  ops: number,
  operators: readonly Op[],
  digits: readonly [number, number],
): Expr {
  if (ops === 0) return operand(rng, digits);
  const left = rng.int(0, ops - 1);
  const op = rng.pick(operators);
  return {
    kind: "bin",
    op,
    left: tree(rng, left, operators, digits),
    right: tree(rng, ops - 1 - left, operators, digits),
  };
}

function chain(
  rng: Rng,
  ops: number,
  operators: readonly Op[],
  digits: readonly [number, number],
): Expr {
  let text = formatExpression(operand(rng, digits));
  for (let i = 0; i < ops; i++) {
    text += ` ${rng.pick(operators)} ${formatExpression(operand(rng, digits))}`;
  }
  return parseExpression(text);
}

/**
 * The arithmetic task (see the module doc for the knobs).
 *
 * @example Usage
 * ```ts
 * import { arithmeticTask, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 2, operators: ["+", "*"], chainLength: 3, parentheses: true });
 * const row = task.row(7, 0);
 * assert.ok(task.verify(row, row.answer));
 * assert.ok(!task.verify(row, `${row.answer}1`));
 * const r = await scoreRewards([task.reward], [
 *   { prompt: row.prompt, completion: `<answer>${row.answer}</answer>`, row },
 *   { prompt: row.prompt, completion: "I don't know", row },
 * ]);
 * assert.deepEqual(r.totals, [1, 0]);
 * ```
 */
export function arithmeticTask(options?: ArithmeticOptions): Task<ArithmeticRow> {
  const owner = "arithmeticTask";
  const opts = checkOptions<ArithmeticOptions>(
    owner,
    options,
    "{digits?, operators?, chainLength?, parentheses?, name?}",
  );
  const digits = knob(owner, "options.digits", opts.digits, 2, 1, 12);
  const length = knob(owner, "options.chainLength", opts.chainLength, 2, 1, 20);
  const operators = opts.operators ?? ["+", "-", "*"];
  if (
    !Array.isArray(operators) || operators.length === 0 ||
    operators.some((o) => !OPS.includes(o))
  ) {
    throw new TypeError(
      `${owner}: options.operators must be a non-empty array of "+", "-", "*", "/", got ${
        show(operators)
      }`,
    );
  }
  const parens = opts.parentheses === true;
  const name = checkName(owner, "options.name", opts.name ?? "arithmetic");
  const fractionHint = operators.includes("/")
    ? "an integer or a fraction in lowest terms (like -7/3)"
    : "an integer";
  return defineTask<ArithmeticRow>({
    name,
    generate(rng) {
      for (let attempt = 0;; attempt++) {
        const ops = draw(rng, length);
        const e = parens ? tree(rng, ops, operators, digits) : chain(rng, ops, operators, digits);
        let value;
        try {
          value = evaluateExpression(e);
        } catch (err) {
          if (attempt < 100) continue; // divided by zero: draw again
          throw err;
        }
        const expression = formatExpression(e);
        const pairs = (expression.match(/\(/g) ?? []).length;
        const lengths = (expression.match(/\d+/g) ?? []).map((n) => n.length);
        const meanDigits = lengths.reduce((a, b) => a + b, 0) / Math.max(1, lengths.length);
        return {
          expression,
          prompt:
            `Compute the exact value of the expression below. Give the result as ${fractionHint} ` +
            `inside <answer></answer>.\n\n${expression}`,
          answer: formatFraction(value),
          difficulty: ops * meanDigits + pairs,
        };
      }
    },
    key: (row) => row.expression,
    verify(row, answer) {
      const got = parseFraction(answer);
      return got !== null &&
        fractionEquals(got, evaluateExpression(parseExpression(row.expression)));
    },
  });
}
