import assert from "node:assert/strict";
import {
  canonicalUnit,
  isSimpleVariable,
  normalizeAnswer,
  normalizeLatex,
  stripVariablePrefix,
  unitsCompatible,
} from "./normalize.ts";

Deno.test("normalizeLatex: delimiters, boxes, sizing, spacing", () => {
  assert.equal(normalizeLatex("$$ x $$"), "x");
  assert.equal(normalizeLatex("\\( x \\)"), "x");
  assert.equal(normalizeLatex("\\[\\boxed{x}\\]"), "x");
  assert.equal(normalizeLatex("$5$."), "5");
  assert.equal(normalizeLatex("\\displaystyle\\left[ 1, 2 \\right)"), "[1, 2)");
  assert.equal(normalizeLatex("\\left\\{ 1 \\right\\}"), "\\{1\\}");
  assert.equal(normalizeLatex("\\bigl( x \\bigr)"), "(x)");
  assert.equal(normalizeLatex("a\\,b\\;c\\quad d\\!e~f"), "a b c de f");
  assert.equal(
    normalizeLatex("\\begin{pmatrix}1\\\\ 2\\end{pmatrix}"),
    "\\begin{pmatrix}1\\\\ 2\\end{pmatrix}",
  );
});

Deno.test("normalizeLatex: fractions, roots and text commands", () => {
  assert.equal(
    normalizeLatex("\\dfrac12 + \\tfrac{3}4 + \\cfrac{a}{b}"),
    "\\frac{1}{2} + \\frac{3}{4} + \\frac{a}{b}",
  );
  assert.equal(normalizeLatex("\\frac\\pi2"), "\\frac{\\pi}{2}");
  assert.equal(normalizeLatex("\\sqrt2 + \\sqrt[3]{x}"), "\\sqrt{2} + \\sqrt[3]{x}");
  assert.equal(normalizeLatex("\\textbf{(A)}"), "\\text{(A)}");
  assert.equal(normalizeLatex("5\\mbox{ cm}"), "5\\text{cm}");
  assert.equal(normalizeLatex("sqrt(2)/2 + 2*pi"), "\\sqrt{2}/2 + 2*\\pi");
  assert.equal(normalizeLatex("x**2"), "x^2");
});

Deno.test("normalizeLatex: thousands separators, only where unambiguous", () => {
  assert.equal(normalizeLatex("1{,}000{,}000"), "1000000");
  assert.equal(normalizeLatex("12,\\!345"), "12345");
  assert.equal(normalizeLatex("1\\,000"), "1000");
  assert.equal(normalizeLatex("1,000"), "1000");
  assert.equal(normalizeLatex("-1,234.5"), "-1234.5");
  assert.equal(normalizeLatex("1 000 000"), "1000000");
  assert.equal(normalizeLatex("(1,000, 2)"), "(1,000, 2)");
  assert.equal(normalizeLatex("1,2"), "1,2");
  assert.equal(normalizeLatex("x = 1,000,000"), "x = 1000000");
});

Deno.test("normalizeLatex: relations, symbols, Unicode, trailing punctuation", () => {
  assert.equal(
    normalizeLatex("x \\leqslant 1, y \\geq 2, z \\neq 3"),
    "x \\le 1, y \\ge 2, z \\ne 3",
  );
  assert.equal(normalizeLatex("x <= 1"), "x \\le 1");
  assert.equal(normalizeLatex("−3 × 2 ≤ π"), "-3 \\times 2 \\le \\pi");
  assert.equal(normalizeLatex("90°"), "90^\\circ");
  assert.equal(normalizeLatex("90^{\\circ}"), "90^\\circ");
  assert.equal(normalizeLatex("50%"), "50\\%");
  assert.equal(normalizeLatex("\\varnothing"), "\\emptyset");
  assert.equal(normalizeLatex("\\{\\}"), "\\emptyset");
  assert.equal(normalizeLatex("+\\infty"), "\\infty");
  assert.equal(normalizeLatex("\\mathbb{R}"), "(-\\infty, \\infty)");
  assert.equal(normalizeLatex("5.;,"), "5");
  assert.equal(normalizeLatex("½"), "\\frac{1}{2}");
});

Deno.test("normalizeAnswer: units, degrees, currency and percent are taken off and reported", () => {
  const n = (s: string) => normalizeAnswer(s);
  assert.deepEqual(n("5 \\text{ cm}"), { value: "5", unit: "cm", percent: false });
  assert.deepEqual(n("5 centimeters"), { value: "5", unit: "cm", percent: false });
  assert.deepEqual(n("5cm"), { value: "5", unit: "cm", percent: false });
  assert.deepEqual(n("5 m"), { value: "5", unit: "m", percent: false });
  assert.deepEqual(n("5m"), { value: "5m", unit: null, percent: false });
  assert.deepEqual(n("12 \\text{ square units}"), { value: "12", unit: "unit^2", percent: false });
  assert.deepEqual(n("12 \\mbox{cm}^2"), { value: "12", unit: "cm^2", percent: false });
  assert.deepEqual(n("12 cm^2"), { value: "12", unit: "cm^2", percent: false });
  assert.deepEqual(n("45^\\circ"), { value: "45", unit: "degree", percent: false });
  assert.deepEqual(n("45 \\text{ degrees}"), { value: "45", unit: "degree", percent: false });
  assert.deepEqual(n("\\$12.50"), { value: "12.50", unit: "dollar", percent: false });
  assert.deepEqual(n("12 dollars"), { value: "12", unit: "dollar", percent: false });
  assert.deepEqual(n("30\\%"), { value: "30", unit: null, percent: true });
  assert.deepEqual(n("30 percent"), { value: "30", unit: null, percent: true });
  assert.deepEqual(n("7 apples"), { value: "7", unit: "apple", percent: false });
  assert.deepEqual(n("x^2 \\text{ m}"), { value: "x^2", unit: "m", percent: false });
});

Deno.test("normalizeAnswer: qualifiers and variables are not units", () => {
  assert.equal(normalizeAnswer("5 \\text{ or more}").unit, null);
  assert.equal(normalizeAnswer("5 or more").unit, null);
  assert.equal(normalizeAnswer("2x").value, "2x");
  assert.equal(normalizeAnswer("2 \\pi r").value, "2 \\pi r");
  assert.equal(normalizeAnswer("\\text{Evelyn}").value, "\\text{Evelyn}");
  assert.equal(normalizeAnswer("5 \\text{ in total}").unit, "in total");
});

Deno.test("canonicalUnit and unitsCompatible", () => {
  assert.equal(canonicalUnit("Meters"), "m");
  assert.equal(canonicalUnit("square feet"), "ft^2");
  assert.equal(canonicalUnit("cubic centimeters"), "cm^3");
  assert.equal(canonicalUnit("\\text{km}"), "km");
  assert.equal(canonicalUnit("bananas"), "banana");
  assert.ok(unitsCompatible("m", "m"));
  assert.ok(unitsCompatible("unit", "cm"));
  assert.ok(unitsCompatible("unit^2", "m^2"));
  assert.ok(!unitsCompatible("unit^2", "m^3"));
  assert.ok(!unitsCompatible("cm", "cm^2"));
  assert.ok(!unitsCompatible("dollar", "cent"));
});

Deno.test("stripVariablePrefix and isSimpleVariable", () => {
  assert.equal(stripVariablePrefix("x = 3"), "3");
  assert.equal(stripVariablePrefix("y=2x+1"), "2x+1");
  assert.equal(stripVariablePrefix("f(x) = x^2"), "x^2");
  assert.equal(stripVariablePrefix("x_1 = 4"), "4");
  assert.equal(stripVariablePrefix("\\theta = \\pi"), "\\pi");
  assert.equal(stripVariablePrefix("x + y = 3"), "x + y = 3");
  assert.equal(stripVariablePrefix("x = y = 3"), "x = y = 3");
  assert.equal(stripVariablePrefix("x \\le 3"), "x \\le 3");
  assert.ok(isSimpleVariable("k'"));
  assert.ok(!isSimpleVariable("xy"));
});
