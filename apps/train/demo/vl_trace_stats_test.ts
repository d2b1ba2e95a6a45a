import assert from "node:assert/strict";
import { countShapesTask } from "@rlvr/rewards/vision";
import { seededRng } from "@rlvr/rewards";
import { vlCompletion } from "./vl_format.ts";
import { GRPO_VISION_OPTIONS, traceStats } from "./vl_trace_stats.ts";

Deno.test("traceStats: a slip, a wrong description and compensating counts are told apart", () => {
  const task = countShapesTask(GRPO_VISION_OPTIONS);
  const row = task.row(11, 3);
  const right = vlCompletion(row, [1, 4, 4], seededRng(0), { slipRate: 0 })!;
  const steps = /<think>([^<]*)<\/think>/.exec(right)![1]!.split(" ");
  const counts = steps.map((s) => Number(/:(\d+)=/.exec(s)![1]));
  const total = counts.reduce((a, b) => a + b, 0);
  assert.notEqual(steps[0]!.split(":")[0], "....", "row 0 of this image must hold a shape");
  const trace = (cs: number[], codes = steps.map((s) => s.split(":")[0]!)) => {
    let sum = 0;
    const body = cs.map((c, i) => `${codes[i]}:${c}=${(sum += c)}`).join(" ");
    return `<think>${body}</think><answer>${sum}</answer>`;
  };
  // One target moved from the row that has one to its neighbour: the answer is still right.
  const from = counts.findIndex((c) => c > 0);
  const to = from === 0 ? 1 : 0;
  const moved = counts.map((c, i) => (i === from ? c - 1 : i === to ? c + 1 : c));
  // Row 0's description replaced by four empty patches, its count kept.
  const blind = trace(counts, [
    ".....".slice(0, 4),
    ...steps.slice(1).map((s) => s.split(":")[0]!),
  ]);
  const samples = [
    { problem: row.id, completion: right, correct: true },
    { problem: row.id, completion: trace(moved), correct: true },
    { problem: row.id, completion: blind, correct: true },
    {
      problem: row.id,
      completion: `<think>${steps.join(" ")}</think><answer>${total + 1}</answer>`,
      correct: false,
    },
  ];
  const s = traceStats(samples, GRPO_VISION_OPTIONS);
  assert.equal(s.samples, 4);
  assert.equal(s.correct, 3 / 4);
  assert.equal(s.described, 3 / 4);
  assert.equal(s.rowsRight, (4 + 2 + 4 + 4) / 16);
  assert.equal(s.sumFollows, 3 / 4); // the last answer is not its rows' sum
  // Right for the trace's reasons: only the first (the moved count does not follow its rows'
  // codes; the blind row's description is wrong).
  assert.equal(s.faithfulRight, 1 / 3);
  assert.throws(
    () =>
      traceStats(
        [{ problem: "arithmetic-1-2", completion: "", correct: false }],
        GRPO_VISION_OPTIONS,
      ),
    /sample 0's problem must be a count_shapes row id .* got "arithmetic-1-2"/,
  );
});

Deno.test("traceStats: a running trace's rows are read from its totals", () => {
  const task = countShapesTask(GRPO_VISION_OPTIONS);
  const row = task.row(11, 3);
  const right = vlCompletion(row, [1, 4, 4], seededRng(0), { slipRate: 0, style: "running" })!;
  const slipped = vlCompletion(row, [1, 4, 4], seededRng(0), { slipRate: 1, style: "running" })!;
  assert.notEqual(slipped, right);
  // The right trace's answer written one too high: the answer no longer follows its rows.
  const off = right.replace(
    /<answer>(\d+)<\/answer>/,
    (_, n) => `<answer>${Number(n) + 1}</answer>`,
  );
  const s = traceStats([
    { problem: row.id, completion: right, correct: true },
    { problem: row.id, completion: slipped, correct: false },
    { problem: row.id, completion: off, correct: false },
  ], GRPO_VISION_OPTIONS);
  assert.equal(s.described, 1);
  assert.equal(s.rowsRight, (4 + 3 + 4) / 12);
  assert.equal(s.rowsFollow, (4 + 3 + 4) / 12);
  assert.equal(s.sumFollows, 2 / 3);
  assert.equal(s.faithfulRight, 1);
});
