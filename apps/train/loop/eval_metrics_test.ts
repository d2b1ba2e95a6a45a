import assert from "node:assert/strict";
import { arithmeticTask } from "@rlvr/rewards";
import { passAtK } from "@rlvr/sampling";
import { evalMetrics, finalAnswer, type ProblemSamples, voteKey } from "./eval_metrics.ts";

// Hand-made problems with n = 4 samples: small enough to work every metric out by hand.
const problems: ProblemSamples[] = [
  { rewards: [1, 1, 1, 1], answers: ["7", "7", "7.0", "7"] }, // all right
  { rewards: [0, 0, 0, 1], answers: ["5", "5", "6", "8"] }, // majority wrong, one right
  { rewards: [0, 1, 1, 0], answers: ["2", "3", "3", "2"] }, // tie 2-2, the wrong "2" first
  { rewards: [0, 0, 0, 0], answers: [null, null, null, null] }, // nothing extracted
];

Deno.test("evalMetrics: pass@1, pass@k, avg@k and maj@k per problem, averaged", () => {
  // 400 resamples: intervals are only checked for containing the estimate and for determinism.
  const m = evalMetrics(problems, 2, { resamples: 400 });
  const c = [4, 1, 2, 0];
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  assert.equal(m.metrics["pass@1"].estimate, mean(c.map((x) => x / 4)));
  assert.equal(m.metrics["pass@k"].estimate, mean(c.map((x) => passAtK(4, x, 2))));
  assert.equal(m.metrics["avg@k"].estimate, m.metrics["pass@1"].estimate);
  // maj@2 looks at the first two answers: "7","7" right; "5","5" wrong; "2","3" tie -> "2"
  // (first) wrong; abstain -> 0.
  assert.equal(m.metrics["maj@k"].estimate, 0.25);
  // maj@4: "7" x4 right; "5" x2 wrong; "2"/"3" 2-2 tie -> "2" wrong; abstain.
  assert.equal(evalMetrics(problems, 4, { resamples: 400 }).metrics["maj@k"].estimate, 0.25);
  for (const ci of Object.values(m.metrics)) {
    assert.ok(ci.lower <= ci.estimate && ci.estimate <= ci.upper);
    assert.equal(ci.level, 0.95);
  }
  assert.deepEqual(evalMetrics(problems, 2, { resamples: 400 }), m); // seeded
  assert.deepEqual(m.ci, {
    method: "percentile bootstrap over problems",
    level: 0.95,
    resamples: 400,
    seed: 0,
  });
});

Deno.test("evalMetrics: maj@k groups equal answers written differently", () => {
  // Apart, the four answers would be four single votes and the first, a wrong "8", would win.
  const p: ProblemSamples = { rewards: [0, 1, 1, 1], answers: ["8", "7", "7.0", "$7"] };
  assert.equal(evalMetrics([p], 4, { resamples: 2 }).metrics["maj@k"].estimate, 1);
});

Deno.test("evalMetrics: rejects ragged input and a k outside [1, n]", () => {
  assert.throws(() => evalMetrics([], 1), /no problems/);
  assert.throws(
    () => evalMetrics([problems[0]!, { rewards: [1], answers: ["1"] }], 1),
    /problem 1 has 1 rewards and 1 answers; every problem needs n = 4/,
  );
  assert.throws(() => evalMetrics(problems, 5), /k must be an integer in \[1, n = 4\], got 5/);
});

Deno.test("voteKey and finalAnswer", () => {
  assert.equal(voteKey("7"), voteKey("7.00"));
  assert.equal(voteKey("\\frac{1}{2}"), voteKey("0.5"));
  assert.notEqual(voteKey("50%"), voteKey("50"));
  assert.equal(voteKey("x+1"), "x+1");
  const task = arithmeticTask({ digits: 1, chainLength: 1 });
  const row = task.row(0, 0);
  assert.equal(finalAnswer(task, row, "<answer> 9 </answer> tail"), "9");
  assert.equal(finalAnswer(task, row, "\\boxed{3}"), "3");
  assert.equal(finalAnswer(task, row, "  "), null);
});
