/**
 * The acceptance table of the math verifier: gold answers, model completions and whether the
 * completion is correct, across every category the verifier handles, with adversarial near
 * misses. `box(...)` cases wrap a bare answer as `… \boxed{answer}`; `raw(...)` cases give the
 * whole completion (extraction cases).
 *
 * @module
 */

import type { MathVerifyOptions } from "./verify.ts";

/** One row of the table. */
export interface MathCase {
  /** Category, for the per-category report. */
  category: string;
  /** Gold answer (or gold solution). */
  gold: string;
  /** The completion given to the verifier. */
  completion: string;
  /** Whether the completion is correct. */
  expected: boolean;
  /** Verifier options for this case. */
  options?: MathVerifyOptions;
}

const cases: MathCase[] = [];
let current = "";

function category(name: string): void {
  current = name;
}

/** A bare predicted answer, boxed at the end of a short completion. */
function box(gold: string, pred: string, expected: boolean, options?: MathVerifyOptions): void {
  const completion = `Working through the steps, the result is $\\boxed{${pred}}$.`;
  cases.push(
    options ? { category: current, gold, completion, expected, options } : {
      category: current,
      gold,
      completion,
      expected,
    },
  );
}

/** A whole completion. */
function raw(
  gold: string,
  completion: string,
  expected: boolean,
  options?: MathVerifyOptions,
): void {
  cases.push(
    options ? { category: current, gold, completion, expected, options } : {
      category: current,
      gold,
      completion,
      expected,
    },
  );
}

category("integers");
box("42", "42", true);
box("42", "+42", true);
box("-5", "-5", true);
box("-5", "5", false);
box("5", "-5", false);
box("0", "-0", true);
box("0", "0.0", true);
box("7", "07", true);
box("7", "17", false);
box("100", "10", false);
box("12", "12.", true);
box("12", "12.0", true);
box("123456789012345678901234567890", "123456789012345678901234567890", true);
box("123456789012345678901234567890", "123456789012345678901234567891", false);
box("12345678901234567", "12345678901234568", false);
box("-1", "- 1", true);
box("3", "(3)", true);

category("decimals and tolerance");
box("2", "2.0000001", true);
box("2", "2.001", false);
box("0.5", ".5", true);
box("0.25", "0.250", true);
box("3.14", "3.14", true);
box("3.14", "3.15", false);
box("1.5", "1.05", false);
box("0.1", "0.10000000", true);
box("\\frac{1}{3}", "0.333", false);
box("\\frac{1}{3}", "0.3333333", true);
box("\\frac{1}{3}", "0.33", false);
box("\\frac{2}{3}", "0.6666667", true);
box("\\frac{2}{3}", "0.667", false);
box("16386.20", "16386.2", true);
box("16386.20", "\\$16,\\!386.20", true);
box("2.5", "\\frac{5}{2}", true);
box("2.5", "2\\frac{1}{2}", true);
box("0.001", "10^{-3}", true);
box("0.001", "0.01", false);
box("1000000", "1000000.5", false);
box("1.22", "1.220000001", true);
box("-0.75", "-\\frac{3}{4}", true);
box("-0.75", "\\frac{3}{4}", false);
box("\\frac{1}{3}", "0.333", true, { relTolerance: 1e-2, absTolerance: 1e-2 });

category("fractions");
box("\\frac{1}{2}", "1/2", true);
box("\\frac{1}{2}", "\\frac{2}{4}", true);
box("\\frac{1}{2}", "\\dfrac{1}{2}", true);
box("\\frac{1}{2}", "\\tfrac12", true);
box("\\frac{1}{2}", "\\frac12", true);
box("\\frac{1}{2}", "\\cfrac{1}{2}", true);
box("\\frac{1}{2}", "\\frac{1}{3}", false);
box("1/2", "1/3", false);
box("\\frac{3}{4}", "\\frac{4}{3}", false);
box("-\\frac{10}{9}", "-10/9", true);
box("-\\frac{10}{9}", "\\frac{-10}{9}", true);
box("-\\frac{10}{9}", "\\frac{10}{-9}", true);
box("-\\frac{10}{9}", "\\frac{10}{9}", false);
box("\\frac{7}{2}", "3\\frac{1}{2}", true);
box("\\frac{7}{2}", "3 1/2", true);
box("\\frac{31}{2}", "3 1/2", false);
box("\\frac{14}{3}", "\\frac{28}{6}", true);
box("\\frac{14}{3}", "4.6666667", true);
box("\\frac{14}{3}", "4.67", false);
box("\\frac{1}{1000}", "\\frac{1}{1001}", false);
box("\\frac{5}{8}", "0.625", true);
box("1", "\\frac{3}{3}", true);
box("2", "\\frac{4}{2}", true);
box("\\frac{1}{2}", "\\frac{1}{2} + \\frac{0}{5}", true);
box("\\frac{9}{4}", "2.25", true);
box("\\frac{9}{4}", "2\\frac{1}{4}", true);
box("\\frac{9}{4}", "2.24", false);

category("thousands separators");
box("1000", "1,000", true);
box("1000", "1{,}000", true);
box("1000", "1,\\!000", true);
box("1000", "1\\,000", true);
box("1000", "1 000", true);
box("7425000", "7,425,000", true);
box("1000.99", "1,000.99", true);
box("14916", "14{,}916", true);
box("12000023", "12,\\!000,\\!023", true);
box("1000", "1,001", false);
box("1000", "10,000", false);
box("1000", "1.000", false);

category("scientific notation");
box("1000", "1e3", true);
box("1000", "1E3", true);
box("1000", "1\\times10^{3}", true);
box("1000", "1 \\times 10^3", true);
box("1000", "10^3", true);
box("1500", "1.5\\times 10^{3}", true);
box("0.0002", "2\\times10^{-4}", true);
box("0.0002", "2\\times10^{-3}", false);
box("6.02\\times10^{23}", "602000000000000000000000", true);
box("6.02\\times10^{23}", "6.02\\times10^{22}", false);
box("1000", "1e4", false);

category("percent");
box("28\\%", "28", true);
box("28\\%", "28\\%", true);
box("28\\%", "28 percent", true);
box("28", "28\\%", true);
box("28\\%", "0.28", false);
box("0.28", "28", false);
box("28\\%", "29\\%", false);
box("10\\%", "0.1", false);
box("10\\%", "0.1", true, { percent: "value" });
box("10\\%", "10", false, { percent: "value" });
box("10\\%", "0.1", true, { percent: "either" });
box("12.5\\%", "12.5", true);

category("units, degrees and currency");
box("5", "5 \\text{ cm}", true);
box("5\\text{ cm}", "5", true);
box("5\\text{ cm}", "5 \\text{cm}", true);
box("5\\text{ cm}", "5 centimeters", true);
box("5\\text{ cm}", "5 \\text{ m}", false);
box("5\\text{ cm}", "5 meters", false);
box("5\\text{ cm}", "6 \\text{ cm}", false);
box("12\\text{ cm}^2", "12", true);
box("12\\text{ cm}^2", "12 \\text{ square centimeters}", true);
box("12 \\text{ square units}", "12 \\text{ cm}^2", true);
box("12\\text{ cm}^2", "12 \\text{ cm}", false);
box("90^\\circ", "90", true);
box("90^\\circ", "90^{\\circ}", true);
box("90^\\circ", "90°", true);
box("90^\\circ", "90 \\text{ degrees}", true);
box("90^\\circ", "45^\\circ", false);
box("90", "90^\\circ", true);
box("5", "\\$5", true);
box("5", "5 dollars", true);
box("\\$5", "5 \\text{ dollars}", true);
box("\\$5.50", "\\$5.5", true);
box("\\$5", "5 cents", false);
box("1000.99", "\\$1,000.99", true);
box("20", "20 \\text{ mph}", true);
box("20\\text{ mph}", "20 \\text{ km/h}", false);
box("3", "3 \\text{ hours}", true);
box("3\\text{ hours}", "3 \\text{ minutes}", false);
box("7", "7 apples", true);
box("\\frac{1}{3}", "\\frac{1}{3} \\text{meters}", true);
box("\\frac{1}{3}", "\\frac{1}{3} \\mbox{ m}", true);
box("5\\text{ cm}", "5\\text{ mm}", false);

category("latex formatting");
box("\\frac{1}{3}", "\\left( \\frac{1}{3} \\right)", true);
box("\\frac{1}{3}", "\\displaystyle \\frac{1}{3}", true);
box("5", "\\text{5}", true);
box("5", "\\mathrm{5}", true);
box("5", "\\textbf{5}", true);
box("5", "5.", true);
box("5", "{5}", true);
box("x^2", "x^{2}", true);
box("\\sqrt{3}", "\\sqrt3", true);
box("\\sqrt{3}", "\\sqrt{ 3 }", true);
box("\\sqrt{3}", "3^{1/2}", true);
box("\\sqrt{3}", "\\sqrt{2}", false);
box("2\\sqrt{2}", "2 \\sqrt{2}", true);
box("2\\sqrt{2}", "\\sqrt{8}", true);
box("2\\sqrt{2}", "\\sqrt{6}", false);
box("\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt3}2", true);
box("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}", true);
box("10", "1\\!0", true);
box("3", "3\\,", true);
box("\\pi", "π", true);
box("\\infty", "∞", true);
box("\\frac{1}{2}", "½", true);
box("-3", "−3", true);
box("2x", "2 \\cdot x", true);
box("6", "2 \\times 3", true);

category("equations and variable prefixes");
box("3", "x = 3", true);
box("3", "x=3", true);
box("x = 3", "3", true);
box("x = 3", "x = 3", true);
box("x = 3", "x = -3", false);
box("x = 3", "y = 3", false);
box("-3", "x = -3", true);
box("\\frac{1}{3}", "k = \\frac{1}{3}", true);
box("y = 2x + 1", "y=2x+1", true);
box("y = 2x + 1", "2x + 1 = y", true);
box("y = 2x + 1", "y = 1 + 2x", true);
box("y = 2x + 1", "y = 2x - 1", false);
box("y = 2x + 1", "2x - y + 1 = 0", true);
box("y = 2x + 1", "2x + y + 1 = 0", false);
box("34x+45y-20z+100=0", "-34x-45y+20z-100=0", true);
box("x + y = 5", "2x + 2y = 10", true);
box("x + y = 5", "x + y = 6", false);
box("x^2 + y^2 = 25", "y^2 + x^2 = 25", true);
box("x^2 + y^2 = 25", "x^2 + y^2 = 5", false);
box("f(x) = 2x + 3", "2x + 3", true);
box("5", "2 + 3 = 5", true);
box("x = 2", "x^2 = 4", false);
box("x = 2, x = 3", "2, 3", true);
box("x = 2, x = 3", "x = 3, x = 2", true);
box("x = 1, y = 2", "y = 2, x = 1", true);
box("x = 1, y = 2", "2, 1", false);
box("x = 1, y = 2", "x = 2, y = 1", false);

category("inequalities");
box("x > 2", "2 < x", true);
box("x > 2", "x > 2", true);
box("x > 2", "x \\geq 2", false);
box("x > 2", "x < 2", false);
box("x \\geq 2", "x \\ge 2", true);
box("x \\geq 2", "2 \\leq x", true);
box("x \\geq 2", "x >= 2", true);
box("-1 < x < 3", "x \\in (-1, 3)", true);
box("-1 < x < 3", "(-1, 3)", true);
box("-1 < x \\le 3", "(-1, 3]", true);
box("-1 < x \\le 3", "[-1, 3]", false);
box("x + y > 2", "2 < x + y", true);
box("x + y > 2", "x + y < 2", false);
box("x + y > 2", "2x + 2y > 4", true);
box("x \\le -1", "(-\\infty, -1]", true);

category("intervals and unions");
box("[0, 1)", "[0,1)", true);
box("[0, 1)", "[0, 1]", false);
box("[0, 1)", "(0, 1)", false);
box("(0, 9)", "[0, 9)", false);
box("[0, 9)", "[0, 1)", false);
box("(3, \\infty)", "(3, \\infty)", true);
box("(3, \\infty)", "\\left(3, \\infty\\right)", true);
box("(3, \\infty)", "(3, +\\infty)", true);
box("(3, \\infty)", "[3, \\infty)", false);
box("(3, \\infty)", "(-\\infty, 3)", false);
box("(\\frac{3}{5}, \\frac{8}{3}]", "(0.6, \\frac{8}{3}]", true);
box("(\\frac{3}{5}, \\frac{8}{3}]", "(0.6, 2.67]", false);
box("(-\\infty, -3] \\cup [2, \\infty)", "(-\\infty,-3]\\cup[2,\\infty)", true);
box("(-\\infty, -3] \\cup [2, \\infty)", "[2, \\infty) \\cup (-\\infty, -3]", true);
box("(-\\infty, -3] \\cup [2, \\infty)", "(-\\infty, -3) \\cup [2, \\infty)", false);
box("(-\\infty, -3] \\cup [2, \\infty)", "[-3, 2]", false);
box("[-3, 2]", "[-3, 2]", true);
box("[-3, 2]", "[-2, 3]", false);
box("(-\\infty, 1) \\cup (1, \\infty)", "(-\\infty, 1) ∪ (1, \\infty)", true);
box("[1, 5]", "1 \\le x \\le 5", true);

category("tuples and points");
box("(1, 2)", "(1,2)", true);
box("(1, 2)", "(2, 1)", false);
box("(1, 2)", "(2, 1)", true, { orderedTuples: false });
box("(1, 2)", "\\left( 1, 2 \\right)", true);
box("(1, 2)", "1, 2", true);
box("(1, 2)", "(1, 2, 3)", false);
box("(1, -2)", "(1, 2)", false);
box("(3, \\frac{\\pi}{2})", "\\left( 3, \\frac{\\pi}{2} \\right)", true);
box("(3, \\frac{\\pi}{2})", "(3, 1.5707963)", true);
box("(3, \\frac{\\pi}{2})", "(3, \\pi)", false);
box("(\\frac{4}{5}, \\frac{1}{5})", "(0.8, 0.2)", true);
box("(7, 6)", "(7,6)", true);
box("(7, 6)", "(6, 7)", false);
box("(1, 2)", "[1, 2]", false);
box("(1,000, 2)", "(1000, 2)", false);

category("sets and lists");
box("\\{1, 2\\}", "\\{2, 1\\}", true);
box("\\{1, 2\\}", "\\{1, 2\\}", true);
box("\\{1, 2\\}", "\\{1, 3\\}", false);
box("\\{1, 2\\}", "\\{1, 2, 3\\}", false);
box("\\{1, 2\\}", "1, 2", true);
box("\\{1, 2\\}", "2, 1", true);
box("\\{1, 2\\}", "(1, 2)", false);
box("1, 2, 3", "3, 2, 1", true);
box("1, 2, 3", "1, 2", false);
box("1, 2, 3", "1, 2, 3, 4", false);
box("1, 1, 2", "1, 2, 2", false);
box("\\{-1, 1\\}", "\\pm 1", true);
box("\\emptyset", "\\varnothing", true);
box("\\emptyset", "\\{\\}", true);
box("\\emptyset", "\\{0\\}", false);
box("12, 13", "12 \\text{ and } 13", true);
box("2, 5", "2 and 5", true);
box("\\frac{1}{2}, -3", "-3, 0.5", true);

category("plus-minus");
box("1 \\pm \\sqrt{2}", "1+\\sqrt{2}, 1-\\sqrt{2}", true);
box("1 \\pm \\sqrt{2}", "1-\\sqrt{2}, 1+\\sqrt{2}", true);
box("1 \\pm \\sqrt{2}", "1 + \\sqrt{2}", false);
box("\\pm 3", "3, -3", true);
box("\\pm 3", "3", false);

category("roots, pi and constants");
box("\\frac{\\sqrt{2}}{2}", "\\sqrt{2}/2", true);
box("\\frac{\\sqrt{2}}{2}", "\\frac{\\sqrt2}{2}", true);
box("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", true);
box("\\frac{\\sqrt{2}}{2}", "0.70710678", true);
box("\\frac{\\sqrt{2}}{2}", "0.707", false);
box("\\frac{\\sqrt{2}}{2}", "\\frac{\\sqrt{3}}{2}", false);
box("\\frac{\\sqrt{2}}{2}", "-\\frac{\\sqrt{2}}{2}", false);
box("2\\pi", "2 \\pi", true);
box("2\\pi", "\\pi \\cdot 2", true);
box("2\\pi", "6.28318531", true);
box("2\\pi", "6.28", false);
box("\\pi", "3.14159265", true);
box("\\pi", "3.14", false);
box("\\pi", "\\frac{22}{7}", false);
box("\\frac{\\pi}{6}", "\\frac{1}{6}\\pi", true);
box("\\frac{\\pi}{6}", "\\frac{\\pi}{3}", false);
box("4\\sqrt{3}", "\\sqrt{48}", true);
box("4\\sqrt{3}", "3\\sqrt{4}", false);
box("\\frac{5\\sqrt{42}}{27}", "\\frac{5}{27}\\sqrt{42}", true);
box("\\frac{5\\sqrt{42}}{27}", "\\frac{10\\sqrt{10.5}}{27}", true);
box("\\sqrt{2} + \\sqrt{3}", "\\sqrt{3} + \\sqrt{2}", true);
box("\\sqrt{2} + \\sqrt{3}", "\\sqrt{5}", false);
box("\\frac{1+\\sqrt{5}}{2}", "\\frac{\\sqrt{5}+1}{2}", true);
box("2", "\\frac{1+\\sqrt{5}}{2}", false);
box("e", "\\exp(1)", true);
box("e^2", "e \\cdot e", true);
box("\\ln 8", "3 \\ln 2", true);
box("\\log_2 8", "3", true);
box("\\sin(\\pi/6)", "\\frac12", true);
box("\\binom{5}{2}", "10", true);
box("5!", "120", true);
box("5!", "24", false);
box("\\sqrt[3]{8}", "2", true);
box("2^{10}", "1024", true);
box("2^{60}", "1152921504606846976", true);
box("2^{60}", "1152921504606846977", false);
box("\\infty", "\\infty", true);
box("\\infty", "-\\infty", false);
box(
  "\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{15+2\\sqrt{33}}",
  "\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{2\\sqrt{33}+15}",
  true,
);
box("4", "\\frac{34}{16}+\\frac{\\sqrt{1358}}{16}", false);
box("1\\sqrt{19}", "1", false);

category("expressions with variables");
box("x^2 - 1", "(x-1)(x+1)", true);
box("x^2 - 1", "(x-1)^2", false);
box("(x+1)^2", "x^2 + 2x + 1", true);
box("(x+1)^2", "x^2 + x + 1", false);
box("2x + 3", "3 + 2x", true);
box("2x + 3", "2x - 3", false);
box("2x + 3", "2y + 3", false);
box("\\frac{x}{2}", "0.5x", true);
box("\\frac{x}{2}", "x/2", true);
box("\\frac{x}{2}", "2x", false);
box("|x|", "x", false);
box("\\sqrt{x^2}", "|x|", true);
box("a(b+c)", "ab + ac", true);
box("a(b+c)", "ab + c", false);
box("2-2p", "2 - 2p", true);
box("2-2p", "2(1-p)", true);
box("2-2p", "2p - 2", false);
box("x+2n+1", "x+1", false);
box("\\sin^2 x + \\cos^2 x", "1", true);
box("2\\sin x \\cos x", "\\sin 2x", true);
box("2\\sin x \\cos x", "\\cos 2x", false);
box("\\frac{1}{x-1}", "\\frac{-1}{1-x}", true);
box("\\frac{1}{x-1}", "\\frac{1}{1-x}", false);
box("\\frac{n(n+1)}{2}", "\\frac{n^2+n}{2}", true);
box("\\frac{n(n+1)}{2}", "\\frac{n(n-1)}{2}", false);
box("e^{x}", "\\exp(x)", true);
box("\\ln(x^2)", "2\\ln|x|", true);
box("\\pi r^2", "r^2 \\pi", true);
box("\\pi r^2", "2\\pi r", false);
box("x^3", "x \\cdot x \\cdot x", true);
box("\\frac{x+1}{x}", "1 + \\frac{1}{x}", true);

category("complex numbers");
box("3+4i", "4i+3", true);
box("3+4i", "3-4i", false);
box("i", "\\sqrt{-1}", true);
box("-1", "i^2", true);
box("-1", "e^{i\\pi}", true);
box("2i", "-2i", false);

category("matrices and vectors");
box(
  "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
  "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
  true,
);
box("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}", true);
box("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}1&2\\\\4&3\\end{pmatrix}", false);
box("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}1&3\\\\2&4\\end{pmatrix}", false);
box(
  "\\begin{pmatrix}\\frac{1}{2}\\\\ 3\\end{pmatrix}",
  "\\begin{pmatrix}0.5\\\\3\\end{pmatrix}",
  true,
);
box("\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", "(1, 2, 3)", true);
box("\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", "(3, 2, 1)", false);
box(
  "\\begin{pmatrix}0 & 3 \\\\ 0 & -1\\end{pmatrix}",
  "\\begin{pmatrix}0 & 3 \\\\ 0 & 1\\end{pmatrix}",
  false,
);
box("\\begin{pmatrix}1&2\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", false);

category("multiple choice");
box("A", "A", true);
box("A", "(A)", true);
box("A", "\\text{(A)}", true);
box("A", "\\textbf{(A)}", true);
box("A", "B", false);
box("(B)", "B", true);
box("(B)", "\\text{(C)}", false);
box("B", "\\text{B}", true);
box("C", "(C) 12", true);
box("C", "(D) 12", false);
box("C", "12", false);
raw("C", "Comparing the options, the answer is (C).", true);
raw("C", "Comparing the options, the answer is (D).", false);
raw("D", "Option A fails, option B fails. So the correct option is D.", true);
raw("D", "The answer is option D", true);
raw("D", "The answer is option E", false);
raw("B", "I think it's (B).", true);
raw("B", "Answer: B", true);
raw("B", "**Answer:** (B)", true);
raw("E", "(A) is wrong and (B) is wrong\n\nE", true);

category("text answers");
box("\\text{Evelyn}", "\\text{Evelyn}", true);
box("\\text{Evelyn}", "Evelyn", true);
box("\\text{Evelyn}", "\\text{Carla}", false);
box("\\text{yes}", "Yes", true);
box("\\text{yes}", "no", false);
box("\\text{odd}", "\\text{even}", false);
box("\\text{odd}", "\\textbf{odd}", true);
box("\\text{no solution}", "\\text{No solution}", true);

category("extraction");
raw("5", "We compute 2+3 and get \\boxed{5}.", true);
raw("5", "First guess \\boxed{4}, but correcting: \\boxed{5}", true);
raw("5", "First guess \\boxed{5}, but correcting: \\boxed{4}", false);
raw("\\frac{1}{2}", "So the answer is \\boxed{\\frac{1}{2}}", true);
raw("\\frac{1}{2}", "So $\\boxed{\\dfrac{1}{2}}$", true);
raw("\\{1,2\\}", "Thus $\\boxed{\\{1, 2\\}}$.", true);
raw("\\frac{a}{b}", "\\boxed{\\frac{a}{b}}", true);
raw("5", "\\fbox{5}", true);
raw("5", "The answer is \\boxed 5.", true);
raw("5", "The answer is \\boxed 6.", false);
raw("12", "\\boxed{12", false);
raw("12", "\\boxed{1} and finally \\boxed{12", false);
raw("12", "The result: \\boxed{\\frac{24}{2}", false);
raw("7", "Put the result in \\boxed{} as asked. The answer is 7.", true);
raw("7", "I will write \\boxed{} at the end: \\boxed{7}", true);
raw("7", "I will write \\boxed{7} at the end: \\boxed{}", true);
raw("72", "Natalia sold 48/2 = 24 clips in May.\nShe sold 48+24 = 72 clips.\n#### 72", true);
raw("72", "#### 72.0", true);
raw("72", "#### 71", false);
raw("28\\%", "Final Answer: The final answer is $28\\%$. I hope it is correct.", true);
raw("28\\%", "Final Answer: The final answer is $28$\\%. I hope it is correct.", true);
raw("3.5", "So the answer is 3.5 cm. Done.", true);
raw("3.5", "The final answer is: 3.5", true);
raw("-2", "Therefore the answer is $-2$.", true);
raw("-2", "Therefore the answer is $2$.", false);
raw("9", "Answer: \\[ 9 \\]", true);
raw("10", "Answer \\( (9+1) \\)", true);
raw(
  "2/3",
  "P(A) = (1/2) / (3/4) = 2/3. Therefore, the probability that Alice wins the game is 2/3.",
  true,
);
raw("120", "The volume is 5 \\times 6 \\times 4 = 120. I hope it is correct.", true);
raw("12000023", "Final Answer: The final answer is 12,000,023. I hope it is correct.", true);
raw("4", "<think>it might be 3</think> The answer is $\\boxed{4}$.", true);
raw("3", "<think>it might be \\boxed{3}</think> The answer is $\\boxed{4}$.", false);
raw("4", "<think>so 4</think><answer>4</answer>", true);
raw("4", "<answer>\\boxed{4}</answer>", true);
raw("4", "There are 4 cases, so 8 arrangements in total.", false);
raw("8", "There are 4 cases, so 8 arrangements in total.", true);
raw("2", "The code AZYUK2A is not a number.", false);
raw("5", "No numbers in this one.", false);
raw("\\frac{14}{3}", "$f(-2)+f(-1)+f(0)=2+\\frac{5}{3}+1=\\boxed{\\frac{14}{3}}$", true);
raw("2-2p", "Thus $x-p=\\boxed{2-2p}$.", true);
raw(
  "\\left( 3, \\frac{\\pi}{2} \\right)",
  "the polar coordinates are $\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}.$",
  true,
);
raw(
  "\\boxed{14{,}916}",
  "Final Answer: The smallest possible value of $N$ is $\\boxed{14{,}916}$.",
  true,
);
raw("Therefore $x = \\boxed{5}$.", "so \\boxed{5}", true);
raw("She has 3 + 4 = 7 apples.\n#### 7", "\\boxed{7}", true);
raw("5", "The answer is $\\boxed{5}$ or maybe \\boxed{\\text{unsure}}", false);
raw("1/3", "\\boxed{\\frac{1}{3}}\\boxed{}", true);
raw("x=5", "we get $x = 5$", true);
raw("5", "so $2 + 3 = 5$", true);
raw("0.5", "The probability is 0.5.", true);
raw("1,000", "He earned $1,000 this year.", true);
raw("5", "\\text{Answer: \\boxed{5}}", true);
raw("5", "$\\boxed{\\text{5 cm}}$", true);
raw("6", "$\\boxed{\\text{5 cm}}$", false);

category("harder equivalences");
box("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}", true);
box("\\frac{3\\pi}{4}", "\\dfrac{3}{4}\\pi", true);
box("[2, 5)", "x \\in [2, 5)", true);
box("\\frac{25}{4}", "6\\frac{1}{4}", true);
box("\\frac{1}{3}", "0.\\overline{3}", true);
box("\\frac{1}{2}\\text{ inches}", "0.5 \\text{ in}", true);
box("1, 2", "x = 1 \\text{ or } x = 2", true);
box("y = -\\frac{1}{2}x + 3", "y = 3 - 0.5x", true);
box("2^{-1}", "0.5", true);
box("\\frac{a+b}{2}", "\\frac{b+a}{2}", true);
box("\\frac{9}{2}", "4\\frac{1}{2}", true);
box("-\\frac{1}{2}", "-0.5", true);
box("\\sqrt{2}", "1.41421356", true);
box("\\sqrt{2}", "1.4142", false);
box("x^2+y^2", "y^2+x^2", true);
box("\\text{Monday}", "Monday", true);
box("\\text{Monday}", "Tuesday", false);
box("2, 3", "\\{2, 3\\}", true);
box("(2, 3)", "\\{2, 3\\}", false);
box("\\left[ -1, 1 \\right]", "[-1,1]", true);
box("(-2, 3)", "(-2,-3)", false);
box("\\sin x", "\\sin(x)", true);
box("\\frac{1}{4}", "25\\%", true, { percent: "value" });
box("\\frac{1}{4}", "25\\%", true, { percent: "either" });
box("30^\\circ", "30", true);
box("\\dfrac{\\pi}{2}", "\\frac{\\pi}{2}", true);
box("\\frac{-b+\\sqrt{b^2-4ac}}{2a}", "\\frac{\\sqrt{b^2-4ac}-b}{2a}", true);
box("\\frac{m}{n}", "m/n", true);
box("\\frac{m}{n}", "n/m", false);
box("\\tan\\theta", "\\frac{\\sin\\theta}{\\cos\\theta}", true);
box("\\sqrt{x+1}", "(x+1)^{1/2}", true);
box("\\sqrt{x+1}", "\\sqrt{x}+1", false);

category("adversarial near misses");
box("\\frac{1}{2}", "\\frac{1}{2}x", false);
box("2", "2x", false);
box("x", "X", false);
box("\\sqrt{2}", "2^{1/3}", false);
box("100", "100!", false);
box("e", "2.718", false);
box("5\\text{ cm}", "5 \\text{ cm}^2", false);
box("(1, 2)", "(1, 2]", false);
box("[1, 2]", "\\{1, 2\\}", false);
box("1/2", "12", false);
box("3", "3.0001", false);
box("3", "3.0", true);
box("\\frac{1}{2}", "\\frac{1}{2}\\pi", false);
box("2\\pi", "2", false);
box("\\ln x", "\\log_{10} x", false);
box("5", "5, 6, 7", false);
box("5", "5 \\text{ or } 6", false);
box("5", "\\pm 5", false);
box("5", "[4, 6]", false);
box("5", "4 < x < 6", false);
box("5", "x", false);
box("5", "\\text{any real number}", false);
box("5", "x = 5 \\text{ or } x = 6", false);
box("x = 5", "x = 5, y = 6", false);
box("x = 5, y = 6", "x = 5", false);
box("1000000", "1000000.5", false);
box("123456789", "123456789.1", false);
box("0", "10^{-9}", false);
box("0", "0.0000001", false);
box("-1", "1", false);
box("\\frac{1}{2}", "-\\frac{1}{2}", false);
box("(1, 2)", "(1, -2)", false);
box("\\{1, -1\\}", "\\{1\\}", false);
box("\\infty", "10^{100}", false);
box("2^{2^{100}}", "3^{3^{100}}", false);
raw("5", "\\boxed{5} is what I first thought; the correct answer is \\boxed{6}.", false);
raw("5", "\\boxed{5}\\boxed{6}", false);
raw("5", "The answer is not 5, it is 6.", false);
raw("5", "The answer is $\\boxed{5$", false);

category("sets, angles and percents across notations");
box("(2, \\infty)", "\\{x \\mid x > 2\\}", true);
box("(2, \\infty)", "\\{x \\mid x \\ge 2\\}", false);
box("\\frac{\\pi}{6}", "30^\\circ", true);
box("\\frac{\\pi}{6}", "60^\\circ", false);
box("0.28", "28\\%", true);
box("0.28", "2.8\\%", false);
box("\\frac{1}{2}", "50\\%", true);
box("\\{1, 2\\}", "\\{1, 1, 2\\}", true);
box("\\{1, 2\\}", "\\{1, 1, 3\\}", false);
box("\\mathbb{R}", "(-\\infty, \\infty)", true);
box("(-\\infty, \\infty)", "\\text{all real numbers}", true);
box("(-\\infty, \\infty)", "[0, \\infty)", false);
box("5", "5 \\text{ in total}", true);
box("12", "12 \\text{ each}", true);

category("hacking attempts");
box("5", "5 \\text{ or more}", false);
box("5", "5 or more", false);
box("5", "at least 5", false);
box("A", "(A) or (B)", false);
box("B", "(A) or (B)", false);
box("A", "(A), (B)", false);
raw("B", "The answer is (A) or (B).", false);
raw("C", "The answer could be A, B, C, D or E.", false);
box("|x + y|", "|x| + |y|", false);
box("\\min(x, 3)", "x", false);
box("x", "\\max(x, -5)", false);
raw("7", "\\boxed{5}, \\boxed{6}, \\boxed{7}? I am not sure, maybe \\boxed{8}", false);
raw("7", "The answer is 7 or 8.", false);
raw("7", "\\boxed{7 \\text{ or } 8}", false);
raw("7", "\\boxed{x}", false);
raw("7", "\\boxed{\\text{7?}}", false);

// Pairs adapted from the kinds of cases Math-Verify's regression tests cover.
category("math-verify style");
raw(
  "15\\mbox{ cm}^2",
  "the area of the triangle is $$\\frac{1}{2}\\times 3 \\times 10 = \\boxed{15\\mbox{ cm}^2}.$$",
  true,
);
raw("-2,1", "we find that the only integer roots are $\\boxed{-2,1}.$", true);
raw("204_5", "for a quotient of $\\boxed{204_5}$.", true);
raw("1112112_3", "the product is \\(\\boxed{1112122_3}\\).", false);
raw("(6,31,-1)", "we find $(p,q,r) = \\boxed{(6,31,-1)}.$", true);
raw("1 \\pm \\sqrt{19}", "By the quadratic formula, $x = \\boxed{1 \\pm \\sqrt{19}}.$", true);
raw(
  "\\{1\\pm\\sqrt{5},-2\\}",
  "so the answer is $\\boxed{\\{-2, 1+\\sqrt{5}, 1-\\sqrt{5}\\}}.$",
  true,
);
raw("f(2) < f(1) < f(4)", "Hence, $\\boxed{f(2) < f(1) < f(4)}.$", true);
raw("f(2) < f(1) < f(4)", "Hence, $\\boxed{f(1) < f(2) < f(4)}.$", false);
raw(
  "2 \\sin b \\cos a",
  "By sum-to-product, \\[\\sin (a + b) - \\sin (a - b) = \\boxed{2 \\sin b \\cos a}.\\]",
  true,
);
raw("\\frac{\\pi r}{h+r}", "The answer is $\\boxed{\\frac{\\pi r}{h+r}}$.", true);
raw("125 \\text{ miles}", "The distance is $\\boxed{125\\textnormal{ miles}}.$", true);
raw(
  "[-1, -\\frac{1}{2}) \\cup (-\\frac{1}{2}, 0) \\cup (0, 1) \\cup (1, \\infty)",
  "The solution set is $\\boxed{[-1, -\\tfrac12) \\cup (-\\tfrac12, 0) \\cup (0, 1) \\cup (1, \\infty)}.$",
  true,
);
raw("\\sqrt{2}+\\sqrt{5}", "The answer is $\\boxed{\\sqrt 2+\\sqrt 5}$", true);
raw("\\frac{9}{4}\\pi", "Therefore $\\boxed{\\frac94\\pi}$.", true);
raw("x \\in \\boxed{\\{-1\\} \\cup [0,7)}.$", "x \\in \\boxed{[0,7) \\cup \\{-1\\}}.$", true);
raw("x \\ge 5", "Therefore $x \\geq 5$ is the solution.", true);
raw("x < 3", "We find that $x \\lt 3$.", true);
raw("x \\le 2", "Thus $x <= 2$ is our answer.", true);
raw("x \\ne 3", "We find that $x \\neq 3$.", true);
raw("x \\ne 3", "We find that $x \\neq -3$.", false);
raw("x > 5", "Therefore $x < 5$ is the solution.", false);
raw("x \\le 5", "$5 \\geq x$", true);
raw("x = 11", "$x = 5+5+1 = 7 =11$", true);
raw("7 = 11a+c", "$11a+c$", false);
raw("x = 1/3", "$x = 5+5+1 = 1/3 \\approx 11$", true);
raw("11", "$x\\approx11$", true);
raw("1/3", "$x=1/3\\approx1.3$", true);
raw("x < 1", "$-x > -1$", true);
raw("x < 1", "$x > -1$", false);
raw("x \\le 1", "$-x \\ge -1$", true);
raw("x \\le 1", "$-x > -1$", false);
raw("a + 3z = 0", "$0$", false);
raw("1 = \\zzz = x = 0", "$0$", true);
raw("2x + z = 1", "$1$", false);
raw("k = 1", "$1$", true);
raw("z = 1 + 1 = 2", "$z = 3+3 = 2$", true);
raw("2x+4y-3=0", "$y=-\\frac{1}{2}x+\\frac{3}{4}$", true);
raw("x^2/4 + y^2/3 = 1", "$x^2/16 + y^2/12 = 1/4$", true);
raw(
  "\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}",
  "The identity matrix is $ \\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix} $.",
  true,
);
raw(
  "\\begin{bmatrix}0 & 0 \\\\ 0 & 0\\end{bmatrix}",
  "Here is a zero matrix: $ \\begin{pmatrix}0 & 0 \\\\0 & 0\\end{pmatrix} $",
  true,
);
raw(
  "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}",
  "Special matrix: $ \\left[\\begin{array}{cc}1 & 2 \\\\3 & 4\\end{array}\\right] $",
  true,
);
raw(
  "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}",
  "The matrix is $\\begin{pmatrix}1 & 2 \\\\ 3 & 5\\end{pmatrix}$",
  false,
);
raw("\\frac{1}{12}", "$0.0833333333333333$", true);
raw("(1,\\frac{9}{2})", "$(1,4.5)$", true);
raw("\\frac{x+2}{7}", "$\\frac{x}{7}+\\frac{2}{7}$", true);
raw("\\tan^2(y)+1", "$\\sec^2(y)$", true);
raw(
  "100\\%",
  "Therefore, the minimum error in the measurement of the position increases by 100%.",
  true,
);
raw(
  "7.78",
  "So, Anna pays approximately $7.78 for her fudge. Final Answer: The final answer is 7.78.",
  true,
);
raw(
  "14400",
  "the total is $1 \\times 5! \\times 5! = 120 \\times 120 = \\boxed{14400}$. Final Answer: The final answer is 14400. I hope it is correct.",
  true,
);
raw("x-2y+z-1=0", "is then $$-1(x-1)+2(y-1)+1(z-1)=0\\Rightarrow\\boxed{x-2y+z-1=0}.$$", true);
raw("(-6, 10)", "Final Answer: The final answer is \\((-6, 10)\\). I hope it is correct.", true);
raw("\\(\\boxed{\\text{C}}\\).", "$\\boxed{\\text{(C)}}.$", true);
raw(
  "So the answer is: \\[ \\boxed{11111111100} \\]",
  "is $\\boxed{11,\\! 111,\\! 111,\\! 100}$",
  true,
);
raw("So the answer is: \\[ \\boxed{32349} \\]", "is $\\boxed{32,\\! 349}$", true);
raw("So the answer is: \\[ \\boxed{32349} \\]", "is $\\boxed{32, 349}$", false);
raw(
  "the domain is: \\[ \\boxed{(2, 12) \\cup (12, 102)} \\]",
  "Thus, the answer is $x \\in \\boxed{(2,12) \\cup (12,102)}$",
  true,
);
raw("$\\text{E}$", "$E$", true);
raw("$\\boxed{1}\\boxed{2}$", "$\\boxed{1,2}$", true);
raw("so the solutions are $n = \\boxed{1,-2}.$", "\\boxed{-2, 1}", true);
raw("(3,1)", "${1,3}$", false);
raw(
  "10455",
  "so $0.04 \\cdot 10,000 \\cdot \\frac{1}{2} = \\boxed{200}$ ... $= \\boxed{255}$ ... Final Answer: The final answer is $10,455$. I hope it is correct.",
  true,
  { select: "rightmost" },
);
raw(
  "255",
  "so $0.04 \\cdot 10,000 \\cdot \\frac{1}{2} = \\boxed{200}$ ... $= \\boxed{255}$ ... Final Answer: The final answer is $10,455$. I hope it is correct.",
  false,
  { select: "rightmost" },
);
raw("4", "The answer is 3. Wait, let me recheck: \\boxed{4}", true, { select: "rightmost" });

// Correct answers the verifier does not recognise (known false negatives, kept in the table so
// that the recall it reports is honest).
category("known false negatives");
raw(
  "10455",
  "so $0.04 \\cdot 10,000 \\cdot \\frac{1}{2} = \\boxed{200}$ ... $= \\boxed{255}$ ... Final Answer: The final answer is $10,455$. I hope it is correct.",
  true,
);
raw(
  "\\begin{pmatrix}6 & 8 \\\\ 10 & 12\\end{pmatrix}",
  "The sum is $\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix} + \\begin{pmatrix}5 & 6 \\\\ 7 & 8\\end{pmatrix}$",
  true,
);
raw("(1,3)", "${1,3}$", true);
box("1.5", "1,5", true);
box("12", "\\text{twelve}", true);
box("1000\\sqrt{2}", "1414.21356", true);

export const MATH_CASES: readonly MathCase[] = cases;
