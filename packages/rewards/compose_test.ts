import assert from "node:assert/strict";
import fc from "fast-check";
import { defineBatchReward, defineReward } from "./define.ts";
import { clip, gated, normalizeThenSum, scale, weightedSum } from "./compose.ts";
import { scoreRewards } from "./runner.ts";
import type { RewardInput, RewardValue } from "./types.ts";

/** A reward returning `values[i]` on sample i (read from row.i). */
function fixed(name: string, values: readonly RewardValue[]) {
  return defineReward(name, ({ row }) => values[row.i as number]!);
}
const inputs = (n: number, prompts?: string[]): RewardInput[] =>
  Array.from(
    { length: n },
    (_, i) => ({ prompt: prompts?.[i] ?? "p", completion: "", row: { i } }),
  );
const close = (a: readonly (number | null)[], b: readonly (number | null)[]) => {
  assert.equal(a.length, b.length);
  a.forEach((x, i) => {
    const y = b[i]!;
    if (x === null || y === null) assert.equal(x, y, `index ${i}`);
    else assert.ok(Math.abs(x - y) < 1e-9, `index ${i}: ${x} vs ${y}`);
  });
};

Deno.test("weightedSum: hand-computed values; null terms are left out; all-null is null", async () => {
  const a = fixed("a", [1, null, 0.5, null]);
  const b = fixed("b", [2, 3, null, null]);
  const ws = weightedSum([{ reward: a, weight: 0.5 }, { reward: b, weight: -1 }]);
  const r = await scoreRewards([ws], inputs(4));
  close(r.outcomes.weighted_sum!.map((o) => o.value), [0.5 - 2, -3, 0.25, null]);
  assert.deepEqual(r.totals, [-1.5, -3, 0.25, 0]);
  // per-term metrics
  assert.equal(r.metrics["weighted_sum/a"]!.mean, 0.75);
  assert.equal(r.metrics["weighted_sum/b"]!.nulls, 2);
});

Deno.test("weightedSum: a failing term contributes the fallback and is recorded under its path", async () => {
  const ok = fixed("ok", [1, 1]);
  const broken = defineReward("broken", ({ row }) => {
    if (row.i === 1) throw new Error("judge down");
    return 0.5;
  });
  const ws = weightedSum([{ reward: ok, weight: 1 }, { reward: broken, weight: 2 }], {
    name: "ws",
  });
  const r = await scoreRewards([ws], inputs(2));
  assert.deepEqual(r.totals, [2, 1]);
  assert.equal(r.outcomes["ws/broken"]![1]!.reason, "judge down");
  assert.deepEqual(r.failures.map((f) => `${f.reward}#${f.index}`), ["ws/broken#1"]);
  const r2 = await scoreRewards([ws], inputs(2), { onError: null });
  assert.deepEqual(r2.totals, [2, 1]); // absent, not 0 (same sum here)
  assert.equal(r2.outcomes["ws/broken"]![1]!.value, null);
});

Deno.test("weightedSum: property: equals Σ w·v over the non-null terms", async () => {
  const val = fc.oneof(fc.double({ min: -10, max: 10, noNaN: true }), fc.constant(null));
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(val, val, val), { minLength: 1, maxLength: 8 }),
      fc.tuple(
        fc.double({ min: -3, max: 3, noNaN: true }),
        fc.double({ min: -3, max: 3, noNaN: true }),
        fc.double({ min: -3, max: 3, noNaN: true }),
      ),
      async (rows, w) => {
        const rewards = [0, 1, 2].map((k) => fixed(`r${k}`, rows.map((row) => row[k]!)));
        const ws = weightedSum(rewards.map((reward, k) => ({ reward, weight: w[k]! })));
        const r = await scoreRewards([ws], inputs(rows.length));
        const expected = rows.map((row) => {
          const present = row.map((v, k) => (v === null ? null : w[k]! * v)).filter((x) =>
            x !== null
          );
          return present.length === 0 ? null : present.reduce((s, x) => s + x!, 0);
        });
        close(r.outcomes.weighted_sum!.map((o) => o.value), expected);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("gated: applies the reward only where the gate passes; null gate → null", async () => {
  const reward = fixed("bonus", [0.3, 0.3, 0.3, null, 0.3]);
  const gate = fixed("correct", [1, 0.5, null, 1, 0]);
  const r = await scoreRewards([gated(reward, gate)], inputs(5));
  close(r.outcomes.bonus_gated!.map((o) => o.value), [0.3, 0, null, null, 0]);
  const loose = gated(reward, gate, { threshold: 0.5, otherwise: null, name: "loose" });
  const r2 = await scoreRewards([loose], inputs(5));
  close(r2.outcomes.loose!.map((o) => o.value), [0.3, 0.3, null, null, null]);
  const penalty = gated(reward, gate, { otherwise: -1, name: "pen" });
  const r3 = await scoreRewards([penalty], inputs(5));
  close(r3.outcomes.pen!.map((o) => o.value), [0.3, -1, null, null, -1]);
  assert.deepEqual(Object.keys(r.metrics).sort(), [
    "bonus_gated",
    "bonus_gated/bonus",
    "bonus_gated/correct",
    "total",
  ]);
});

Deno.test("normalizeThenSum: z-score across the batch, hand-computed (population std, ε = 0)", async () => {
  const a = fixed("a", [1, 2, 3, null]);
  const b = fixed("b", [10, 10, 10, 10]); // constant → 0
  const n = normalizeThenSum([{ reward: a, weight: 1 }, { reward: b, weight: 1 }], { epsilon: 0 });
  const r = await scoreRewards([n], inputs(4));
  const z = Math.sqrt(3 / 2); // (3 − 2) / sqrt(2/3)
  close(r.outcomes.normalized_sum!.map((o) => o.value), [-z, 0, z, 0]);
});

Deno.test("normalizeThenSum: default ε = 1e-6 is added to the std", async () => {
  const a = fixed("a", [0, 2]);
  const r = await scoreRewards([normalizeThenSum([{ reward: a, weight: 1 }])], inputs(2));
  close(r.totals, [-1 / (1 + 1e-6), 1 / (1 + 1e-6)]);
});

Deno.test("normalizeThenSum: min-max with weights, hand-computed", async () => {
  const a = fixed("a", [1, 2, 3, null]);
  const b = fixed("b", [0, 10, 20, 40]);
  const n = normalizeThenSum([{ reward: a, weight: 2 }, { reward: b, weight: 1 }], {
    method: "minmax",
  });
  const r = await scoreRewards([n], inputs(4));
  close(r.outcomes.normalized_sum!.map((o) => o.value), [0, 1.25, 2.5, 1]);
});

Deno.test("normalizeThenSum: group scope normalises within each prompt (GDPO)", async () => {
  const a = fixed("a", [1, 3, 5, 5, 7]);
  const n = normalizeThenSum([{ reward: a, weight: 1 }], { scope: "group", epsilon: 0 });
  const r = await scoreRewards([n], inputs(5, ["p1", "p1", "p2", "p2", "p3"]));
  close(r.totals, [-1, 1, 0, 0, 0]);
});

Deno.test("normalizeThenSum: property: z-scores of one reward have mean 0 and min-max lies in [0, 1]", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 1, maxLength: 20 }),
      async (vals) => {
        const a = fixed("a", vals);
        const z = await scoreRewards(
          [normalizeThenSum([{ reward: a, weight: 1 }])],
          inputs(vals.length),
        );
        assert.ok(Math.abs(z.totals.reduce((s, x) => s + x, 0)) < 1e-6 * vals.length);
        const mm = await scoreRewards(
          [normalizeThenSum([{ reward: a, weight: 1 }], { method: "minmax" })],
          inputs(vals.length),
        );
        assert.ok(mm.totals.every((x) => x >= 0 && x <= 1));
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("clip and scale: hand-computed, null passes through", async () => {
  const raw = fixed("raw", [5, -5, 0.5, null]);
  const r = await scoreRewards(
    [clip(raw, { min: -1, max: 1 }), scale(raw, 2, { offset: -1 })],
    inputs(4),
  );
  close(r.outcomes.raw_clipped!.map((o) => o.value), [1, -1, 0.5, null]);
  close(r.outcomes.raw_scaled!.map((o) => o.value), [9, -11, 0, null]);
  assert.throws(() => clip(raw, {}), /clip: options needs min, max or both/);
  assert.throws(
    () => clip(raw, { min: 1, max: 0 }),
    /clip: options.max must be a finite number >= 1, got 0/,
  );
});

Deno.test("composites nest; paths and direct scoreBatch work", async () => {
  const acc = fixed("acc", [1, 0]);
  const len = fixed("len", [-0.5, -2]);
  const total = weightedSum([
    { reward: acc, weight: 1 },
    { reward: clip(len, { min: -1 }), weight: 1 },
  ], { name: "total_reward" });
  const r = await scoreRewards([total], inputs(2));
  assert.deepEqual(r.totals, [0.5, -1]);
  assert.ok("total_reward/len_clipped/len" in r.outcomes);
  const direct = await total.scoreBatch!(inputs(2), { signal: new AbortController().signal });
  assert.deepEqual(direct, [0.5, -1]);
});

Deno.test("composites work with batched components", async () => {
  const rank = defineBatchReward("rank", (xs) => xs.map((_, i) => i));
  const ws = weightedSum([{ reward: rank, weight: 10 }]);
  const r = await scoreRewards([ws], inputs(3));
  assert.deepEqual(r.totals, [0, 10, 20]);
});

Deno.test("combinators: errors name the field, the value and the fix", () => {
  const a = fixed("a", []);
  const a2 = fixed("a", []);
  assert.throws(
    () => weightedSum([]),
    /weightedSum: terms must be a non-empty array of \{reward, weight\}/,
  );
  assert.throws(
    () => weightedSum([{ reward: a, weight: NaN }]),
    /weightedSum: terms\[0\].weight must be a finite number, got NaN/,
  );
  assert.throws(
    () => weightedSum([{ reward: a, weight: 1 }, { reward: a2, weight: 1 }]),
    /two different components are named "a"; give each a distinct name/,
  );
  assert.throws(
    () => normalizeThenSum([{ reward: a, weight: 1 }], { method: "rank" as "zscore" }),
    /options.method must be one of "zscore", "minmax", got "rank"/,
  );
  assert.throws(() => gated(a, {} as never), /gated: gate.name must be a non-empty string/);
  assert.throws(() => scale(a, Infinity), /scale: factor must be a finite number, got Infinity/);
});
