import assert from "node:assert/strict";
import fc from "fast-check";
import { formatReward, scoreRewards, seededRng } from "@rlvr/rewards";
import { columnSums, compactPrompt, COT_SFT_OPTIONS, cotCompletion, cotTasks } from "./cot.ts";
import { promptText } from "./format.ts";

Deno.test("cot: column sums spell the sum (the last digit of each, the last carry in front)", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 10n ** 12n }),
      fc.bigInt({ min: 0n, max: 10n ** 12n }),
      (x, y) => {
        const cols = columnSums(x, y);
        assert.equal(cols.length, Math.max(String(x).length, String(y).length));
        let digits = cols.map((s) => String(s % 10)).reverse().join("");
        const carry = Math.floor(cols.at(-1)! / 10);
        if (carry > 0) digits = carry + digits;
        assert.equal(BigInt(digits), x + y);
        assert.ok(cols.every((s) => s >= 0 && s <= 19));
      },
    ),
  );
});

Deno.test("cot: every trace's answer passes the task's verifier and the strict format reward", async () => {
  const format = formatReward();
  for (const task of cotTasks(COT_SFT_OPTIONS)) {
    let traced = 0;
    for (let i = 0; i < 150; i++) {
      const row = task.row(5, i);
      const completion = cotCompletion(row, seededRng(9, i), { slipRate: 0 });
      if (completion === null) {
        assert.equal(task.name, "countdown", "only a Countdown row may lack a chain solution");
        continue;
      }
      traced++;
      const answer = /<answer>(.*)<\/answer>$/.exec(completion)![1]!;
      assert.ok(task.verify(row, answer), `${task.name} ${JSON.stringify(row)}: ${completion}`);
      const { totals } = await scoreRewards([format], [{ prompt: "", completion, row }]);
      assert.equal(totals[0], 1, completion);
    }
    assert.ok(traced >= 140, `${task.name}: ${traced} of 150 rows traced`);
  }
});

Deno.test("cot: a repaired addition shows the wrong rewrite, '?', then the right columns", () => {
  const row = {
    id: "a",
    task: "arithmetic",
    prompt: "",
    answer: "155",
    difficulty: 1,
    expression: "47 + 85 + 23",
  };
  const c = cotCompletion(row, seededRng(0), { errorRate: 1, slipRate: 0 })!;
  const m =
    /^<think>(\d+),(\d+)=(\d+)\+23\?12,13=132\+23:[\d,]+=\d+\?5,5,1=155<\/think><answer>155<\/answer>$/
      .exec(c);
  assert.ok(m, c);
  assert.notEqual(m[3], "132");
});

Deno.test("cot: every rewrite is the sum of the one before's first two terms, except after a slip, which the chain goes on from (one slip: a wrong answer)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 999 }), { minLength: 2, maxLength: 5 }),
      fc.integer(),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (terms, seed, slipRate) => {
        const row = {
          id: "a",
          task: "arithmetic",
          prompt: "",
          answer: String(terms.reduce((a, b) => a + b, 0)),
          difficulty: 1,
          expression: terms.join(" + "),
        };
        const c = cotCompletion(row, seededRng(seed), { errorRate: 0, slipRate })!;
        const m = /^<think>(.*)<\/think><answer>(\d+)<\/answer>$/.exec(c)!;
        // Steps `cols=E'` joined by `:`; E0 is the prompt's.
        let before = terms.map(BigInt);
        let slips = 0;
        const steps = m[1]!.split(":");
        assert.equal(steps.length, terms.length - 1);
        for (const step of steps) {
          const [cols, rewrite] = step.split("=");
          const after = rewrite!.split("+").map(BigInt);
          assert.deepEqual(after.slice(1), before.slice(2));
          const right = columnSums(before[0]!, before[1]!);
          if (cols !== right.join(",")) {
            slips++;
            assert.notEqual(after[0], before[0]! + before[1]!);
          } else assert.equal(after[0], before[0]! + before[1]!);
          before = after;
        }
        assert.equal(m[2], String(before[0]));
        // One slip moves the total by a power of ten that later steps carry along; two can
        // cancel (0+1 slipped to 2, then 2+0 slipped to 1), so only 0 and 1 slips decide.
        if (slips === 0) assert.equal(m[2], row.answer, c);
        if (slips === 1) assert.notEqual(m[2], row.answer, c);
        if (slipRate === 0) assert.equal(slips, 0);
      },
    ),
  );
});

Deno.test("cot: Countdown traces end failed chains in x and the answer is the winning chain", () => {
  const task = cotTasks(COT_SFT_OPTIONS)[1]!;
  for (let i = 0; i < 50; i++) {
    const row = task.row(1, i);
    const c = cotCompletion(row, seededRng(2, i));
    if (c === null) continue;
    const think = /^<think>(.*)<\/think>/.exec(c)![1]!.split(";");
    for (const failed of think.slice(0, -1)) assert.match(failed, /x$/);
    assert.ok(think.at(-1)!.endsWith(`=${row.target}`), c);
  }
});

Deno.test("cot: compact prompts of Countdown and Knights rows; promptText uses them", () => {
  const [, countdown, knights] = cotTasks(COT_SFT_OPTIONS);
  const cd = countdown!.row(0, 3);
  assert.equal(promptText(cd), `${(cd.numbers as number[]).join(",")}>${cd.target}=`);
  const kk = knights!.row(0, 3);
  const p = compactPrompt(kk)!;
  assert.equal(promptText(kk), p);
  assert.match(p, /^([A-Z][a-z]+:[A-Za-z+\-=!&/]+;)*[A-Z][a-z]+:[A-Za-z+\-=!&/]+\?$/);
  assert.equal(compactPrompt({ id: "x", task: "t", prompt: "p", answer: "", difficulty: 0 }), null);
});
