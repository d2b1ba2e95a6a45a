/**
 * Seeded pseudo-random generators: the one module behind every stream-based generator of the
 * workspace (Philox, the counter-based generator of the token samplers, is `@rlvr/sampling`'s
 * `rng.ts`). Each user keeps its own seeding and its own way of turning words into numbers,
 * because shipped checkpoints, committed test expectations and the default run depend on the
 * exact streams; this module holds the algorithms once.
 *
 * | generator            | state            | used by                                                          |
 * | -------------------- | ---------------- | ---------------------------------------------------------------- |
 * | {@link Xoshiro128ss} | four uint32      | `@rlvr/tensor`'s `Rng` (init, `randn`), `@rlvr/sampling`'s `Prng` (selection, bandits, datasets) |
 * | {@link Sfc32}        | four uint32      | `@rlvr/rewards`' `seededRng` (task generators: training and held-out problems) |
 * | {@link mulberry32}   | one uint32       | `@rlvr/rewards`' CAS sample points                               |
 *
 * and two seed mixers: {@link splitmix32} (a Weyl sequence through murmur3's finaliser, as
 * `@rlvr/tensor` and `@rlvr/rewards` seed) and {@link fmix32} (murmur3's 32-bit finaliser, as
 * `@rlvr/sampling` seeds).
 *
 * Design: only 32-bit integer arithmetic (`Math.imul`, shifts), so a seed gives the same stream
 * on every platform; `prng_test.ts` pins the first outputs of each generator and each seeding.
 *
 * @module
 */

/**
 * One step of splitmix32: advances the Weyl state by 0x9e3779b9 and returns the new state and a
 * mixed output word.
 *
 * @param state The 32-bit state.
 * @returns `[next state, output uint32]`.
 *
 * @example Usage
 * ```ts
 * import { splitmix32 } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const [state, out] = splitmix32(0);
 * assert.equal(state, 0x9e3779b9 | 0);
 * assert.ok(Number.isInteger(out) && out >= 0 && out < 2 ** 32);
 * ```
 */
export function splitmix32(state: number): [number, number] {
  state = (state + 0x9e3779b9) | 0;
  let z = state;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return [state, (z ^ (z >>> 16)) >>> 0];
}

/**
 * murmur3's 32-bit finaliser (a bijection on uint32 with full avalanche).
 *
 * @param x A 32-bit integer.
 * @returns The mixed uint32.
 *
 * @example Usage
 * ```ts
 * import { fmix32 } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * assert.equal(fmix32(0), 0);
 * assert.notEqual(fmix32(1), fmix32(2));
 * ```
 */
export function fmix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Four uint32 words: the state of {@link Xoshiro128ss} and {@link Sfc32}. */
export type Words4 = [number, number, number, number];

function words4(owner: string, state: readonly number[]): Words4 {
  if (state.length !== 4 || !state.every((w) => Number.isInteger(w))) {
    throw new TypeError(
      `${owner}: the state must be four 32-bit integers, got ${JSON.stringify(state)}`,
    );
  }
  return [state[0]! >>> 0, state[1]! >>> 0, state[2]! >>> 0, state[3]! >>> 0];
}

/**
 * xoshiro128** (Blackman & Vigna, 2018): 128-bit state, 32-bit outputs, period 2^128 − 1. The
 * state must not be all zero.
 *
 * @example Usage
 * ```ts
 * import { splitmix32, Xoshiro128ss } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const g = new Xoshiro128ss([1, 2, 3, 4]);
 * const first = g.next();
 * assert.equal(first, 11520); // rotl(2 * 5, 7) * 9
 * assert.deepEqual(new Xoshiro128ss(g.state()).next(), g.next()); // the state continues exactly
 * ```
 */
export class Xoshiro128ss {
  // Int32 words: V8 keeps them untagged (uint32 words above 2^31 would be stored as doubles in a
  // plain array), which makes `next` several times faster with the same outputs.
  #s: Int32Array;

  /**
   * A generator with the given state (four 32-bit integers, not all zero).
   *
   * @param state The state words (copied).
   */
  constructor(state: readonly number[]) {
    this.#s = Int32Array.from(words4("Xoshiro128ss", state));
    if ((this.#s[0]! | this.#s[1]! | this.#s[2]! | this.#s[3]!) === 0) {
      throw new RangeError("Xoshiro128ss: the state must not be all zero (the stream would be 0)");
    }
  }

  /**
   * The next uint32.
   *
   * @returns An integer in [0, 2^32).
   *
   * @example Usage
   * ```ts
   * import { Xoshiro128ss } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * const x = new Xoshiro128ss([5, 6, 7, 8]).next();
   * assert.ok(x >= 0 && x < 2 ** 32);
   * ```
   */
  next(): number {
    const s = this.#s;
    const s0 = s[0]!, s1 = s[1]!;
    const s2 = s[2]! ^ s0, s3 = s[3]! ^ s1;
    const x = Math.imul(s1, 5);
    const result = Math.imul((x << 7) | (x >>> 25), 9) >>> 0;
    s[0] = s0 ^ s3;
    s[1] = s1 ^ s2;
    s[2] = s2 ^ (s1 << 9);
    s[3] = (s3 << 11) | (s3 >>> 21);
    return result;
  }

  /**
   * A copy of the state (four uint32 words).
   *
   * @returns The state.
   *
   * @example Usage
   * ```ts
   * import { Xoshiro128ss } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * assert.deepEqual(new Xoshiro128ss([1, 2, 3, 4]).state(), [1, 2, 3, 4]);
   * ```
   */
  state(): Words4 {
    return [this.#s[0]! >>> 0, this.#s[1]! >>> 0, this.#s[2]! >>> 0, this.#s[3]! >>> 0];
  }
}

/**
 * sfc32 (Chris Doty-Humphrey's Small Fast Counting generator): 128-bit state with a counter,
 * 32-bit outputs, passes PractRand.
 *
 * @example Usage
 * ```ts
 * import { Sfc32 } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const g = new Sfc32([1, 2, 3, 4]);
 * assert.equal(g.next(), 7); // a + b + d
 * assert.deepEqual(new Sfc32(g.state()).next(), g.next());
 * ```
 */
export class Sfc32 {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  /**
   * A generator with the given state `[a, b, c, d]` (`d` is the counter).
   *
   * @param state The state words.
   */
  constructor(state: readonly number[]) {
    [this.#a, this.#b, this.#c, this.#d] = words4("Sfc32", state).map((w) => w | 0) as Words4;
  }

  /**
   * The next uint32.
   *
   * @returns An integer in [0, 2^32).
   *
   * @example Usage
   * ```ts
   * import { Sfc32 } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * const x = new Sfc32([9, 9, 9, 9]).next();
   * assert.ok(x >= 0 && x < 2 ** 32);
   * ```
   */
  next(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /**
   * A copy of the state `[a, b, c, d]` as uint32 words.
   *
   * @returns The state.
   *
   * @example Usage
   * ```ts
   * import { Sfc32 } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * assert.deepEqual(new Sfc32([1, 2, 3, 4]).state(), [1, 2, 3, 4]);
   * ```
   */
  state(): Words4 {
    return [this.#a >>> 0, this.#b >>> 0, this.#c >>> 0, this.#d >>> 0];
  }
}

/**
 * mulberry32 (Tommy Ettinger): a 32-bit state generator returning floats in [0, 1) with 32
 * random bits; small and fast, for sampling a handful of points.
 *
 * @param seed Any number; its low 32 bits are the state.
 * @returns The stream's next-value function.
 *
 * @example Usage
 * ```ts
 * import { mulberry32 } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const a = mulberry32(7), b = mulberry32(7);
 * const u = a();
 * assert.equal(b(), u);
 * assert.ok(u >= 0 && u < 1);
 * ```
 */
export function mulberry32(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}
