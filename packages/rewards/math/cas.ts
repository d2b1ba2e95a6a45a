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
 * Nothing reaches the engine unbounded: the text and the non-canonical parse are checked against
 * the budget first (`budget.ts`; the engine folds constants while canonicalising, and one bignum
 * operation cannot be interrupted), a value that is undefined (`\frac{1}{0}`, `\tan\frac{\pi}{2}`)
 * or that overflowed to infinity (`1e9999999`) is refused rather than compared, and rational
 * functions are compared exactly (`identity.ts`) before floating-point spot checks.
 *
 * @module
 */

import { CancellationError, ComputeEngine } from "@cortex-js/compute-engine";
import { mulberry32 } from "@rlvr/common";
import { budgetRefusal, type MathBudget, valueSizeRefusal } from "./budget.ts";
import { exactIdentity } from "./identity.ts";
import { type Rational, rationalEquals, rationalFromMathJson } from "./rational.ts";

/** The outcome of a comparison: whether the two sides are equal, and why. */
export interface Verdict {
  /** `true` only when equivalence was established. */
  equal: boolean;
  /** A short human-readable reason. */
  reason: string;
}

/** Tuning of the CAS comparisons, and the size budget checked before the CAS runs. */
export interface CasOptions extends MathBudget {
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
   * {@linkcode withCasScope} call when passed there (a comparison inside it gets what is left):
   * the engine and the exact test stop evaluating at the deadline and the comparison reads as
   * "not equal".
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
/** Deadline (`performance.now()`) of the innermost {@linkcode withCasScope} with a time limit. */
let scopeDeadline = Infinity;
/** Deadline of the timed comparison in progress, checked by the guarded parser (`Infinity`: none). */
let activeDeadline = Infinity;
let parserTicks = 0;
/** Whether the engine's LaTeX parser checks {@linkcode activeDeadline} (see `guardParser`). */
let parserGuarded = false;

/** A time limit that fired must end the whole comparison, not read as "not a number". */
function rethrowCancellation(err: unknown): void {
  if (err instanceof CancellationError) throw err;
}

/**
 * Makes the engine's LaTeX parser stop at the deadline. The parser backtracks exponentially on
 * some inputs (`((((((((((((\sin[{\%]`, 21 characters, parses for minutes; balanced ones too)
 * and, unlike evaluation, never checks the engine's time limit. Its `peek` and `atBoundary`
 * accessors run at every step of it, so they are wrapped, once per process, with a check of
 * {@linkcode activeDeadline} every 1024th call; the prototype is reached through the parser
 * instance that the `parseUnexpectedToken` hook receives. Outside a timed comparison the deadline
 * is `Infinity` and the wrapper only counts, so other users of the engine see no change.
 */
function guardParser(e: Engine): boolean {
  let proto: object | null = null;
  try {
    e.parse("\\rlvrUnexpectedToken", {
      parseUnexpectedToken: (_lhs, parser) => {
        proto ??= Object.getPrototypeOf(parser) as object;
        return null;
      },
    });
  } catch {
    return false;
  }
  if (proto === null) return false;
  let wrapped = 0;
  for (const name of ["peek", "atBoundary"]) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (!d?.get || !d.configurable) continue;
    const get = d.get;
    Object.defineProperty(proto, name, {
      ...d,
      get(this: unknown) {
        if ((++parserTicks & 1023) === 0 && performance.now() > activeDeadline) {
          throw new CancellationError({ message: "LaTeX parse time limit", cause: "timeout" });
        }
        return get.call(this);
      },
    });
    wrapped++;
  }
  return wrapped === 2;
}

/**
 * Whether the engine's LaTeX parser is interruptible by the time limit in this process: `false`
 * means that a future version of `@cortex-js/compute-engine` no longer exposes what
 * `verifyMath` wraps (its `Parser` class with `peek` and `atBoundary` accessors), and a
 * pathological answer could then take the parser minutes. A test checks it.
 *
 * @example Usage
 * ```ts
 * import { casParserGuarded } from "@rlvr/rewards/math";
 * import assert from "node:assert/strict";
 * assert.equal(casParserGuarded(), true);
 * ```
 */
export function casParserGuarded(): boolean {
  ce();
  return parserGuarded;
}

/** The shared engine, created on first use with single letters declared as real variables. */
function ce(): Engine {
  if (engine) return engine;
  const e = new ComputeEngine();
  parserGuarded = guardParser(e);
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
  const saved = scopeDeadline;
  e.pushScope();
  try {
    if (timeLimitMs === undefined) return fn();
    scopeDeadline = Math.min(saved, performance.now() + timeLimitMs);
    return e.withTimeLimit(timeLimitMs, fn as () => T extends Promise<unknown> ? never : T);
  } finally {
    scopeDeadline = saved;
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

/** Whether a MathJSON tree holds one of `symbols` (as a symbol or a head). */
function hasSymbol(json: unknown, symbols: ReadonlySet<string>): boolean {
  if (typeof json === "string") return symbols.has(json);
  if (Array.isArray(json)) return json.some((x) => hasSymbol(x, symbols));
  if (json !== null && typeof json === "object") {
    const o = json as { sym?: unknown; fn?: unknown };
    return hasSymbol(o.sym, symbols) || hasSymbol(o.fn, symbols);
  }
  return false;
}

const UNDEFINED = new Set(["ComplexInfinity", "NaN"]);
const INFINITE = new Set(["PositiveInfinity", "NegativeInfinity"]);

/** Wall-clock share of one LaTeX parse (a normal one takes milliseconds). */
const PARSE_LIMIT_MS = 1000;

/** Whether `()`, `[]` and `{}` nest properly (`\{`, `\}` and other escapes are skipped). */
function wellNested(latex: string): boolean {
  const stack: string[] = [];
  const pairs: Record<string, string> = { ")": "(", "]": "[", "}": "{" };
  for (let i = 0; i < latex.length; i++) {
    const ch = latex[i]!;
    if (ch === "\\") i++;
    else if (ch === "(" || ch === "[" || ch === "{") stack.push(ch);
    else if (ch in pairs && stack.pop() !== pairs[ch]) return false;
  }
  return stack.length === 0;
}

/** A parsed scalar, a refusal with its reason, or `null` when the text is not a scalar. */
type Parsed = { expr: Expr } | { refused: string } | null;

/**
 * Parses a scalar LaTeX expression after checking it against the budget: the text first, then
 * the sizes implied by its non-canonical parse (canonicalisation evaluates constants, such as
 * `2^{2^{2^{2^{2^2}}}}`, and a single bignum operation cannot be interrupted).
 */
function parseScalar(latex: string, budget: MathBudget): Parsed {
  if (latex.length > MAX_LATEX) return null;
  // Punctuation the parser would skip over (`7?` reads as 7).
  if (/[?;@#"]/.test(latex)) return null;
  // A value has balanced groups; the parser's worst backtracking is on unbalanced ones.
  if (!wellNested(latex)) return null;
  const refusal = budgetRefusal(latex, { ...budget, maxLength: MAX_LATEX });
  if (refusal) return { refused: refusal };
  const outer = activeDeadline;
  try {
    // One parse gets a share of the budget, so that a pathological item of a list cannot use
    // up the time of the others.
    activeDeadline = Math.min(outer, performance.now() + PARSE_LIMIT_MS);
    let raw: Expr;
    let e: Expr;
    try {
      raw = ce().parse(latex, { form: "raw" });
      e = ce().parse(latex);
    } catch (err) {
      if (err instanceof CancellationError && performance.now() < outer) {
        return { refused: `the LaTeX parser needed more than ${PARSE_LIMIT_MS} ms` };
      }
      throw err;
    } finally {
      activeDeadline = outer;
    }
    const size = valueSizeRefusal(raw.json, budget);
    if (size) return { refused: size };
    if (!e.isValid) return null;
    const json = e.json;
    for (const h of heads(json, new Set())) if (STRUCTURE_HEADS.has(h)) return null;
    // `\frac{1}{0}` and `\frac{2}{0}` both read as ComplexInfinity: never equal to anything.
    if (hasSymbol(json, UNDEFINED)) return { refused: "undefined value (division by zero)" };
    // `1e9999999` reads as +∞ (so does `\infty`, which is written as such).
    if (hasSymbol(json, INFINITE) && !/\\infty(?![a-zA-Z])/.test(latex)) {
      return { refused: "a number that overflows to infinity" };
    }
    return { expr: e };
  } catch (err) {
    rethrowCancellation(err);
    return null;
  }
}

/** The refusal of an expression that is undefined once evaluated (`\frac{1}{\sin \pi}`). */
function undefinedAfterEvaluation(e: Expr): string | null {
  try {
    return hasSymbol(e.evaluate().json, UNDEFINED) ? "undefined value (division by zero)" : null;
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

/** Runs `fn` under the time limit; `fn` gets the deadline (`performance.now()`) for own loops. */
function timed(options: CasOptions, fn: (deadline: number) => Verdict): Verdict {
  const limit = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
  const deadline = Math.min(scopeDeadline, performance.now() + limit);
  const saved = activeDeadline;
  try {
    activeDeadline = Math.min(saved, deadline);
    return ce().withTimeLimit(limit, () => fn(deadline));
  } catch (err) {
    if (err instanceof CancellationError) {
      return {
        equal: false,
        reason: `CAS time limit (${options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS} ms) reached`,
      };
    }
    const msg = err instanceof Error ? err.message : String(err);
    return { equal: false, reason: `CAS gave up: ${msg.slice(0, 80)}` };
  } finally {
    activeDeadline = saved;
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
  return timed(options, (deadline) => casEqualUntimed(a, b, options, deadline));
}

/** The two parsed expressions, or the verdict that ends the comparison (refusal, no parse). */
function parseBoth(
  a: string,
  b: string,
  options: CasOptions,
  what: string,
): { ea: Expr; eb: Expr } | Verdict {
  const pa = parseScalar(a, options);
  const pb = parseScalar(b, options);
  for (const p of [pa, pb]) {
    if (p && "refused" in p) return { equal: false, reason: `refused: ${p.refused}` };
  }
  if (!pa || !pb || !("expr" in pa) || !("expr" in pb)) {
    return { equal: false, reason: `could not parse ${!pa ? `"${a}"` : `"${b}"`} as ${what}` };
  }
  return { ea: pa.expr, eb: pb.expr };
}

function casEqualUntimed(a: string, b: string, options: CasOptions, deadline: number): Verdict {
  const parsed = parseBoth(a, b, options, "an expression");
  if ("equal" in parsed) return parsed;
  const { ea, eb } = parsed;
  // Undefined values are refused before the structural comparison, which would match them.
  const undef = undefinedAfterEvaluation(ea) ?? undefinedAfterEvaluation(eb);
  if (undef) return { equal: false, reason: `refused: ${undef}` };
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
  // Rational functions compare exactly: no overflow at high degree, no tolerance to hide behind.
  // With a decimal literal, a difference may be rounding, which the tolerance below decides.
  const identity = exactIdentity(ea.json, eb.json, vars, { ...options, deadline });
  if (identity && (identity.equal || !decimal)) return identity;
  const tol = decimal ? user : { rel: SPOT_TOLERANCE, abs: Infinity };
  return spotCheck(ea, eb, vars, tol, options, "values", deadline);
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
  deadline: number,
): Verdict {
  const n = Math.max(3, options.spotChecks ?? 10);
  let valid = 0;
  for (const p of samplePoints(vars, n, options.seed ?? 20250101)) {
    if (performance.now() > deadline) return { equal: false, reason: "time limit reached" };
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
  deadline: number,
): Verdict {
  const n = Math.max(4, options.spotChecks ?? 10);
  let ratio: number | null = null;
  let valid = 0;
  for (const p of samplePoints(vars, n, (options.seed ?? 20250101) ^ 0x9e3779b9)) {
    if (performance.now() > deadline) return { equal: false, reason: "time limit reached" };
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

/**
 * Equal differences (or opposite ones, for equations) decided exactly when both are rational
 * functions, where the floating-point proportionality check overflows at high degree; `null`
 * leaves the decision to {@linkcode proportional} (another factor, or not rational functions).
 */
function sameDifference(
  da: Expr,
  db: Expr,
  vars: readonly string[],
  options: CasOptions,
  deadline: number,
  opposite: boolean,
): Verdict | null {
  const o = { ...options, deadline };
  for (const other of opposite ? [db.json, ["Negate", db.json]] : [db.json]) {
    const v = exactIdentity(da.json, other, vars, o);
    if (v?.equal) return { equal: true, reason: `equivalent (same difference: ${v.reason})` };
  }
  return null;
}

/** The differences `l1 − r1` and `l2 − r2`, or the verdict that ends the comparison. */
function differences(
  l1: string,
  r1: string,
  l2: string,
  r2: string,
  options: CasOptions,
  what: string,
): { da: Expr; db: Expr } | Verdict {
  const parsed = parseBoth(`(${l1})-(${r1})`, `(${l2})-(${r2})`, options, what);
  if ("equal" in parsed) return parsed;
  const undef = undefinedAfterEvaluation(parsed.ea) ?? undefinedAfterEvaluation(parsed.eb);
  if (undef) return { equal: false, reason: `refused: ${undef}` };
  return { da: parsed.ea, db: parsed.eb };
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
  return timed(options, (deadline) => {
    const d = differences(l1, r1, l2, r2, options, "an equation");
    if ("equal" in d) return d;
    const { da, db } = d;
    const va = unknowns(da);
    const vb = unknowns(db);
    if (!sameList(va, vb) || va.length === 0) {
      return {
        equal: false,
        reason: `different variables: {${va.join(", ")}} vs {${vb.join(", ")}}`,
      };
    }
    return sameDifference(da, db, va, options, deadline, true) ??
      proportional(da, db, va, "nonzero", options, deadline);
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
  return timed(options, (deadline) => {
    const d = differences(b1, a1, b2, a2, options, "an inequality");
    if ("equal" in d) return d;
    const { da, db } = d;
    const va = unknowns(da);
    const vb = unknowns(db);
    if (!sameList(va, vb) || va.length === 0) {
      return {
        equal: false,
        reason: `different variables: {${va.join(", ")}} vs {${vb.join(", ")}}`,
      };
    }
    return sameDifference(da, db, va, options, deadline, false) ??
      proportional(da, db, va, "positive", options, deadline);
  });
}
