import assert from "node:assert/strict";
import fc from "fast-check";
import {
  evaluateExpression,
  type Expr,
  expressionLiterals,
  formatExpression,
  formatFraction,
  fraction,
  fractionEquals,
  type Op,
  parseExpression,
  parseFraction,
} from "./expr.ts";

const exprArb: fc.Arbitrary<Expr> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.integer({ min: 0, max: 999 }).map((v): Expr => ({ kind: "num", value: BigInt(v) })),
    fc.record({
      kind: fc.constant("bin" as const),
      op: fc.constantFrom<Op>("+", "-", "*", "/"),
      left: tie("node") as fc.Arbitrary<Expr>,
      right: tie("node") as fc.Arbitrary<Expr>,
    }),
  ),
})).node as fc.Arbitrary<Expr>;

function valueOrNull(e: Expr) {
  try {
    return evaluateExpression(e);
  } catch {
    return null;
  }
}

Deno.test("expr: property: format → parse keeps the value and the literals", () => {
  fc.assert(
    fc.property(exprArb, (e) => {
      const text = formatExpression(e);
      const back = parseExpression(text);
      assert.equal(formatExpression(back), text);
      assert.deepEqual(expressionLiterals(back), expressionLiterals(e));
      const a = valueOrNull(e), b = valueOrNull(back);
      if (a === null) assert.equal(b, null);
      else assert.ok(b !== null && fractionEquals(a, b), text);
    }),
    { numRuns: 300 },
  );
});

Deno.test("expr: precedence, associativity and exact fractions", () => {
  const v = (s: string) => formatFraction(evaluateExpression(parseExpression(s)));
  assert.equal(v("2 + 3 * 4"), "14");
  assert.equal(v("10 - 4 - 3"), "3");
  assert.equal(v("10 - (4 - 3)"), "9");
  assert.equal(v("8 / 4 / 2"), "1");
  assert.equal(v("1 / 3 * 3"), "1");
  assert.equal(v("2 × 3 ÷ 4"), "3/2");
  assert.equal(v("99999999999 * 99999999999"), "9999999999800000000001");
  assert.throws(() => evaluateExpression(parseExpression("1 / (2 - 2)")), /division by zero/);
});

Deno.test("expr: rejects anything outside the grammar, with the position", () => {
  for (
    const bad of [
      "",
      "2 +",
      "(1 + 2",
      "1 + 2)",
      "2 ** 3",
      "Math.max(1)",
      "1.5 + 1",
      "-3",
      "2 3",
      "a + 1",
    ]
  ) {
    assert.throws(() => parseExpression(bad), SyntaxError, bad);
  }
  assert.throws(() => parseExpression("1 +* 2"), /expected a number or '\(' at position 3/);
  assert.equal(
    formatFraction(evaluateExpression(parseExpression("-3 + -(1)", { unaryMinus: true }))),
    "-4",
  );
  assert.throws(
    () => parseExpression("(".repeat(200) + "1" + ")".repeat(200)),
    /nesting deeper than 100/,
  );
  assert.throws(() => parseExpression("1+".repeat(600) + "1"), /at most 1000 are read/);
});

Deno.test("parseFraction: spellings of the same number", () => {
  const f = (s: string) => {
    const r = parseFraction(s);
    return r === null ? null : formatFraction(r);
  };
  assert.equal(f("42"), "42");
  assert.equal(f("-7/3"), "-7/3");
  assert.equal(f("14/6"), "7/3");
  assert.equal(f("0.125"), "1/8");
  assert.equal(f(".5"), "1/2");
  assert.equal(f("1,234"), "1234");
  assert.equal(f("\\dfrac{3}{4}"), "3/4");
  assert.equal(f("-\\frac{3}{4}"), "-3/4");
  assert.equal(f("$5$"), "5");
  assert.equal(f("1/0"), null);
  assert.equal(f("x"), null);
  assert.equal(f(""), null);
  assert.equal(f("1.2.3"), null);
  assert.ok(fractionEquals(fraction(2n, 4n), fraction(-1n, -2n)));
  assert.throws(() => fraction(1n, 0n), /division by zero/);
});
