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

/** The scans as they were before they became linear (quadratic on unclosed openers). */
function referenceBoxed(text: string): string | null {
  const out: string[] = [];
  const re = /\\(?:boxed|fbox)\s*\{/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    let depth = 1;
    let j = m.index + m[0].length;
    const start = j;
    for (; j < text.length && depth > 0; j++) {
      if (text[j] === "{") depth++;
      else if (text[j] === "}") depth--;
    }
    if (depth === 0) out.push(text.slice(start, j - 1));
    re.lastIndex = Math.max(re.lastIndex, start);
  }
  const last = out.at(-1);
  return last === undefined ? null : last.trim();
}

function referenceTag(text: string, tag: string): string | null {
  let last: string | null = null;
  for (const m of text.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "gi"))) last = m[1]!;
  return last === null ? null : last.trim();
}

Deno.test("extractBoxed / extractTag: property: same results as the scans they replace", () => {
  const piece = fc.constantFrom(
    "\\boxed{",
    "\\fbox {",
    "{",
    "}",
    "\\{",
    "<answer>",
    "</answer>",
    "<ANSWER>",
    "a",
    " ",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 24 }), (parts) => {
      const text = parts.join("");
      assert.equal(extractBoxed(text), referenceBoxed(text), JSON.stringify(text));
      assert.equal(extractTag(text, "answer"), referenceTag(text, "answer"), JSON.stringify(text));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("extractFinalAnswer: linear on a million characters of unclosed openers", () => {
  for (const text of ["\\boxed{1".repeat(125_000), "<answer>".repeat(125_000), "{".repeat(1e6)]) {
    const t0 = performance.now();
    assert.equal(extractFinalAnswer(text), null);
    const ms = performance.now() - t0;
    assert.ok(ms < 3000, `${text.slice(0, 8)}…: ${ms} ms`);
  }
});
