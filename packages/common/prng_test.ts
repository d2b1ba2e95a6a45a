import assert from "node:assert/strict";
import fc from "fast-check";
import { fmix32, mulberry32, Sfc32, splitmix32, Xoshiro128ss } from "./prng.ts";

const word = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const words = fc.tuple(word, word, word, word).filter((s) => s.some((w) => w !== 0));

Deno.test("mulberry32: the stream is pinned (the first outputs of the copy that @rlvr/rewards' CAS had)", () => {
  const a = mulberry32(12345);
  assert.deepEqual([a(), a(), a()], [0.9797282677609473, 0.3067522644996643, 0.484205421525985]);
  const b = mulberry32(-1); // the low 32 bits: 2^32 - 1
  assert.deepEqual([b(), b()], [0.8964226141106337, 0.189478256739676]);
});

Deno.test("Xoshiro128ss: the reference recurrence; state() continues exactly; an all-zero state is refused", () => {
  // xoshiro128** by hand for [1, 2, 3, 4]: result = rotl(s1 * 5, 7) * 9, then the xor/shift step.
  const g = new Xoshiro128ss([1, 2, 3, 4]);
  assert.equal(g.next(), 11520);
  assert.deepEqual(g.state(), [7, 0, 1026, 12288]);
  fc.assert(
    fc.property(words, fc.nat(20), (s, skip) => {
      const a = new Xoshiro128ss(s);
      for (let i = 0; i < skip; i++) a.next();
      const b = new Xoshiro128ss(a.state());
      for (let i = 0; i < 5; i++) {
        const x = a.next();
        assert.equal(b.next(), x);
        assert.ok(Number.isInteger(x) && x >= 0 && x < 2 ** 32);
      }
    }),
    { seed: 4, numRuns: 200 },
  );
  assert.throws(() => new Xoshiro128ss([0, 0, 0, 0]), /must not be all zero/);
  assert.throws(() => new Xoshiro128ss([1, 2, 3]), /four 32-bit integers, got \[1,2,3\]/);
});

Deno.test("Sfc32: the reference recurrence; state() continues exactly; signed and unsigned words are the same state", () => {
  const g = new Sfc32([1, 2, 3, 4]);
  assert.equal(g.next(), 7); // a + b + d
  // a = b ^ (b >>> 9) = 2, b = c + (c << 3) = 27, c = rotl(c, 21) + t, d = 5
  assert.deepEqual(g.state(), [2, 27, ((3 << 21) + 7) >>> 0, 5]);
  fc.assert(
    fc.property(words, fc.nat(20), (s, skip) => {
      const a = new Sfc32(s);
      const signed = new Sfc32(s.map((w) => w | 0));
      for (let i = 0; i < skip; i++) assert.equal(signed.next(), a.next());
      const b = new Sfc32(a.state());
      for (let i = 0; i < 5; i++) assert.equal(b.next(), a.next());
    }),
    { seed: 5, numRuns: 200 },
  );
});

Deno.test("splitmix32 and fmix32: the murmur3 finaliser; splitmix32 is fmix32 of the Weyl sequence", () => {
  assert.equal(fmix32(0), 0);
  fc.assert(
    fc.property(word, (s) => {
      const [state, out] = splitmix32(s);
      assert.equal(state, (s + 0x9e3779b9) | 0);
      assert.equal(out, fmix32(state));
    }),
    { seed: 6, numRuns: 200 },
  );
});
