import assert from "node:assert/strict";
import fc from "fast-check";
import { arithmeticTask, countdownTask, sudokuTask } from "@rlvr/rewards";
import {
  answerText,
  completionReward,
  promptText,
  TINY_ALPHABET,
  tinyTokenizer,
} from "./format.ts";

const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });

Deno.test("format: every arithmetic prompt and answer round-trips through the tiny tokenizer", () => {
  const tok = tinyTokenizer();
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 0, max: 1e4 }), (seed, i) => {
      const row = task.row(seed, i);
      for (const text of [promptText(row), answerText(row)]) {
        const ids = tok.encode(text, { addSpecialTokens: false });
        assert.ok(!ids.includes(tok.unkTokenId!), `no <unk> in ${JSON.stringify(text)}`);
        assert.equal(tok.decode(ids), text);
      }
      assert.match(promptText(row), /^\d+\+\d+=$/);
    }),
    { numRuns: 200 },
  );
  assert.equal(new Set(TINY_ALPHABET).size, TINY_ALPHABET.length);
});

Deno.test("format: the reward is the task verifier's: the answer scores 1, a changed answer 0", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 0, max: 1e4 }), (seed, i) => {
      const row = task.row(seed, i);
      assert.equal(completionReward(task, row, row.answer), 1);
      assert.equal(completionReward(task, row, ` ${row.answer}\n`), 1);
      assert.equal(completionReward(task, row, `<answer>${row.answer}</answer>`), 1);
      assert.equal(completionReward(task, row, `${row.answer}7`), 0);
      assert.equal(completionReward(task, row, String(Number(row.answer) + 1)), 0);
      assert.equal(completionReward(task, row, ""), 0);
    }),
    { numRuns: 200 },
  );
});

Deno.test("format: Countdown rows are compact, rows of other tasks keep their own prompt", () => {
  const row = countdownTask({ count: 3 }).row(0, 0);
  assert.equal(promptText(row), `${row.numbers.join(",")}>${row.target}=`);
  const sudoku = sudokuTask().row(0, 0);
  assert.equal(promptText(sudoku), sudoku.prompt);
});
