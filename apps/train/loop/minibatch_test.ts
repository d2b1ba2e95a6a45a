import assert from "node:assert/strict";
import fc from "fast-check";
import { microBatches, miniBatchPlan } from "./minibatch.ts";

Deno.test("miniBatchPlan: every epoch partitions the batch into mini-batches of the asked size", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 70 }),
      fc.option(fc.integer({ min: 1, max: 80 }), { nil: null }),
      fc.integer({ min: 1, max: 4 }),
      fc.boolean(),
      fc.integer({ min: 0, max: 2 ** 31 }),
      fc.integer({ min: 0, max: 10_000 }),
      (batchSize, miniBatchSize, epochs, shuffle, seed, step) => {
        const plan = miniBatchPlan({ batchSize, miniBatchSize, epochs, shuffle, seed, step });
        assert.equal(plan.length, epochs);
        const size = miniBatchSize ?? batchSize;
        for (const epoch of plan) {
          assert.equal(epoch.length, batchSize === 0 ? 0 : Math.ceil(batchSize / size));
          epoch.forEach((mini, i) => {
            if (i < epoch.length - 1) assert.equal(mini.length, size);
            assert.ok(mini.length >= 1 && mini.length <= size);
          });
          const rows = epoch.flat().sort((a, b) => a - b);
          assert.deepEqual(rows, Array.from({ length: batchSize }, (_, i) => i));
          // One mini-batch (or no shuffling): the rollout order is kept.
          if (epoch.length <= 1 || !shuffle) {
            assert.deepEqual(epoch.flat(), Array.from({ length: batchSize }, (_, i) => i));
          }
        }
        // A pure function of its options.
        assert.deepEqual(
          miniBatchPlan({ batchSize, miniBatchSize, epochs, shuffle, seed, step }),
          plan,
        );
      },
    ),
  );
});

Deno.test("miniBatchPlan: shuffling differs between steps and epochs", () => {
  const opts = { batchSize: 64, miniBatchSize: 16, epochs: 2, shuffle: true, seed: 3 };
  const a = miniBatchPlan({ ...opts, step: 1 });
  const b = miniBatchPlan({ ...opts, step: 2 });
  assert.notDeepEqual(a[0], b[0]);
  assert.notDeepEqual(a[0], a[1]);
  assert.notDeepEqual(a[0]!.flat(), Array.from({ length: 64 }, (_, i) => i));
});

Deno.test("miniBatchPlan and microBatches reject bad sizes with the value", () => {
  const base = { batchSize: 8, epochs: 1, shuffle: false, seed: 0, step: 0 };
  assert.throws(() => miniBatchPlan({ ...base, miniBatchSize: 0 }), /miniBatchSize .* got 0/);
  assert.throws(() => miniBatchPlan({ ...base, miniBatchSize: 2, epochs: 0 }), /epochs .* got 0/);
  assert.throws(() => microBatches([1, 2], 1.5), /size .* got 1.5/);
});

Deno.test("microBatches: consecutive chunks of at most size, in order", () => {
  fc.assert(
    fc.property(
      fc.array(fc.nat(), { maxLength: 50 }),
      fc.integer({ min: 1, max: 60 }),
      (rows, size) => {
        const parts = microBatches(rows, size);
        assert.deepEqual(parts.flat(), rows);
        assert.ok(parts.every((p) => p.length >= 1 && p.length <= size));
        assert.equal(parts.length, Math.ceil(rows.length / size));
      },
    ),
  );
});
