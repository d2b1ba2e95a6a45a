import assert from "node:assert/strict";
import fc from "fast-check";
import { seededRng } from "./rng.ts";

Deno.test("seededRng: same seeds give the same stream; different seeds differ", () => {
  fc.assert(fc.property(fc.integer(), fc.nat(), (seed, index) => {
    const a = seededRng(seed, index), b = seededRng(seed, index);
    const xs = Array.from({ length: 8 }, () => a.next());
    assert.deepEqual(Array.from({ length: 8 }, () => b.next()), xs);
    const c = seededRng(seed, index + 1);
    assert.notDeepEqual(Array.from({ length: 8 }, () => c.next()), xs);
  }));
  // large seeds keep their high bits
  assert.notEqual(seededRng(2 ** 40).next(), seededRng(2 ** 40 + 2 ** 33).next());
});

Deno.test("seededRng: int, pick, shuffle and chance stay in range", () => {
  fc.assert(
    fc.property(fc.integer(), fc.integer({ min: -50, max: 50 }), fc.nat(100), (seed, lo, span) => {
      const rng = seededRng(seed);
      for (let i = 0; i < 20; i++) {
        const v = rng.int(lo, lo + span);
        assert.ok(Number.isInteger(v) && v >= lo && v <= lo + span);
      }
      const items = [1, 2, 3, 4, 5];
      assert.deepEqual([...rng.shuffle(items)].sort(), items);
      assert.ok(items.includes(rng.pick(items)));
      assert.equal(rng.chance(0), false);
      assert.equal(rng.chance(1), true);
    }),
  );
});

Deno.test("seededRng: roughly uniform", () => {
  const rng = seededRng(123);
  const counts = new Array(10).fill(0);
  for (let i = 0; i < 100_000; i++) counts[rng.int(0, 9)]++;
  for (const c of counts) assert.ok(Math.abs(c - 10_000) < 500, `bucket count ${c}`);
});

Deno.test("seededRng: errors name the argument", () => {
  assert.throws(() => seededRng(1.5), /seededRng: seeds\[0\] must be an integer, got 1.5/);
  assert.throws(() => seededRng(), /give at least one integer seed/);
  assert.throws(() => seededRng(1).int(3, 2), /need integers lo <= hi, got lo=3, hi=2/);
  assert.throws(() => seededRng(1).pick([]), /the array is empty/);
});
