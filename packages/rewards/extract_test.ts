import assert from "node:assert/strict";
import fc from "fast-check";
import { extractBoxed, extractFinalAnswer, extractTag } from "./extract.ts";

Deno.test("extractFinalAnswer: answer tag first, then boxed; last wins; trimmed", () => {
  const cases: [string, string | null][] = [
    ["<answer>4</answer>", "4"],
    ["<answer>1</answer> then <answer>2</answer>", "2"],
    ["<ANSWER> 7 </ANSWER>", "7"],
    ["\\boxed{1} and \\boxed{2}", "2"],
    ["\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"],
    ["<answer>the answer is \\boxed{5}</answer>", "5"],
    ["\\boxed{3} <answer>4</answer>", "4"],
    ["<answer></answer>", null],
    ["<answer>unclosed", null],
    ["\\boxed{unbalanced", null],
    ["plain text 42", null],
    ["\\fbox{9}", "9"],
  ];
  for (const [text, want] of cases) assert.equal(extractFinalAnswer(text), want, text);
});

Deno.test("extractBoxed / extractTag: property: round-trip of a wrapped answer", () => {
  const safe = fc.string({ maxLength: 20 }).filter((s) => !/[{}<>\\]/.test(s) && s.trim() !== "");
  fc.assert(
    fc.property(
      safe,
      fc.string({ maxLength: 10 }).filter((s) => !/[{}<>\\]/.test(s)),
      (ans, noise) => {
        assert.equal(extractBoxed(`${noise}\\boxed{${ans}}${noise}`), ans.trim());
        assert.equal(extractTag(`${noise}<answer>${ans}</answer>${noise}`, "answer"), ans.trim());
        assert.equal(extractFinalAnswer(`${noise}<answer>${ans}</answer>`), ans.trim());
      },
    ),
  );
});
