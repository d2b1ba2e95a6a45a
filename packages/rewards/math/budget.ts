/**
 * Size budgets of a math comparison, checked before any exact or CAS computation: the length of
 * the raw inputs and of each answer, bracket nesting, the digits of any number written or implied,
 * and literal exponents.
 *
 * Design decision: `verifyMath` is synchronous and runs on untrusted policy output, and a single
 * `BigInt` or bignum operation cannot be interrupted once started (`1e999999` made the CAS format
 * a million-digit number for two minutes). So whatever could grow past the budget is refused up
 * front, with a reason, instead of being started and timed out; the time limit (`timeLimitMs`)
 * then only has to stop loops, which check it. A refusal is a "not equal" verdict, never an error.
 * Two layers: {@linkcode budgetRefusal} reads the answer text (linear, before normalisation and
 * parsing), {@linkcode valueSizeRefusal} bounds the digits of every exact intermediate value of a
 * parsed MathJSON expression (power towers, factorials, binomials, sums and products), before the
 * CAS canonicalises it (canonicalisation already folds constants).
 *
 * @module
 */

/** Limits of one comparison; every field is optional (see {@linkcode DEFAULT_BUDGET}). */
export interface MathBudget {
  /** Longest completion or gold field read at all, in characters (default `1_000_000`). */
  maxInputLength?: number;
  /** Longest answer, gold or extracted, in characters (default `1000`). */
  maxLength?: number;
  /** Deepest nesting of `{`, `(` and `[` in an answer (default `50`). */
  maxDepth?: number;
  /**
   * Largest integer exponent written in an answer: `1e…`, `10^{…}`, `x^{…}`, `\times 10^{…}`
   * (default `10_000`). Also the largest exponent expanded exactly.
   */
  maxExponent?: number;
  /**
   * Most decimal digits of any number, written or computed exactly (default `20_000`): an
   * estimate bounds every intermediate value (`2^{2^{20}}`, `5000!`, `\binom{10^5}{…}`) before
   * the CAS computes it.
   */
  maxDigits?: number;
}

/**
 * The default limits: far above any answer of a math dataset, far below what takes a second.
 *
 * @example Usage
 * ```ts
 * import { DEFAULT_BUDGET } from "@rlvr/rewards/math";
 * import assert from "node:assert/strict";
 * assert.equal(DEFAULT_BUDGET.maxExponent, 10_000);
 * ```
 */
export const DEFAULT_BUDGET: Readonly<Required<MathBudget>> = Object.freeze({
  maxInputLength: 1_000_000,
  maxLength: 1000,
  maxDepth: 50,
  maxExponent: 10_000,
  maxDigits: 20_000,
});

/**
 * The budget with every default filled in.
 *
 * @example Usage
 * ```ts
 * import { resolveBudget } from "@rlvr/rewards/math";
 * import assert from "node:assert/strict";
 * assert.equal(resolveBudget({ maxDepth: 8 }).maxDepth, 8);
 * assert.equal(resolveBudget({}).maxLength, 1000);
 * ```
 */
export function resolveBudget(options: MathBudget = {}): Required<MathBudget> {
  return {
    maxInputLength: options.maxInputLength ?? DEFAULT_BUDGET.maxInputLength,
    maxLength: options.maxLength ?? DEFAULT_BUDGET.maxLength,
    maxDepth: options.maxDepth ?? DEFAULT_BUDGET.maxDepth,
    maxExponent: options.maxExponent ?? DEFAULT_BUDGET.maxExponent,
    maxDigits: options.maxDigits ?? DEFAULT_BUDGET.maxDigits,
  };
}

/** Deepest nesting of `{`, `(`, `[` (closers of any kind close; stray closers are ignored). */
function nestingDepth(s: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 123 || c === 40 || c === 91) {
      if (++depth > max) max = depth;
    } else if ((c === 125 || c === 41 || c === 93) && depth > 0) depth--;
  }
  return max;
}

/** Longest run of decimal digits. */
function longestDigitRun(s: string): number {
  let run = 0;
  let max = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    run = c >= 48 && c <= 57 ? run + 1 : 0;
    if (run > max) max = run;
  }
  return max;
}

/** `1e999999`, `2.5E-400` (a digit or point right before the `e`). */
const SCI_EXPONENT = /[\d.][eE]([+-]?)(\d+)/g;
/** `^{999999}`, `^ { - ( 99 ...`, `^9` (the integer that starts an exponent). */
const POWER_EXPONENT = /\^\s*\{?[\s(]*[+-]?[\s(]*(\d+)/g;

/**
 * Why an answer is over budget, or `null` when it is within it: its length (`maxLength`), its
 * bracket nesting (`maxDepth`), a run of more than `maxDigits` digits, or a literal exponent
 * beyond `maxExponent` (`1e…`, `^{…}`). Linear in the length of the text; run it before anything
 * else reads the answer.
 *
 * @example Usage
 * ```ts
 * import { budgetRefusal } from "@rlvr/rewards/math";
 * import assert from "node:assert/strict";
 * assert.equal(budgetRefusal("\\frac{1}{2}"), null);
 * assert.match(budgetRefusal("1e999999")!, /an exponent 999999, beyond maxExponent/);
 * assert.match(budgetRefusal("\\frac{1}{".repeat(60) + "2" + "}".repeat(60))!, /maxDepth/);
 * ```
 */
export function budgetRefusal(answer: string, budget: MathBudget = {}): string | null {
  const b = resolveBudget(budget);
  if (answer.length > b.maxLength) {
    return `${answer.length} characters, more than maxLength (${b.maxLength})`;
  }
  const depth = nestingDepth(answer);
  if (depth > b.maxDepth) {
    return `brackets nested ${depth} deep, more than maxDepth (${b.maxDepth})`;
  }
  const digits = longestDigitRun(answer);
  if (digits > b.maxDigits) {
    return `a number of ${digits} digits, more than maxDigits (${b.maxDigits})`;
  }
  for (const re of [SCI_EXPONENT, POWER_EXPONENT]) {
    for (const m of answer.matchAll(re)) {
      const e = m.at(-1)!;
      if (e.length > 15 || Number(e) > b.maxExponent) {
        const what = e.length > 15 ? `of ${e.length} digits` : e;
        return `an exponent ${what}, beyond maxExponent (${b.maxExponent})`;
      }
    }
  }
  return null;
}

/** What the size estimate knows about one MathJSON node. */
interface Size {
  /** Upper bound on the decimal digits of its exact value (numerator and denominator). */
  digits: number;
  /** Its value as a double, when it is a constant that a double can hold. */
  value?: number;
  /** Whether it depends on a free variable (then the CAS never computes it exactly). */
  free: boolean;
}

/** Refusal raised inside the estimate, caught by {@linkcode valueSizeRefusal}. */
class OverBudget extends Error {}

const CONSTANTS: Record<string, number> = {
  Pi: Math.PI,
  ExponentialE: Math.E,
  e: Math.E,
  Half: 0.5,
  GoldenRatio: (1 + Math.sqrt(5)) / 2,
  EulerGamma: 0.5772156649015329,
};

const INFINITE_SYMBOLS = new Set([
  "PositiveInfinity",
  "NegativeInfinity",
  "ComplexInfinity",
  "NaN",
]);

/** Elementary functions whose value on a constant is worth knowing (for an exponent). */
const FUNCTIONS: Record<string, (...x: number[]) => number> = {
  Sqrt: Math.sqrt,
  Abs: Math.abs,
  Floor: Math.floor,
  Ceil: Math.ceil,
  Round: Math.round,
  Exp: Math.exp,
  Ln: Math.log,
  Log: (x, b) => (b === undefined ? Math.log10(x) : Math.log(x) / Math.log(b)),
  Lb: Math.log2,
  Lg: Math.log10,
  Sin: Math.sin,
  Cos: Math.cos,
  Tan: Math.tan,
  Arctan: Math.atan,
};

/** Digits of a number literal: integer digits, fraction digits and the size of the exponent. */
function literalDigits(text: string, budget: Required<MathBudget>): number {
  const m = /^[+-]?(\d*)\.?(\d*)(?:e([+-]?\d+))?/i.exec(text.trim());
  if (!m) return text.length;
  const exp = m[3] ? Math.abs(Number(m[3])) : 0;
  if (exp > budget.maxExponent) {
    throw new OverBudget(`an exponent ${exp}, beyond maxExponent (${budget.maxExponent})`);
  }
  return Math.max(1, m[1]!.replace(/^0+/, "").length + m[2]!.length + exp);
}

/** Digits of `n!` for a non-negative `n` (Stirling, rounded up). */
function factorialDigits(n: number): number {
  return n < 2 ? 1 : Math.ceil(n * Math.log10(n) - n / Math.LN10 + 2 * Math.log10(n + 1)) + 1;
}

function combine(xs: readonly Size[], digits: number, value?: number): Size {
  const free = xs.some((x) => x.free);
  return value === undefined || free || !Number.isFinite(value)
    ? { digits, free }
    : { digits, free, value };
}

function sum(xs: readonly Size[]): number {
  return xs.reduce((a, x) => a + x.digits, 0);
}

/**
 * Walks the (non-canonical) MathJSON tree. `bound` maps the index variable of an enclosing
 * `Sum`/`Product` to the largest value it takes.
 */
function estimate(
  json: unknown,
  budget: Required<MathBudget>,
  bound: ReadonlyMap<string, Size>,
  depth: number,
): Size {
  if (depth > 4 * budget.maxDepth + 64) {
    throw new OverBudget(`expression nested more than ${4 * budget.maxDepth + 64} deep`);
  }
  const size = estimateNode(json, budget, bound, depth);
  if (size.digits > budget.maxDigits) {
    const d = Number.isFinite(size.digits)
      ? `about ${Math.round(size.digits)}`
      : "unboundedly many";
    throw new OverBudget(`a value of ${d} digits, more than maxDigits (${budget.maxDigits})`);
  }
  return size;
}

function estimateNode(
  json: unknown,
  budget: Required<MathBudget>,
  bound: ReadonlyMap<string, Size>,
  depth: number,
): Size {
  const sub = (x: unknown, b = bound) => estimate(x, budget, b, depth + 1);
  if (typeof json === "number") {
    if (!Number.isFinite(json)) return { digits: 1, free: false };
    return { digits: literalDigits(String(Math.abs(json)), budget), value: json, free: false };
  }
  if (typeof json === "string") {
    const b = bound.get(json);
    if (b) return b;
    if (json in CONSTANTS) return { digits: 1, value: CONSTANTS[json]!, free: false };
    if (INFINITE_SYMBOLS.has(json) || /^'.*'$/.test(json)) return { digits: 1, free: false };
    return { digits: 1, free: true };
  }
  if (json === null || typeof json !== "object") return { digits: 1, free: false };
  if (!Array.isArray(json)) {
    const o = json as { num?: unknown; sym?: unknown; fn?: unknown };
    if (typeof o.num === "string") {
      const v = Number(o.num.replace(/n$/, ""));
      const digits = literalDigits(o.num.replace(/n$/, ""), budget);
      return Number.isFinite(v) ? { digits, value: v, free: false } : { digits, free: false };
    }
    if (typeof o.sym === "string") return sub(o.sym);
    if (Array.isArray(o.fn)) return sub(o.fn);
    return { digits: 1, free: false };
  }
  const [head, ...args] = json as unknown[];
  if (typeof head !== "string") return combine(args.map((a) => sub(a)), 1 + args.length);
  switch (head) {
    case "Delimiter":
    case "Negate":
    case "Hold": {
      const xs = args.map((a) => sub(a));
      const v = xs.length === 1 ? xs[0]!.value : undefined;
      return combine(xs, Math.max(1, sum(xs)), v === undefined ? v : head === "Negate" ? -v : v);
    }
    case "Add":
    case "Subtract": {
      const xs = args.map((a) => sub(a));
      const vs = xs.map((x) => x.value);
      const v = vs.some((x) => x === undefined)
        ? undefined
        : head === "Add"
        ? vs.reduce((a, x) => a! + x!, 0)
        : vs.slice(1).reduce((a, x) => a! - x!, vs[0]!);
      return combine(xs, sum(xs) + 1, v);
    }
    case "Multiply":
    case "InvisibleOperator":
    case "Divide":
    case "Rational": {
      const xs = args.map((a) => sub(a));
      const vs = xs.map((x) => x.value);
      const v = vs.some((x) => x === undefined)
        ? undefined
        : head === "Divide" || head === "Rational"
        ? vs.slice(1).reduce((a, x) => a! / x!, vs[0]!)
        : vs.reduce((a, x) => a! * x!, 1);
      return combine(xs, sum(xs), v);
    }
    case "Power":
    case "Root": {
      const [base, exp] = [sub(args[0]), sub(args[1])];
      if (exp.free) return combine([base, exp], base.digits + exp.digits);
      if (exp.value === undefined) {
        throw new OverBudget("an exponent too large to bound");
      }
      const n = head === "Root" ? 1 / exp.value : exp.value;
      if (Math.abs(n) > budget.maxExponent) {
        throw new OverBudget(
          `an exponent ${Math.abs(n) > 1e15 ? Math.abs(n).toPrecision(3) : Math.abs(n)}, beyond ` +
            `maxExponent (${budget.maxExponent})`,
        );
      }
      const v = base.value === undefined ? undefined : Math.pow(base.value, n);
      const k = Math.max(1, Math.ceil(Math.abs(n)));
      // A free base is never expanded by the engine (spot checks evaluate it in floating point,
      // the exact test bounds its own values); an integer base has k·log10|b| digits; anything
      // else (a fraction, an irrational) counts its digits k times.
      const digits = base.free
        ? base.digits + String(k).length
        : base.value !== undefined && Number.isInteger(base.value) && Math.abs(base.value) >= 1
        ? Math.ceil(k * Math.log10(Math.abs(base.value))) + 1
        : base.digits * k;
      return combine([base, exp], digits, v);
    }
    case "Square":
    case "Cube": {
      const x = sub(args[0]);
      const k = head === "Square" ? 2 : 3;
      return combine([x], x.digits * k, x.value === undefined ? undefined : x.value ** k);
    }
    case "Factorial":
    case "Factorial2":
    case "Gamma": {
      const x = sub(args[0]);
      if (x.free) return x;
      if (x.value === undefined) throw new OverBudget(`${head} of a value too large to bound`);
      const n = Math.max(0, Math.ceil(x.value));
      let v: number | undefined = 1;
      for (let k = 2; k <= n && v < 1e300; k++) v *= k;
      return combine([x], x.digits + factorialDigits(n), n <= 170 ? v : undefined);
    }
    case "Binomial": {
      const xs = args.map((a) => sub(a));
      if (xs.some((x) => x.free)) return combine(xs, sum(xs));
      const n = xs[0]?.value;
      if (n === undefined) throw new OverBudget("a binomial of a value too large to bound");
      return combine(xs, sum(xs) + Math.ceil(Math.abs(n) * Math.LOG10E * Math.LN2) + 1);
    }
    case "Sum":
    case "Product":
      return loop(head, args, sub, budget, bound);
  }
  const xs = args.map((a) => sub(a));
  const f = FUNCTIONS[head];
  const vs = xs.map((x) => x.value);
  const v = f && vs.every((x) => x !== undefined) ? f(...(vs as number[])) : undefined;
  return combine(xs, Math.max(1, sum(xs)), v);
}

/** `["Sum", body, ["Tuple" | "Limits", i, lo, hi], …]`: the body at the largest index, times. */
function loop(
  head: "Sum" | "Product",
  args: readonly unknown[],
  sub: (x: unknown, b?: ReadonlyMap<string, Size>) => Size,
  budget: Required<MathBudget>,
  bound: ReadonlyMap<string, Size>,
): Size {
  const inner = new Map(bound);
  let count = 1;
  let limits = 0;
  let free = false;
  for (const lim of args.slice(1)) {
    if (!Array.isArray(lim) || lim.length < 2) continue;
    const [, index, lo, hi] = lim as unknown[];
    const l = lo === undefined ? { digits: 1, value: 1, free: false } : sub(lo);
    const h = hi === undefined ? { digits: 1, free: true } : sub(hi);
    limits += l.digits + h.digits;
    if (l.free || h.free) free = true;
    else if (l.value === undefined || h.value === undefined) {
      throw new OverBudget(`${head.toLowerCase()} limits too large to bound`);
    } else {
      count *= Math.max(0, Math.floor(h.value) - Math.ceil(l.value) + 1);
      const top = Math.max(Math.abs(l.value), Math.abs(h.value));
      if (typeof index === "string") {
        inner.set(index, { digits: Math.max(l.digits, h.digits), value: top, free: false });
      }
    }
  }
  const body = sub(args[0], inner);
  if (free || body.free) return { digits: body.digits + limits, free: true };
  const digits = head === "Sum"
    ? body.digits + Math.ceil(Math.log10(count + 1)) + limits
    : body.digits * Math.max(1, count) + limits;
  if (digits > budget.maxDigits) {
    throw new OverBudget(
      `a ${head.toLowerCase()} of about ${Math.round(digits)} digits, more than maxDigits ` +
        `(${budget.maxDigits})`,
    );
  }
  return { digits, free: false };
}

/**
 * Why computing a parsed expression exactly could exceed the budget, or `null`: bounds the
 * digits of every intermediate value of a MathJSON tree (as the CAS parses it before
 * canonicalisation) and refuses a value over `maxDigits` digits, an exponent over `maxExponent`,
 * or a constant it cannot bound. Free variables count as one digit, and so does raising them to
 * a power (within `maxExponent`): the CAS never expands them exactly (spot checks evaluate them in
 * floating point, and the exact test of `identity.ts` bounds its own values as it goes).
 *
 * @example Usage
 * ```ts
 * import { valueSizeRefusal } from "@rlvr/rewards/math";
 * import assert from "node:assert/strict";
 * assert.equal(valueSizeRefusal(["Power", ["Add", "x", 1], 1000]), null);
 * assert.match(valueSizeRefusal(["Power", 2, ["Power", 2, ["Power", 2, 5]]])!, /maxExponent/);
 * assert.match(valueSizeRefusal(["Factorial", 9999])!, /digits, more than maxDigits/);
 * ```
 */
export function valueSizeRefusal(json: unknown, budget: MathBudget = {}): string | null {
  try {
    estimate(json, resolveBudget(budget), new Map(), 0);
    return null;
  } catch (err) {
    if (err instanceof OverBudget) return err.message;
    if (err instanceof RangeError) return "expression too deeply nested to bound";
    throw err;
  }
}
