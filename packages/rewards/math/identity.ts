/**
 * Exact identity test of rational functions: both sides, as MathJSON built from `+`, `−`, `×`,
 * `÷`, integer powers, rational literals and free variables, are evaluated exactly at random
 * points, in arithmetic modulo random 61-bit primes.
 *
 * Design decision: floating-point spot checks fail on high degrees in both directions:
 * `(x+1)^{1000} − (1+x)^{999}(x+1)` overflows to `∞ − ∞` at `x = 4.6`, and `x^2 + 10^{-15}` passes
 * for `x^2` at a relative tolerance. Exact values settle both, and working modulo a prime keeps
 * every number below 2^61 whatever the degree (exact rationals at a point of `(x+1)^{10000}` have
 * a hundred thousand digits):
 * - "different" is certain: reduction modulo `p` is a ring homomorphism, so values that differ
 *   modulo `p` (with every denominator invertible) differ as rationals at that integer point.
 * - "equal" is probabilistic with a reported bound: a non-zero numerator of degree `D` vanishes
 *   at a random point modulo `p` with probability at most `D / p` (Schwartz–Zippel), and every
 *   point uses a new prime drawn at random among the ~2^55 primes of `[2^60, 2^61)`, so no fixed
 *   prime can divide the difference's coefficients by design.
 *
 * The points and primes come from a seed mixed with the two expressions, so an answer cannot be
 * written around them, and the verdict is deterministic. The test applies only to rational
 * functions (anything else, `\sqrt`, `\pi`, functions, returns `null`: the caller falls back to
 * floating point); exponents beyond `maxExponent` are refused, and the deadline is checked at
 * every node.
 *
 * @module
 */

import { mulberry32 } from "@rlvr/common";
import { DEFAULT_BUDGET } from "./budget.ts";
import type { Verdict } from "./cas.ts";
import { rationalFromMathJson } from "./rational.ts";

/** Options of {@linkcode exactIdentity}. */
export interface IdentityOptions {
  /** Points (each with its own prime) that must agree (default `4`). */
  points?: number;
  /** Seed of the points and primes, mixed with the expressions (default `20250101`). */
  seed?: number;
  /** Largest integer exponent evaluated (default `maxExponent` of the budget, `10_000`). */
  maxExponent?: number;
  /** `performance.now()` after which the test stops and reports "not equal" (default none). */
  deadline?: number;
}

/** Why an evaluation stopped. */
class Stop extends Error {
  constructor(readonly kind: "unsupported" | "undefined" | "time", message: string) {
    super(message);
  }
}

/** Miller–Rabin witnesses that decide primality exactly below 3.3e24 (so for all of `[2^60, 2^61)`). */
const WITNESSES = [2n, 3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n];
const SMALL_PRIMES = [3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n, 41n, 43n, 47n];

function powMod(base: bigint, exp: bigint, p: bigint): bigint {
  let result = 1n;
  let b = base % p;
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % p;
    b = (b * b) % p;
    e >>= 1n;
  }
  return result;
}

function isPrime(n: bigint): boolean {
  if (n % 2n === 0n) return n === 2n;
  for (const q of SMALL_PRIMES) if (n % q === 0n) return n === q;
  let d = n - 1n;
  let s = 0;
  while ((d & 1n) === 0n) {
    d >>= 1n;
    s++;
  }
  for (const a of WITNESSES) {
    let x = powMod(a, d, n);
    if (x === 1n || x === n - 1n) continue;
    let composite = true;
    for (let r = 1; r < s && composite; r++) {
      x = (x * x) % n;
      if (x === n - 1n) composite = false;
    }
    if (composite) return false;
  }
  return true;
}

/** A uniform integer of `bits ≤ 64` bits from a generator of 32-bit fractions. */
function randomBits(next: () => number, bits: number): bigint {
  let v = 0n;
  for (let left = bits; left > 0; left -= 32) {
    const take = Math.min(32, left);
    v = (v << BigInt(take)) | BigInt(Math.floor(next() * 2 ** 32) >>> (32 - take));
  }
  return v;
}

/** A random prime of `[2^60, 2^61)` (about one odd number in 21 there is prime). */
function randomPrime(next: () => number): bigint {
  for (;;) {
    const n = (1n << 60n) | randomBits(next, 60) | 1n;
    if (isPrime(n)) return n;
  }
}

const PRIME_BITS = 60; // p ≥ 2^60

function integerExponent(json: unknown): bigint | null {
  if (typeof json === "number") return Number.isInteger(json) ? BigInt(json) : null;
  if (Array.isArray(json) && json[0] === "Negate" && json.length === 2) {
    const v = integerExponent(json[1]);
    return v === null ? null : -v;
  }
  if (json !== null && typeof json === "object" && "num" in json) {
    const r = rationalFromMathJson(json);
    return r && r.value.den === 1n ? r.value.num : null;
  }
  return null;
}

/** Evaluation of a MathJSON tree at one point, modulo one prime. */
class ModEvaluator {
  constructor(
    readonly p: bigint,
    readonly point: ReadonlyMap<string, bigint>,
    readonly maxExponent: bigint,
    readonly deadline: number,
  ) {}

  mod(a: bigint): bigint {
    const r = a % this.p;
    return r < 0n ? r + this.p : r;
  }

  inverse(a: bigint): bigint {
    if (a === 0n) throw new Stop("undefined", "division by zero at this point");
    return powMod(a, this.p - 2n, this.p);
  }

  eval(json: unknown): bigint {
    if (performance.now() > this.deadline) throw new Stop("time", "time limit reached");
    if (typeof json === "string") {
      const v = this.point.get(json);
      if (v === undefined) throw new Stop("unsupported", `the constant ${json}`);
      return v;
    }
    if (!Array.isArray(json)) {
      const r = rationalFromMathJson(json);
      if (!r) throw new Stop("unsupported", "a literal that is not a finite rational");
      return this.mod(r.value.num * this.inverse(this.mod(r.value.den)));
    }
    const [head, ...args] = json as unknown[];
    switch (head) {
      case "Delimiter":
        if (args.length !== 1) break;
        return this.eval(args[0]);
      case "Negate":
        if (args.length !== 1) break;
        return this.mod(-this.eval(args[0]));
      case "Add":
        return args.reduce<bigint>((acc, x) => (acc + this.eval(x)) % this.p, 0n);
      case "Subtract":
        if (args.length !== 2) break;
        return this.mod(this.eval(args[0]) - this.eval(args[1]));
      case "Multiply":
        return args.reduce<bigint>((acc, x) => (acc * this.eval(x)) % this.p, 1n);
      case "Divide":
      case "Rational":
        if (args.length !== 2) break;
        return (this.eval(args[0]) * this.inverse(this.eval(args[1]))) % this.p;
      case "Square":
      case "Power": {
        const k = head === "Square" ? 2n : args.length === 2 ? integerExponent(args[1]) : null;
        if (k === null) break;
        if ((k < 0n ? -k : k) > this.maxExponent) {
          throw new Stop("unsupported", "an exponent beyond maxExponent");
        }
        const a = this.eval(args[0]);
        return k >= 0n ? powMod(a, k, this.p) : this.inverse(powMod(a, -k, this.p));
      }
    }
    throw new Stop("unsupported", `the operation ${String(head)}`);
  }
}

/** Degrees of numerator and denominator, as polynomials in the variables (an upper bound). */
interface Degree {
  p: number;
  q: number;
}

/** Degree bound of a supported tree (run after a successful evaluation, so the shape is known). */
function degree(json: unknown, vars: ReadonlySet<string>): Degree {
  if (typeof json === "string") return vars.has(json) ? { p: 1, q: 0 } : { p: 0, q: 0 };
  if (!Array.isArray(json)) return { p: 0, q: 0 };
  const [head, ...args] = json as unknown[];
  const ds = () => args.map((a) => degree(a, vars));
  switch (head) {
    case "Delimiter":
    case "Negate":
      return degree(args[0], vars);
    case "Add":
    case "Subtract": {
      const d = ds();
      const q = d.reduce((s, x) => s + x.q, 0);
      return { p: Math.max(0, ...d.map((x) => x.p + q - x.q)), q };
    }
    case "Multiply": {
      const d = ds();
      return { p: d.reduce((s, x) => s + x.p, 0), q: d.reduce((s, x) => s + x.q, 0) };
    }
    case "Divide":
    case "Rational": {
      const [a, b] = ds() as [Degree, Degree];
      return { p: a.p + b.q, q: a.q + b.p };
    }
    case "Square":
    case "Power": {
      const k = Number(head === "Square" ? 2n : integerExponent(args[1]) ?? 0n);
      const a = degree(args[0], vars);
      return k >= 0 ? { p: a.p * k, q: a.q * k } : { p: -k * a.q, q: -k * a.p };
    }
  }
  return { p: 0, q: 0 };
}

/** FNV-1a of a string, for mixing the expressions into the seed. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function fmtPoint(p: ReadonlyMap<string, bigint>): string {
  return [...p].map(([k, v]) => `${k}=${v}`).join(", ");
}

/**
 * Decides exactly whether two rational functions of `variables` are identical, from their
 * MathJSON: "different" when their values differ at a random integer point (certain), "equal" when
 * they agree at `points` random points, each modulo its own random 61-bit prime (the reported
 * chance that different functions agree there is at most `(D / 2^60)^points` for numerator degree
 * `D`). Returns `null` when it does not apply: an operation other than `+ − × ÷` and integer
 * powers, a constant such as `π`, or too many points where a side is undefined.
 *
 * @example Usage
 * ```ts
 * import { exactIdentity } from "@rlvr/rewards/math";
 * import assert from "node:assert/strict";
 * const x1 = ["Add", "x", 1];
 * const a = ["Add", ["Power", x1, 1000], ["Negate", ["Multiply", x1, ["Power", x1, 999]]]];
 * assert.equal(exactIdentity(a, 0, ["x"])?.equal, true);
 * const b = ["Add", ["Power", "x", 2], ["Power", 10, -15]];
 * assert.equal(exactIdentity(["Power", "x", 2], b, ["x"])?.equal, false);
 * assert.equal(exactIdentity(["Sqrt", "x"], "x", ["x"]), null);
 * ```
 */
export function exactIdentity(
  a: unknown,
  b: unknown,
  variables: readonly string[],
  options: IdentityOptions = {},
): Verdict | null {
  const want = Math.max(1, options.points ?? 4);
  const deadline = options.deadline ?? Infinity;
  const maxExponent = BigInt(options.maxExponent ?? DEFAULT_BUDGET.maxExponent);
  const [ja, jb] = [JSON.stringify(a), JSON.stringify(b)].sort();
  const next = mulberry32(((options.seed ?? 20250101) ^ fnv1a(`${ja}\u0000${jb}`)) >>> 0);
  let agreed = 0;
  for (let attempt = 0; attempt < want * 3 && agreed < want; attempt++) {
    if (performance.now() > deadline) return { equal: false, reason: "time limit reached" };
    const p = randomPrime(next);
    const point = new Map<string, bigint>();
    for (const v of variables) point.set(v, randomBits(next, 64) % p);
    const ev = new ModEvaluator(p, point, maxExponent, deadline);
    let x: bigint;
    let y: bigint;
    try {
      x = ev.eval(a);
      y = ev.eval(b);
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
      if (err.kind === "undefined") continue;
      if (err.kind === "time") return { equal: false, reason: "time limit reached" };
      return null;
    }
    if (x !== y) {
      return {
        equal: false,
        reason: `exact values differ at ${fmtPoint(point)} (computed modulo the prime ${p})`,
      };
    }
    agreed++;
  }
  if (agreed < want) return null;
  const vars = new Set(variables);
  const da = degree(a, vars);
  const db = degree(b, vars);
  // a − b has numerator degree at most max(pa + qb, pb + qa); a point counts only where neither
  // denominator vanishes, which conditions the draw on an event of probability ≥ 1 − (qa+qb)/p.
  const num = Math.max(da.p + db.q, db.p + da.q, 1);
  const den = da.q + db.q;
  const perPoint = Math.min(
    1,
    (num / 2 ** PRIME_BITS) / Math.max(1e-300, 1 - den / 2 ** PRIME_BITS),
  );
  const bound = Math.pow(perPoint, want);
  return {
    equal: true,
    reason: `exact values agree at ${want} random points, each modulo a random 61-bit prime ` +
      `(numerator degree ≤ ${num}; chance of a coincidence ≤ ${bound.toExponential(1)})`,
  };
}
