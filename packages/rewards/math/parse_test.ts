import assert from "node:assert/strict";
import { type MathValue, parseAnswer, parseChoice, splitTopLevel } from "./parse.ts";

const scalar = (latex: string, unit: string | null = null, percent = false): MathValue => ({
  kind: "scalar",
  latex,
  unit,
  percent,
});

Deno.test("splitTopLevel: brackets, braces, escaped braces and environments", () => {
  assert.deepEqual(splitTopLevel("a, (b, c), [d, e), \\{f, g\\}, \\frac{h,i}{j}", ","), [
    "a",
    " (b, c)",
    " [d, e)",
    " \\{f, g\\}",
    " \\frac{h,i}{j}",
  ]);
  assert.deepEqual(splitTopLevel("A \\cup B \\cupx", "\\cup"), ["A ", " B \\cupx"]);
  assert.deepEqual(splitTopLevel("\\begin{pmatrix}1,2\\end{pmatrix},3", ","), [
    "\\begin{pmatrix}1,2\\end{pmatrix}",
    "3",
  ]);
});

Deno.test("parseChoice: letters in their usual dresses, and only committed ones", () => {
  for (
    const s of [
      "C",
      "(C)",
      "\\text{(C)}",
      "\\textbf{C}",
      "option C",
      "Choice: (C)",
      "(C) 12",
      "C. 12",
      "**C**",
    ]
  ) {
    assert.equal(parseChoice(s), "C", s);
  }
  for (const s of ["c", "(A) or (B)", "(A), (B)", "A. 1, B", "CD", "12", "(C"]) {
    assert.equal(parseChoice(s), null, s);
  }
});

Deno.test("parseAnswer: scalars, text, empty set", () => {
  assert.deepEqual(parseAnswer("\\frac{1}{2}"), scalar("\\frac{1}{2}"));
  assert.deepEqual(parseAnswer("(3)"), scalar("3"));
  assert.deepEqual(parseAnswer("12\\%"), scalar("12", null, true));
  assert.deepEqual(parseAnswer("\\text{ 5 cm}"), scalar("5", "cm"));
  assert.deepEqual(parseAnswer("\\text{Evelyn}"), { kind: "text", text: "evelyn" });
  assert.deepEqual(parseAnswer("No"), { kind: "text", text: "no" });
  assert.deepEqual(parseAnswer("\\varnothing"), { kind: "empty" });
  assert.deepEqual(parseAnswer("\\text{no solution}"), { kind: "empty" });
  assert.deepEqual(parseAnswer("B"), { kind: "choice", letter: "B" });
});

Deno.test("parseAnswer: groups, sets, lists, unions, plus-minus", () => {
  const g = parseAnswer("(1, 2]");
  assert.equal(g.kind, "group");
  assert.ok(g.kind === "group" && g.open === "(" && g.close === "]" && g.items.length === 2);
  assert.equal(parseAnswer("\\{1, 2\\}").kind, "set");
  assert.equal(parseAnswer("1, 2, 3").kind, "list");
  assert.equal(parseAnswer("1 \\text{ and } 2").kind, "list");
  assert.equal(parseAnswer("(-\\infty, 0) \\cup (1, \\infty)").kind, "union");
  const pm = parseAnswer("2 \\pm \\sqrt{3}");
  assert.deepEqual(pm, { kind: "list", items: [scalar("2+\\sqrt{3}"), scalar("2-\\sqrt{3}")] });
  assert.deepEqual(parseAnswer("(1,,2)"), { kind: "text", text: "(1,,2)" });
});

Deno.test("parseAnswer: relations become intervals when they bound one variable", () => {
  const inf = scalar("\\infty");
  const ray = (open: string, close: string, items: MathValue[]) => ({
    kind: "group",
    open,
    close,
    items,
    variable: "x",
  });
  assert.deepEqual(parseAnswer("x > 2"), ray("(", ")", [scalar("2"), inf]));
  assert.deepEqual(parseAnswer("x \\ge 2"), ray("[", ")", [scalar("2"), inf]));
  assert.deepEqual(parseAnswer("1 < x \\le 3"), ray("(", "]", [scalar("1"), scalar("3")]));
  assert.deepEqual(
    parseAnswer("\\{x \\mid x < 0\\}"),
    ray("(", ")", [scalar("-\\infty"), scalar("0")]),
  );
  assert.deepEqual(parseAnswer("x \\ne 3"), { kind: "relation", parts: ["x", "3"], ops: ["\\ne"] });
  assert.deepEqual(parseAnswer("3 \\ne x"), { kind: "relation", parts: ["x", "3"], ops: ["\\ne"] });
  assert.deepEqual(parseAnswer("x + y > 2"), {
    kind: "relation",
    parts: ["2", "x + y"],
    ops: ["<"],
  });
  assert.equal(parseAnswer("1 < x > 0").kind, "text");
});

Deno.test("parseAnswer: equations, constant equations, matrices", () => {
  assert.deepEqual(parseAnswer("y = 2x + 1"), { kind: "equation", lhs: "y", rhs: "2x + 1" });
  assert.deepEqual(parseAnswer("x = 2 + 1 = 3"), { kind: "equation", lhs: "x", rhs: "3" });
  assert.deepEqual(parseAnswer("2 + 3 = 5"), scalar("5"));
  const m = parseAnswer("\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}");
  assert.ok(m.kind === "matrix" && m.rows.length === 2 && m.rows[0]!.length === 2);
  assert.equal(parseAnswer("\\begin{pmatrix} 1 & 2 \\\\ 3 \\end{pmatrix}").kind, "scalar");
});
