import assert from "node:assert/strict";
import { PassRateTracker } from "./pass_rate.ts";
import { priorityWeights, PromptSelector, removeMastered } from "./selection.ts";

/** Pearson's chi-square statistic of observed counts against expected probabilities. */
function chiSquare(counts: readonly number[], probs: readonly number[]): number {
  const n = counts.reduce((a, b) => a + b, 0);
  return counts.reduce((acc, c, i) => acc + (c - n * probs[i]!) ** 2 / (n * probs[i]!), 0);
}

// Upper 0.1% points of the chi-square distribution (df = 4 and 5).
const CHI2_999 = { 4: 18.467, 5: 20.515 } as const;

const UIDS = ["q0", "q1", "q2", "q3", "q4"];
const RATES = [0, 0.2, 0.5, 0.9, 1];

function trackerWith(rates: readonly number[]): PassRateTracker {
  const t = new PassRateTracker();
  rates.forEach((r, i) => t.update(UIDS[i]!, r));
  return t;
}

Deno.test("PromptSelector prioritized: empirical frequencies match p ∝ max(1 − s, ε) (chi-square, α = 0.001, 3 seeds)", () => {
  const tracker = trackerWith(RATES);
  const w = [...priorityWeights(RATES, { epsilon: 0.05 })];
  assert.deepEqual(w, [1, 0.8, 0.5, 0.09999999999999998, 0.05]);
  const total = w.reduce((a, b) => a + b, 0);
  const probs = w.map((x) => x / total);
  for (const seed of [1, 2, 3]) {
    const sel = new PromptSelector(UIDS, tracker, { strategy: "prioritized", seed, epsilon: 0.05 });
    const p = sel.probabilities();
    UIDS.forEach((u, i) => assert.ok(Math.abs(p.get(u)! - probs[i]!) < 1e-12));
    const counts = UIDS.map(() => 0);
    const N = 20000;
    for (let k = 0; k < N; k++) counts[UIDS.indexOf(sel.select(1)[0]!)]!++;
    const stat = chiSquare(counts, probs);
    assert.ok(stat < CHI2_999[4], `seed ${seed}: chi2 ${stat.toFixed(2)}, counts ${counts}`);
    // the mastered item still gets its small floor share (expected 0.05/2.45 ≈ 2%)
    assert.ok(counts[4]! > 0.01 * N && counts[4]! < 0.03 * N);
  }
});

Deno.test("PromptSelector: the first pick of select(k) follows p too, and picks are distinct", () => {
  const tracker = trackerWith(RATES);
  const w = [...priorityWeights(RATES, { epsilon: 0.05 })];
  const total = w.reduce((a, b) => a + b, 0);
  const sel = new PromptSelector(UIDS, tracker, { strategy: "prioritized", seed: 11 });
  const counts = UIDS.map(() => 0);
  for (let k = 0; k < 10000; k++) {
    const picks = sel.select(3);
    assert.equal(new Set(picks).size, 3);
    counts[UIDS.indexOf(picks[0]!)]!++;
  }
  assert.ok(chiSquare(counts, w.map((x) => x / total)) < CHI2_999[4]);
  assert.equal(sel.select(99).length, 5);
});

Deno.test("PromptSelector uniform: frequencies are flat (chi-square, α = 0.001)", () => {
  const uids = ["a", "b", "c", "d", "e", "f"];
  const sel = new PromptSelector(uids, trackerWith(RATES), { strategy: "uniform", seed: 5 });
  const counts = uids.map(() => 0);
  for (let k = 0; k < 12000; k++) counts[uids.indexOf(sel.select(1)[0]!)]!++;
  assert.ok(chiSquare(counts, uids.map(() => 1 / 6)) < CHI2_999[5], `counts ${counts}`);
});

Deno.test("PromptSelector: mastered prompts are removed; deterministic under a seed; exact resume", () => {
  const tracker = new PassRateTracker();
  for (let i = 0; i < 3; i++) tracker.update("easy", [1, 1, 1]);
  tracker.update("mid", [1, 0, 1]);
  const opts = { strategy: "prioritized" as const, seed: 9, mastery: { consecutive: 3 } };
  const sel = new PromptSelector(["easy", "mid", "new"], tracker, opts);
  assert.deepEqual(sel.active(), ["mid", "new"]);
  assert.deepEqual(sel.mastered(), ["easy"]);
  for (let k = 0; k < 200; k++) assert.notEqual(sel.select(1)[0], "easy");
  const again = new PromptSelector(["easy", "mid", "new"], tracker, opts);
  const a = Array.from({ length: 20 }, () => again.select(2).join());
  const b = new PromptSelector(["easy", "mid", "new"], tracker, opts);
  assert.deepEqual(Array.from({ length: 20 }, () => b.select(2).join()), a);
  const saved = JSON.parse(JSON.stringify(b.state()));
  const resumed = PromptSelector.fromState(["easy", "mid", "new"], tracker, saved);
  assert.deepEqual(
    Array.from({ length: 20 }, () => resumed.select(2).join()),
    Array.from({ length: 20 }, () => b.select(2).join()),
  );
  assert.equal(resumed.draws, b.draws);
  // all mastered: nothing to draw, no error
  const all = new PromptSelector(["easy"], tracker, opts);
  assert.deepEqual(all.select(3), []);
});

Deno.test("selection: removeMastered and argument errors", () => {
  const t = new PassRateTracker();
  t.update("a", 0.9);
  t.update("a", 0.95);
  assert.deepEqual(removeMastered(["a"], t, { consecutive: 2, threshold: 0.9 }).mastered, ["a"]);
  assert.throws(
    () => priorityWeights([0.5], { epsilon: 0 }),
    /epsilon must be a finite number in \(0, 1\], got 0/,
  );
  assert.throws(
    () => priorityWeights([1.2]),
    /rates\[0\] must be a finite number in \[0, 1\], got 1.2/,
  );
  assert.throws(
    () => new PromptSelector(["a", "a"], t, { strategy: "uniform", seed: 1 }),
    /uid "a" appears twice/,
  );
  assert.throws(
    () => new PromptSelector(["a"], t, { strategy: "greedy" as "uniform", seed: 1 }),
    /strategy must be one of "uniform", "prioritized", got "greedy"/,
  );
  assert.throws(
    () => new PromptSelector(["a"], t, { strategy: "uniform", seed: -1 }),
    /seed must be an integer in \[0, 2\^53\)/,
  );
});
