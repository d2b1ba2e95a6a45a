import assert from "node:assert/strict";
import fc from "fast-check";
import { gradcheck } from "@rlvr/tensor/testing";
import { aggregate, aggregationNames, getAggregation, registerAggregation } from "./aggregate.ts";
import { aggRef, f64, mat, near, randomCase, t } from "./_test_utils.ts";
import { tensor } from "@rlvr/tensor";

const MODES = [
  "token-mean",
  "seq-mean-token-sum",
  "seq-mean-token-mean",
  "seq-mean-token-sum-norm",
];

Deno.test("aggregate: golden values of every mode, by hand", async () => {
  // loss rows: [1, 2, 3] (3 valid), [4, x, x] (1 valid), [5, 6, 7] (fully masked row).
  const loss = t([[1, 2, 3], [4, 100, 100], [5, 6, 7]]);
  const mask = t([[1, 1, 1], [1, 0, 0], [0, 0, 0]]);
  // token-mean: (1+2+3+4)/4 valid tokens = 2.5
  near(await aggregate(loss, mask, "token-mean").item(), 2.5);
  // seq-mean-token-mean: rows' means 2 and 4; the empty row neither counts nor contributes → 3
  near(await aggregate(loss, mask, "seq-mean-token-mean").item(), 3);
  // seq-mean-token-sum: rows' sums 6 and 4 over 2 non-empty rows → 5
  near(await aggregate(loss, mask, "seq-mean-token-sum").item(), 5);
  // seq-mean-token-sum-norm: 5 / T (= 3) by default, 5 / 10 with lossScaleFactor 10
  near(await aggregate(loss, mask, "seq-mean-token-sum-norm").item(), 5 / 3);
  near(await aggregate(loss, mask, "seq-mean-token-sum-norm", { lossScaleFactor: 10 }).item(), 0.5);
  // an all-masked batch gives 0, not NaN
  const none = t([[0, 0, 0]]);
  for (const mode of MODES) near(await aggregate(t([[1, 2, 3]]), none, mode).item(), 0);
  // bool masks work like 0/1 masks
  const boolMask = tensor([[true, true, true], [true, false, false], [false, false, false]], {
    backend: f64,
  });
  near(await aggregate(loss, boolMask, "token-mean").item(), 2.5);
});

Deno.test("aggregate: equal-length sequences make the modes coincide (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 0, max: 1000 }),
      fc.double({ min: 1, max: 4096, noNaN: true }),
      async (b, tLen, seed, scale) => {
        const c = randomCase(seed, b, tLen, { full: true });
        const loss = t(c.adv);
        const mask = t(c.mask);
        const tokenMean = await aggregate(loss, mask, "token-mean").item();
        const seqMean = await aggregate(loss, mask, "seq-mean-token-mean").item();
        const seqSum = await aggregate(loss, mask, "seq-mean-token-sum").item();
        const norm = await aggregate(loss, mask, "seq-mean-token-sum-norm", {
          lossScaleFactor: scale,
        }).item();
        const tokenSum = c.adv.flat().reduce((a, v) => a + v, 0);
        near(seqMean, tokenMean, 1e-12, "token-mean = seq-mean-token-mean");
        near(seqSum, tLen * tokenMean, 1e-12, "seq-mean-token-sum = T·token-mean");
        near(norm, tokenSum / (b * scale), 1e-12, "seq-mean-token-sum-norm = sum/(B·L)");
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("aggregate: micro-batches with global counts sum to the full-batch loss (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 2, max: 6 }),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 0, max: 1000 }),
      fc.constantFrom(...MODES),
      fc.boolean(),
      async (b, tLen, seed, mode, emptyRow) => {
        const c = randomCase(seed, b, tLen, { emptyRow });
        const full = await aggregate(t(c.adv), t(c.mask), mode).item();
        const globalTokens = c.mask.flat().reduce((a, v) => a + v, 0);
        const globalSequences = c.mask.filter((r) => r.some((v) => v > 0)).length;
        let sum = 0;
        for (let start = 0; start < b; start += 2) {
          const rows = (m: number[][]) => m.slice(start, start + 2);
          sum += await aggregate(t(rows(c.adv)), t(rows(c.mask)), mode, {
            globalTokens: Math.max(globalTokens, 1),
            globalSequences: Math.max(globalSequences, 1),
          }).item();
        }
        near(sum, full, 1e-12, `${mode} micro-batch sum`);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("aggregate: random case against the plain-loop reference, and its gradient", async () => {
  const c = randomCase(7, 6, 9, { emptyRow: true });
  for (const mode of MODES) {
    near(
      await aggregate(t(c.adv), t(c.mask), mode).item(),
      aggRef(c.adv, c.mask, mode),
      1e-12,
      mode,
    );
    near(
      await aggregate(t(c.adv), t(c.mask), mode, { globalTokens: 50, globalSequences: 9 }).item(),
      aggRef(c.adv, c.mask, mode, { globalTokens: 50, globalSequences: 9 }),
      1e-12,
      mode,
    );
    const mask = t(c.mask);
    await gradcheck((x) => aggregate(x, mask, mode), [t(c.adv, true)]);
  }
  // The global counts may also be tensors.
  near(
    await aggregate(t(c.adv), t(c.mask), "token-mean", { globalTokens: t(50) }).item(),
    aggRef(c.adv, c.mask, "token-mean", { globalTokens: 50 }),
  );
  assert.deepEqual(await mat(t([[1]])), [[1]]);
});

Deno.test("aggregate: errors name the argument and list valid modes", () => {
  assert.throws(
    () => aggregate(t([[1]]), t([[1]]), "mean"),
    /^RangeError: unknown aggregation mode "mean"; valid keys: token-mean, token-sum, seq-mean-token-sum, seq-mean-token-mean, seq-mean-token-sum-norm/,
  );
  assert.throws(() => getAggregation("x"), /valid keys/);
  assert.throws(
    () => aggregate(t([[1, 2]]), t([[1]]), "token-mean"),
    /aggregate: mask shape \[1,1\] must equal loss shape \[1,2\]/,
  );
  assert.throws(
    () => aggregate(t([1, 2]), t([1, 1])),
    /loss must be a 2-D \[B, T\] tensor, got shape \[2\]/,
  );
  assert.throws(
    () => aggregate(t([[1]]), t([[1]]), "token-mean", { globalTokens: 0 }),
    /globalTokens must be a finite number > 0, got 0/,
  );
  assert.throws(
    () => aggregate(t([[1]]), t([[1]]), "seq-mean-token-sum-norm", { lossScaleFactor: -1 }),
    /lossScaleFactor must be a finite number > 0, got -1/,
  );
  assert.throws(
    () => aggregate(t([[1]]), t([[1]]), "token-mean", { globalToken: 3 } as never),
    /unknown option "globalToken"; valid options: globalTokens, globalSequences, lossScaleFactor/,
  );
  assert.throws(() => registerAggregation("token-mean", (l) => l.sum()), /already registered/);
  registerAggregation("test-sum", (l, m) => l.mul(m).sum());
  assert.ok(aggregationNames().includes("test-sum"));
  registerAggregation("test-sum", (l) => l.sum(), { override: true });
});
