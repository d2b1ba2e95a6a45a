/**
 * Symbolic comparison of LaTeX expressions with a real computer algebra system,
 * [`@cortex-js/compute-engine`](https://cortexjs.io/compute-engine/): both sides are parsed to
 * canonical MathJSON, compared structurally, then exactly (when both evaluate to rationals),
 * then numerically (constants), or at seeded random points (expressions with free variables).
 * Equations compare by their difference up to a non-zero constant factor, inequalities up to a
 * positive one.
 *
 * Design decision: every doubt is a "not equal" with a reason. Unparseable input, unknown
 * functions, overflow to infinity, different free variables, too few points where both sides
 * are defined, a time limit hit: all return `false`. Constants written without decimals must
 * agree to 1e-9 relative at 25-digit working precision; the user's (looser) tolerance only
 * applies when a decimal literal appears, since that is where rounding comes from. Each top-level
 * comparison runs in its own CAS scope, so a symbol read as a function in one answer (`f(x)`)
 * cannot change how the next answer parses.
 *
 * @module
 */

import { CancellationError, ComputeEngine } from "@cortex-js/compute-engine";
import { mulberry32 } from "@rlvr/common";
import { type Rational, rationalEquals, rationalFromMathJson } from "./rational.ts";

/** The outcome of a comparison: whether the two sides are equal, and why. */
export interface Verdict {
  /** `true` only when equivalence was established. */
  equal: boolean;
  /** A short human-readable reason. */
  reason: string;
}

/** Tuning of the CAS comparisons. */
export interface CasOptions {
  /** Relative tolerance when a decimal literal is involved (default `1e-6`). */
  relTolerance?: number;
  /**
   * Largest absolute difference accepted when a decimal literal is involved (default `1e-6`).
   * Both bounds must hold, so values above 1 are compared to six decimal places, as
   * Math-Verify's rounding does: `1000000.5` is not `1000000`, `2.0000001` is `2`.
   */
  absTolerance?: number;
  /** Random points for expressions with free variables (default `10`). */
  spotChecks?: number;
  /** Seed of the point generator (default `20250101`). */
  seed?: number;
  /**
   * Wall-clock budget in milliseconds (default `3000`) of one comparison, and of a whole
   * {@linkcode withCasScope} call when passed there: the engine stops evaluating at the deadline
   * and the comparison reads as "not equal".
   */
  timeLimitMs?: number;
}

type Engine = InstanceType<typeof ComputeEngine>;
type Expr = NonNullable<ReturnType<Engine["parse"]>>;

/** Relative tolerance for exact forms (no decimal literal): constants, then spot checks. */
const EXACT_TOLERANCE = 1e-12;
const SPOT_TOLERANCE = 1e-10;
/** Below this magnitude a value counts as zero. */
const ZERO = 1e-20;
const MAX_LATEX = 1500;
const DEFAULT_TIME_LIMIT_MS = 3000;
const STRUCTURE_HEADS = new Set([
  "Error",
  "Tuple",
  "List",
  "Set",
  "Interval",
  "Equal",
  "Less",
  "LessEqual",
  "Greater",
  "GreaterEqual",
  "NotEqual",
  "Measurement",
  "Sequence",
  "Delimiter",
  "Matrix",
  "Union",
  "Intersection",
  "Element",
  "Assign",
  "Hold",
  "String",
  "Missing",
  "ContinuationPlaceholder",
  "InvisibleOperator",
  // Read leniently by the parser from text that is not a value (`7;`, `7 \to 8`, `7'`, `7\text{?}`).
  "Block",
  "To",
  "Text",
  "Annotated",
  "OverHat",
  "UnderBar",
  "OverVector",
  "OverRightArrow",
  "Prime",
  "Tilde",
  "Colon",
  "Divides",
  "Subscript",
  "Superscript",
]);

let engine: Engine | null = null;

/** A time limit that fired must end the whole comparison, not read as "not a number". */
function rethrowCancellation(err: unknown): void {
  if (err instanceof CancellationError) throw err;
}

/** The shared engine, created on first use with single letters declared as real variables. */
function ce(): Engine {
  if (engine) return engine;
  const e = new ComputeEngine();
  // Declared letters read `a(b+c)` as a product, not as a call of an unknown function `a`.
  for (const ch of "abcdhjklmnopqrstuvwxyzABCDEGHIJKLMNOPQRSTUVWXYZ") e.declare(ch, "real");
  for (
    const g of ["alpha", "beta", "gamma", "delta", "theta", "lambda", "mu", "phi", "rho", "sigma"]
  ) {
    e.declare(g, "real");
  }
  engine = e;
  return e;
}

/**
 * Runs `fn` inside a fresh CAS scope (symbols declared while parsing are dropped afterwards),
 * optionally under one overall time limit that every comparison inside it shares.
 *
 * @example Usage
 * ```ts
 * import { casEqual, withCasScope } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(withCasScope(() => casEqual("2x", "x+x").equal));
 * ```
 */
export function withCasScope<T>(fn: () => T, timeLimitMs?: number): T {
  const e = ce();
  e.pushScope();
  try {
    if (timeLimitMs === undefined) return fn();
    return e.withTimeLimit(timeLimitMs, fn as () => T extends Promise<unknown> ? never : T);
  } finally {
    e.popScope();
  }
}

function heads(json: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(json)) {
    if (typeof json[0] === "string") out.add(json[0]);
    for (const x of json.slice(1)) heads(x, out);
  } else if (typeof json === "string" && /^'.*'$/.test(json)) out.add("String");
  return out;
}

/** Parses a scalar LaTeX expression, or `null` when it is invalid or not a scalar. */
function parseScalar(latex: string): Expr | null {
  if (latex.length > MAX_LATEX) return null;
  // Huge factorials and binomials would take the engine seconds.
  if (/\d{4,}\s*!|\\binom\s*\{\s*\d{5,}/.test(latex)) return null;
  // Punctuation the parser would skip over (`7?` reads as 7).
  if (/[?;@#"]/.test(latex)) return null;
  try {
    const e = ce().parse(latex);
    if (!e.isValid) return null;
    for (const h of heads(e.json, new Set())) if (STRUCTURE_HEADS.has(h)) return null;
    return e;
  } catch (err) {
    rethrowCancellation(err);
    return null;
  }
}

interface Complex {
  re: number;
  im: number;
}

function numeric(e: Expr): Complex {
  try {
    const n = e.N();
    const re = n.re;
    const im = n.im;
    return { re, im: Number.isNaN(im) && Number.isFinite(re) ? 0 : im };
  } catch (err) {
    rethrowCancellation(err);
    return { re: NaN, im: NaN };
  }
}

function finite(z: Complex): boolean {
  return Number.isFinite(z.re) && Number.isFinite(z.im);
}

/** Tolerances of one comparison: relative, and an absolute cap (`Infinity` for none). */
interface Tol {
  rel: number;
  abs: number;
}

function close(a: Complex, b: Complex, tol: Tol): boolean {
  const scale = Math.max(Math.hypot(a.re, a.im), Math.hypot(b.re, b.im));
  const d = Math.hypot(a.re - b.re, a.im - b.im);
  return (d <= tol.rel * scale && d <= tol.abs) || d <= ZERO;
}

function exact(e: Expr): { value: Rational; decimal: boolean } | null {
  try {
    return rationalFromMathJson(e.evaluate().json);
  } catch (err) {
    rethrowCancellation(err);
    return null;
  }
}

const INFINITIES: Record<string, number> = {
  '"PositiveInfinity"': 1,
  '"NegativeInfinity"': -1,
  '["Negate","PositiveInfinity"]': -1,
  '["Negate","NegativeInfinity"]': 1,
};

function infinitySign(e: Expr): number {
  return INFINITIES[JSON.stringify(e.json)] ?? 0;
}

function hasDecimal(latex: string): boolean {
  return /\d\.\d|(?<![\d}])\.\d|\d\.(?!\d)/.test(latex);
}

function unknowns(e: Expr): string[] {
  try {
    return [...e.unknowns].sort();
  } catch (err) {
    rethrowCancellation(err);
    return [];
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Seeded sample points: magnitudes log-uniform in [0.1, 10]; the first two points are positive in
 * every variable (square roots and logarithms stay real), the others draw each variable's sign
 * independently (so `|x + y|` and `|x| + |y|` are told apart).
 */
function samplePoints(vars: readonly string[], n: number, seed: number): Record<string, number>[] {
  const next = mulberry32(seed);
  const pts: Record<string, number>[] = [];
  for (let k = 0; k < n; k++) {
    const p: Record<string, number> = {};
    for (const v of vars) {
      const mag = 10 ** (2 * next() - 1);
      const sign = k < 2 || next() < 0.5 ? 1 : -1;
      p[v] = sign * mag;
    }
    pts.push(p);
  }
  return pts;
}

function evalAt(e: Expr, point: Record<string, number>): Complex {
  try {
    const sub: Record<string, Expr> = {};
    for (const [k, v] of Object.entries(point)) sub[k] = ce().number(v) as Expr;
    return numeric(e.subs(sub));
  } catch (err) {
    rethrowCancellation(err);
    return { re: NaN, im: NaN };
  }
}

function fmtPoint(p: Record<string, number>): string {
  return Object.entries(p).map(([k, v]) => `${k}=${v.toFixed(3)}`).join(", ");
}

function timed(options: CasOptions, fn: () => Verdict): Verdict {
  try {
    return ce().withTimeLimit(options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS, fn);
  } catch (err) {
    if (err instanceof CancellationError) {
      return {
        equal: false,
        reason: `CAS time limit (${options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS} ms) reached`,
      };
    }
    const msg = err instanceof Error ? err.message : String(err);
    return { equal: false, reason: `CAS gave up: ${msg.slice(0, 80)}` };
  }
}

/**
 * Compares two scalar LaTeX expressions: structurally, exactly (rationals), numerically
 * (constants: 1e-9 relative, or `relTolerance` when a decimal appears), or by seeded spot checks
 * at random points (free variables, which must be the same on both sides).
 *
 * @example Usage
 * ```ts
 * import { casEqual } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(casEqual("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}").equal);
 * assert.ok(casEqual("(x+1)^2", "x^2+2x+1").equal);
 * assert.ok(!casEqual("|x|", "x").equal);
 * assert.ok(!casEqual("2^{60}", "2^{60}+1").equal);
 * ```
 */
export function casEqual(a: string, b: string, options: CasOptions = {}): Verdict {
  return timed(options, () => casEqualUntimed(a, b, options));
}

function casEqualUntimed(a: string, b: string, options: CasOptions): Verdict {
  const ea = parseScalar(a);
  const eb = parseScalar(b);
  if (!ea || !eb) {
    return {
      equal: false,
      reason: `could not parse ${!ea ? `"${a}"` : `"${b}"`} as an expression`,
    };
  }
  try {
    if (ea.isSame(eb)) return { equal: true, reason: "same canonical form" };
  } catch (err) {
    rethrowCancellation(err);
  }
  const decimal = hasDecimal(a) || hasDecimal(b);
  const user: Tol = { rel: options.relTolerance ?? 1e-6, abs: options.absTolerance ?? 1e-6 };
  // Different free variables are fine when they cancel (`\sin^2 x + \cos^2 x` vs `1`): the spot
  // checks run over the union, so `x + 1` vs `y + 1` still differs.
  const vars = [...new Set([...unknowns(ea), ...unknowns(eb)])].sort();
  if (vars.length === 0) {
    return compareConstants(ea, eb, decimal ? user : { rel: EXACT_TOLERANCE, abs: Infinity });
  }
  if (vars.length > 8) return { equal: false, reason: "too many free variables" };
  const tol = decimal ? user : { rel: SPOT_TOLERANCE, abs: Infinity };
  return spotCheck(ea, eb, vars, tol, options, "values");
}

function compareConstants(ea: Expr, eb: Expr, tol: Tol): Verdict {
  const xa = exact(ea);
  const xb = exact(eb);
  if (xa && xb) {
    if (rationalEquals(xa.value, xb.value)) return { equal: true, reason: "equal exact values" };
    if (!xa.decimal && !xb.decimal) return { equal: false, reason: "different exact values" };
  }
  const ia = infinitySign(ea);
  const ib = infinitySign(eb);
  if (ia !== 0 || ib !== 0) {
    return ia === ib
      ? { equal: true, reason: "same infinity" }
      : { equal: false, reason: "infinity vs a different value" };
  }
  const na = numeric(ea);
  const nb = numeric(eb);
  if (!finite(na) || !finite(nb)) {
    return { equal: false, reason: "a side does not evaluate to a finite number" };
  }
  return close(na, nb, tol)
    ? { equal: true, reason: `numerically equal (relative tolerance ${tol.rel})` }
    : { equal: false, reason: `numerically different: ${fmt(na)} vs ${fmt(nb)}` };
}

function fmt(z: Complex): string {
  const re = Number(z.re.toPrecision(10));
  return Math.abs(z.im) > ZERO
    ? `${re}${z.im < 0 ? "-" : "+"}${Math.abs(Number(z.im.toPrecision(10)))}i`
    : `${re}`;
}

function spotCheck(
  ea: Expr,
  eb: Expr,
  vars: readonly string[],
  tol: Tol,
  options: CasOptions,
  what: string,
): Verdict {
  const n = Math.max(3, options.spotChecks ?? 10);
  let valid = 0;
  for (const p of samplePoints(vars, n, options.seed ?? 20250101)) {
    const a = evalAt(ea, p);
    const b = evalAt(eb, p);
    const fa = finite(a);
    const fb = finite(b);
    if (!fa && !fb) continue;
    if (fa !== fb) return { equal: false, reason: `only one side is defined at ${fmtPoint(p)}` };
    if (!close(a, b, tol)) {
      return { equal: false, reason: `${what} differ at ${fmtPoint(p)}: ${fmt(a)} vs ${fmt(b)}` };
    }
    valid++;
  }
  const need = Math.min(3, n);
  return valid >= need
    ? { equal: true, reason: `${what} agree at ${valid} random points` }
    : { equal: false, reason: `could not evaluate at enough points (${valid} of ${n})` };
}

/** Which proportionality is required between the two differences. */
type Proportion = "nonzero" | "positive";

function proportional(
  da: Expr,
  db: Expr,
  vars: readonly string[],
  mode: Proportion,
  options: CasOptions,
): Verdict {
  const n = Math.max(4, options.spotChecks ?? 10);
  let ratio: number | null = null;
  let valid = 0;
  for (const p of samplePoints(vars, n, (options.seed ?? 20250101) ^ 0x9e3779b9)) {
    const a = evalAt(da, p);
    const b = evalAt(db, p);
    if (!finite(a) || !finite(b)) continue;
    const scale = Math.max(Math.abs(a.re), Math.abs(b.re), 1e-300);
    if (Math.abs(a.im) > 1e-12 * scale || Math.abs(b.im) > 1e-12 * scale) continue;
    const za = Math.abs(a.re) <= 1e-12;
    const zb = Math.abs(b.re) <= 1e-12;
    if (za && zb) continue;
    if (za !== zb) return { equal: false, reason: `only one side holds at ${fmtPoint(p)}` };
    const r = a.re / b.re;
    if (ratio === null) ratio = r;
    else if (Math.abs(r - ratio) > 1e-9 * Math.max(Math.abs(r), Math.abs(ratio))) {
      return {
        equal: false,
        reason: `not equivalent (differences not proportional at ${fmtPoint(p)})`,
      };
    }
    valid++;
  }
  if (ratio === null || valid < 3) {
    return { equal: false, reason: `could not evaluate at enough points (${valid} of ${n})` };
  }
  if (mode === "positive" && ratio <= 0) {
    return { equal: false, reason: "the inequality points the other way" };
  }
  return { equal: true, reason: `equivalent (differences proportional at ${valid} points)` };
}

function difference(lhs: string, rhs: string): Expr | null {
  return parseScalar(`(${lhs})-(${rhs})`);
}

/**
 * Whether two equations `l1 = r1` and `l2 = r2` are equivalent, checked as `l1 - r1 = k·(l2 - r2)`
 * for one non-zero constant `k` at seeded random points (so `y = 2x+1` matches `2x + 1 = y` and
 * `4x = 2y - 2`; `x^2 = 4` does not match `x = 2`).
 *
 * @example Usage
 * ```ts
 * import { casEquationsEqual } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(casEquationsEqual("y", "2x+1", "2x+1", "y").equal);
 * assert.ok(!casEquationsEqual("y", "2x+1", "y", "2x-1").equal);
 * ```
 */
export function casEquationsEqual(
  l1: string,
  r1: string,
  l2: string,
  r2: string,
  options: CasOptions = {},
): Verdict {
  return timed(options, () => {
    const da = difference(l1, r1);
    const db = difference(l2, r2);
    if (!da || !db) return { equal: false, reason: "could not parse an equation side" };
    const va = unknowns(da);
    const vb = unknowns(db);
    if (!sameList(va, vb) || va.length === 0) {
      return {
        equal: false,
        reason: `different variables: {${va.join(", ")}} vs {${vb.join(", ")}}`,
      };
    }
    return proportional(da, db, va, "nonzero", options);
  });
}

/**
 * Whether two inequalities `a1 op b1` and `a2 op b2` (both written as `<` or both as `\le`, small
 * side first) are equivalent: `b1 - a1 = k·(b2 - a2)` for one positive constant `k`.
 *
 * @example Usage
 * ```ts
 * import { casInequalitiesEqual } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(casInequalitiesEqual("x+y", "2", "2x+2y", "4").equal);
 * assert.ok(!casInequalitiesEqual("x+y", "2", "2", "x+y").equal);
 * ```
 */
export function casInequalitiesEqual(
  a1: string,
  b1: string,
  a2: string,
  b2: string,
  options: CasOptions = {},
): Verdict {
  return timed(options, () => {
    const da = difference(b1, a1);
    const db = difference(b2, a2);
    if (!da || !db) return { equal: false, reason: "could not parse an inequality side" };
    const va = unknowns(da);
    const vb = unknowns(db);
    if (!sameList(va, vb) || va.length === 0) {
      return {
        equal: false,
        reason: `different variables: {${va.join(", ")}} vs {${vb.join(", ")}}`,
      };
    }
    return proportional(da, db, va, "positive", options);
  });
}
