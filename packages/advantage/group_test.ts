import assert from "node:assert/strict";
import fc from "fast-check";
import { fixedGroupIndex, groupMembers, groupStatistics } from "./group.ts";

Deno.test("groupStatistics golden: [1, 0, 1] and a singleton", () => {
  const [g, s] = groupStatistics([1, 0, 5, 1], ["a", "a", "b", "a"]);
  // a = [1, 0, 1]: mean 2/3, unbiased var (1/9 + 4/9 + 1/9)/2 = 1/3
  assert.deepEqual(g!.members, [0, 1, 3]);
  assert.equal(g!.count, 3);
  assert.ok(Math.abs(g!.mean - 2 / 3) < 1e-15 && Math.abs(g!.std - Math.sqrt(1 / 3)) < 1e-15);
  // singleton: std 0 here (each estimator applies its own singleton rule)
  assert.deepEqual({ ...s }, { key: "b", members: [2], count: 1, mean: 5, std: 0 });
});

Deno.test("groupMembers: ragged, interleaved, 1 and '1' are different groups", () => {
  assert.deepEqual(groupMembers([1, "1", 1, 2]), [
    { key: 1, members: [0, 2] },
    { key: "1", members: [1] },
    { key: 2, members: [3] },
  ]);
});

Deno.test("groupStatistics property: matches a per-group reference; identical rewards → exact mean, std 0", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.double({ min: -1e3, max: 1e3, noNaN: true }), fc.integer({ min: 0, max: 3 })),
        {
          minLength: 1,
          maxLength: 30,
        },
      ),
      (cells) => {
        const rewards = cells.map(([r]) => r);
        const index = cells.map(([, g]) => g);
        for (const g of groupStatistics(rewards, index)) {
          const vals = g.members.map((i) => rewards[i]!);
          const mean = vals.reduce((a, b) => a + b) / vals.length;
          assert.ok(Math.abs(g.mean - mean) <= 1e-9 * (1 + Math.abs(mean)));
          if (vals.length > 1) {
            const sd = Math.sqrt(vals.reduce((a, b) => a + (b - mean) ** 2, 0) / (vals.length - 1));
            assert.ok(Math.abs(g.std - sd) <= 1e-9 * (1 + sd));
          }
        }
        const same = groupStatistics(rewards.map(() => rewards[0]!), index);
        for (const g of same) assert.ok(g.mean === rewards[0] && g.std === 0);
      },
    ),
  );
});

Deno.test("fixedGroupIndex and invalid inputs name the argument and the value", () => {
  assert.deepEqual(fixedGroupIndex(4, 2), [0, 0, 1, 1]);
  assert.deepEqual(fixedGroupIndex(0, 3), []);
  assert.throws(
    () => fixedGroupIndex(10, 4),
    /fixedGroupIndex: batch 10 is not divisible by groupSize 4/,
  );
  assert.throws(
    () => fixedGroupIndex(4, 0),
    /fixedGroupIndex: groupSize must be an integer >= 1, got 0/,
  );
  assert.throws(
    () => groupStatistics([1, NaN], [0, 0]),
    /groupStatistics: rewards\[1\] is NaN; rewards must be finite numbers/,
  );
  assert.throws(
    () => groupMembers([0, undefined as never]),
    /groupMembers: index\[1\] is undefined; group ids must be strings or finite numbers/,
  );
});
