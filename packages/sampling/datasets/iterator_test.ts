import assert from "node:assert/strict";
import fc from "fast-check";
import { EpochIterator } from "./iterator.ts";

Deno.test("EpochIterator: save → restore → continue equals never stopping, across epochs (property)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 13 }),
      fc.nat({ max: Number.MAX_SAFE_INTEGER }),
      fc.boolean(),
      fc.array(fc.nat(30), { minLength: 1, maxLength: 6 }), // chunk sizes between saves
      (n, seed, shuffle, chunks) => {
        const data = Array.from({ length: n }, (_, i) => `item${i}`);
        const total = chunks.reduce((a, b) => a + b, 0);
        const reference = new EpochIterator(data, { seed, shuffle }).take(total);
        // stop after every chunk, serialise, restore into a fresh iterator
        const got: string[] = [];
        let it = new EpochIterator(data, { seed, shuffle });
        for (const k of chunks) {
          got.push(...it.take(k));
          const saved = JSON.parse(JSON.stringify(it.state()));
          assert.deepEqual(Object.keys(saved).sort(), ["epoch", "index", "seed", "size"]);
          it = EpochIterator.restore(data, saved, { shuffle });
        }
        assert.deepEqual(got, reference);
        // every full epoch is a permutation of the data
        for (let e = 0; (e + 1) * n <= total; e++) {
          assert.deepEqual([...reference.slice(e * n, (e + 1) * n)].sort(), [...data].sort());
        }
        assert.equal(it.epoch * n + it.index, total);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("EpochIterator: epochs differ, finite epochs end, random-access sources, entries", () => {
  const data = Array.from({ length: 20 }, (_, i) => i);
  const it = new EpochIterator(data, { seed: 1, epochs: 2 });
  const all = [...it];
  assert.equal(all.length, 40);
  assert.notDeepEqual(all.slice(0, 20), all.slice(20));
  assert.equal(it.next().done, true);
  const ordered = new EpochIterator(data, { seed: 1, shuffle: false });
  assert.deepEqual(ordered.take(25), [...data, 0, 1, 2, 3, 4]);
  const src = { length: 3, get: (i: number) => `row${i}` };
  const r = new EpochIterator(src, { seed: 2 });
  const e = r.nextEntry()!;
  assert.equal(e.value, `row${e.item}`);
  assert.deepEqual([e.epoch, e.index], [0, 0]);
  assert.equal(new EpochIterator([], { seed: 0 }).next().done, true);
});

Deno.test("EpochIterator.restore: errors on a state that does not fit", () => {
  const data = [1, 2, 3];
  assert.throws(
    () => EpochIterator.restore(data, { epoch: 0, index: 0, seed: 1, size: 4 }),
    /the state is for 4 items but the dataset has 3/,
  );
  assert.throws(
    () => EpochIterator.restore(data, { epoch: 0, index: 3, seed: 1, size: 3 }),
    /state\.index must be an integer in \[0, 2\], got 3/,
  );
  assert.throws(
    () => EpochIterator.restore(data, { epoch: -1, index: 0, seed: 1, size: 3 }),
    /state\.epoch must be an integer/,
  );
  assert.throws(() => new EpochIterator(data, { seed: 0.5 }), /seed must be an integer/);
});
