import assert from "node:assert/strict";
import {
  checkEvalRecord,
  checkSampleRecord,
  checkStepMetrics,
  REQUIRED_METRICS,
} from "./records.ts";

const full = () => Object.fromEntries(REQUIRED_METRICS.map((k) => [k, k === "step" ? 3 : 0.5]));

Deno.test("checkStepMetrics: the issue's required keys, numbers or null, extra keys allowed", () => {
  assert.deepEqual(REQUIRED_METRICS, [
    "step",
    "reward/mean",
    "reward/std",
    "frac_zero_std_groups",
    "response_length/mean",
    "entropy",
    "kl",
    "clip_frac/low",
    "clip_frac/high",
    "grad_norm",
    "lr",
    "tokens_per_s",
    "time/rollout_s",
    "time/train_s",
  ]);
  checkStepMetrics({ ...full(), kl: null, "reward/format": 0.25 });
  for (const key of REQUIRED_METRICS.slice(1)) {
    const r = full();
    delete r[key];
    assert.throws(() => checkStepMetrics(r), new RegExp(`missing "${key.replace("/", "\\/")}"`));
  }
  assert.throws(
    () => checkStepMetrics({ ...full(), step: -1 }),
    /step must be an integer >= 0, got -1/,
  );
  assert.throws(
    () => checkStepMetrics({ ...full(), entropy: NaN }),
    /"entropy" must be a number or null, got NaN/,
  );
  assert.throws(
    () => checkStepMetrics({ ...full(), extra: "x" }),
    /"extra" must be a number or null/,
  );
});

Deno.test("checkEvalRecord / checkSampleRecord", () => {
  checkEvalRecord({ step: 0, "pass@1": 0, "pass@k": 1, k: 1, n: 1, problems: 32 });
  assert.throws(
    () => checkEvalRecord({ step: 0, "pass@1": 0.5, "pass@k": 1, k: 0, n: 4 }),
    /k must be an integer in \[1, n = 4\]/,
  );
  assert.throws(
    () => checkEvalRecord({ step: 0, "pass@1": 0.5, "pass@k": NaN, k: 1, n: 4 }),
    /"pass@k" must be a number in \[0, 1\]/,
  );
  assert.throws(
    () => checkEvalRecord({ step: 0, "pass@1": 0.5, "pass@k": 1, k: 1, n: 0 }),
    /n must be an integer >= 1/,
  );
  checkSampleRecord({ step: 2, prompt: "", completion: "", reward: -1, answer: "4" });
  assert.throws(
    () => checkSampleRecord({ step: 2, prompt: "p", completion: "c", reward: Infinity }),
    /reward must be a finite number/,
  );
  assert.throws(
    () => checkSampleRecord({ step: "2", prompt: "p", completion: "c", reward: 1 }),
    /samples: step must be/,
  );
});
