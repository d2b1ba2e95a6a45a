import assert from "node:assert/strict";
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
