/**
 * Shared property checks for the task tests (private to tests).
 *
 * @module
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { scoreRewards } from "../runner.ts";
import type { Task, TaskRow } from "./task.ts";

/**
 * For random seeds and indices: the row is deterministic, `rows()` agrees with `row()`, the
 * verifier and the reward accept the generator's own answer, and every perturbation is rejected.
 */
export async function checkTaskProperties<R extends TaskRow>(
  task: Task<R>,
  perturb: (row: R) => string[],
  numRuns = 40,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: -1e6, max: 1e6 }), fc.nat(10_000), async (seed, index) => {
      const row = task.row(seed, index);
      assert.deepEqual(task.row(seed, index), row, "same seed, same row");
      assert.deepEqual(task.rows(seed, 2, index)[0], row, "rows() agrees with row()");
      assert.equal(row.id, `${task.name}-${seed}-${index}`);
      assert.equal(row.task, task.name);
      assert.ok(row.prompt.includes("<answer>"), "the prompt asks for <answer>");
      assert.ok(Number.isFinite(row.difficulty) && row.difficulty > 0);
      assert.ok(task.verify(row, row.answer), `own answer accepted: ${row.answer}`);
      const wrong = perturb(row);
      for (const w of wrong) assert.ok(!task.verify(row, w), `perturbed answer rejected: ${w}`);
      assert.ok(!task.verify(row, ""));
      const r = await scoreRewards([task.reward], [
        { prompt: row.prompt, completion: `<think>...</think><answer>${row.answer}</answer>`, row },
        { prompt: row.prompt, completion: `The answer is \\boxed{${row.answer}}`, row },
        ...wrong.map((w) => ({ prompt: row.prompt, completion: `<answer>${w}</answer>`, row })),
        { prompt: row.prompt, completion: row.answer, row }, // no answer tag
      ]);
      assert.deepEqual(r.totals, [1, 1, ...wrong.map(() => 0), 0]);
    }),
    { numRuns },
  );
}
