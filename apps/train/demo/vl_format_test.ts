import assert from "node:assert/strict";
import { seededRng, type TaskRow } from "@rlvr/rewards";
import { countShapesTask } from "@rlvr/rewards/vision";
import { checkTrace, rowCountCredit, rowCountSteps, vlCompletion } from "./vl_format.ts";

const GRID = [1, 4, 4] as const;
const tasks = [
  countShapesTask({ size: 56, shapeSize: [8, 10] }),
  countShapesTask({
    size: 56,
    shapeSize: [8, 10],
    count: [3, 6],
    distractors: [6, 8],
    colors: 3,
    kinds: 3,
  }),
];

function rows(n: number): TaskRow[] {
  return tasks.flatMap((t) => Array.from({ length: n }, (_, i) => t.row(3, i)));
}

Deno.test("vlCompletion running: without slips every row is described, counted right and the answer is the task's", () => {
  for (const [i, row] of rows(150).entries()) {
    const text = vlCompletion(row, [...GRID], seededRng(i), { style: "running", slipRate: 0 })!;
    assert.match(text, /^<think>([a-z.\d]+=\d+ ){3}[a-z.\d]+=\d+<\/think><answer>\d+<\/answer>$/);
    assert.ok(text.endsWith(`<answer>${row.answer}</answer>`), text);
    // The running totals count up by one, in order, once per target code.
    const think = /<think>(.*)<\/think>/.exec(text)![1]!;
    const totals = [...think.matchAll(/[a-z]{2}(\d+)/g)].map((m) => Number(m[1]));
    assert.deepEqual(totals, totals.map((_, k) => k + 1), text);
    assert.equal(totals.length, Number(row.answer));
    assert.deepEqual(checkTrace(row, [...GRID], text), {
      described: true,
      lines: 4,
      countsRight: 4,
    });
    assert.equal(rowCountCredit(row, [...GRID], text), 1);
    // The same description as the rows trace, once the running totals are taken out.
    const rowsText = vlCompletion(row, [...GRID], seededRng(i), { slipRate: 0 })!;
    const codes = (t: string) =>
      /<think>(.*)<\/think>/.exec(t)![1]!.split(" ").map((s) =>
        s.split(/[:=]/)[0]!.replace(/\d+/g, "")
      );
    assert.deepEqual(codes(text), codes(rowsText));
  }
});

Deno.test("vlCompletion running: a slip makes exactly one row's count one off and the totals go on from it", () => {
  let slips = 0;
  for (const [i, row] of rows(150).entries()) {
    const text = vlCompletion(row, [...GRID], seededRng(i), { style: "running", slipRate: 1 })!;
    const answer = Number(/<answer>(\d+)<\/answer>/.exec(text)![1]);
    const shapes = (row.shapes as unknown[]).length;
    if (shapes === 0) {
      assert.equal(answer, 0);
      continue;
    }
    slips++;
    assert.equal(Math.abs(answer - Number(row.answer)), 1, text);
    assert.equal(rowCountCredit(row, [...GRID], text), 3 / 4, text);
    const check = checkTrace(row, [...GRID], text)!;
    assert.equal(check.described, true);
    assert.equal(check.countsRight, 3, text);
  }
  assert.ok(slips > 250, `${slips} rows with a slip`);
});

Deno.test("rowCountSteps: a running trace's row count is its total less the step before's", () => {
  const row = tasks[1]!.row(3, 0);
  const right = vlCompletion(row, [...GRID], seededRng(0), { style: "running", slipRate: 0 })!;
  const steps = /<think>(.*)<\/think>/.exec(right)![1]!.split(" ");
  const totals = steps.map((s) => Number(s.split("=")[1]));
  // Row 1's total one too high: row 1 counts one more, so row 2 counts one less; row 3 is read
  // from row 2's total and stays right.
  const shifted = [...steps];
  shifted[1] = `${steps[1]!.split("=")[0]}=${totals[1]! + 1}`;
  const text = (s: string[]) => `<think>${s.join(" ")}</think><answer>0</answer>`;
  const values = (s: string[]) => rowCountSteps(row, [...GRID], text(s))!.map((x) => x.value * 4);
  assert.deepEqual(values(steps), [1, 1, 1, 1]);
  assert.deepEqual(values(shifted), [1, 0, 0, 1]);
  // A malformed step is wrong, and so is the next (no total to count from).
  const broken = [...steps];
  broken[1] = steps[1]!.replace("=", "");
  assert.deepEqual(values(broken), [1, 0, 0, 1]);
  assert.equal(checkTrace(row, [...GRID], text(broken))!.lines, 3);
});

Deno.test("rowCountSteps: a rows trace is read as before: a step without its count is wrong", () => {
  const row = tasks[1]!.row(3, 1);
  const right = vlCompletion(row, [...GRID], seededRng(0), { slipRate: 0 })!;
  assert.equal(rowCountCredit(row, [...GRID], right), 1);
  // Dropping one step's `:count` leaves the other steps in the rows style: that step is wrong.
  const steps = /<think>(.*)<\/think>/.exec(right)![1]!.split(" ");
  steps[2] = steps[2]!.replace(/:\d+/, "");
  const text = `<think>${steps.join(" ")}</think><answer>0</answer>`;
  assert.deepEqual(rowCountSteps(row, [...GRID], text)!.map((s) => s.value * 4), [1, 1, 0, 1]);
  assert.equal(checkTrace(row, [...GRID], text)!.countsRight, 3);
});
