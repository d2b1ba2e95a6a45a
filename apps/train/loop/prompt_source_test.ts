import assert from "node:assert/strict";
import fc from "fast-check";
import { arithmeticTask, type TaskRow } from "@rlvr/rewards";
import { defaultConfig } from "../config/defaults.ts";
import type { SamplingSection } from "../config/types.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { PromptSource, type ReplayedItem } from "./prompt_source.ts";
import type { RolloutItem } from "./rollout.ts";

const task = arithmeticTask({ digits: [1, 3], operators: ["+"], chainLength: 1 });
const held = heldOutProblems(task, 16);
const base: SamplingSection = { ...defaultConfig().sampling!, pool: 32 };

function source(settings: Partial<SamplingSection>, seed = 0): PromptSource<TaskRow> {
  return new PromptSource(task, new TrainStream(task, seed, held), { ...base, ...settings }, seed);
}

/** A group of responses to `row` with the given 0/1 outcomes. */
function group(row: TaskRow, g: number, outcomes: number[]): RolloutItem[] {
  return outcomes.map((c, s) => ({
    row,
    group: g,
    promptIds: [1],
    completionIds: [2, 3],
    samplerLogprobs: [-1, -1],
    text: `answer ${s}`,
    prompt: row.prompt,
    reward: c,
    correct: c,
    format: null,
  }));
}

Deno.test("PromptSource without strategies is the training stream itself", () => {
  const plain = new TrainStream(task, 3, held);
  const s = new PromptSource(task, new TrainStream(task, 3, held), defaultConfig().sampling, 3);
  for (let i = 0; i < 5; i++) assert.deepEqual(s.take(7), plain.take(7));
  assert.equal(s.position, plain.position);
  assert.deepEqual(s.metrics(), {});
});

Deno.test("priority selection draws the problems that fail more often (p ∝ max(1 − s, ε))", () => {
  const s = source({ pool: 4, selection: "priority", priority: { epsilon: 0.05, unseenRate: 0 } });
  const pool = s.pool!;
  // Two problems always solved, two never.
  pool.forEach((row, i) => s.observe(group(row, i, i < 2 ? [1, 1, 1, 1] : [0, 0, 0, 0]), 1));
  const counts = new Map<string, number>();
  for (let k = 0; k < 2000; k++) {
    const [row] = s.take(1);
    counts.set(row!.id, (counts.get(row!.id) ?? 0) + 1);
  }
  const solved = (counts.get(pool[0]!.id) ?? 0) + (counts.get(pool[1]!.id) ?? 0);
  // Expected share of the solved pair: 2·0.05 / (2·0.05 + 2·1) ≈ 4.8%.
  assert.ok(solved / 2000 > 0.02 && solved / 2000 < 0.08, `solved drawn ${solved} / 2000`);
  const uniform = source({ pool: 4, selection: "uniform" });
  pool.forEach((row, i) => uniform.observe(group(row, i, i < 2 ? [1, 1] : [0, 0]), 1));
  let solvedUniform = 0;
  for (let k = 0; k < 2000; k++) {
    const [row] = uniform.take(1);
    if (row!.id === pool[0]!.id || row!.id === pool[1]!.id) solvedUniform++;
  }
  assert.ok(solvedUniform / 2000 > 0.4 && solvedUniform / 2000 < 0.6, `${solvedUniform}`);
});

Deno.test("mastery removal: a problem solved in its last groups is no longer drawn", () => {
  const s = source({ pool: 8, selection: "uniform", mastery: { threshold: 1, consecutive: 2 } });
  const pool = s.pool!;
  s.observe(group(pool[0]!, 0, [1, 1, 1, 1]), 1);
  // Once is not mastery; twice in a row is.
  assert.ok(s.eligible().includes(0));
  s.observe(group(pool[0]!, 0, [1, 1, 1, 1]), 2);
  assert.ok(!s.eligible().includes(0));
  for (let k = 0; k < 50; k++) assert.ok(s.take(4).every((r) => r.id !== pool[0]!.id));
  assert.equal(s.metrics()["sampling/mastered"], 1);
});

Deno.test("GRESO: problems on an all-correct or all-wrong streak are skipped before sampling", () => {
  const s = source({ pool: 16, selection: "uniform", greso: { ...greso, pEasy: 0.2, pHard: 0.2 } });
  const pool = s.pool!;
  for (let step = 1; step <= 3; step++) {
    // Half the pool solved every time, half never: all uninformative but problem 0.
    s.observe(
      pool.flatMap((row, i) => group(row, i, i === 0 ? [1, 0] : i % 2 ? [1, 1] : [0, 0])),
      step,
    );
  }
  let open = 0;
  for (let k = 0; k < 200; k++) if (s.take(1)[0]!.id === pool[0]!.id) open++;
  // Uniform would draw problem 0 in 1/16 of the takes; skipping the rest lifts it far above.
  assert.ok(open / 200 > 0.3, `problem 0 drawn ${open} / 200`);
  const m = s.metrics();
  assert.ok(m["greso/skipped_easy"]! > 0 && m["greso/skipped_hard"]! > 0);
});
const greso = {
  pEasy: 0.5,
  pHard: 0.5,
  targetZeroVariance: 0.25,
  adjust: 0.01,
  minP: 0.05,
  maxP: 0.95,
};

Deno.test("curriculum: the difficulty drawn rises with the steps (easy → hard)", () => {
  const s = source({
    pool: 64,
    selection: "uniform",
    curriculum: { schedule: "linear", steps: 100, initial: 0.1, power: 2 },
  });
  const mean = (step: number) => {
    s.setStep(step);
    const rows = s.take(64);
    return rows.reduce((a, r) => a + r.difficulty, 0) / rows.length;
  };
  const early = mean(0);
  const middle = mean(50);
  const late = mean(100);
  assert.ok(early < middle && middle < late, `${early} < ${middle} < ${late}`);
  const pool = s.pool!;
  const easiest = Math.min(...pool.map((r) => r.difficulty));
  s.setStep(0);
  assert.ok(s.take(16).every((r) => r.difficulty <= easiest + 1), "step 0 draws the easiest");
});

Deno.test("replay: stored successes come back in their problem's group, tagged with the step that sampled them", () => {
  const s = source({
    pool: 4,
    selection: "uniform",
    replay: { mode: "success", perGroup: 2, capacity: 4, maxAge: 5 },
  });
  const pool = s.pool!;
  const step1 = group(pool[0]!, 0, [1, 0, 0, 0]);
  s.observe(step1, 1);
  // Step 3 draws problem 0 again (all wrong now) and problem 1 (no history).
  const fresh = [...group(pool[0]!, 0, [0, 0, 0, 0]), ...group(pool[1]!, 1, [0, 1, 0, 0])];
  s.setStep(3);
  const mixed = s.mixReplay(fresh, 3);
  assert.equal(mixed.length, 9);
  const replayed = mixed.filter((it) => (it as ReplayedItem).replayedFrom !== undefined);
  assert.equal(replayed.length, 1);
  assert.deepEqual(
    [replayed[0]!.group, (replayed[0] as ReplayedItem).replayedFrom, replayed[0]!.text],
    [0, 1, "answer 0"],
  );
  // The group stays contiguous: the replayed response follows the fresh ones of problem 0.
  assert.deepEqual(mixed.map((it) => it.group), [0, 0, 0, 0, 0, 1, 1, 1, 1]);
  const m = s.metrics();
  assert.deepEqual([m["replay/items"], m["replay/age_mean"]], [1, 2]);
  // Replayed responses are not counted as fresh, and too old ones are dropped.
  s.observe(mixed, 3);
  assert.equal(s.mixReplay(group(pool[0]!, 0, [0, 0]), 20).length, 2);
});

Deno.test("budgets: samples per problem follow the pass rate and always sum to prompts × groupSize (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.constantFrom(0, 1), { minLength: 2, maxLength: 8 }), {
        minLength: 1,
        maxLength: 8,
      }),
      (outcomes) => {
        const s = source({
          pool: 8,
          selection: "uniform",
          budget: { min: 2, max: 14, shape: "medium" },
        });
        const pool = s.pool!;
        outcomes.forEach((o, i) => s.observe(group(pool[i]!, i, o), 1));
        const rows = pool.slice(0, outcomes.length);
        const sizes = s.groupSizes(rows, 8);
        assert.equal(sizes.reduce((a, b) => a + b, 0), rows.length * 8);
        assert.ok(sizes.every((n) => n >= 2 && n <= 14));
      },
    ),
  );
  const s = source({ pool: 4, selection: "uniform", budget: { min: 2, max: 14, shape: "medium" } });
  const pool = s.pool!;
  s.observe(group(pool[0]!, 0, [1, 1, 1, 1]), 1); // solved
  s.observe(group(pool[1]!, 1, [1, 0, 1, 0]), 1); // half
  const [solved, half] = s.groupSizes(pool.slice(0, 2), 8);
  assert.ok(half! > solved!, `${half} > ${solved}`);
});

Deno.test("PromptSource state: a restored source draws, skips and replays as the original (property)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 1000 }),
      fc.array(fc.array(fc.constantFrom(0, 1), { minLength: 2, maxLength: 4 }), {
        minLength: 1,
        maxLength: 6,
      }),
      (seed, outcomes) => {
        const settings: Partial<SamplingSection> = {
          pool: 12,
          selection: "priority",
          greso: { ...greso },
          replay: { mode: "success", perGroup: 1, capacity: 4, maxAge: 10 },
          mastery: { threshold: 1, consecutive: 2 },
        };
        const a = source(settings, seed);
        let step = 1;
        for (const o of outcomes) {
          a.setStep(step);
          const rows = a.take(2);
          a.observe(rows.flatMap((r, g) => group(r, g, o)), step++);
        }
        const b = new PromptSource(
          task,
          new TrainStream(task, seed, held),
          { ...base, ...settings },
          seed,
          JSON.parse(JSON.stringify(a.state())),
        );
        for (let k = 0; k < 3; k++, step++) {
          a.setStep(step);
          b.setStep(step);
          const ra = a.take(3);
          assert.deepEqual(b.take(3).map((r) => r.id), ra.map((r) => r.id));
          const items = ra.flatMap((r, g) => group(r, g, [1, 0]));
          assert.deepEqual(b.mixReplay(items, step), a.mixReplay(items, step));
        }
      },
    ),
    { numRuns: 30 },
  );
});
