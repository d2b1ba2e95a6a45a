import assert from "node:assert/strict";
import fc from "fast-check";
import { repeatedNgramFraction, repetitionPenalty } from "./repetition.ts";
import { scoreRewards } from "./runner.ts";

Deno.test("repeatedNgramFraction: golden values", () => {
  assert.equal(repeatedNgramFraction("a a a a a".split(" "), 1), 0.8); // 1 distinct of 5
  assert.equal(repeatedNgramFraction("a b c a b c".split(" "), 3), 0.25); // abc bca cab abc: 3 of 4
  assert.equal(repeatedNgramFraction([], 3), 0);
  assert.throws(() => repeatedNgramFraction(["a"], 0), /n must be an integer >= 1, got 0/);
});

Deno.test("repeatedNgramFraction: property: in [0, 1); 0 for distinct tokens", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("a", "b", "c"), { maxLength: 40 }),
      fc.integer({ min: 1, max: 5 }),
      (toks, n) => {
        const f = repeatedNgramFraction(toks, n);
        assert.ok(f >= 0 && f < 1);
      },
    ),
  );
  fc.assert(fc.property(fc.uniqueArray(fc.string({ minLength: 1 }), { maxLength: 20 }), (toks) => {
    assert.equal(repeatedNgramFraction(toks, 1), 0);
  }));
});

Deno.test("repetitionPenalty: lower-cased words, scaled by maxPenalty", async () => {
  const rep = repetitionPenalty({ n: 1, maxPenalty: -0.5 });
  const r = await scoreRewards([rep], [
    { prompt: "", completion: "Go go GO go", row: {} }, // 1 distinct of 4 → 0.75
    { prompt: "", completion: "all different words", row: {} },
  ]);
  assert.deepEqual(r.totals, [-0.375, 0]);
  assert.ok(Object.is(r.outcomes.repetition![1]!.value, 0), "0, not -0");
  assert.throws(
    () => repetitionPenalty({ maxPenalty: 1 }),
    /options.maxPenalty must be a finite number <= 0, got 1/,
  );
});
