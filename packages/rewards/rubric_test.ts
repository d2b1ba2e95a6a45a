import assert from "node:assert/strict";
import fc from "fast-check";
import { citationRubric, rowRubricReward, rubricReward } from "./rubric.ts";
import { defineReward } from "./define.ts";
import { scoreRewards } from "./runner.ts";

const one = (
  completion: string,
  row: Record<string, unknown> = {},
) => [{ prompt: "", completion, row }];

Deno.test("rubricReward: weighted fraction over regex, substring, predicate and reward criteria", async () => {
  const lengthOk = defineReward("short", ({ completion }) => (completion.length < 30 ? 1 : 0.25));
  const rubric = rubricReward([
    { check: /\bmitochondria\b/i, weight: 3 },
    { check: "ATP", weight: 1 },
    { check: ({ completion }) => completion.endsWith("."), weight: 2 },
    { check: lengthOk, weight: 2 },
    { check: () => null, weight: 100 }, // not applicable: leaves both sums
  ]);
  const r = await scoreRewards([rubric], [
    ...one("Mitochondria make ATP."), // 3 + 1 + 2 + 2 = 8 of 8
    ...one("Mitochondria make energy for the cell, a lot of it"), // 3 + 0 + 0 + 0.5 = 3.5 of 8
  ]);
  assert.deepEqual(r.totals, [1, 3.5 / 8]);
});

Deno.test("rubricReward: global regexes are safe to reuse; numbers are clamped to [0, 1]", async () => {
  const rubric = rubricReward([{ check: /x/g }, { check: () => 7 }, { check: () => -3 }]);
  const r = await scoreRewards([rubric], [...one("x"), ...one("x"), ...one("x")]);
  assert.deepEqual(r.totals, [2 / 3, 2 / 3, 2 / 3]);
});

Deno.test("rubricReward: all criteria null → null; bad criteria are named", async () => {
  const r = await scoreRewards([rubricReward([{ check: () => null }])], one("x"));
  assert.equal(r.outcomes.rubric![0]!.status, "null");
  assert.throws(
    () => rubricReward([]),
    /rubricReward: criteria must be a non-empty array of \{check, weight\?\}/,
  );
  assert.throws(
    () => rubricReward([{ check: "a", weight: 0 }]),
    /criteria\[0\].weight must be a finite number > 0, got 0/,
  );
  const bad = rubricReward([{ check: () => "yes" as unknown as boolean, name: "tone" }], {
    name: "bad",
  });
  const r2 = await scoreRewards([bad], one("x"));
  assert.match(r2.outcomes.bad![0]!.reason!, /criterion "tone" returned "yes"/);
});

Deno.test("rubricReward: property: score is in [0, 1] and equals the weighted fraction", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 5 })), {
        minLength: 1,
        maxLength: 8,
      }),
      async (items) => {
        const rubric = rubricReward(items.map(([ok, w]) => ({ check: () => ok, weight: w })));
        const r = await scoreRewards([rubric], one(""));
        const want = items.reduce((s, [ok, w]) => s + (ok ? w : 0), 0) /
          items.reduce((s, [, w]) => s + w, 0);
        assert.ok(Math.abs(r.totals[0]! - want) < 1e-12);
      },
    ),
    { numRuns: 50 },
  );
});

Deno.test("rowRubricReward: criteria from the row; malformed items are errors naming the index", async () => {
  const rubric = rowRubricReward();
  const row = {
    rubric: [{ pattern: "^yes", weight: 2 }, { includes: "because" }, { excludes: "maybe" }],
  };
  const r = await scoreRewards([rubric], [
    ...one("Yes, because it rains.", row),
    ...one("yes maybe", row),
    ...one("x", { rubric: [{ pattern: "(" }] }),
    ...one("x", { rubric: [{ includes: "a", excludes: "b" }] }),
  ]);
  assert.deepEqual(r.outcomes.row_rubric!.map((o) => o.value), [1, 0.5, 0, 0]);
  assert.match(
    r.outcomes.row_rubric![2]!.reason!,
    /row.rubric\[0\].pattern "\(" is not a valid regular expression/,
  );
  assert.match(
    r.outcomes.row_rubric![3]!.reason!,
    /row.rubric\[0\] must have exactly one of pattern, includes, excludes/,
  );
});

Deno.test("citationRubric: a claim counts only with an in-sentence citation of a known source", async () => {
  const rubric = citationRubric();
  const row = {
    sources: ["S1", { id: "S2" }, 3],
    claims: [
      { claim: "capital is Canberra", sources: ["S1", "S2"] },
      { pattern: "population of \\d+ million", weight: 3 },
      { claim: "founded in 1913", sources: ["S3"] },
    ],
  };
  const cases: [string, number][] = [
    // all three claims, each cited correctly (claim 3 needs source 3 — "S3" is not a source id; "3" is)
    [
      "The capital is Canberra [S1]. It has a population of 26 million [S2, 3]. It was founded in 1913 [3].",
      (1 + 3) / 5,
    ],
    // claim 1 cited with a source not in its list (S2 is allowed), claim 2 uncited
    ["The capital is Canberra [S2]. It has a population of 26 million.", 1 / 5],
    // citation in another sentence does not count
    ["The capital is Canberra. Source: [S1].", 0],
    // unknown source id
    ["The capital is Canberra [S9].", 0],
  ];
  const r = await scoreRewards([rubric], cases.map(([c]) => ({ prompt: "", completion: c, row })));
  r.totals.forEach((t, i) => assert.ok(Math.abs(t - cases[i]![1]) < 1e-12, `case ${i}: ${t}`));
});

Deno.test("citationRubric: claim source lists restrict which ids count", async () => {
  const row = { sources: ["A", "B"], claims: [{ claim: "water boils at 100", sources: ["A"] }] };
  const r = await scoreRewards([citationRubric()], [
    ...one("Water boils at 100 C [A].", row),
    ...one("Water boils at 100 C [B].", row),
  ]);
  assert.deepEqual(r.totals, [1, 0]);
});

Deno.test("citationRubric: penalty for unknown ids, null without claims, error without sources", async () => {
  const rubric = citationRubric({ unknownCitationPenalty: 0.25, citation: /\(source: ([^)]+)\)/g });
  const row = { sources: ["x"], claims: [{ claim: "sky is blue" }] };
  const r = await scoreRewards([rubric], [
    ...one("The sky is blue (source: x). Also (source: y; z).", row),
    ...one("anything", { claims: [] }),
    ...one("anything", { claims: [{ claim: "a" }] }),
  ]);
  assert.deepEqual(r.outcomes.citation_rubric!.map((o) => o.value), [0.5, null, 0]);
  assert.match(
    r.outcomes.citation_rubric![2]!.reason!,
    /row.sources must be an array of source ids or \{id\} objects, got undefined; add the sources the model was shown to the row/,
  );
});
