import assert from "node:assert/strict";
import fc from "fast-check";
import { budgetRefusal, DEFAULT_BUDGET, resolveBudget, valueSizeRefusal } from "./budget.ts";

Deno.test("resolveBudget: defaults, overrides", () => {
  assert.deepEqual(resolveBudget(), { ...DEFAULT_BUDGET });
  assert.equal(resolveBudget({ maxExponent: 7 }).maxExponent, 7);
  assert.equal(resolveBudget({ maxExponent: 7 }).maxDigits, DEFAULT_BUDGET.maxDigits);
});

Deno.test("budgetRefusal: length, nesting, digits and literal exponents", () => {
  for (const ok of ["\\frac{1}{2}", "x^{2}+1", "1e300", "2^{10000}", "10^{-10000}", "[(1,2)]"]) {
    assert.equal(budgetRefusal(ok), null, ok);
  }
  assert.match(budgetRefusal("1".repeat(1001))!, /1001 characters, more than maxLength \(1000\)/);
  assert.equal(budgetRefusal("1".repeat(1001), { maxLength: 2000 }), null);
  assert.match(budgetRefusal("(".repeat(51) + ")".repeat(51))!, /nested 51 deep/);
  assert.equal(budgetRefusal("(".repeat(50) + ")".repeat(50)), null);
  assert.match(budgetRefusal("{[(".repeat(20))!, /nested 60 deep/); // unclosed counts as well
  assert.match(budgetRefusal("12345", { maxDigits: 4 })!, /a number of 5 digits/);
  assert.match(budgetRefusal("1e10001")!, /an exponent 10001, beyond maxExponent \(10000\)/);
  assert.match(budgetRefusal("2.5E-10001")!, /exponent 10001/);
  assert.match(budgetRefusal("x^{10001}")!, /exponent 10001/);
  assert.match(budgetRefusal("x^ { - ( 10001 ) }")!, /exponent 10001/);
  assert.match(budgetRefusal("1.5\\times 10^{10001}")!, /exponent 10001/);
  assert.match(budgetRefusal("x^{" + "9".repeat(40) + "}")!, /exponent of 40 digits/);
  assert.equal(budgetRefusal("x^{10001}", { maxExponent: 10001 }), null);
});

Deno.test("budgetRefusal: property: linear and total on arbitrary text", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), fc.nat({ max: 60 }), (s, depth) => {
      const r = budgetRefusal(s, { maxDepth: depth });
      assert.ok(r === null || typeof r === "string");
    }),
  );
  const huge = "{(".repeat(500_000) + "1e5^{3}".repeat(100_000);
  const t0 = performance.now();
  assert.match(budgetRefusal(huge, { maxLength: Infinity })!, /nested/);
  assert.ok(performance.now() - t0 < 1000);
});

Deno.test("valueSizeRefusal: towers, factorials, binomials, loops; free variables are cheap", () => {
  const ok = [
    ["Power", ["Add", "x", 1], 10000],
    ["Power", 10, 10000],
    ["Power", 2, ["Power", 2, 13]],
    ["Factorial", 1000],
    ["Binomial", 60000, 30000],
    ["Sum", ["Power", "n", 2], ["Tuple", "n", 1, 1000000]],
    ["Divide", 1, 0],
    ["Power", "x", ["Power", "y", 1000]],
    ["Sin", ["Power", 10, 9000]],
  ];
  for (const j of ok) assert.equal(valueSizeRefusal(j), null, JSON.stringify(j));
  const refused: [unknown, RegExp][] = [
    [["Power", 2, ["Power", 2, ["Power", 2, ["Power", 2, 2]]]], /exponent 65536, beyond/],
    [["Power", 10, ["Power", 10, ["Power", 10, 10]]], /exponent too large to bound|beyond/],
    [["Power", 10, 20001], /beyond maxExponent/],
    [["Power", 999, 10000], /about 29997 digits, more than maxDigits \(20000\)/],
    [["Factorial", ["Power", 10, 4]], /about 3567\d digits/],
    [["Factorial", ["Power", 10, ["Power", 10, 10]]], /too large to bound|beyond/],
    [["Binomial", ["Power", 10, 6], 5], /digits, more than maxDigits/],
    [["Product", "k", ["Tuple", "k", 1, 100000]], /a product of about \d+ digits/],
    [["Product", ["Power", "k", 100], ["Tuple", "k", 1, 1000]], /digits, more than maxDigits/],
    [{ num: "1e+999999" }, /an exponent 999999, beyond/],
    [["Multiply", ["Power", 97, 9999], ["Power", 89, 9999]], /about 3936\d digits/],
  ];
  for (const [j, re] of refused) {
    const r = valueSizeRefusal(j);
    assert.ok(r !== null, JSON.stringify(j));
    assert.match(r, re, JSON.stringify(j));
  }
  assert.equal(valueSizeRefusal(["Power", 99, 10000]), null); // 19957 digits: within 20000
  assert.equal(valueSizeRefusal(["Power", 999, 10000], { maxDigits: 30000 }), null);
  // Deep trees are refused, not a stack overflow.
  let deep: unknown = "x";
  for (let i = 0; i < 100_000; i++) deep = ["Negate", deep];
  assert.match(valueSizeRefusal(deep)!, /nested/);
});

Deno.test("valueSizeRefusal: property: the digit estimate never undercounts", () => {
  // Refusing at one digit below the true size proves the estimate is an upper bound; accepting at
  // twice the true size (plus a little) shows that it is not uselessly loose.
  fc.assert(
    fc.property(
      fc.bigInt({ min: 2n, max: 10n ** 6n }),
      fc.integer({ min: 1, max: 400 }),
      (a, n) => {
        const digits = (a ** BigInt(n)).toString().length;
        const json = ["Power", Number(a), n];
        assert.notEqual(valueSizeRefusal(json, { maxDigits: digits - 1 }), null);
        assert.equal(valueSizeRefusal(json, { maxDigits: 2 * digits + 8 }), null);
      },
    ),
  );
  fc.assert(
    fc.property(fc.integer({ min: 2, max: 600 }), (n) => {
      let f = 1n;
      for (let k = 2n; k <= BigInt(n); k++) f *= k;
      const digits = f.toString().length;
      assert.notEqual(valueSizeRefusal(["Factorial", n], { maxDigits: digits - 1 }), null);
      assert.equal(valueSizeRefusal(["Factorial", n], { maxDigits: 2 * digits + 8 }), null);
      const prod = ["Product", "k", ["Tuple", "k", 1, n]];
      assert.notEqual(valueSizeRefusal(prod, { maxDigits: digits - 1 }), null);
    }),
    { numRuns: 60 },
  );
});
