import assert from "node:assert/strict";
import fc from "fast-check";
import { checkFormat, formatReward, parseThinkAnswer } from "./format.ts";
import { scoreRewards } from "./runner.ts";

const cases: [string, boolean, boolean][] = [
  // completion, strict, relaxed
  ["<think>a</think><answer>b</answer>", true, true],
  ["  <think>a</think>\n\n<answer>b</answer>\n", true, true],
  ["<think></think><answer>b</answer>", true, true],
  ["<think>a</think><answer> </answer>", false, true],
  ["x<think>a</think><answer>b</answer>", false, true],
  ["<think>a</think>x<answer>b</answer>", false, true],
  ["<think>a</think><answer>b</answer>x", false, true],
  ["<think>a<think>b</think><answer>c</answer>", false, true],
  ["<think>a</think><answer>b</answer><answer>c</answer>", false, true],
  ["<answer>b</answer><think>a</think>", false, false],
  ["<think>a</think>", false, false],
  ["<answer>b</answer>", false, false],
  ["", false, false],
];

Deno.test("checkFormat: strict and relaxed layouts", () => {
  for (const [text, strict, relaxed] of cases) {
    assert.equal(checkFormat(text, { mode: "strict" }), strict, `strict: ${JSON.stringify(text)}`);
    assert.equal(
      checkFormat(text, { mode: "relaxed" }),
      relaxed,
      `relaxed: ${JSON.stringify(text)}`,
    );
  }
});

Deno.test("checkFormat: thinkInPrompt expects the completion to start inside <think>", () => {
  assert.equal(checkFormat("reasoning</think><answer>4</answer>", { thinkInPrompt: true }), true);
  assert.equal(checkFormat("<think>x</think><answer>4</answer>", { thinkInPrompt: true }), false);
  assert.deepEqual(parseThinkAnswer("r</think> <answer>4</answer>", true), {
    think: "r",
    answer: "4",
  });
});

Deno.test("formatReward: 1/0 through the runner; bad options name the field", async () => {
  const r = await scoreRewards([
    formatReward(),
    formatReward({ mode: "relaxed", name: "fmt_relaxed" }),
  ], cases.map(([completion]) => ({ prompt: "", completion, row: {} })));
  assert.deepEqual(r.outcomes.format!.map((o) => o.value), cases.map(([, s]) => (s ? 1 : 0)));
  assert.deepEqual(
    r.outcomes.fmt_relaxed!.map((o) => o.value),
    cases.map(([, , rl]) => (rl ? 1 : 0)),
  );
  assert.throws(
    () => formatReward({ mode: "loose" as "strict" }),
    /formatReward: options.mode must be one of "strict", "relaxed", got "loose"/,
  );
});

Deno.test("format: property: strict implies relaxed; wrapping any tag-free text is strict", () => {
  const tagFree = fc.string({ maxLength: 30 }).filter((s) => !/<\/?(think|answer)>/i.test(s));
  fc.assert(fc.property(fc.string({ maxLength: 60 }), (s) => {
    if (checkFormat(s, { mode: "strict" })) assert.ok(checkFormat(s, { mode: "relaxed" }));
  }));
  fc.assert(fc.property(tagFree, tagFree.filter((s) => s.trim() !== ""), (t, a) => {
    assert.ok(checkFormat(`<think>${t}</think><answer>${a}</answer>`));
  }));
});
