import assert from "node:assert/strict";
import fc from "fast-check";
import { parseConfidence, rlcrReward, rlcrScore } from "./calibration.ts";
import { defineReward } from "./define.ts";
import { scoreRewards } from "./runner.ts";

Deno.test("parseConfidence: last tag, decimals and percentages, invalid → null", () => {
  assert.equal(parseConfidence("<confidence>0.2</confidence> <confidence>.9</confidence>"), 0.9);
  assert.equal(parseConfidence("<Confidence>100%</Confidence>"), 1);
  assert.equal(parseConfidence("<confidence>0</confidence>"), 0);
  assert.equal(parseConfidence("<confidence>high</confidence>"), null);
  assert.equal(parseConfidence("<confidence>-0.1</confidence>"), null);
  assert.equal(parseConfidence("<confidence>120%</confidence>"), null);
});

Deno.test("rlcrScore: property: equals c − (q − c)², the maximum over q is at q = c", () => {
  fc.assert(fc.property(fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true }), (ok, q) => {
    const c = ok ? 1 : 0;
    assert.ok(Math.abs(rlcrScore(ok, q) - (c - (q - c) ** 2)) < 1e-15);
    assert.ok(rlcrScore(ok, q) <= rlcrScore(ok, c));
  }));
});

Deno.test("rlcrReward: golden values and each missing-confidence policy", async () => {
  const correct = defineReward("correct", ({ row }) => row.ok as number | null);
  const mk = (conf: string | null, ok: number | null) => ({
    prompt: "",
    completion: `<answer>x</answer>${conf === null ? "" : `<confidence>${conf}</confidence>`}`,
    row: { ok },
  });
  const inputs = [
    mk("0.8", 1),
    mk("0.8", 0),
    mk(null, 1),
    mk(null, 0),
    mk("0.3", null),
    mk("abc", 0),
  ];
  const r = await scoreRewards([
    rlcrReward({ correct }),
    rlcrReward({ correct, missingConfidence: 0.5, name: "assume_half" }),
    rlcrReward({ correct, missingConfidence: "null", name: "skip" }),
  ], inputs);
  const near = (got: (number | null)[], want: (number | null)[]) =>
    got.forEach((g, i) => {
      const w = want[i]!;
      if (g === null || w === null) assert.equal(g, w, `index ${i}`);
      else assert.ok(Math.abs(g - w) < 1e-12, `index ${i}: ${g} vs ${w}`);
    });
  near(r.outcomes.rlcr!.map((o) => o.value), [0.96, -0.64, 0, -1, null, -1]);
  near(r.outcomes.assume_half!.map((o) => o.value), [0.96, -0.64, 0.75, -0.25, null, -0.25]);
  near(r.outcomes.skip!.map((o) => o.value), [0.96, -0.64, null, null, null, null]);
});

Deno.test("rlcrReward: a predicate for correctness; errors and bad options are named", async () => {
  const rlcr = rlcrReward({
    correct: ({ completion }) => completion.includes("<answer>4</answer>"),
  });
  const r = await scoreRewards([rlcr], [{
    prompt: "",
    completion: "<answer>4</answer><confidence>1</confidence>",
    row: {},
  }]);
  assert.deepEqual(r.totals, [1]);
  const badPred = rlcrReward({ correct: () => "yes" as unknown as boolean, name: "bad" });
  const r2 = await scoreRewards([badPred], [{ prompt: "", completion: "", row: {} }]);
  assert.match(
    r2.outcomes.bad![0]!.reason!,
    /the correctness predicate returned "yes"; it must return a boolean/,
  );
  assert.throws(
    () => rlcrReward({ correct: () => true, missingConfidence: 2 }),
    /options.missingConfidence must be "worst", "null" or a number in \[0, 1\], got 2/,
  );
  assert.throws(
    () => rlcrReward({ correct: 5 as never }),
    /options.correct must be a reward .* or a predicate/,
  );
});
