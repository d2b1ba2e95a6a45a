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

Deno.test("seededRng: the stream is pinned (the first outputs before and after it moved onto @rlvr/common's Sfc32)", async () => {
  const { arithmeticTask } = await import("./arithmetic.ts");
  const a = seededRng(42, 7);
  assert.deepEqual(Array.from({ length: 6 }, () => a.next()), [
    0.43980053858831525,
    0.06784589379094541,
    0.23385473736561835,
    0.12970126513391733,
    0.7000848718453199,
    0.6215489192400128,
  ]);
  assert.equal(a.int(1, 100), 82);
  assert.deepEqual(a.shuffle([1, 2, 3, 4, 5]), [5, 1, 4, 3, 2]);
  const b = seededRng(2 ** 40 + 3); // a seed above 2^32 keeps its high half
  assert.deepEqual(Array.from({ length: 4 }, () => b.next()), [
    0.7746738141868263,
    0.22608594340272248,
    0.42078616563230753,
    0.449341447558254,
  ]);
  // The default run's task: its training rows (seed 0) and its held-out problems (apps/train's
  // HELD_OUT_SEED 1_000_003).
  const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });
  assert.deepEqual([0, 1, 2, 3, 4].map((i) => task.row(0, i).expression), [
    "26 + 34",
    "25 + 68",
    "32 + 37",
    "99 + 41",
    "57 + 70",
  ]);
  assert.equal(task.row(5, 1000).expression, "65 + 40");
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => task.row(1_000_003, i).expression), [
    "22 + 17",
    "22 + 87",
    "26 + 60",
    "98 + 30",
    "44 + 49",
    "49 + 75",
  ]);
});
