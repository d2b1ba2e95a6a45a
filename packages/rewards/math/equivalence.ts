/**
 * Equivalence of two answers: structure by structure (choice letters, text, sets, tuples,
 * intervals, unions, matrices, equations, inequalities) down to scalars, which compare as exact
 * rationals, with a relative tolerance for written decimals, or symbolically with the CAS.
 *
 * Design decision (no false positives): shapes must match (a tuple is not a set, `[1,2)` is not
 * `(1,2)`, a letter is not a number), units must agree when both sides carry one (`5 cm` is not
 * `5 m`; a unit on one side only is ignored), and anything that cannot be decided is "not equal"
 * with a reason. Policies with two defensible readings are options:
 * - `percent` (default `"auto"`): a `%` on the gold answer is a label, so gold `10\%` accepts
 *   `10` and `10\%` but not `0.1` (the gold says the answer is counted in percent, and `0.1` would
 *   read as 0.1 %); a `%` on the prediction is exact either way, so `28\%` matches gold `28` and
 *   gold `0.28`. `"strip"` always reads `%` as a label, `"value"` always as `x/100`, `"either"`
 *   accepts both readings on both sides.
 * - `orderedTuples` (default `true`): `(1, 2)` differs from `(2, 1)`. Sets `\{…\}` compare as
 *   sets (`\{1, 1, 2\}` is `\{1, 2\}`), bare lists `1, 2` as multisets, in any order.
 * - A gold `x = 3` accepts `3` and `x = 3` (a leading plain variable is dropped on either side),
 *   but inside lists only when every equation names the same variable (`x=1, y=2` is not `2, 1`).
 *   Other equations match when their differences are proportional (`y = 2x+1` ≡ `2x - y + 1 = 0`),
 *   inequalities when proportional with a positive factor; single-variable inequalities are
 *   intervals (`x \ge 2` ≡ `[2, \infty)`).
 * - An angle in degrees against an answer written with `\pi` is compared in radians.
 *
 * Both answers are checked against the size budget (`budget.ts`) before they are normalised,
 * parsed or computed with, and an over-budget answer is "not equal" with a `refused: …` reason,
 * even when both are the same text. Within the budget, identical text counts as equal without
 * computing, except where the text may divide by zero (`\frac{1}{0}` is not equal to itself:
 * division by zero is never equal to anything).
 *
 * @module
 */

import { budgetRefusal } from "./budget.ts";
import {
  casEqual,
  casEquationsEqual,
  casInequalitiesEqual,
  type CasOptions,
  type Verdict,
  withCasScope,
} from "./cas.ts";
import { isSimpleVariable, normalizeLatex, unitsCompatible } from "./normalize.ts";
import { type MathValue, parseAnswer } from "./parse.ts";
import {
  type NumberLiteral,
  parseNumber,
  type Rational,
  rational,
  rationalEquals,
  rationalsClose,
  rationalToNumber,
} from "./rational.ts";

/**
 * How a percent mark is read: `"auto"` (default): on the gold answer it is a label (`10\%` ≡ `10`,
 * not `0.1`), on the prediction it may be either (`28\%` matches `28` and `0.28`); `"strip"`:
 * always a label; `"value"`: always `x/100`; `"either"`: both readings on both sides.
 */
export type PercentPolicy = "auto" | "strip" | "value" | "either";

/** Options of {@linkcode answersEquivalent}. */
export interface EquivalenceOptions extends CasOptions {
  /** Percent policy (default `"auto"`: gold `10\%` ≡ `10` ≢ `0.1`; predicted `28\%` ≡ `0.28` ≡ `28`). */
  percent?: PercentPolicy;
  /** Compare `(a, b)` tuples in order (default `true`); `false` compares them as multisets. */
  orderedTuples?: boolean;
  /** `"strict"` (default) rejects incompatible units on both sides; `"ignore"` never looks. */
  units?: "strict" | "ignore";
}

const T = (reason: string): Verdict => ({ equal: true, reason });
const F = (reason: string): Verdict => ({ equal: false, reason });

/**
 * Whether the text may stand for an undefined value (a division, a negative power, a function
 * with poles): then identical text is not enough, the CAS must see that it is defined.
 */
function mayBeUndefined(latex: string): boolean {
  return /\\(?:frac|div|over|tan|cot|sec|csc)(?![a-zA-Z])|\/|\^\s*\{?\s*\(?\s*-/.test(latex);
}

/** Whitespace-insensitive key that keeps `3 1/2` apart from `31/2` and `\pi r` from `\pir`. */
function compact(s: string): string {
  return s.replace(/(\d)\s+(?=\d)/g, "$1\u0000").replace(
    /(\\[a-zA-Z]+)\s+(?=[a-zA-Z])/g,
    "$1\u0000",
  )
    .replace(/\s+/g, "");
}

function literalEqual(a: NumberLiteral, b: NumberLiteral, o: EquivalenceOptions): Verdict {
  if (a.kind === "infinity" || b.kind === "infinity") {
    return a.kind === "infinity" && b.kind === "infinity" && a.sign === b.sign
      ? T("same infinity")
      : F("infinity vs a different value");
  }
  if (rationalEquals(a.value, b.value)) return T("equal as exact fractions");
  if (!a.decimal && !b.decimal) return F("different exact values");
  const rel = o.relTolerance ?? 1e-6;
  const abs = o.absTolerance ?? 1e-6;
  // Exactly, not in doubles: two values below 1e-324 would both round to 0 and look equal.
  return rationalsClose(a.value, b.value, rel, abs)
    ? T(`equal within tolerance (relative ${rel}, absolute ${abs})`)
    : F(`different numbers: ${approximate(a.value)} vs ${approximate(b.value)}`);
}

/** A rational for a reason: its double, or four digits of it where the double is 0 or ∞. */
function approximate(r: Rational): string {
  const x = rationalToNumber(r);
  if (r.num === 0n || (x !== 0 && Number.isFinite(x))) return String(x);
  const abs = r.num < 0n ? -r.num : r.num;
  // The value lies in [10^(e-1), 10^(e+1)); scaling by 10^(4-e) leaves 4 or 5 integer digits.
  const shift = 4 - (abs.toString().length - r.den.toString().length);
  const q = shift >= 0
    ? (abs * 10n ** BigInt(shift)) / r.den
    : abs / (r.den * 10n ** BigInt(-shift));
  const d = q.toString();
  return `${r.num < 0n ? "-" : ""}${d[0]}.${d.slice(1, 4)}e${d.length - 1 - shift}`;
}

function scaleLiteral(n: NumberLiteral): NumberLiteral {
  return n.kind === "finite"
    ? { kind: "finite", value: rational(n.value.num, n.value.den * 100n), decimal: n.decimal }
    : n;
}

/** Compares two scalar LaTeX strings (no structure, no annotations). */
function scalarLatexEqual(
  a: string,
  b: string,
  pa: boolean,
  pb: boolean,
  o: EquivalenceOptions,
): Verdict {
  if (!pa && !pb && compact(a) === compact(b) && !mayBeUndefined(a)) return T("identical");
  // Trees given to `valuesEquivalent` directly have not been through `answersEquivalent`'s check.
  const over = refusal(a, b, { ...o, maxLength: Infinity });
  if (over) return over;
  let na = parseNumber(a);
  let nb = parseNumber(b);
  if (na && nb) {
    if (pa) na = scaleLiteral(na);
    if (pb) nb = scaleLiteral(nb);
    return literalEqual(na, nb, o);
  }
  const wa = pa ? `\\frac{${a}}{100}` : a;
  const wb = pb ? `\\frac{${b}}{100}` : b;
  return casEqual(wa, wb, o);
}

function scalarEqual(
  g: Extract<MathValue, { kind: "scalar" }>,
  p: Extract<MathValue, { kind: "scalar" }>,
  o: EquivalenceOptions,
): Verdict {
  if ((o.units ?? "strict") === "strict" && g.unit && p.unit && !unitsCompatible(g.unit, p.unit)) {
    return F(`units differ: ${p.unit} vs ${g.unit}`);
  }
  const policy = o.percent ?? "auto";
  const [gl, pl] = degreesToRadians(g, p);
  const asLabel = () => scalarLatexEqual(gl, pl, false, false, o);
  const asValue = () => scalarLatexEqual(gl, pl, g.percent, p.percent, o);
  if (policy === "strip" || !(g.percent || p.percent)) return asLabel();
  if (policy === "value") return asValue();
  if (policy === "auto" && g.percent) return asLabel();
  const first = asLabel();
  return first.equal ? first : asValue();
}

/** `30^\circ` against an answer in terms of `\pi` is compared in radians. */
function degreesToRadians(
  g: Extract<MathValue, { kind: "scalar" }>,
  p: Extract<MathValue, { kind: "scalar" }>,
): [string, string] {
  const toRad = (latex: string) => `\\frac{(${latex})\\pi}{180}`;
  if (g.unit === "degree" && p.unit === null && /\\pi(?![a-zA-Z])/.test(p.latex)) {
    return [toRad(g.latex), p.latex];
  }
  if (p.unit === "degree" && g.unit === null && /\\pi(?![a-zA-Z])/.test(g.latex)) {
    return [g.latex, toRad(p.latex)];
  }
  return [g.latex, p.latex];
}

/** `{ var, value }` when one side of an equation is a plain variable. */
function varSide(e: Extract<MathValue, { kind: "equation" }>): { v: string; value: string } | null {
  if (isSimpleVariable(e.lhs)) return { v: e.lhs.replace(/\s+/g, ""), value: e.rhs };
  if (isSimpleVariable(e.rhs)) return { v: e.rhs.replace(/\s+/g, ""), value: e.lhs };
  return null;
}

function equationEqual(
  g: Extract<MathValue, { kind: "equation" }>,
  p: Extract<MathValue, { kind: "equation" }>,
  o: EquivalenceOptions,
): Verdict {
  const gs = varSide(g);
  const ps = varSide(p);
  if (gs && ps && gs.v === ps.v) {
    const v = compare(parseAnswer(gs.value), parseAnswer(ps.value), o, false);
    return v.equal ? T(`${gs.v} = …: ${v.reason}`) : F(`${gs.v} = …: ${v.reason}`);
  }
  return casEquationsEqual(g.lhs, g.rhs, p.lhs, p.rhs, o);
}

/** A one-sided interval written from an inequality, as `lo op hi` (`(2, ∞)` of x → `2 < x`). */
function rayAsRelation(
  g: Extract<MathValue, { kind: "group" }>,
): { lo: string; hi: string; op: "<" | "\\le" } | null {
  const [a, b] = g.items;
  if (!g.variable || !a || !b || a.kind !== "scalar" || b.kind !== "scalar") return null;
  if (b.latex === "\\infty" && a.latex !== "-\\infty") {
    return { lo: a.latex, hi: g.variable, op: g.open === "[" ? "\\le" : "<" };
  }
  if (a.latex === "-\\infty" && b.latex !== "\\infty") {
    return { lo: g.variable, hi: b.latex, op: g.close === "]" ? "\\le" : "<" };
  }
  return null;
}

/** Lists of equations that all name the same plain variable become lists of their values. */
function unwrapEquations(items: readonly MathValue[]): readonly MathValue[] {
  const sides = items.map((x) => (x.kind === "equation" ? varSide(x) : null));
  if (sides.some((s) => s === null)) return items;
  const names = new Set(sides.map((s) => s!.v));
  return names.size === 1 ? sides.map((s) => parseAnswer(s!.value)) : items;
}

function orderedEqual(
  g: readonly MathValue[],
  p: readonly MathValue[],
  o: EquivalenceOptions,
  what: string,
): Verdict {
  if (g.length !== p.length) return F(`${what}: ${p.length} items vs ${g.length}`);
  for (let i = 0; i < g.length; i++) {
    const v = compare(g[i]!, p[i]!, o, false);
    if (!v.equal) return F(`${what}: item ${i + 1} differs (${v.reason})`);
  }
  return T(`${what}: all ${g.length} items equal`);
}

const MAX_PAIRS = 400;

/** Multiset equality by bipartite matching (Kuhn's algorithm) over pairwise comparisons. */
function unorderedEqual(
  g: readonly MathValue[],
  p: readonly MathValue[],
  o: EquivalenceOptions,
  what: string,
): Verdict {
  if (g.length !== p.length) return F(`${what}: ${p.length} items vs ${g.length}`);
  if (g.length * p.length > MAX_PAIRS) return F(`${what}: too many items to match`);
  const eq: boolean[][] = g.map((x) => p.map((y) => compare(x, y, o, false).equal));
  const owner: number[] = new Array(p.length).fill(-1);
  const tryAssign = (i: number, seen: boolean[]): boolean => {
    for (let j = 0; j < p.length; j++) {
      if (!eq[i]![j] || seen[j]) continue;
      seen[j] = true;
      if (owner[j] === -1 || tryAssign(owner[j]!, seen)) {
        owner[j] = i;
        return true;
      }
    }
    return false;
  };
  for (let i = 0; i < g.length; i++) {
    if (!tryAssign(i, new Array(p.length).fill(false))) {
      return F(`${what}: no match for item ${i + 1} of the gold answer`);
    }
  }
  return T(`${what}: same ${g.length} items in some order`);
}

/** Set equality: every item of each side equals some item of the other (repeats collapse). */
function setEqual(
  g: readonly MathValue[],
  p: readonly MathValue[],
  o: EquivalenceOptions,
): Verdict {
  if (g.length * p.length > MAX_PAIRS) return F("set: too many items to match");
  const eq: boolean[][] = g.map((x) => p.map((y) => compare(x, y, o, false).equal));
  const gi = eq.findIndex((row) => !row.some(Boolean));
  if (gi >= 0) return F(`set: no match for item ${gi + 1} of the gold answer`);
  const pj = p.findIndex((_, j) => !eq.some((row) => row[j]));
  if (pj >= 0) return F(`set: item ${pj + 1} of the answer is not in the gold set`);
  return T("set: same elements");
}

function isCollection(v: MathValue): v is Extract<MathValue, { kind: "set" | "list" }> {
  return v.kind === "set" || v.kind === "list";
}

/** Deadline (from `performance.now()`) of the comparison in progress, per options object. */
const deadlines = new WeakMap<EquivalenceOptions, number>();

function compare(g: MathValue, p: MathValue, o: EquivalenceOptions, top: boolean): Verdict {
  const deadline = deadlines.get(o);
  if (deadline !== undefined && performance.now() > deadline) return F("time limit reached");
  if (g.kind === "choice" || p.kind === "choice") {
    if (g.kind === "choice" && p.kind === "choice") {
      return g.letter === p.letter ? T("same choice") : F(`choice ${p.letter} vs ${g.letter}`);
    }
    return F("a choice letter vs a value");
  }
  if (g.kind === "text" || p.kind === "text") {
    if (g.kind === "text" && p.kind === "text") {
      return g.text !== "" && g.text === p.text
        ? T("same text")
        : F(`text "${p.text}" vs "${g.text}"`);
    }
    return F("text vs a mathematical value");
  }
  if (g.kind === "equation" && p.kind === "equation") return equationEqual(g, p, o);
  if (g.kind === "equation" || p.kind === "equation") {
    const e = (g.kind === "equation" ? g : p) as Extract<MathValue, { kind: "equation" }>;
    const side = top ? varSide(e) : null;
    if (!side) return F("an equation vs a value");
    const value = parseAnswer(side.value);
    return g.kind === "equation" ? compare(value, p, o, false) : compare(g, value, o, false);
  }
  if (g.kind === "relation" && p.kind === "relation") {
    if (g.parts.length !== p.parts.length || g.ops.some((op, i) => op !== p.ops[i])) {
      return F("different inequality");
    }
    if (g.ops[0] === "\\ne") {
      // x ≠ a and y ≠ b are equivalent exactly when x = a and y = b are.
      const ge = { kind: "equation", lhs: g.parts[0]!, rhs: g.parts[1]! } as const;
      const pe = { kind: "equation", lhs: p.parts[0]!, rhs: p.parts[1]! } as const;
      return equationEqual(ge, pe, o);
    }
    if (g.parts.length === 2) {
      return casInequalitiesEqual(g.parts[0]!, g.parts[1]!, p.parts[0]!, p.parts[1]!, o);
    }
    return orderedEqual(g.parts.map(parseAnswer), p.parts.map(parseAnswer), o, "inequality chain");
  }
  if (g.kind === "relation" || p.kind === "relation") {
    // `-x > -1` against `x < 1` (read as the interval (-∞, 1) of x).
    const rel = (g.kind === "relation" ? g : p) as Extract<MathValue, { kind: "relation" }>;
    const other = g.kind === "relation" ? p : g;
    const asRel = other.kind === "group" ? rayAsRelation(other) : null;
    if (!asRel || rel.parts.length !== 2 || rel.ops[0] !== asRel.op) {
      return F("an inequality vs a different shape");
    }
    return casInequalitiesEqual(rel.parts[0]!, rel.parts[1]!, asRel.lo, asRel.hi, o);
  }
  if (g.kind === "empty" || p.kind === "empty") {
    return g.kind === p.kind ? T("both empty") : F("the empty set vs a non-empty value");
  }
  if (g.kind === "union" && p.kind === "union") return unorderedEqual(g.items, p.items, o, "union");
  if (g.kind === "matrix" && p.kind === "matrix") {
    if (g.rows.length !== p.rows.length || g.rows[0]!.length !== p.rows[0]!.length) {
      return F("matrices of different shapes");
    }
    return orderedEqual(g.rows.flat(), p.rows.flat(), o, "matrix");
  }
  if (g.kind === "matrix" || p.kind === "matrix") {
    const m = (g.kind === "matrix" ? g : p) as Extract<MathValue, { kind: "matrix" }>;
    const other = g.kind === "matrix" ? p : g;
    const vector = m.rows.length === 1 || m.rows[0]!.length === 1;
    const tuple = other.kind === "list" ||
      (other.kind === "group" && other.open === "(" && other.close === ")");
    if (vector && tuple && (other.kind === "group" || other.kind === "list")) {
      const cells = m.rows.flat();
      return g.kind === "matrix"
        ? orderedEqual(cells, other.items, o, "vector")
        : orderedEqual(other.items, cells, o, "vector");
    }
    return F("a matrix vs a different shape");
  }
  if (g.kind === "group" && p.kind === "group") {
    if (g.open !== p.open || g.close !== p.close) {
      return F(`brackets ${p.open}${p.close} vs ${g.open}${g.close}`);
    }
    const tuple = g.open === "(" && g.close === ")";
    if (tuple && o.orderedTuples === false) return unorderedEqual(g.items, p.items, o, "tuple");
    return orderedEqual(g.items, p.items, o, tuple ? "tuple or open interval" : "interval");
  }
  if ((g.kind === "group" && p.kind === "list") || (g.kind === "list" && p.kind === "group")) {
    const grp = (g.kind === "group" ? g : p) as Extract<MathValue, { kind: "group" }>;
    if (grp.open !== "(" || grp.close !== ")") return F("an interval vs a bare list");
    return orderedEqual(g.items, p.items, o, "tuple");
  }
  if (g.kind === "set" && p.kind === "set") return setEqual(g.items, p.items, o);
  if (isCollection(g) && isCollection(p)) {
    return unorderedEqual(
      unwrapEquations(g.items),
      unwrapEquations(p.items),
      o,
      g.kind === "set" ? "set" : "list",
    );
  }
  if (g.kind === "scalar" && p.kind === "scalar") return scalarEqual(g, p, o);
  return F(`different shapes: ${p.kind} vs ${g.kind}`);
}

/**
 * Compares two parsed answers (gold first) inside one CAS scope.
 *
 * @example Usage
 * ```ts
 * import { parseAnswer, valuesEquivalent } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(valuesEquivalent(parseAnswer("\\{1, 2\\}"), parseAnswer("\\{2, 1\\}")).equal);
 * assert.ok(!valuesEquivalent(parseAnswer("(1, 2)"), parseAnswer("(2, 1)")).equal);
 * ```
 */
export function valuesEquivalent(
  gold: MathValue,
  pred: MathValue,
  options: EquivalenceOptions = {},
): Verdict {
  const limit = options.timeLimitMs ?? 3000;
  const o = { ...options };
  deadlines.set(o, performance.now() + limit);
  try {
    return withCasScope(() => compare(gold, pred, o, true), limit);
  } catch (err) {
    return F(`comparison stopped: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Whether a predicted answer string is equivalent to the gold answer string (both already
 * extracted: no `\boxed` search happens here).
 *
 * @example Usage
 * ```ts
 * import { answersEquivalent } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(answersEquivalent("\\frac{1}{2}", "0.5").equal);
 * assert.ok(answersEquivalent("x = 3", "3").equal);
 * assert.ok(!answersEquivalent("\\frac{1}{3}", "0.333").equal);
 * assert.ok(answersEquivalent("[2, \\infty)", "x \\geq 2").equal);
 * assert.ok(answersEquivalent("10\\%", "10").equal);
 * assert.ok(!answersEquivalent("10\\%", "0.1").equal); // the default percent policy
 * assert.ok(answersEquivalent("10\\%", "0.1", { percent: "value" }).equal);
 * ```
 */
export function answersEquivalent(
  gold: string,
  pred: string,
  options: EquivalenceOptions = {},
): Verdict {
  // The budget is checked on the raw text first: it is linear, normalisation is not.
  const raw = refusal(gold, pred, options);
  if (raw) return raw;
  const g = normalizeLatex(gold);
  const p = normalizeLatex(pred);
  if (g === "" || p === "") return F("empty answer");
  if (g === p && !mayBeUndefined(g)) return T("identical after normalisation");
  // Normalisation joins digit groups (`1{,}000`) and may lengthen the text (`½`): check the
  // numbers again, not the length.
  const normalized = refusal(g, p, { ...options, maxLength: Infinity });
  if (normalized) return normalized;
  return valuesEquivalent(parseAnswer(gold), parseAnswer(pred), options);
}

function refusal(gold: string, pred: string, options: EquivalenceOptions): Verdict | null {
  const g = budgetRefusal(gold, options);
  if (g) return F(`refused: gold answer has ${g}`);
  const p = budgetRefusal(pred, options);
  return p ? F(`refused: answer has ${p}`) : null;
}
