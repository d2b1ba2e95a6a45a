import assert from "node:assert/strict";
import fc from "fast-check";
import { allocateBudget, budgetForPassRate, budgetWeight } from "./budget.ts";

Deno.test("budgetForPassRate: most samples at p = 0.5, fewest at 0 and 1, symmetric", () => {
  const o = { min: 2, max: 16 };
  const ns = [0, 0.1, 0.3, 0.5, 0.7, 0.9, 1].map((p) => budgetForPassRate(p, o));
  assert.deepEqual(ns, [2, 7, 14, 16, 14, 7, 2]);
  assert.deepEqual([0, 0.5, 1].map((p) => budgetForPassRate(p, { ...o, shape: "hard" })), [
    16,
    9,
    2,
  ]);
  assert.equal(budgetForPassRate(undefined, { ...o, unknownRate: 0 }), 2);
  assert.throws(
    () => budgetForPassRate(0.5, { min: 4, max: 2 }),
    /max must be an integer >= 4, got 2/,
  );
  assert.throws(() => budgetWeight(-0.1), /p must be a finite number in \[0, 1\], got -0.1/);
});

Deno.test("allocateBudget: sums to the total, stays in [min, max], more weight never gets fewer samples (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }), {
        minLength: 1,
        maxLength: 20,
      }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 0, max: 12 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.constantFrom("medium" as const, "hard" as const),
      (rates, min, span, fill, shape) => {
        const max = min + span;
        const n = rates.length;
        const total = n * min + Math.round(fill * n * span);
        const out = allocateBudget(rates, total, { min, max, shape });
        assert.equal(out.reduce((a, b) => a + b, 0), total);
        assert.ok(out.every((x) => Number.isInteger(x) && x >= min && x <= max));
        const w = rates.map((p) => budgetWeight(p ?? 0.5, shape));
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < n; j++) {
            if (w[i]! > w[j]! + 1e-12) assert.ok(out[i]! >= out[j]!, `${w[i]} vs ${w[j]}: ${out}`);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
  assert.throws(
    () => allocateBudget([0.5, 0.5], 100, { min: 2, max: 8 }),
    /total 100 cannot be split over 2 prompts .* \[4, 16\]/,
  );
});
