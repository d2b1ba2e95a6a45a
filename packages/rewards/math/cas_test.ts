import assert from "node:assert/strict";
import { casEqual, casEquationsEqual, casInequalitiesEqual, withCasScope } from "./cas.ts";

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
