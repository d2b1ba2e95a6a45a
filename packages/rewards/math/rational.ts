/**
 * Exact rational numbers on `BigInt` and a parser for numeric literals as they appear in answers
 * (`-12`, `3.50`, `.5`, `1,000` after normalisation, `\frac{3}{4}`, `-7/2`, `3\frac{1}{2}`, `1e3`,
 * `1.5\times10^{3}`, `10^{-2}`, `\infty`).
 *
 * Design decision: a literal is compared as an exact fraction first, so `0.5`, `\frac{1}{2}` and
 * `2/4` are equal with no tolerance at all and two integers that differ by one are never "close",
 * however large they are. A literal remembers whether it was written with a decimal point; only
 * then may a tolerance apply (the rounding of a written decimal is what a tolerance is for).
 *
 * @module
 */

import { DEFAULT_BUDGET } from "./budget.ts";

/** An exact fraction `num/den` in lowest terms with `den > 0`. */
export interface Rational {
  /** Numerator (carries the sign). */
  readonly num: bigint;
  /** Denominator, always positive. */
  readonly den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  if (b < 0n) b = -b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/**
 * Builds a rational in lowest terms; throws on a zero denominator.
 *
 * @example Usage
 * ```ts
 * import { rational } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(rational(6n, -4n), { num: -3n, den: 2n });
 * ```
 */
export function rational(num: bigint, den: bigint = 1n): Rational {
  if (den === 0n) throw new RangeError("rational: zero denominator");
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const g = gcd(num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

/**
 * Exact equality of two rationals.
 *
 * @example Usage
 * ```ts
 * import { rational, rationalEquals } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(rationalEquals(rational(1n, 2n), rational(2n, 4n)));
 * ```
 */
export function rationalEquals(a: Rational, b: Rational): boolean {
  return a.num === b.num && a.den === b.den;
}

/**
 * The nearest double to a rational, also for numerators and denominators beyond `2^1024`.
 *
 * @example Usage
 * ```ts
 * import { rational, rationalToNumber } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(rationalToNumber(rational(1n, 4n)), 0.25);
 * assert.equal(rationalToNumber(rational(10n ** 400n, 10n ** 399n)), 10);
 * ```
 */
export function rationalToNumber(r: Rational): number {
  const n = Number(r.num);
  const d = Number(r.den);
  if (Number.isFinite(n) && Number.isFinite(d)) return n / d;
  // Divide with BigInt at ~20 significant digits and let the number parser round once.
  const neg = r.num < 0n;
  const a = neg ? -r.num : r.num;
  if (a === 0n) return 0;
  const k = 20 - (a.toString().length - r.den.toString().length);
  const q = k >= 0 ? (a * 10n ** BigInt(k)) / r.den : a / (r.den * 10n ** BigInt(-k));
  const v = Number(`${q}e${-k}`);
  return neg ? -v : v;
}

/** `|x|` of a rational. */
function absRational(x: Rational): Rational {
  return x.num < 0n ? { num: -x.num, den: x.den } : x;
}

/** `a ≤ b`, by cross-multiplication (denominators are positive). */
function lessOrEqual(a: Rational, b: Rational): boolean {
  return a.num * b.den <= b.num * a.den;
}

/**
 * Whether `|a − b| ≤ rel·max(|a|, |b|)` and `|a − b| ≤ abs`, computed exactly (so neither side can
 * overflow to infinity or underflow to zero and pass: `1.0e-400` and `2.0e-400` are not close).
 * A tolerance is read as the decimal it prints as (`1e-6` is exactly 10^-6, so both bounds are
 * inclusive); `Infinity` imposes nothing; `NaN`, zero or a negative one accepts only equality.
 *
 * @example Usage
 * ```ts
 * import { rational, rationalsClose } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(rationalsClose(rational(1000001n, 1000000n), rational(1n), 1e-6, 1e-6));
 * assert.ok(!rationalsClose(rational(1n, 10n ** 400n), rational(2n, 10n ** 400n), 1e-6, 1e-6));
 * ```
 */
export function rationalsClose(a: Rational, b: Rational, rel: number, abs: number): boolean {
  const diff = absRational({ num: a.num * b.den - b.num * a.den, den: a.den * b.den });
  if (diff.num === 0n) return true;
  const bound = (tol: number, scale: Rational): Rational | null => {
    if (tol === Infinity) return null;
    // A tolerance means the decimal it prints as: `1e-6` is 10^-6, not the double just below it.
    const t = (Number.isFinite(tol) && tol > 0 ? fromNumString(String(tol), true)?.value : null) ??
      rational(0n);
    return { num: t.num * scale.num, den: t.den * scale.den };
  };
  const aa = absRational(a);
  const bb = absRational(b);
  const larger = lessOrEqual(aa, bb) ? bb : aa;
  const relBound = bound(rel, larger);
  const absBound = bound(abs, rational(1n));
  return (relBound === null || lessOrEqual(diff, relBound)) &&
    (absBound === null || lessOrEqual(diff, absBound));
}

/** A parsed numeric literal: a finite exact value, or a signed infinity. */
export type NumberLiteral =
  | {
    /** Finite literal. */
    readonly kind: "finite";
    /** Its exact value. */
    readonly value: Rational;
    /** Written with a decimal point (so a tolerance may apply when it is not exactly equal). */
    readonly decimal: boolean;
  }
  | {
    /** `\infty`, `-\infty`. */
    readonly kind: "infinity";
    /** `1` or `-1`. */
    readonly sign: 1 | -1;
  };

const DEC = String.raw`(?:\d+\.?\d*|\.\d+)`;
const SDEC = String.raw`[+-]?${DEC}`;
const reDecimal = new RegExp(`^${DEC}$`);
const reSci = new RegExp(`^(${DEC})[eE]([+-]?\\d+)$`);
const reTimesTen = new RegExp(
  String.raw`^(${DEC})\s*(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*(?:\{\s*([+-]?\d+)\s*\}|(\d))$`,
);
const rePowTen = /^10\s*\^\s*(?:\{\s*([+-]?\d+)\s*\}|(\d))$/;
const reFrac = new RegExp(String.raw`^\\frac\s*\{\s*(${SDEC})\s*\}\s*\{\s*(${SDEC})\s*\}$`);
const reSlash = new RegExp(String.raw`^(${DEC})\s*/\s*(${SDEC})$`);
const reMixedFrac = /^(\d+)\s*\\frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}$/;
const reMixedSlash = /^(\d+)\s+(\d+)\s*\/\s*(\d+)$/;
const reInfinity = /^(?:\\infty|\\infinity|infinity|inf|∞)$/i;

/** Exact value of an unsigned or signed decimal string such as `-12.50` or `.5`. */
function decimalValue(s: string): Rational {
  let sign = 1n;
  if (s.startsWith("-")) {
    sign = -1n;
    s = s.slice(1);
  } else if (s.startsWith("+")) s = s.slice(1);
  const dot = s.indexOf(".");
  if (dot < 0) return rational(sign * BigInt(s));
  const int = s.slice(0, dot) || "0";
  const frac = s.slice(dot + 1);
  const den = 10n ** BigInt(frac.length);
  return rational(sign * (BigInt(int) * den + BigInt(frac || "0")), den);
}

function pow10(e: number): Rational {
  return e >= 0 ? rational(10n ** BigInt(e)) : rational(1n, 10n ** BigInt(-e));
}

function mul(a: Rational, b: Rational): Rational {
  return rational(a.num * b.num, a.den * b.den);
}

function div(a: Rational, b: Rational): Rational | null {
  return b.num === 0n ? null : rational(a.num * b.den, a.den * b.num);
}

/**
 * Exponents beyond this are not expanded; the answer budget refuses them before they get here
 * (`maxExponent`), so a literal `1e100000` reaches neither the CAS nor `BigInt`.
 */
const MAX_EXPONENT = DEFAULT_BUDGET.maxExponent;

/**
 * Parses a numeric literal (after {@linkcode normalizeLatex}): integers, decimals, fractions
 * `\frac{a}{b}` and `a/b` with literal parts, mixed numbers `3\frac{1}{2}` and `3 1/2`,
 * scientific notation `1e3`, `1.5\times10^{3}`, `10^{-2}`, and `\infty`. Returns `null` for
 * anything else (including a zero denominator).
 *
 * @example Usage
 * ```ts
 * import { parseNumber, rational } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseNumber("-\\frac{6}{4}"), {
 *   kind: "finite",
 *   value: rational(-3n, 2n),
 *   decimal: false,
 * });
 * assert.deepEqual(parseNumber("2.50"), { kind: "finite", value: rational(5n, 2n), decimal: true });
 * assert.equal(parseNumber("2x"), null);
 * ```
 */
export function parseNumber(input: string): NumberLiteral | null {
  let s = input.trim();
  let sign = 1n;
  // A leading sign (possibly spaced, possibly wrapped in one pair of parentheses).
  const paren = /^\(\s*([^()]*)\s*\)$/.exec(s);
  if (paren) s = paren[1]!.trim();
  if (s.startsWith("-")) {
    sign = -1n;
    s = s.slice(1).trim();
  } else if (s.startsWith("+")) s = s.slice(1).trim();
  if (s === "") return null;
  const finite = (v: Rational | null, decimal: boolean): NumberLiteral | null =>
    v === null ? null : { kind: "finite", value: rational(sign * v.num, v.den), decimal };
  if (reInfinity.test(s)) return { kind: "infinity", sign: sign < 0n ? -1 : 1 };
  if (reDecimal.test(s)) return finite(decimalValue(s), s.includes("."));
  let m = reSci.exec(s);
  if (m) {
    const e = Number(m[2]);
    if (Math.abs(e) > MAX_EXPONENT) return null;
    return finite(mul(decimalValue(m[1]!), pow10(e)), m[1]!.includes("."));
  }
  m = reTimesTen.exec(s);
  if (m) {
    const e = Number(m[2] ?? m[3]);
    if (Math.abs(e) > MAX_EXPONENT) return null;
    return finite(mul(decimalValue(m[1]!), pow10(e)), m[1]!.includes("."));
  }
  m = rePowTen.exec(s);
  if (m) {
    const e = Number(m[1] ?? m[2]);
    if (Math.abs(e) > MAX_EXPONENT) return null;
    return finite(pow10(e), false);
  }
  m = reFrac.exec(s) ?? reSlash.exec(s);
  if (m) {
    return finite(
      div(decimalValue(m[1]!), decimalValue(m[2]!)),
      m[1]!.includes(".") || m[2]!.includes("."),
    );
  }
  m = reMixedFrac.exec(s) ?? reMixedSlash.exec(s);
  if (m) {
    const whole = rational(BigInt(m[1]!));
    const frac = div(rational(BigInt(m[2]!)), rational(BigInt(m[3]!)));
    if (frac === null) return null;
    return finite(rational(whole.num * frac.den + frac.num, frac.den), false);
  }
  return null;
}

/**
 * Reads an exact number out of a MathJSON value (`3`, `{ num: "1e+30" }`, `["Rational", 1, 3]`,
 * `["Negate", …]`); `null` for anything that is not a finite real literal. Used to compare CAS
 * results exactly when both sides evaluate to rationals.
 *
 * @example Usage
 * ```ts
 * import { rational, rationalFromMathJson } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(rationalFromMathJson(["Rational", { num: "1e+30" }, 3]), {
 *   value: rational(10n ** 30n, 3n),
 *   decimal: false,
 * });
 * ```
 */
export function rationalFromMathJson(
  json: unknown,
): { value: Rational; decimal: boolean } | null {
  if (typeof json === "number") {
    if (!Number.isFinite(json)) return null;
    if (Number.isInteger(json) && Math.abs(json) <= Number.MAX_SAFE_INTEGER) {
      return { value: rational(BigInt(json)), decimal: false };
    }
    return fromNumString(String(json), true);
  }
  if (json !== null && typeof json === "object" && !Array.isArray(json)) {
    const num = (json as { num?: unknown }).num;
    return typeof num === "string" ? fromNumString(num, false) : null;
  }
  if (Array.isArray(json)) {
    const [head, a, b] = json;
    if (head === "Rational" && json.length === 3) {
      const x = rationalFromMathJson(a);
      const y = rationalFromMathJson(b);
      if (!x || !y) return null;
      const q = div(x.value, y.value);
      return q ? { value: q, decimal: x.decimal || y.decimal } : null;
    }
    if (head === "Negate" && json.length === 2) {
      const x = rationalFromMathJson(a);
      return x ? { value: rational(-x.value.num, x.value.den), decimal: x.decimal } : null;
    }
  }
  return null;
}

function fromNumString(
  s: string,
  fromDouble: boolean,
): { value: Rational; decimal: boolean } | null {
  const m = /^([+-]?)(\d+)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(s.trim().replace(/n$/, ""));
  if (!m) return null;
  const e = Number(m[4] ?? 0);
  if (Math.abs(e) > MAX_EXPONENT) return null;
  const frac = m[3] ?? "";
  const mant = decimalValue(`${m[1]}${m[2]}${frac ? "." + frac : ""}`);
  const value = mul(mant, pow10(e));
  // A double that is not a safe integer is inexact; a CAS decimal string is inexact when it has
  // non-zero digits after the point or a negative exponent leaves a fraction.
  const decimal = fromDouble || /[1-9]/.test(frac) || value.den !== 1n;
  return { value, decimal };
}
