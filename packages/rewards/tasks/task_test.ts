import assert from "node:assert/strict";
import fc from "fast-check";
import { arithmeticTask } from "./arithmetic.ts";
import { countdownTask } from "./countdown.ts";
import { knightsKnavesTask } from "./knights.ts";
import { shortestPathTask } from "./shortest_path.ts";
import { sudokuTask } from "./sudoku.ts";
import { defineTask, splitTrainTest, type Task, type TaskRow } from "./task.ts";
import { scoreRewards } from "../runner.ts";

const tasks: Task[] = [
  arithmeticTask({ digits: 1, chainLength: 1 }), // small space: duplicates are common
  countdownTask({ count: 3, maxNumber: 10, maxTarget: 30 }),
  knightsKnavesTask({ people: 2 }),
  sudokuTask({ holes: 4 }),
  shortestPathTask({ nodes: 4, maxWeight: 3 }),
] as unknown as Task[];

Deno.test("splitTrainTest: property: the splits never share a key and hold no duplicates", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...tasks),
      fc.integer(),
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 0, max: 20 }),
      (task, seed, trainSize, testSize) => {
        const { train, test } = splitTrainTest(task, { seed, trainSize, testSize });
        assert.equal(train.length, trainSize);
        assert.equal(test.length, testSize);
        const trainKeys = train.map(task.key), testKeys = test.map(task.key);
        assert.equal(new Set(trainKeys).size, trainSize, "no duplicate in train");
        assert.equal(new Set(testKeys).size, testSize, "no duplicate in test");
        const testSet = new Set(testKeys);
        assert.ok(trainKeys.every((k) => !testSet.has(k)), "train and test are disjoint");
        assert.equal(new Set([...train, ...test].map((r) => r.id)).size, trainSize + testSize);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("splitTrainTest: deterministic, and the test split does not move when trainSize changes", () => {
  const task = countdownTask();
  const a = splitTrainTest(task, { seed: 9, trainSize: 30, testSize: 10 });
  const b = splitTrainTest(task, { seed: 9, trainSize: 30, testSize: 10 });
  const c = splitTrainTest(task, { seed: 9, trainSize: 100, testSize: 10 });
  assert.deepEqual(a, b);
  assert.deepEqual(c.test, a.test);
  assert.deepEqual(c.train.slice(0, 30), a.train);
  const d = splitTrainTest(task, { seed: 10, trainSize: 30, testSize: 10 });
  assert.notDeepEqual(d.test, a.test);
});

Deno.test("splitTrainTest: duplicates really occur in small spaces and are skipped", () => {
  const task = arithmeticTask({ digits: 1, chainLength: 1, operators: ["+"] }); // 81 problems
  const rows = task.rows(0, 200);
  assert.ok(new Set(rows.map(task.key)).size < 200);
  const { train, test } = splitTrainTest(task, { seed: 0, trainSize: 60, testSize: 21 });
  assert.equal(new Set([...train, ...test].map(task.key)).size, 81);
  assert.throws(
    () => splitTrainTest(task, { seed: 0, trainSize: 80, testSize: 10 }),
    /found only 81 distinct "arithmetic" problems in \d+ draws but trainSize \+ testSize = 90; lower the sizes, raise the task's difficulty knobs/,
  );
});

Deno.test("task rewards return null on rows of other tasks, so one batch can mix tasks", async () => {
  const arith = arithmeticTask();
  const sudoku = sudokuTask();
  const a = arith.row(0, 0), s = sudoku.row(0, 0);
  const r = await scoreRewards([arith.reward, sudoku.reward], [
    { prompt: a.prompt, completion: `<answer>${a.answer}</answer>`, row: a },
    { prompt: s.prompt, completion: `<answer>${s.answer}</answer>`, row: s },
  ]);
  assert.deepEqual(r.outcomes.arithmetic!.map((o) => o.value), [1, null]);
  assert.deepEqual(r.outcomes.sudoku4!.map((o) => o.value), [null, 1]);
  assert.deepEqual(r.totals, [1, 1]);
});

Deno.test("defineTask: a verifier that throws counts as a rejection; bad specs are named", () => {
  interface R extends TaskRow {
    n: number;
  }
  const t = defineTask<R>({
    name: "t",
    generate: (rng) => ({ n: rng.int(0, 9), prompt: "<answer>", answer: "x", difficulty: 1 }),
    key: (row) => String(row.n),
    verify: () => {
      throw new Error("bug");
    },
  });
  assert.equal(t.verify(t.row(0, 0), "x"), false);
  assert.throws(() => t.row(0, -1), /t: index must be an integer >= 0, got -1/);
  assert.throws(
    () => defineTask({ name: "x" } as never),
    /defineTask: spec.generate must be a function \(rng\) => row fields/,
  );
  assert.throws(
    () => splitTrainTest(t, { seed: 0, trainSize: -1, testSize: 0 }),
    /splitTrainTest: options.trainSize must be an integer >= 0, got -1/,
  );
});
