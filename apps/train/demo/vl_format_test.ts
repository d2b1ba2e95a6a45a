import assert from "node:assert/strict";
import fc from "fast-check";
import { seededRng, type TaskRow } from "@rlvr/rewards";
import { countShapesTask } from "@rlvr/rewards/vision";
import { checkTrace, rowCountCredit, rowCountSteps, vlCompletion } from "./vl_format.ts";
import { GRPO_VISION_OPTIONS } from "./vl_trace_stats.ts";

const GRID = [1, 4, 4] as const;
const tasks = [
  countShapesTask({ size: 56, shapeSize: [8, 10] }),
  countShapesTask(GRPO_VISION_OPTIONS),
];

/** A row of one of the two tasks and a trace seed, drawn by fast-check. */
const draws = fc.record({
  task: fc.integer({ min: 0, max: tasks.length - 1 }),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  index: fc.nat({ max: 1_000_000 }),
  rng: fc.nat(),
});

function drawn(d: { task: number; seed: number; index: number }): TaskRow {
  return tasks[d.task]!.row(d.seed, d.index);
}

Deno.test("vlCompletion running (property): without slips every row is described, counted right and the answer is the task's", () => {
  fc.assert(
    fc.property(draws, (d) => {
      const row = drawn(d);
      const text = vlCompletion(row, [...GRID], seededRng(d.rng), {
        style: "running",
        slipRate: 0,
      })!;
      assert.match(
        text,
        /^<think>([a-z.\d]+=\d+ ){3}[a-z.\d]+=\d+<\/think><answer>\d+<\/answer>$/,
      );
      assert.ok(text.endsWith(`<answer>${row.answer}</answer>`), text);
      // The running counts go up by one, in order, once per target code.
      const think = /<think>(.*)<\/think>/.exec(text)![1]!;
      const counts = [...think.matchAll(/[a-z]{2}(\d+)/g)].map((m) => Number(m[1]));
      assert.deepEqual(counts, counts.map((_, k) => k + 1), text);
      assert.equal(counts.length, Number(row.answer));
      assert.deepEqual(checkTrace(row, [...GRID], text), {
        described: true,
        lines: 4,
        countsRight: 4,
      });
      assert.equal(rowCountCredit(row, [...GRID], text), 1);
      // The rows trace's description, once the running counts are taken out.
      const rowsText = vlCompletion(row, [...GRID], seededRng(d.rng), { slipRate: 0 })!;
      const codes = (t: string) =>
        /<think>(.*)<\/think>/.exec(t)![1]!.split(" ").map((s) =>
          s.split(/[:=]/)[0]!.replace(/\d+/g, "")
        );
      assert.deepEqual(codes(text), codes(rowsText));
    }),
    { numRuns: 200 },
  );
});

Deno.test("vlCompletion running (property): a slip makes exactly one row's count one off and the counts go on from it", () => {
  fc.assert(
    fc.property(draws, (d) => {
      const row = drawn(d);
      const text = vlCompletion(row, [...GRID], seededRng(d.rng), {
        style: "running",
        slipRate: 1,
      })!;
      const answer = Number(/<answer>(\d+)<\/answer>/.exec(text)![1]);
      if ((row.shapes as unknown[]).length === 0) {
        assert.equal(answer, 0); // nothing to slip on
        return;
      }
      assert.equal(Math.abs(answer - Number(row.answer)), 1, text);
      assert.equal(rowCountCredit(row, [...GRID], text), 3 / 4, text);
      const check = checkTrace(row, [...GRID], text)!;
      assert.equal(check.described, true);
      assert.equal(check.countsRight, 3, text);
    }),
    { numRuns: 200 },
  );
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
