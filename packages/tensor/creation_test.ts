import assert from "node:assert/strict";
import fc from "fast-check";
import { arange, full, ones, rand, randint, randn, tensor, zeros } from "./creation.ts";
import { manualSeed, Rng } from "./random.ts";

Deno.test("tensor: nested arrays, flat data with shape, typed arrays, scalars and booleans", async () => {
  assert.deepEqual(await tensor([[1, 2], [3, 4]]).toArray(), [[1, 2], [3, 4]]);
  assert.deepEqual(tensor(5).shape, []);
  assert.equal(await tensor(5).item(), 5);
  assert.equal(tensor([true, false]).dtype, "bool");
  assert.equal(tensor(new Int32Array([1, 2])).dtype, "i32");
  assert.deepEqual(tensor(new Float32Array(6), { shape: [2, 3] }).shape, [2, 3]);
  assert.deepEqual(tensor([], { shape: [0, 3] }).shape, [0, 3]);
});

Deno.test("tensor: ragged arrays, size mismatches and fractional i32 values are named", () => {
  assert.throws(
    () => tensor([[1, 2], [3]]),
    /tensor: ragged nested array at data\[1\]: expected 2 entries/,
  );
  assert.throws(
    () => tensor([1, 2, 3], { shape: [2, 2] }),
    /tensor: 3 values cannot fill shape \[2,2\] \(4 elements\)/,
  );
  assert.throws(
    () => tensor([1.5], { dtype: "i32" }),
    /tensor: value 1.5 at flat index 0 is not an integer, but dtype is i32/,
  );
  assert.throws(
    () => tensor([1], { dtype: "f16" as never }),
    /unknown dtype "f16"; use one of f32, i32, bool/,
  );
  assert.throws(() => zeros([2, -1]), /zeros: shape \[2,-1\] has invalid dimension -1/);
});

Deno.test("full/zeros/ones/arange", async () => {
  assert.deepEqual(await full([2, 2], 3, { dtype: "i32" }).toArray(), [[3, 3], [3, 3]]);
  assert.deepEqual(await zeros([2]).toArray(), [0, 0]);
  assert.deepEqual(await ones([1, 2]).toArray(), [[1, 1]]);
  assert.deepEqual(await arange(2, 8, 3).toArray(), [2, 5]);
  assert.equal(arange(3).dtype, "i32");
  assert.deepEqual(arange(5, 1).shape, [0]);
  assert.throws(() => arange(0, 1, 0), /arange: step must be finite and non-zero, got 0/);
});

Deno.test("random: same seed, same values; the global generator follows manualSeed", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer(), async (seed) => {
      assert.deepEqual(await randn([7], { seed }).toArray(), await randn([7], { seed }).toArray());
    }),
    { numRuns: 20 },
  );
  manualSeed(42);
  const a = await rand([5]).toArray();
  manualSeed(42);
  assert.deepEqual(await rand([5]).toArray(), a);
  assert.notDeepEqual(await rand([5]).toArray(), a);
});

Deno.test("random: moments of 20,000 draws (fixed seed; bounds are 5 standard errors)", () => {
  const rng = new Rng(1234);
  const n = 20000;
  let s = 0;
  let s2 = 0;
  let u = 0;
  for (let i = 0; i < n; i++) {
    const z = rng.normal();
    s += z;
    s2 += z * z;
    u += rng.uniform();
  }
  const se = 1 / Math.sqrt(n);
  assert.ok(Math.abs(s / n) < 5 * se, `normal mean ${s / n}`);
  assert.ok(Math.abs(s2 / n - 1) < 5 * Math.SQRT2 * se, `normal variance ${s2 / n}`);
  assert.ok(Math.abs(u / n - 0.5) < 5 * se / Math.sqrt(12), `uniform mean ${u / n}`);
});

Deno.test("randint: integers in [low, high), every value reached", async () => {
  const v = [...await randint(-2, 3, [500], { seed: 9 }).data()];
  assert.ok(v.every((x) => Number.isInteger(x) && x >= -2 && x < 3));
  assert.deepEqual([...new Set(v)].sort((a, b) => a - b), [-2, -1, 0, 1, 2]);
  assert.throws(() => randint(3, 3, [1]), /randint: need integers low < high, got low=3 high=3/);
});
