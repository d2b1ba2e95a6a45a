/**
 * Exact fraction arithmetic and a tiny, safe expression parser for the arithmetic and Countdown
 * tasks (no `eval`).
 *
 * Design: numbers are `bigint` fractions, so long chains of products and divisions are exact
 * (`1/3 · 3` is exactly 1 and a Countdown target is hit or not, with no float tolerance). The
 * grammar is `expr := term (("+" | "-") term)*`, `term := factor (("*" | "/") factor)*`,
 * `factor := integer | "(" expr ")"`, plus unary minus only when asked for; `×`, `·`, `x` between
 * operands and `÷` are read as `*` and `/`. Inputs are limited to 1000 characters and 100 levels
 * of nesting, so a hostile completion cannot blow the stack.
 *
 * @module
 */

/** An exact fraction `num/den` in lowest terms with `den > 0`. */
export interface Fraction {
  /** Numerator. */
  readonly num: bigint;
  /** Denominator (> 0). */
  readonly den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/**
 * A reduced fraction; throws a RangeError on a zero denominator.
 *
 * @example Usage
 * ```ts
 * import { fraction, formatFraction } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(formatFraction(fraction(6n, -4n)), "-3/2");
 * ```
 */
export function fraction(num: bigint, den: bigint = 1n): Fraction {
  if (den === 0n) throw new RangeError("fraction: division by zero (den is 0)");
  if (den < 0n) [num, den] = [-num, -den];
  const g = gcd(num, den) || 1n;
  return { num: num / g, den: den / g };
}

/** Applies `+ - * /` exactly; `/` by zero throws a RangeError. */
function applyOp(op: Op, a: Fraction, b: Fraction): Fraction {
  switch (op) {
    case "+":
      return fraction(a.num * b.den + b.num * a.den, a.den * b.den);
    case "-":
      return fraction(a.num * b.den - b.num * a.den, a.den * b.den);
    case "*":
      return fraction(a.num * b.num, a.den * b.den);
    case "/":
      if (b.num === 0n) throw new RangeError("division by zero");
      return fraction(a.num * b.den, a.den * b.num);
  }
}

/**
 * `"n"` for an integer, else `"n/d"`.
 *
 * @example Usage
 * ```ts
 * import { formatFraction, fraction } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(formatFraction(fraction(4n, 2n)), "2");
 * assert.equal(formatFraction(fraction(1n, 3n)), "1/3");
 * ```
 */
export function formatFraction(r: Fraction): string {
  return r.den === 1n ? String(r.num) : `${r.num}/${r.den}`;
}

/**
 * True when two fractions are equal (both are kept in lowest terms, so this compares fields).
 *
 * @example Usage
 * ```ts
 * import { fraction, fractionEquals } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(fractionEquals(fraction(2n, 4n), fraction(1n, 2n)));
 * assert.ok(!fractionEquals(fraction(1n, 2n), fraction(1n, 3n)));
 * ```
 */
export function fractionEquals(a: Fraction, b: Fraction): boolean {
  return a.num === b.num && a.den === b.den;
}

/**
 * Reads a number written as an integer (`-12`), a fraction (`3/4`, `-3/4`, `\frac{3}{4}`,
 * `\dfrac{3}{4}`, `-\frac{3}{4}`), a decimal (`0.75`) or with thousands separators (`1,234`);
 * surrounding `$…$` and spaces are ignored. `null` when it is none of these.
 *
 * @example Usage
 * ```ts
 * import { formatFraction, parseFraction } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(formatFraction(parseFraction("0.75")!), "3/4");
 * assert.equal(formatFraction(parseFraction("$\\frac{6}{8}$")!), "3/4");
 * assert.equal(parseFraction("x + 1"), null);
 * ```
 */
export function parseFraction(text: string): Fraction | null {
  let s = String(text).trim().replace(/^\$+|\$+$/g, "").trim();
  if (s.length > 200) return null;
  let sign = 1n;
  if (s.startsWith("-")) {
    sign = -1n;
    s = s.slice(1).trim();
  }
  let m = /^\\d?frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}$/.exec(s);
  if (m) return BigInt(m[2]!) === 0n ? null : fraction(sign * BigInt(m[1]!), BigInt(m[2]!));
  m = /^(\d+)\s*\/\s*(\d+)$/.exec(s);
  if (m) return BigInt(m[2]!) === 0n ? null : fraction(sign * BigInt(m[1]!), BigInt(m[2]!));
  if (/^\d{1,3}(,\d{3})+$/.test(s)) s = s.replace(/,/g, "");
  m = /^(\d*)(?:\.(\d+))?$/.exec(s);
  if (m && (m[1] !== "" || m[2] !== undefined)) {
    const int = m[1] === "" ? "0" : m[1]!;
    const frac = m[2] ?? "";
    return fraction(sign * BigInt(int + frac), 10n ** BigInt(frac.length));
  }
  return null;
}

/** A binary operator. */
export type Op = "+" | "-" | "*" | "/";

/** A parsed expression: an integer literal, a negation or a binary operation. */
export type Expr =
  | { readonly kind: "num"; readonly value: bigint }
  | { readonly kind: "neg"; readonly arg: Expr }
  | { readonly kind: "bin"; readonly op: Op; readonly left: Expr; readonly right: Expr };

/** Options of {@link parseExpression}. */
export interface ParseOptions {
  /** Accept unary minus (`-3`, `-(1+2)`) (default false: only binary operators). */
  unaryMinus?: boolean;
}

const MAX_LENGTH = 1000;
const MAX_DEPTH = 100;

/**
 * Parses an arithmetic expression (see the module doc for the grammar); throws a SyntaxError
 * naming the position of the first problem.
 *
 * @example Usage
 * ```ts
 * import { evaluateExpression, formatFraction, parseExpression } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const e = parseExpression("(25 - 5) × 3 / 4");
 * assert.equal(formatFraction(evaluateExpression(e)), "15");
 * assert.throws(() => parseExpression("2 ** 3"), SyntaxError);
 * ```
 */
export function parseExpression(text: string, options: ParseOptions = {}): Expr {
  const src = String(text);
  if (src.length > MAX_LENGTH) {
    throw new SyntaxError(`expression is ${src.length} characters; at most ${MAX_LENGTH} are read`);
  }
  const unary = options.unaryMinus === true;
  let pos = 0;
  const skip = () => {
    while (pos < src.length && /\s/.test(src[pos]!)) pos++;
  };
  const peekOp = (): Op | null => {
    skip();
    const c = src[pos];
    if (c === "+" || c === "-") return c;
    if (c === "*" || c === "×" || c === "·" || c === "x" || c === "X") return "*";
    if (c === "/" || c === "÷") return "/";
    return null;
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${pos} of ${JSON.stringify(src.slice(0, 60))}`);
  };
  const factor = (depth: number): Expr => {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
    skip();
    const c = src[pos];
    if (c === "(") {
      pos++;
      const e = expr(depth + 1);
      skip();
      if (src[pos] !== ")") fail("expected ')'");
      pos++;
      return e;
    }
    if (c === "-" && unary) {
      pos++;
      return { kind: "neg", arg: factor(depth + 1) };
    }
    const m = /^\d+/.exec(src.slice(pos));
    if (!m) return fail("expected a number or '('");
    pos += m[0].length;
    return { kind: "num", value: BigInt(m[0]) };
  };
  const term = (depth: number): Expr => {
    let left = factor(depth);
    for (let op = peekOp(); op === "*" || op === "/"; op = peekOp()) {
      pos++;
      left = { kind: "bin", op, left, right: factor(depth) };
    }
    return left;
  };
  const expr = (depth: number): Expr => {
    let left = term(depth);
    for (let op = peekOp(); op === "+" || op === "-"; op = peekOp()) {
      pos++;
      left = { kind: "bin", op, left, right: term(depth) };
    }
    return left;
  };
  const e = expr(0);
  skip();
  if (pos < src.length) fail(`unexpected ${JSON.stringify(src[pos])}`);
  return e;
}

/**
 * Evaluates an expression exactly; throws a RangeError on division by zero.
 *
 * @example Usage
 * ```ts
 * import { evaluateExpression, formatFraction, parseExpression } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(formatFraction(evaluateExpression(parseExpression("1/3 + 1/6"))), "1/2");
 * ```
 */
export function evaluateExpression(e: Expr): Fraction {
  switch (e.kind) {
    case "num":
      return fraction(e.value);
    case "neg": {
      const v = evaluateExpression(e.arg);
      return fraction(-v.num, v.den);
    }
    case "bin":
      return applyOp(e.op, evaluateExpression(e.left), evaluateExpression(e.right));
  }
}

/**
 * The integer literals of an expression, left to right.
 *
 * @example Usage
 * ```ts
 * import { expressionLiterals, parseExpression } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(expressionLiterals(parseExpression("(3 + 4) * 3")), [3n, 4n, 3n]);
 * ```
 */
export function expressionLiterals(e: Expr): bigint[] {
  if (e.kind === "num") return [e.value];
  if (e.kind === "neg") return expressionLiterals(e.arg);
  return [...expressionLiterals(e.left), ...expressionLiterals(e.right)];
}

const PRECEDENCE: Record<Op, number> = { "+": 1, "-": 1, "*": 2, "/": 2 };

/**
 * Renders an expression with the fewest parentheses that keep its structure
 * (`(a - b) - c` prints as `a - b - c`, `a - (b - c)` keeps its parentheses).
 *
 * @example Usage
 * ```ts
 * import { formatExpression, parseExpression } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(formatExpression(parseExpression("((1 + 2)) * (3 * 4)")), "(1 + 2) * 3 * 4");
 * ```
 */
export function formatExpression(e: Expr): string {
  if (e.kind === "num") return String(e.value);
  if (e.kind === "neg") {
    const inner = formatExpression(e.arg);
    return e.arg.kind === "num" ? `-${inner}` : `-(${inner})`;
  }
  const p = PRECEDENCE[e.op];
  const side = (child: Expr, right: boolean): string => {
    const s = formatExpression(child);
    if (child.kind !== "bin") return s;
    const cp = PRECEDENCE[child.op];
    // the right operand of - and / needs parentheses at equal precedence; * and + associate
    const needs = cp < p || (right && cp === p && (e.op === "-" || e.op === "/" ||
      child.op === "-" || child.op === "/"));
    return needs ? `(${s})` : s;
  };
  return `${side(e.left, false)} ${e.op} ${side(e.right, true)}`;
}
