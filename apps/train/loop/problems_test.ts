import assert from "node:assert/strict";
import fc from "fast-check";
import { arithmeticTask } from "@rlvr/rewards";
import { HELD_OUT_SEED, heldOutProblems, TrainStream } from "./problems.ts";

const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });

Deno.test("heldOutProblems: distinct, a prefix of each other, independent of the training seed", () => {
  const a = heldOutProblems(task, 64);
  assert.equal(new Set(a.map((r) => task.key(r))).size, 64);
  assert.deepEqual(heldOutProblems(task, 16), a.slice(0, 16));
  assert.equal(a[0]!.id, `${task.name}-${HELD_OUT_SEED}-0`);
  assert.throws(() => heldOutProblems(task, 0), /count must be an integer >= 1, got 0/);
  const tiny = arithmeticTask({ digits: 1, operators: ["+"], chainLength: 1 }); // 81 problems
  assert.throws(() => heldOutProblems(tiny, 100), /only 81 distinct problems/);
});

Deno.test("TrainStream: never yields a held-out problem; a stream rebuilt at a position continues identically", () => {
  const held = heldOutProblems(task, 64);
  const keys = new Set(held.map((r) => task.key(r)));
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 1000 }),
      fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 6 }),
      (seed, takes) => {
        const s = new TrainStream(task, seed, held);
        const split = takes.length >> 1;
        for (const n of takes.slice(0, split)) {
          for (const r of s.take(n)) assert.ok(!keys.has(task.key(r)));
        }
        const resumed = new TrainStream(task, seed, held, null, s.position);
        for (const n of takes.slice(split)) assert.deepEqual(resumed.take(n), s.take(n));
      },
    ),
    { numRuns: 50 },
  );
});

Deno.test("TrainStream: with a limit it cycles over that many distinct training problems", () => {
  const held = heldOutProblems(task, 8);
  const s = new TrainStream(task, 3, held, 2);
  const rows = s.take(6);
  assert.equal(new Set(rows.map((r) => task.key(r))).size, 2);
  assert.deepEqual(rows.slice(0, 2), rows.slice(2, 4));
  assert.equal(s.position, 6);
  assert.throws(() => new TrainStream(task, 0, held, null, -1), /position must be an integer >= 0/);
});
