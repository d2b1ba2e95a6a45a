import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DEFAULT_STRATEGIES,
  extractAnswer,
  extractAnswerReport,
  extractChoiceLetter,
  extractGold,
  extractHashAnswer,
  extractLastMath,
  extractLastNumber,
  extractPhraseAnswer,
  extractTagAnswer,
  lastBoxed,
  stripThinking,
} from "./extract.ts";

Deno.test("lastBoxed: nesting, fbox, brace-less form, escaped braces, empty boxes, no box", () => {
  assert.equal(lastBoxed("\\boxed{\\frac{1}{\\sqrt{2}}}"), "\\frac{1}{\\sqrt{2}}");
  assert.equal(lastBoxed("\\boxed{1} then \\fbox{2}"), "2");
  assert.equal(lastBoxed("\\boxed {3}"), "3");
  assert.equal(lastBoxed("so \\boxed 5$"), "5");
  assert.equal(lastBoxed("\\boxed{\\{1,2\\}}"), "\\{1,2\\}");
  assert.equal(lastBoxed("\\boxed{\\}}"), "\\}");
  assert.equal(lastBoxed("\\boxed{7} and \\boxed{ }"), "7");
  assert.equal(lastBoxed("\\boxed{}"), null);
  assert.equal(lastBoxed("no box here"), null);
  assert.equal(lastBoxed("\\boxedfoo{3}"), null);
});

Deno.test("lastBoxed: an unclosed last box means no answer, even after a good one", () => {
  assert.equal(lastBoxed("\\boxed{12"), null);
  assert.equal(lastBoxed("\\boxed{1} \\boxed{\\frac{1}{2}"), null);
  assert.equal(lastBoxed("\\boxed{{{"), null);
  assert.equal(lastBoxed("}}} \\boxed{4} }}}"), "4");
});

Deno.test("stripThinking and extractTagAnswer", () => {
  assert.equal(stripThinking("<think>a</think>b</think>c"), "c");
  assert.equal(stripThinking("plain"), "plain");
  assert.equal(extractTagAnswer("<answer>1</answer><answer> 2 </answer>"), "2");
  assert.equal(extractTagAnswer("<answer>so \\boxed{3}</answer>"), "3");
  assert.equal(extractTagAnswer("<answer></answer>"), null);
  assert.equal(extractTagAnswer("none"), null);
});

Deno.test("extractHashAnswer: rest of the line after the last ####", () => {
  assert.equal(extractHashAnswer("#### 1\nmore\n#### 2 apples\nx"), "2 apples");
  assert.equal(extractHashAnswer("####"), null);
  assert.equal(extractHashAnswer("none"), null);
});

Deno.test("extractPhraseAnswer: math segments, sentences, Minerva format, last phrase wins", () => {
  assert.equal(extractPhraseAnswer("The answer is $\\frac{1}{2}$."), "\\frac{1}{2}");
  assert.equal(extractPhraseAnswer("Answer: \\(7\\)"), "7");
  assert.equal(extractPhraseAnswer("Final answer: 12 apples. Then more text."), "12 apples");
  assert.equal(extractPhraseAnswer("the answer is 3, and the final answer is 4"), "4");
  assert.equal(extractPhraseAnswer("**Final Answer:** **9**"), "9");
  assert.equal(extractPhraseAnswer("The answer is $12$ cm."), "12 cm");
  assert.equal(extractPhraseAnswer("The answer is $12$ and so on."), "12");
  assert.equal(extractPhraseAnswer("The answer is \\boxed{5}."), "5");
  assert.equal(extractPhraseAnswer("The answer is 2.5 because it is."), "2.5");
  assert.equal(extractPhraseAnswer("no phrase"), null);
});

Deno.test("extractLastNumber: separators, decimals, fractions, percent, glued digits", () => {
  assert.equal(extractLastNumber("costs 1,234,567.89 in total"), "1,234,567.89");
  assert.equal(extractLastNumber("a ratio of 3/4"), "3/4");
  assert.equal(extractLastNumber("up 12%"), "12%");
  assert.equal(extractLastNumber("x-5"), "5");
  assert.equal(extractLastNumber("it was -5"), "-5");
  assert.equal(extractLastNumber("ends with .5"), ".5");
  assert.equal(extractLastNumber("x2 and y3"), null);
  assert.equal(extractLastNumber("none"), null);
});

Deno.test("extractLastMath: last segment or number, final equation side, prose in dollars ignored", () => {
  assert.equal(extractLastMath("we find $y = 2x+1$"), "y = 2x+1");
  assert.equal(extractLastMath("$2 \\times 3 + 1 = 7$"), "7");
  assert.equal(extractLastMath("$a+b = 3 + 4 = 7$"), "a+b = 3 + 4 = 7"); // parseAnswer keeps the 7
  assert.equal(extractLastMath("$x^2/16 + y^2/12 = 1/4$"), "x^2/16 + y^2/12 = 1/4");
  assert.equal(extractLastMath("so $x <= 2$"), "x <= 2");
  assert.equal(extractLastMath("\\[\\frac{3}{4}\\]"), "\\frac{3}{4}");
  assert.equal(extractLastMath("$$\\sqrt{2}$$ then 3 more"), "3");
  assert.equal(extractLastMath("It costs $5 and then $6 more."), "6");
  assert.equal(extractLastMath("nothing"), null);
});

Deno.test("extractChoiceLetter: committed letters only, last one wins", () => {
  assert.equal(extractChoiceLetter("(A) no, (B) no, so (D)."), "D");
  assert.equal(extractChoiceLetter("The answer is C"), "C");
  assert.equal(extractChoiceLetter("I choose option b"), "B");
  assert.equal(extractChoiceLetter("so\nB\n"), "B");
  assert.equal(extractChoiceLetter("A quick look"), null);
  assert.equal(extractChoiceLetter("Answer: X"), null);
  assert.equal(extractChoiceLetter("so it is $\\text{E}$"), "E");
});

Deno.test("extractAnswer: strategy order and reports", () => {
  assert.deepEqual(DEFAULT_STRATEGIES, ["boxed", "tag", "hash", "phrase", "lastMath"]);
  assert.deepEqual(extractAnswer("The answer is 3. \\boxed{4}"), {
    answer: "4",
    strategy: "boxed",
  });
  assert.deepEqual(
    extractAnswer("The answer is 3. \\boxed{4}", { strategies: ["phrase", "boxed"] }),
    {
      answer: "3",
      strategy: "phrase",
    },
  );
  assert.deepEqual(extractAnswer("<think>\\boxed{1}</think> it is 2"), {
    answer: "2",
    strategy: "lastMath",
  });
  assert.deepEqual(extractAnswer("<think>\\boxed{1}</think>", { stripThinking: false }), {
    answer: "1",
    strategy: "boxed",
  });
  assert.deepEqual(extractAnswer("the total is 7", { strategies: ["lastNumber"] }), {
    answer: "7",
    strategy: "lastNumber",
  });
  assert.equal(extractAnswer("\\boxed{1} \\boxed{2"), null);
  assert.match(extractAnswerReport("\\boxed{1} \\boxed{2").reason, /unbalanced/);
  assert.match(extractAnswerReport("words only").reason, /no answer found/);
  assert.equal(extractAnswerReport("\\boxed{5}").reason, "");
});

Deno.test("extractGold: boxed solution, GSM8K solution, plain answer", () => {
  assert.equal(extractGold("so $\\boxed{\\frac{1}{2}}$"), "\\frac{1}{2}");
  assert.equal(extractGold("steps\n#### 1,000"), "1,000");
  assert.equal(extractGold("  42 "), "42");
});

Deno.test("extractAnswer: select rightmost takes the last explicit marker", () => {
  const text = "\\boxed{200} and \\boxed{255}. Final Answer: The final answer is $10,455$.";
  assert.deepEqual(extractAnswer(text), { answer: "255", strategy: "boxed" });
  assert.deepEqual(extractAnswer(text, { select: "rightmost" }), {
    answer: "10,455",
    strategy: "phrase",
  });
  assert.deepEqual(extractAnswer("The answer is 3. Recheck: \\boxed{4}", { select: "rightmost" }), {
    answer: "4",
    strategy: "boxed",
  });
  assert.deepEqual(extractAnswer("so 5", { select: "rightmost" }), {
    answer: "5",
    strategy: "lastMath",
  });
  assert.equal(extractAnswer("\\boxed{4} \\boxed{5", { select: "rightmost" }), null);
});

Deno.test("extractGold: consecutive boxes form a list, separate ones do not", () => {
  assert.equal(extractGold("$\\boxed{1}\\boxed{2}$"), "1, 2");
  assert.equal(extractGold("\\boxed{1}, \\boxed{2} and \\boxed{3}"), "1, 2, 3");
  assert.equal(extractGold("\\boxed{1}. Then we also get \\boxed{2}."), "2");
  assert.equal(extractGold("\\boxed{\\boxed{5}}"), "5");
});

Deno.test("extractLastNumber: a number is extracted whole, never its prefix", () => {
  const whole: [string, string | null][] = [
    ["so x=1e5", "1e5"],
    ["it is 6.02E23 molecules", "6.02E23"],
    ["about 1e-7.", "1e-7"],
    ["we get 10^{3} here", "10^{3}"],
    ["we get 2^5", "2^5"],
    ["1.5\\times10^{3}", "1.5\\times10^{3}"],
    ["3 x 10^2 apples", "3 x 10^2"],
    ["it is -.5", "-.5"],
    ["12cm", "12"],
    ["total 1,000,000.", "1,000,000"],
    ["2e^x", "2"], // `e` with no digit is Euler's number, not an exponent
    ["2^x", null],
    ["v1.5.2", null],
    ["see 1.5.2", null],
    ["see 1.5.2 then 7", "7"],
    ["12^{x}", null],
    ["x_12", null],
    ["x_{12}", null],
    ["10^{4}^x", null], // not the 4 of the exponent
    ["1.5\\times10^{5}^{y}", null],
  ];
  for (const [text, want] of whole) assert.equal(extractLastNumber(text), want, text);
});

/** A number as the extractor should read it whole. */
const wholeNumber: fc.Arbitrary<string> = fc.tuple(
  fc.constantFrom("", "-"),
  fc.stringMatching(/^[1-9]\d{0,6}$/),
  fc.constantFrom("", ".5", ".25", ".125"),
  fc.constantFrom("", "e5", "e-3", "E+12", "^{7}", "^3", " \\times 10^{4}", "\\cdot10^{-2}"),
  fc.constantFrom("", "/7", "\\%"),
).map(([s, i, d, e, f]) => `${s}${i}${d}${e}${e === "" ? f : ""}`);

Deno.test("extractLastNumber: property: whole numbers come out whole, continued ones not at all", () => {
  fc.assert(
    fc.property(
      wholeNumber,
      fc.constantFrom("^x", ".5.1", "_2", "e5", "^{y}", "1", "/7", " \\times 10^{2}", "^2"),
      (n, cont) => {
        assert.equal(extractLastNumber(`so it is ${n}.`), n);
        // The token ends the text, so a number found in it ends there too (the whole token, or a
        // number after a `/` or a `%`), never at a place inside it: never a prefix.
        const token = `${n}${cont}`;
        const r = extractLastNumber(`so it is ${token}`);
        assert.ok(r === null || token.endsWith(r), `${token} → ${r}`);
      },
    ),
  );
});

/** The segment regex `extractLastMath` used before its linear scanner: the reference. */
const REFERENCE_MATH_RE =
  /\$\$([\s\S]+?)\$\$|(?<![\\$])\$((?:\\\$|[^$\n])+?)(?<!\\)\$|\\\(([\s\S]+?)\\\)|\\\[([\s\S]+?)\\\]/g;

function referenceLastMath(text: string): string | null {
  let seg: string | null = null;
  for (const m of text.matchAll(REFERENCE_MATH_RE)) {
    const inner = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? "").trim();
    const prose = inner.replace(
      /\\(?:text|mbox|mathrm|textbf|textit|textnormal|operatorname|begin|end)\s*\{[^{}]*\}/g,
      "",
    );
    if (inner === "" || /(?:^|[^\\a-zA-Z])[a-zA-Z]{3,}/.test(prose)) continue;
    seg = inner;
  }
  return seg;
}

Deno.test("extractLastMath: property: the linear scanner finds what the segment regex finds", () => {
  // No digits and no `=`: then the answer is the last segment itself.
  const piece = fc.constantFrom("$", "$$", "\\", "\\(", "\\)", "\\[", "\\]", "\\$", "\n", "a", " ");
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 40 }), (parts) => {
      const text = parts.join("");
      assert.equal(extractLastMath(text), referenceLastMath(text), JSON.stringify(text));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("extractTagAnswer and extractGold: property: same as the regex and scan they replace", () => {
  const referenceTag = (text: string): string | null => {
    const last = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/gi)].at(-1);
    const inner = last?.[1]?.trim() ?? "";
    return inner === "" ? null : lastBoxed(inner) ?? inner;
  };
  const tagPiece = fc.constantFrom("<answer>", "</answer>", "<ANSWER>", "</Answer>", "a", " ", "<");
  fc.assert(
    fc.property(fc.array(tagPiece, { maxLength: 20 }), (parts) => {
      const text = parts.join("");
      assert.equal(extractTagAnswer(text), referenceTag(text), JSON.stringify(text));
    }),
    { numRuns: 1000 },
  );
  const boxPiece = fc.constantFrom(
    "\\boxed{",
    "\\fbox {",
    "\\boxed",
    "\\boxed ",
    "{",
    "}",
    "\\{",
    "\\}",
    "\\\\",
    "a",
    "5",
    " ",
    ", ",
    "$",
  );
  fc.assert(
    fc.property(fc.array(boxPiece, { maxLength: 24 }), (parts) => {
      const text = parts.join("");
      assert.equal(lastBoxed(text), referenceLastBoxed(text), JSON.stringify(text));
      assert.equal(extractGold(text), referenceGold(text), JSON.stringify(text));
    }),
    { numRuns: 2000 },
  );
});

/** The box scans as they were before they became linear: the reference. */
function referenceCloseBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "{") depth++;
    else if (ch === "}") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

function referenceLastBoxed(text: string): string | null {
  const starts = [...text.matchAll(/\\(?:boxed|fbox)(?![A-Za-z])/g)];
  for (let k = starts.length - 1; k >= 0; k--) {
    let i = starts[k]!.index + starts[k]![0].length;
    while (text[i] === " " || text[i] === "\t") i++;
    if (text[i] === "{") {
      const end = referenceCloseBrace(text, i);
      if (end < 0) return null;
      const content = text.slice(i + 1, end - 1).trim();
      if (content !== "") return content;
      continue;
    }
    const token = /^[^\s$]+/.exec(text.slice(i));
    if (token && !token[0].startsWith("\\boxed")) return token[0];
  }
  return null;
}

function referenceGold(gold: string): string {
  const boxes: { content: string; start: number; end: number }[] = [];
  for (const m of gold.matchAll(/\\(?:boxed|fbox)\s*\{/g)) {
    if (boxes.length > 0 && m.index < boxes.at(-1)!.end) continue;
    const open = m.index + m[0].length - 1;
    const end = referenceCloseBrace(gold, open);
    if (end < 0) continue;
    const content = gold.slice(open + 1, end - 1).trim();
    if (content !== "") boxes.push({ content, start: m.index, end });
  }
  if (boxes.length > 1) {
    let k = boxes.length - 1;
    while (
      k > 0 &&
      /^[\s$,;.]*(?:(?:and|or)[\s$]*)?$/.test(gold.slice(boxes[k - 1]!.end, boxes[k]!.start))
    ) k--;
    if (k < boxes.length - 1) return boxes.slice(k).map((b) => b.content).join(", ");
  }
  return referenceLastBoxed(gold) ?? extractHashAnswer(gold) ?? gold.trim();
}

Deno.test("extraction: linear on a million characters of unclosed openers", () => {
  const hostile = [
    "\\(".repeat(500_000),
    "\\[".repeat(500_000),
    "$$".repeat(500_000),
    "\\boxed{1".repeat(125_000),
    "\\boxed".repeat(166_666),
    "<answer>".repeat(125_000),
    "\n*".repeat(500_000),
    "answer: x" + " ".repeat(1_000_000) + "y",
  ];
  const strategies = [
    "boxed",
    "tag",
    "hash",
    "phrase",
    "choice",
    "lastMath",
    "lastNumber",
  ] as const;
  for (const text of hostile) {
    const t0 = performance.now();
    extractAnswerReport(text, { strategies, select: "rightmost" });
    for (const s of strategies) extractAnswer(text, { strategies: [s] });
    extractGold(text);
    const ms = performance.now() - t0;
    assert.ok(ms < 3000, `${JSON.stringify(text.slice(0, 12))}…: ${ms} ms`);
  }
});
