/**
 * A calculator tool: exact arithmetic on integers and decimals, for tool-using math agents.
 *
 * Design decisions:
 * - **No `eval`.** The input is parsed by the task package's own expression parser
 *   (`parseExpression`: `+ - * /`, parentheses, unary minus; `×`, `·`, `x` and `÷` are read as
 *   `*` and `/`) and evaluated exactly on `bigint` fractions, so `0.1 + 0.2` is exactly `3/10`.
 *   Decimal literals (`1.25`) are rewritten to fractions (`(125/100)`) before parsing; thousands
 *   separators are not accepted (`1,234` is malformed: a comma is ambiguous in a tool call).
 * - **Answer format.** An integer result is written plainly (`1036`, `-7`). A non-integer result
 *   is written as a fraction in lowest terms (`7/3`, `-1/2`) by default; with
 *   `{ fractions: "decimal" }` it is written as a decimal: exactly when the expansion terminates
 *   (`3/4` → `0.75`), otherwise rounded to `decimals` places (default 10) and prefixed with `~`
 *   (`1/3` → `~0.3333333333`), so the policy can tell an exact value from a rounded one.
 * - **Malformed input throws** (a `SyntaxError` naming the problem, a `RangeError` for division
 *   by zero); `callTool` turns that into the observation `error: calc failed: <message>`.
 *
 * @module
 */

import { checkChoice, checkName, checkNumber, checkOptions } from "../_check.ts";
import {
  evaluateExpression,
  formatFraction,
  type Fraction,
  parseExpression,
} from "../tasks/expr.ts";
import type { Tool } from "./tool.ts";

/** Options of {@link calculatorTool}. */
export interface CalculatorOptions {
  /** How non-integer results are written: `"fraction"` (`7/3`, default) or `"decimal"`. */
  fractions?: "fraction" | "decimal";
  /** Decimal places of a rounded (non-terminating) decimal, 1–50 (default 10). */
  decimals?: number;
  /** The tool's name (default `"calc"`). */
  name?: string;
}

const DECIMAL = /(\d*)\.(\d+)|(\d+)\./g;

/** Rewrites decimal literals to parenthesised fractions so the integer parser reads them. */
function rewriteDecimals(text: string): string {
  return text.replace(DECIMAL, (_m, int: string | undefined, frac: string | undefined, bare) => {
    if (bare !== undefined) return String(bare); // "12." reads as 12
    const digits = `${int ?? ""}${frac ?? ""}`.replace(/^0+(?=\d)/, "");
    return `(${digits}/1${"0".repeat((frac ?? "").length)})`;
  });
}

/** Writes a fraction as a decimal: exact when it terminates, else `~` and `places` digits. */
function toDecimal(r: Fraction, places: number): string {
  const negative = r.num < 0n;
  const num = negative ? -r.num : r.num;
  let den = r.den;
  while (den % 2n === 0n) den /= 2n;
  while (den % 5n === 0n) den /= 5n;
  const exact = den === 1n;
  let digits = places;
  if (exact) {
    // a terminating expansion has max(powers of 2 and 5 in den) digits
    let twos = 0, fives = 0;
    for (let d = r.den; d % 2n === 0n; d /= 2n) twos++;
    for (let d = r.den; d % 5n === 0n; d /= 5n) fives++;
    digits = Math.max(twos, fives);
  }
  const scale = 10n ** BigInt(digits);
  let scaled = (num * scale) / r.den;
  if (!exact && ((num * scale) % r.den) * 2n >= r.den) scaled += 1n; // round half up
  const s = scaled.toString().padStart(digits + 1, "0");
  const body = digits === 0 ? s : `${s.slice(0, -digits)}.${s.slice(-digits)}`;
  const isZero = scaled === 0n;
  return `${exact ? "" : "~"}${negative && !isZero ? "-" : ""}${body}`;
}

/**
 * Evaluates an arithmetic expression exactly and formats the value as the calculator tool
 * answers it (see the module doc); throws on malformed input or division by zero.
 *
 * @example Usage
 * ```ts
 * import { calculate } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * assert.equal(calculate("(123 + 456) * 2"), "1158");
 * assert.equal(calculate("1 / 3 + 0.5"), "5/6");
 * assert.equal(calculate("1 / 8", { fractions: "decimal" }), "0.125");
 * assert.equal(calculate("2 / 3", { fractions: "decimal", decimals: 4 }), "~0.6667");
 * assert.throws(() => calculate("2 +"), SyntaxError);
 * ```
 */
export function calculate(expression: string, options: CalculatorOptions = {}): string {
  const fractions = options.fractions ?? "fraction";
  const decimals = options.decimals ?? 10;
  const text = String(expression).trim();
  if (text === "") throw new SyntaxError("empty expression; write e.g. 12 * (3 + 4)");
  const value = evaluateExpression(parseExpression(rewriteDecimals(text), { unaryMinus: true }));
  if (value.den === 1n || fractions === "fraction") return formatFraction(value);
  return toDecimal(value, decimals);
}

/**
 * The calculator tool (see the module doc): `+ - * /`, parentheses and unary minus on integers
 * and decimals, evaluated exactly; answers the value, throws on malformed input.
 *
 * @example Usage
 * ```ts
 * import { calculatorTool, callTool } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const calc = calculatorTool();
 * assert.equal((await callTool(calc, "518 + 518")).text, "1036");
 * assert.equal((await callTool(calc, "0.1 + 0.2")).text, "3/10");
 * const bad = await callTool(calc, "12 +* 3");
 * assert.equal(bad.status, "error");
 * assert.match(bad.text, /^error: calc failed: /);
 * ```
 */
export function calculatorTool(options?: CalculatorOptions): Tool {
  const owner = "calculatorTool";
  const opts = checkOptions<CalculatorOptions>(owner, options, "{fractions?, decimals?, name?}");
  const fractions = checkChoice(owner, "options.fractions", opts.fractions ?? "fraction", [
    "fraction",
    "decimal",
  ]);
  const decimals = checkNumber(owner, "options.decimals", opts.decimals ?? 10, {
    min: 1,
    max: 50,
    integer: true,
  });
  const name = checkName(owner, "options.name", opts.name ?? "calc");
  return Object.freeze({
    name,
    description:
      "Evaluates + - * / and parentheses on integers and decimals exactly; fractions come back as " +
      (fractions === "fraction" ? "a/b" : "decimals"),
    call: (input: string) => calculate(input, { fractions, decimals }),
  });
}
