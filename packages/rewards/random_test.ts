import assert from "node:assert/strict";
import fc from "fast-check";
import { scoreRewards } from "./core.ts";
import { randomReward } from "./random.ts";

Deno.test("randomReward: p = 0 and p = 1 are constant; a draw depends on the seed, row and completion only", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.string(),
      fc.string(),
      fc.integer({ min: 0, max: 1000 }),
      async (id, completion, seed) => {
        const input = { prompt: "p", completion, row: { id } };
        const score = async (p: number, s = seed) =>
          (await scoreRewards([randomReward({ p, seed: s })], [input])).totals[0];
        assert.equal(await score(0), 0);
        assert.equal(await score(1), 1);
        assert.equal(await score(0.5), await score(0.5));
      },
    ),
  );
});

Deno.test("randomReward: the rate of 1s follows p, independent of correctness", async () => {
  for (const p of [0.1, 0.5, 0.9]) {
    const inputs = Array.from(
      { length: 2000 },
      (_, i) => ({ prompt: "", completion: String(i), row: { id: "r" } }),
    );
    const { totals } = await scoreRewards([randomReward({ p, seed: 3 })], inputs);
    const rate = totals.reduce((a: number, b) => a + (b ?? 0), 0) / totals.length;
    // 2000 draws: the binomial standard deviation is at most 0.0112; 5 of them.
    assert.ok(Math.abs(rate - p) < 0.056, `p ${p}: rate ${rate}`);
  }
});

Deno.test("randomReward: bad options name the field and the value", () => {
  assert.throws(() => randomReward({ p: 1.5 }), /randomReward: options\.p must be .*got 1\.5/);
  assert.throws(
    () => randomReward({ seed: 0.5 }),
    /randomReward: options\.seed must be .*integer.*got 0\.5/,
  );
  assert.throws(
    () => randomReward({ P: 0.5 } as never),
    /randomReward: unknown option "P"; use p or seed/,
  );
});
