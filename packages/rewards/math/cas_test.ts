import assert from "node:assert/strict";
import {
  casEqual,
  casEquationsEqual,
  casInequalitiesEqual,
  casParserGuarded,
  withCasScope,
} from "./cas.ts";

const eq = (a: string, b: string, o = {}) => withCasScope(() => casEqual(a, b, o));

Deno.test("casEqual: constants (exact, numeric, tolerance only with decimals)", () => {
  assert.ok(eq("\\sqrt{8}", "2\\sqrt{2}").equal);
  assert.ok(eq("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}").equal);
  assert.ok(eq("\\log_2 8", "3").equal);
  assert.ok(eq("e^{i\\pi}", "-1").equal);
  assert.ok(eq("\\pi", "3.14159265").equal);
  assert.ok(!eq("\\pi", "3.1416").equal);
  assert.ok(eq("\\pi", "3.1416", { relTolerance: 1e-4, absTolerance: 1e-4 }).equal);
  assert.ok(!eq("\\pi", "\\frac{355}{113}").equal); // 8.5e-8 relative: exact forms need 1e-12
  assert.ok(!eq("2^{60}", "2^{60}+1").equal);
  assert.match(eq("2^{60}", "2^{60}+1").reason, /different exact values/);
  assert.ok(eq("3+4i", "4i+3").equal);
  assert.ok(!eq("3+4i", "3-4i").equal);
});

Deno.test("casEqual: free variables by seeded spot checks", () => {
  assert.ok(eq("(x+1)^2", "x^2+2x+1").equal);
  assert.ok(eq("\\sin^2 x+\\cos^2 x", "1").equal);
  assert.ok(eq("\\frac{x^2-1}{x-1}", "x+1").equal);
  assert.ok(!eq("x+1", "y+1").equal);
  assert.ok(!eq("|x|", "x").equal);
  assert.ok(!eq("|x+y|", "|x|+|y|").equal);
  assert.ok(!eq("\\min(x, 3)", "x").equal);
  assert.ok(!eq("\\sqrt{x}", "\\sqrt{x}+10^{-3}").equal);
  assert.match(eq("x", "2x").reason, /differ at x=/);
});

Deno.test("casEqual: deterministic for a seed", () => {
  const a = eq("x^2", "x^2 + 10^{-11}x");
  const b = eq("x^2", "x^2 + 10^{-11}x");
  assert.deepEqual(a, b);
});

Deno.test("casEqual: rejects what is not a plain value", () => {
  for (
    const bad of ["7?", "7;", "(1,2)", "x = 1", "\\frac{1}{", "\\foo{2}", "100000!", "7 \\to 8", ""]
  ) {
    const v = eq(bad, "7");
    assert.equal(v.equal, false, bad);
  }
  assert.match(eq("\\frac{1}{", "1").reason, /could not parse/);
  assert.ok(!eq("2^{2^{100}}", "3^{3^{100}}").equal);
  assert.ok(!eq("\\infty", "10^{400}").equal);
  assert.ok(eq("\\infty", "\\infty").equal);
});

Deno.test("withCasScope: a function name in one answer does not leak into the next", () => {
  assert.ok(withCasScope(() => casEqual("f(x)", "f(x)").equal));
  assert.ok(withCasScope(() => casEqual("f+1", "1+f").equal));
  assert.ok(withCasScope(() => casEqual("a(b+c)", "ab+ac").equal));
});

Deno.test("casEquationsEqual and casInequalitiesEqual", () => {
  const e = (a: string, b: string, c: string, d: string) =>
    withCasScope(() => casEquationsEqual(a, b, c, d));
  assert.ok(e("y", "2x+1", "2x+1", "y").equal);
  assert.ok(e("x+y", "5", "2x+2y", "10").equal);
  assert.ok(!e("x", "2", "x^2", "4").equal);
  assert.ok(!e("x", "3", "y", "3").equal);
  assert.ok(!e("2", "2", "3", "3").equal);
  const i = (a: string, b: string, c: string, d: string) =>
    withCasScope(() => casInequalitiesEqual(a, b, c, d));
  assert.ok(i("2", "x+y", "4", "2x+2y").equal);
  assert.ok(!i("2", "x+y", "x+y", "2").equal);
  assert.match(i("2", "x+y", "x+y", "2").reason, /other way/);
});

Deno.test("casEqual: undefined values are refused, never compared", () => {
  for (
    const [a, b] of [
      ["\\frac{1}{0}", "\\frac{2}{0}"],
      ["\\frac{1}{0}", "\\frac{1}{0}"],
      [
        "\\frac{0}{0}",
        "\\frac{0}{0}",
      ],
      ["\\frac{1}{\\sin \\pi}", "\\frac{1}{\\sin \\pi}"],
      ["\\frac{x}{x-x}", "\\frac{x}{x-x}"],
      [
        "\\tan\\frac{\\pi}{2}",
        "\\infty",
      ],
    ]
  ) {
    const v = eq(a!, b!);
    assert.equal(v.equal, false, `${a} vs ${b}`);
    assert.match(v.reason, /^refused: undefined value/, `${a} vs ${b}`);
  }
});

Deno.test("casEqual: overflow to infinity and over-budget values are refused", () => {
  const lifted = { maxExponent: 1e9, maxDigits: 1e9 };
  assert.match(eq("1e9999999", "\\infty", lifted).reason, /^refused: a number that overflows/);
  assert.match(eq("1e9999999", "\\infty").reason, /^refused: .*maxExponent/);
  assert.match(eq("2^{2^{2^{2^{2^2}}}}", "5").reason, /^refused: an exponent 65536/);
  assert.match(eq("(10^4)!", "5").reason, /^refused: a value of about \d+ digits/);
  assert.ok(eq("10^{400}+1", "10^{400}+1").equal);
  assert.ok(!eq("10^{400}+1", "10^{400}").equal);
});

Deno.test("casEqual: rational functions are compared exactly, at any degree within the budget", () => {
  assert.ok(eq("(x+1)^{1000}-(1+x)^{999}(x+1)", "0").equal);
  assert.match(eq("(x+1)^{1000}-(1+x)^{999}(x+1)", "0").reason, /exact values agree/);
  assert.ok(!eq("(x+1)^{1000}", "(1+x)^{1000}+1").equal);
  // Below any floating-point tolerance, still different.
  assert.ok(!eq("x^2", "x^2 + 10^{-15}").equal);
  assert.ok(!eq("x^2", "x^2 + 10^{-11}x").equal);
  // A decimal keeps its tolerance.
  assert.ok(eq("0.5x", "\\frac{x}{2}").equal);
  assert.ok(eq("1.0000001x", "x").equal);
  const e = (a: string, b: string, c: string, d: string) =>
    withCasScope(() => casEquationsEqual(a, b, c, d));
  assert.ok(e("y", "(x+1)^{2000}", "(1+x)^{2000}", "y").equal);
  assert.ok(e("y", "(x+1)^{2000}", "0", "(1+x)^{2000} - y").equal);
  assert.ok(!e("y", "(x+1)^{2000}", "(1+x)^{2000}+1", "y").equal);
});

/**
 * Properly nested LaTeX on which the engine's parser backtracks exponentially: 44 characters took
 * 40 s to parse unguarded (one more `\\left(` or `[` multiplies that by about 8).
 */
const PATHOLOGICAL = "[[]\\cup|[[[(" + "\\left(".repeat(4) + "^" + ")".repeat(5) + "]]]]";

Deno.test("casEqual: the LaTeX parser is stopped at its share of the time limit", () => {
  assert.equal(casParserGuarded(), true);
  const t0 = performance.now();
  const v = eq(PATHOLOGICAL, "1");
  const ms = performance.now() - t0;
  console.log(`  pathological parse: ${ms.toFixed(0)} ms (${v.reason})`);
  assert.equal(v.equal, false);
  assert.match(v.reason, /^refused: the LaTeX parser needed more than 1000 ms/);
  assert.ok(ms < 5000, `${ms} ms`);
  // A smaller overall limit stops it as well, and the engine works normally afterwards.
  const t1 = performance.now();
  assert.equal(eq(PATHOLOGICAL, "1", { timeLimitMs: 200 }).equal, false);
  assert.ok(performance.now() - t1 < 2000);
  assert.ok(eq("(x+1)^2", "x^2+2x+1").equal);
  // Unbalanced text is not a value: refused before the parser sees it.
  assert.match(eq("((((((((((((\\sin[{\\%]", "1").reason, /could not parse/);
});
