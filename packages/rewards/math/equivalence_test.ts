import assert from "node:assert/strict";
import { answersEquivalent, valuesEquivalent } from "./equivalence.ts";
import { parseAnswer } from "./parse.ts";

const yes = (g: string, p: string, o = {}) =>
  assert.ok(answersEquivalent(g, p, o).equal, `${g} ~ ${p}: ${answersEquivalent(g, p, o).reason}`);
const no = (g: string, p: string, o = {}) =>
  assert.ok(!answersEquivalent(g, p, o).equal, `${g} !~ ${p}`);

Deno.test("answersEquivalent: numbers (exact, tolerant decimals, absolute cap)", () => {
  yes("\\frac{1}{2}", "0.5");
  yes("2", "2.0000001");
  no("\\frac{1}{3}", "0.333");
  yes("\\frac{1}{3}", "0.3333333");
  no("1000000", "1000000.5");
  no("12345678901234567890", "12345678901234567891");
  yes("\\frac{1}{3}", "0.33", { relTolerance: 0.05, absTolerance: 0.05 });
});

Deno.test("answersEquivalent: percent policies", () => {
  yes("10\\%", "10");
  yes("10", "10\\%");
  no("10\\%", "0.1");
  yes("0.1", "10\\%");
  yes("10\\%", "10", { percent: "strip" });
  no("0.1", "10\\%", { percent: "strip" });
  yes("10\\%", "0.1", { percent: "value" });
  no("10\\%", "10", { percent: "value" });
  yes("10\\%", "0.1", { percent: "either" });
  yes("10\\%", "10", { percent: "either" });
});

Deno.test("answersEquivalent: units", () => {
  yes("5 \\text{ cm}", "5");
  no("5 \\text{ cm}", "5 \\text{ m}");
  yes("5 \\text{ cm}", "5 \\text{ m}", { units: "ignore" });
  yes("\\frac{\\pi}{2}", "90^\\circ");
  no("\\frac{\\pi}{2}", "45^\\circ");
});

Deno.test("answersEquivalent: tuples, intervals, sets, unions, lists", () => {
  no("(1, 2)", "(2, 1)");
  yes("(1, 2)", "(2, 1)", { orderedTuples: false });
  no("[1, 2)", "(1, 2)");
  yes("\\{1, 2\\}", "\\{2, 1, 1\\}");
  no("1, 2", "1, 2, 2");
  yes("(-\\infty, 0) \\cup (1, \\infty)", "(1, \\infty) \\cup (-\\infty, 0)");
  no("(1, 2)", "\\{1, 2\\}");
  yes("(1, 2)", "1, 2");
  no("[1, 2]", "1, 2");
});

Deno.test("answersEquivalent: equations and inequalities", () => {
  yes("x = 3", "3");
  yes("3", "x = 3");
  no("x = 3", "x = -3");
  yes("y = 2x+1", "2x + 1 = y");
  yes("x > 2", "2 < x");
  no("x > 2", "x \\ge 2");
  yes("x = 1, x = 2", "2, 1");
  no("x = 1, y = 2", "2, 1");
});

Deno.test("answersEquivalent: choices and text", () => {
  yes("B", "\\text{(B)}");
  no("B", "C");
  no("B", "2");
  yes("\\text{Yes}", "yes");
  no("\\text{yes}", "\\text{no}");
  no("\\text{yes}", "1");
  no("", "");
});

Deno.test("valuesEquivalent: works on parsed trees and gives reasons", () => {
  const v = valuesEquivalent(parseAnswer("(1, 2)"), parseAnswer("(1, 3)"));
  assert.equal(v.equal, false);
  assert.match(v.reason, /item 2 differs/);
});

Deno.test("answersEquivalent: one time limit covers the whole comparison", () => {
  const sums = Array.from({ length: 4 }, (_, i) => `\\sum_{n=1}^{10^{9}} n^{${i}}`).join(", ");
  const t0 = performance.now();
  const v = answersEquivalent(sums, sums.replace(/n/g, "k"), { timeLimitMs: 300 });
  assert.equal(v.equal, false);
  assert.ok(performance.now() - t0 < 2000, `took ${performance.now() - t0} ms`);
});

Deno.test("answersEquivalent: over-budget answers are refused with the reason", () => {
  const v = answersEquivalent("1e999998", "1e999999");
  assert.equal(v.equal, false);
  assert.match(v.reason, /^refused: gold answer has an exponent 999998, beyond maxExponent/);
  assert.match(answersEquivalent("1", "1e999999").reason, /^refused: answer has an exponent/);
  assert.match(answersEquivalent("1", "(".repeat(60) + "1" + ")".repeat(60)).reason, /nested 60/);
  assert.match(answersEquivalent("1", "1".repeat(1001)).reason, /more than maxLength/);
  // `1{,}000…` is joined by normalisation: the digits are checked again afterwards.
  const grouped = Array.from({ length: 8 }, () => "999").join("{,}");
  assert.match(answersEquivalent("1", grouped, { maxDigits: 20 }).reason, /a number of 24 digits/);
  // The budget comes first, even for identical text; within it, identical text needs no
  // computation, but only where nothing can divide by zero.
  assert.match(answersEquivalent("1e999999", "1e999999").reason, /^refused: /);
  assert.ok(!answersEquivalent("\\frac{1}{0}", "\\frac{1}{0}").equal);
  assert.ok(!answersEquivalent("(1, 1/0)", "(1, 1/0)").equal);
  assert.ok(answersEquivalent("\\frac{1}{2}", "\\frac{1}{2}").equal);
});

Deno.test("answersEquivalent: tolerances are exact (no underflow to equal zeros)", () => {
  assert.ok(!answersEquivalent("1.0e-400", "2.0e-400").equal);
  assert.match(answersEquivalent("1.0e-400", "2.0e-400").reason, /1\.000e-400 vs 2\.000e-400/);
  assert.ok(answersEquivalent("2.000001", "2").equal);
  assert.ok(!answersEquivalent("2.000002", "2").equal);
  assert.ok(answersEquivalent("1e5000", "10^{5000}").equal);
});
