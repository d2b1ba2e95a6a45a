import assert from "node:assert/strict";
import fc from "fast-check";
import { competence, CurriculumSampler, difficultyRanks } from "./curriculum.ts";

Deno.test("competence: every schedule is non-decreasing, in (0, 1], and reaches 1 (property)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 500 }),
      fc.double({ min: 0.01, max: 1, noNaN: true }),
      fc.double({ min: 1, max: 4, noNaN: true }),
      (steps, initial, power) => {
        for (
          const s of [
            { kind: "linear" as const, steps, initial },
            { kind: "root" as const, steps, initial, power },
            {
              kind: "step" as const,
              stages: [{ until: steps, competence: initial }, {
                until: 2 * steps,
                competence: Math.min(1, initial + 0.1),
              }],
            },
          ]
        ) {
          let prev = 0;
          for (let t = 0; t <= 2 * steps + 1; t += Math.max(1, Math.floor(steps / 7))) {
            const c = competence(s, t);
            assert.ok(c > 0 && c <= 1 && c >= prev - 1e-12, `${s.kind} t=${t}: ${c}`);
            prev = c;
          }
          assert.equal(competence(s, 2 * steps + 1), 1);
        }
      },
    ),
  );
  assert.equal(competence({ kind: "root", steps: 100, initial: 0.1 }, 0), 0.1);
  assert.throws(
    () =>
      competence({
        kind: "step",
        stages: [{ until: 5, competence: 0.5 }, { until: 5, competence: 0.6 }],
      }, 0),
    /stages\[1\]\.until \(5\) must be > the previous stage's \(5\)/,
  );
  assert.throws(
    () => competence({ kind: "cosine" } as never, 0),
    /schedule\.kind must be one of "linear", "root", "step"/,
  );
});

Deno.test("difficultyRanks: empirical CDF with ties", () => {
  assert.deepEqual([...difficultyRanks([5, 5, 5])], [1, 1, 1]);
  assert.deepEqual([...difficultyRanks([0.9, 0.1])], [1, 0.5]);
});

Deno.test("CurriculumSampler: easy→hard, draws only eligible items, deterministic and resumable", () => {
  const items = Array.from(
    { length: 40 },
    (_, i) => ({ id: i, meta: { level: Math.floor(i / 10) } }),
  );
  const options = {
    schedule: {
      kind: "step" as const,
      stages: [{ until: 10, competence: 0.25 }, { until: 20, competence: 0.5 }],
    },
    seed: 3,
    difficulty: "meta.level",
  };
  const cur = new CurriculumSampler(items, options);
  assert.deepEqual(new Set(cur.eligible(0).map((x) => x.meta.level)), new Set([0]));
  assert.deepEqual(new Set(cur.eligible(15).map((x) => x.meta.level)), new Set([0, 1]));
  assert.equal(cur.eligible(20).length, 40);
  for (const t of [0, 12, 30]) {
    const maxLevel = t < 10 ? 0 : t < 20 ? 1 : 3;
    const batch = cur.sample(t, 25); // more than eligible at t = 0: a second pass
    assert.equal(batch.length, 25);
    assert.ok(batch.every((x) => x.meta.level <= maxLevel));
    if (t === 0) assert.equal(new Set(batch.slice(0, 10).map((x) => x.id)).size, 10);
  }
  const saved = JSON.parse(JSON.stringify(cur.state()));
  const resumed = CurriculumSampler.fromState(items, options, saved);
  assert.deepEqual(resumed.sample(15, 8), cur.sample(15, 8));
  // the easiest level is always eligible, even when c(t) is below its rank
  const tiny = new CurriculumSampler([{ difficulty: 1 }, { difficulty: 1 }, { difficulty: 2 }], {
    schedule: { kind: "linear", steps: 10, initial: 0.01 },
    seed: 0,
  });
  assert.equal(tiny.eligible(0).length, 2);
  assert.throws(
    () => new CurriculumSampler([{ d: 1 }], { schedule: { kind: "linear", steps: 1 }, seed: 0 }),
    /items\[0\]: field "difficulty" is missing .* available: "d"/,
  );
  assert.throws(
    () =>
      new CurriculumSampler([{ difficulty: "hard" }], {
        schedule: { kind: "linear", steps: 1 },
        seed: 0,
      }),
    /difficulty of items\[0\] must be a finite number, got "hard"/,
  );
});
