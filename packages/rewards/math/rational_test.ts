import assert from "node:assert/strict";
import fc from "fast-check";
import {
  parseNumber,
  rational,
  rationalEquals,
  rationalFromMathJson,
  rationalsClose,
  rationalToNumber,
} from "./rational.ts";

Deno.test("rational: lowest terms, positive denominator, zero denominator throws", () => {
  assert.deepEqual(rational(6n, -4n), { num: -3n, den: 2n });
  assert.deepEqual(rational(0n, 5n), { num: 0n, den: 1n });
  assert.throws(() => rational(1n, 0n), /zero denominator/);
  fc.assert(
    fc.property(
      fc.bigInt(),
      fc.bigInt({ min: 1n, max: 10n ** 20n }),
      fc.bigInt({ min: 1n, max: 1000n }),
      (n, d, k) => {
        assert.ok(rationalEquals(rational(n, d), rational(n * k, d * k)));
      },
    ),
  );
});

Deno.test("rationalToNumber: exact for small values, finite for huge ones", () => {
  assert.equal(rationalToNumber(rational(-3n, 4n)), -0.75);
  assert.equal(rationalToNumber(rational(10n ** 400n + 1n, 10n ** 399n)), 10);
  assert.equal(rationalToNumber(rational(1n, 10n ** 400n)), 0);
});

Deno.test("parseNumber: integers, decimals, signs and parentheses", () => {
  const v = (s: string) => {
    const r = parseNumber(s);
    return r && r.kind === "finite" ? [r.value.num, r.value.den, r.decimal] : r;
  };
  assert.deepEqual(v("42"), [42n, 1n, false]);
  assert.deepEqual(v("-0.50"), [-1n, 2n, true]);
  assert.deepEqual(v(".25"), [1n, 4n, true]);
  assert.deepEqual(v("5."), [5n, 1n, true]);
  assert.deepEqual(v("+ 7"), [7n, 1n, false]);
  assert.deepEqual(v("(-3)"), [-3n, 1n, false]);
  assert.deepEqual(v("123456789012345678901234567890"), [
    123456789012345678901234567890n,
    1n,
    false,
  ]);
  assert.equal(parseNumber("1,000"), null); // thousands are joined by normalizeLatex, not here
  assert.equal(parseNumber("2x"), null);
  assert.equal(parseNumber(""), null);
  assert.equal(parseNumber("-"), null);
});

Deno.test("parseNumber: fractions, mixed numbers, scientific notation, infinity", () => {
  const v = (s: string) => {
    const r = parseNumber(s);
    return r && r.kind === "finite" ? [r.value.num, r.value.den, r.decimal] : r;
  };
  assert.deepEqual(v("\\frac{6}{8}"), [3n, 4n, false]);
  assert.deepEqual(v("-\\frac{1}{2}"), [-1n, 2n, false]);
  assert.deepEqual(v("\\frac{-1}{-2}"), [1n, 2n, false]);
  assert.deepEqual(v("\\frac{1.5}{3}"), [1n, 2n, true]);
  assert.deepEqual(v("7/2"), [7n, 2n, false]);
  assert.deepEqual(v("3\\frac{1}{2}"), [7n, 2n, false]);
  assert.deepEqual(v("3 1/2"), [7n, 2n, false]);
  assert.deepEqual(v("-2\\frac{1}{4}"), [-9n, 4n, false]);
  assert.equal(parseNumber("\\frac{1}{0}"), null);
  assert.deepEqual(v("1e3"), [1000n, 1n, false]);
  assert.deepEqual(v("2.5E-2"), [1n, 40n, true]);
  assert.deepEqual(v("1.5\\times10^{3}"), [1500n, 1n, true]);
  assert.deepEqual(v("2 \\cdot 10^{-4}"), [1n, 5000n, false]);
  assert.deepEqual(v("10^{-3}"), [1n, 1000n, false]);
  assert.deepEqual(v("10^3"), [1000n, 1n, false]);
  assert.equal(parseNumber("1e999999"), null);
  assert.deepEqual(parseNumber("\\infty"), { kind: "infinity", sign: 1 });
  assert.deepEqual(parseNumber("-\\infty"), { kind: "infinity", sign: -1 });
});

Deno.test("parseNumber: a decimal string of any integer round-trips", () => {
  fc.assert(fc.property(fc.bigInt(), fc.nat({ max: 12 }), (n, places) => {
    const s = (n < 0n ? "-" : "") + (n < 0n ? -n : n).toString() +
      (places ? "." + "0".repeat(places) : "");
    const r = parseNumber(s);
    assert.ok(r && r.kind === "finite");
    assert.ok(rationalEquals(r.value, rational(n)));
    assert.equal(r.decimal, places > 0);
  }));
});

Deno.test("rationalFromMathJson: numbers, big numbers, rationals, negation; null otherwise", () => {
  assert.deepEqual(rationalFromMathJson(3), { value: rational(3n), decimal: false });
  assert.deepEqual(rationalFromMathJson(0.5), { value: rational(1n, 2n), decimal: true });
  assert.deepEqual(rationalFromMathJson({ num: "1267650600228229401496703205376" }), {
    value: rational(2n ** 100n),
    decimal: false,
  });
  assert.deepEqual(rationalFromMathJson({ num: "1e+30" }), {
    value: rational(10n ** 30n),
    decimal: false,
  });
  assert.deepEqual(rationalFromMathJson({ num: "0.25" }), {
    value: rational(1n, 4n),
    decimal: true,
  });
  assert.deepEqual(rationalFromMathJson(["Rational", -3, 4]), {
    value: rational(-3n, 4n),
    decimal: false,
  });
  assert.deepEqual(rationalFromMathJson(["Negate", 2]), { value: rational(-2n), decimal: false });
  assert.equal(rationalFromMathJson(["Sqrt", 2]), null);
  assert.equal(rationalFromMathJson("Pi"), null);
  assert.equal(rationalFromMathJson(Infinity), null);
  assert.equal(rationalFromMathJson({ num: "NaN" }), null);
});

Deno.test("rationalsClose: exact, inclusive, no overflow or underflow", () => {
  const r = (n: bigint, d = 1n) => rational(n, d);
  assert.ok(rationalsClose(r(1000001n, 1000000n), r(1n), 1e-6, 1e-6)); // exactly on both bounds
  assert.ok(!rationalsClose(r(1000002n, 1000000n), r(1n), 1e-6, 1e-6));
  assert.ok(!rationalsClose(r(1n, 10n ** 400n), r(2n, 10n ** 400n), 1e-6, 1e-6)); // doubles: 0, 0
  assert.ok(!rationalsClose(r(10n ** 400n), r(10n ** 400n + 1n), 1e-6, 1e-6)); // doubles: ∞, ∞
  assert.ok(rationalsClose(r(10n ** 400n), r(10n ** 400n + 1n), 1e-6, Infinity));
  assert.ok(rationalsClose(r(3n), r(3n), 0, 0));
  assert.ok(!rationalsClose(r(3n), r(4n), NaN, Infinity));
  assert.ok(!rationalsClose(r(3n), r(4n), -1, Infinity));
});

Deno.test("rationalsClose: property: symmetric, and agrees with doubles where they are exact", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(10n ** 9n), max: 10n ** 9n }),
      fc.bigInt({ min: -(10n ** 9n), max: 10n ** 9n }),
      fc.constantFrom(1e-6, 1e-3, 0.5),
      (a, b, tol) => {
        const x = rational(a, 1024n);
        const y = rational(b, 1024n);
        assert.equal(rationalsClose(x, y, tol, Infinity), rationalsClose(y, x, tol, Infinity));
        // Integers/1024 below 2^30 and dyadic tolerances are exact in doubles.
        const dx = Number(a) / 1024;
        const dy = Number(b) / 1024;
        if (tol === 0.5) {
          const d = Math.abs(dx - dy);
          assert.equal(
            rationalsClose(x, y, tol, tol),
            d <= tol * Math.max(Math.abs(dx), Math.abs(dy)) && d <= tol,
          );
        }
      },
    ),
  );
});
