import assert from "node:assert/strict";
import fc from "fast-check";
import { chiSquareTest } from "./metrics.ts";
import { CounterRng, philox4x32, STREAM_DOMAIN, uniformAt } from "./rng.ts";

/** Philox4x32 written directly from the Random123 definition, with BigInt products. */
function philoxReference(counter: number[], key: number[], rounds = 10): number[] {
  const M0 = 0xd2511f53n, M1 = 0xcd9e8d57n, W0 = 0x9e3779b9n, W1 = 0xbb67ae85n;
  const mask = 0xffffffffn;
  let c = counter.map(BigInt);
  let k = key.map(BigInt);
  for (let r = 0; r < rounds; r++) {
    if (r > 0) k = [(k[0]! + W0) & mask, (k[1]! + W1) & mask];
    const p0 = M0 * c[0]!;
    const p1 = M1 * c[2]!;
    c = [
      (p1 >> 32n) ^ c[1]! ^ k[0]!,
      p1 & mask,
      (p0 >> 32n) ^ c[3]! ^ k[1]!,
      p0 & mask,
    ];
  }
  return c.map(Number);
}

const u32 = fc.integer({ min: 0, max: 0xffffffff });

Deno.test("philox4x32: the Random123 known-answer vectors", () => {
  assert.deepEqual([...philox4x32([0, 0, 0, 0], [0, 0])], [
    0x6627e8d5,
    0xe169c58d,
    0xbc57ac4c,
    0x9b00dbd8,
  ]);
  assert.deepEqual(
    [...philox4x32([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff])],
    [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
  );
  assert.deepEqual(
    [...philox4x32([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0])],
    [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
  );
});

Deno.test("philox4x32 equals a BigInt reference for any counter, key and round count", () => {
  fc.assert(
    fc.property(
      fc.array(u32, { minLength: 4, maxLength: 4 }),
      fc.array(u32, { minLength: 2, maxLength: 2 }),
      fc.integer({ min: 1, max: 12 }),
      (counter, key, rounds) => {
        assert.deepEqual(
          [...philox4x32(counter, key, rounds)],
          philoxReference(counter, key, rounds),
        );
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("uniformAt: 53 bits of words 0 and 1 keyed by the seed's two halves; pure", () => {
  const seed = 2 ** 40 + 12345; // high word 256, low word 12345
  const w = philox4x32([7, 3, 17, 0], [12345, 256]);
  const expected = ((w[0]! >>> 5) * 2 ** 26 + (w[1]! >>> 6)) / 2 ** 53;
  assert.equal(uniformAt(seed, [7, 3, 17, 0]), expected);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 53 - 1 }),
      fc.array(u32, { minLength: 4, maxLength: 4 }),
      (s, c) => {
        const u = uniformAt(s, c);
        assert.ok(u >= 0 && u < 1);
        assert.equal(uniformAt(s, c), u);
      },
    ),
  );
});

Deno.test("argument errors name the field, the value and the accepted range", () => {
  assert.throws(
    () => uniformAt(-1, [0, 0, 0, 0]),
    /uniformAt: seed must be an integer in \[0, 2\^53\).*got -1/,
  );
  assert.throws(() => uniformAt(1.5, [0, 0, 0, 0]), /seed must be an integer/);
  assert.throws(
    () => uniformAt(0, [0, 0, 2 ** 32, 0]),
    /counter\[2\] must be an integer in \[0, 2\^32\), got 4294967296/,
  );
  assert.throws(() => philox4x32([0, 0, 0], [0, 0]), /counter must hold 4 uint32 words/);
  assert.throws(
    () => new CounterRng(0, -1),
    /CounterRng: stream must be an integer in \[0, 2\^32\)/,
  );
  assert.throws(
    () => new CounterRng(0).nextInt(0),
    /n must be an integer in \[1, 4294967296\], got 0/,
  );
  assert.throws(
    () => CounterRng.fromState(null as never),
    /state must be \{seed, stream, index, word\}/,
  );
});

Deno.test("CounterRng: block i is Philox([i lo, i hi, stream, 1]); words handed out in order", () => {
  const rng = new CounterRng(99, 5, 2 ** 32 + 3, 4); // the next block is 2^32 + 3
  const w = philox4x32([3, 1, 5, STREAM_DOMAIN], [99, 0]);
  const u = (a: number, b: number) => ((a >>> 5) * 2 ** 26 + (b >>> 6)) / 2 ** 53;
  assert.equal(rng.next(), u(w[0]!, w[1]!));
  assert.deepEqual(rng.state(), { seed: 99, stream: 5, index: 2 ** 32 + 4, word: 2 });
  assert.equal(rng.nextInt(2 ** 32), w[2]!); // n = 2^32: no rejection, the word itself
  assert.equal(rng.nextInt(2 ** 32), w[3]!);
  const w2 = philox4x32([4, 1, 5, STREAM_DOMAIN], [99, 0]);
  assert.equal(rng.nextInt(2 ** 32), w2[0]!);
  assert.equal(rng.next(), u(w2[1]!, w2[2]!));
  // one word left: next() skips it and starts block 2^32 + 5
  const w3 = philox4x32([5, 1, 5, STREAM_DOMAIN], [99, 0]);
  assert.equal(rng.next(), u(w3[0]!, w3[1]!));
  assert.throws(() => new CounterRng(1, 0, 0, 2), /word must be 0 when index is 0/);
});

Deno.test("CounterRng: state() → JSON → fromState continues exactly (property)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 53 - 1 }),
      u32,
      fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1000 })), { maxLength: 30 }),
      fc.array(fc.integer({ min: 0, max: 2 ** 32 }), { maxLength: 30 }),
      (seed, stream, before, after) => {
        const a = new CounterRng(seed, stream);
        for (const n of before) n === 0 ? a.next() : a.nextInt(n);
        const b = CounterRng.fromState(JSON.parse(JSON.stringify(a.state())));
        for (const n of after) {
          if (n === 0) assert.equal(b.next(), a.next());
          else assert.equal(b.nextInt(n), a.nextInt(n));
        }
        assert.deepEqual(b.state(), a.state());
      },
    ),
  );
});

Deno.test("CounterRng: streams differ; next() and nextInt() are uniform (chi-square, p > 0.001)", () => {
  const a = new CounterRng(1, 0);
  const b = new CounterRng(1, 1);
  const sa = Array.from({ length: 8 }, () => a.next());
  const sb = Array.from({ length: 8 }, () => b.next());
  assert.notDeepEqual(sa, sb);

  const rng = new CounterRng(2024);
  const bins = new Array(20).fill(0);
  const ints = new Array(7).fill(0);
  const N = 100_000;
  for (let i = 0; i < N; i++) {
    bins[Math.floor(rng.next() * 20)]++;
    ints[rng.nextInt(7)]++;
  }
  const r1 = chiSquareTest(bins, new Array(20).fill(1));
  const r2 = chiSquareTest(ints, new Array(7).fill(1));
  console.log(
    `CounterRng uniformity: next() χ²=${r1.statistic.toFixed(2)} df=${r1.df} p=${
      r1.pValue.toFixed(4)
    }; nextInt(7) χ²=${r2.statistic.toFixed(2)} df=${r2.df} p=${r2.pValue.toFixed(4)}`,
  );
  assert.ok(r1.pValue > 0.001 && r2.pValue > 0.001);
});
