import assert from "node:assert/strict";
import { formatNumber, runSummary } from "./summary.ts";

Deno.test("formatNumber: about 4 significant digits, exponent outside [1e-3, 1e6)", () => {
  assert.equal(formatNumber(0), "0");
  assert.equal(formatNumber(1), "1");
  assert.equal(formatNumber(-0.5), "-0.5");
  assert.equal(formatNumber(12.3456), "12.35");
  assert.equal(formatNumber(999.99), "1000");
  assert.equal(formatNumber(123456), "123456");
  assert.equal(formatNumber(1.5e6), "1.500e+6");
  assert.equal(formatNumber(0.00012), "1.200e-4");
  assert.equal(formatNumber(Infinity), "-");
  assert.equal(formatNumber(undefined), "-");
});

Deno.test("runSummary: numbers computed from the records", () => {
  const metrics = Array.from({ length: 20 }, (_, i) => ({
    step: i + 1,
    "reward/mean": (i + 1) / 20,
    entropy: 2 - i / 10,
    kl: i === 19 ? null : 0.01,
    tokens_per_s: 100 + i,
    "time/rollout_s": 1.5,
    "time/train_s": 0.25,
  }));
  const evals = [
    { step: 5, "pass@1": 0.2, "pass@k": 0.5, k: 4, n: 8 },
    { step: 10, "pass@1": 0.6, "pass@k": 0.8, k: 4, n: 8 },
    { step: 20, "pass@1": 0.4, "pass@k": 0.9, k: 4, n: 8 },
  ];
  const rows = Object.fromEntries(runSummary(metrics, evals).map((r) => [r.metric, r.value]));
  assert.deepEqual(rows, {
    steps: "20",
    "last step": "20",
    "reward/mean first -> last": "0.05 -> 1",
    "held-out pass@1 first -> last": "0.2 -> 0.4",
    "held-out pass@1 best": "0.6 (step 10)",
    "held-out pass@k last": "0.9 (k=4, n=8)",
    // last 10% = steps 19 and 20: entropy 2 - 18/10 and 2 - 19/10; kl only step 19 (20 is null)
    "entropy (last 10%)": formatNumber((0.2 + 0.1) / 2),
    "kl (last 10%)": "0.01",
    "tokens_per_s mean": formatNumber(100 + 19 / 2),
    "time/rollout_s total": "30",
    "time/train_s total": "5",
  });
  const empty = runSummary([], []);
  assert.ok(empty.every((r) => r.value === "-" || r.value === "0"), JSON.stringify(empty));
});
