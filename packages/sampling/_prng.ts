/**
 * A small seeded pseudo-random generator, private to the prompt-selection, bandit and dataset
 * code of this package (the token samplers have their own counter-based RNG in `rng.ts`).
 *
 * Design: xoshiro128** (Blackman & Vigna) over four uint32 words, seeded through murmur3's
 * `fmix32` so that nearby seeds give unrelated streams. Its whole state is four integers, so
 * every stateful selector, bandit and iterator can save it as plain JSON and continue exactly.
 * `hash53` is cyrb53 (public domain), used for stable train/test splits and default uids. The
 * generator and `fmix32` are `@rlvr/common`'s (`Xoshiro128ss`), the workspace's one PRNG module;
 * the stream (and so saved selector states and dataset orders) is pinned by `_prng_test.ts`.
 *
 * @module
 */

import { fmix32, Xoshiro128ss } from "@rlvr/common";

/** The four uint32 words of a {@link Prng}'s state. */
export type PrngState = [number, number, number, number];

const TWO32 = 4294967296;

/** Throws unless `seed` is an integer in [0, 2^53). */
export function checkSeed(owner: string, seed: unknown, field = "seed"): number {
  if (
    typeof seed !== "number" || !Number.isSafeInteger(seed) || seed < 0
  ) {
    throw new RangeError(
      `${owner}: ${field} must be an integer in [0, 2^53), got ${String(seed)}`,
    );
  }
  return seed;
}

/** Splits a non-negative safe integer into its low and high uint32 words. */
function words(n: number): [number, number] {
  return [n % TWO32 >>> 0, Math.floor(n / TWO32) >>> 0];
}

/** A deterministic xoshiro128** generator. */
export class Prng {
  #g: Xoshiro128ss;

  private constructor(state: PrngState) {
    this.#g = new Xoshiro128ss(state);
  }

  /**
   * A generator for `seed` (an integer in [0, 2^53)) and optional stream numbers (non-negative
   * safe integers, e.g. an epoch): each `(seed, ...streams)` gives an independent-looking stream.
   */
  static fromSeed(seed: number, ...streams: number[]): Prng {
    let h = 0x9e3779b9;
    for (const part of [seed, streams.length, ...streams]) {
      for (const w of words(part)) h = fmix32((h ^ w) + 0x9e3779b9);
    }
    const s: PrngState = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) {
      h = (h + 0x9e3779b9) >>> 0;
      s[i] = fmix32(h);
    }
    if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1;
    return new Prng(s);
  }

  /** A generator continuing from a saved {@link state}; throws on a malformed state. */
  static fromState(state: unknown, owner = "Prng"): Prng {
    if (
      !Array.isArray(state) || state.length !== 4 ||
      !state.every((w) => Number.isInteger(w) && w >= 0 && w < TWO32) ||
      state.every((w) => w === 0)
    ) {
      throw new TypeError(
        `${owner}: rng state must be four uint32 words, not all 0, got ${JSON.stringify(state)}`,
      );
    }
    return new Prng([state[0], state[1], state[2], state[3]]);
  }

  /** A copy of the state (four uint32 words). */
  state(): PrngState {
    return this.#g.state();
  }

  /** The next uint32. */
  nextUint32(): number {
    return this.#g.next();
  }

  /** A float in [0, 1) with 53 random bits. */
  float(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** A float in (0, 1): never 0, for logarithms. */
  floatOpen(): number {
    let u = this.float();
    while (u === 0) u = this.float();
    return u;
  }

  /** An unbiased integer in [0, n) for 1 ≤ n ≤ 2^32 (rejection sampling). */
  int(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > TWO32) {
      throw new RangeError(`Prng.int: n must be an integer in [1, 2^32], got ${n}`);
    }
    const limit = TWO32 - (TWO32 % n);
    let x = this.nextUint32();
    while (x >= limit) x = this.nextUint32();
    return x % n;
  }

  /** A standard normal draw (Box–Muller, one of the pair). */
  normal(): number {
    const u = this.floatOpen();
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** A Gamma(shape, 1) draw (Marsaglia–Tsang; shape < 1 by the `U^(1/a)` boost). */
  gamma(shape: number): number {
    if (!(shape > 0) || !Number.isFinite(shape)) {
      throw new RangeError(`Prng.gamma: shape must be a finite number > 0, got ${shape}`);
    }
    if (shape < 1) return this.gamma(shape + 1) * Math.pow(this.floatOpen(), 1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.floatOpen();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v;
      if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
    }
  }

  /** A Beta(a, b) draw, as `X / (X + Y)` with Gamma draws. */
  beta(a: number, b: number): number {
    const x = this.gamma(a);
    const y = this.gamma(b);
    return x + y === 0 ? 0.5 : x / (x + y);
  }
}

/**
 * cyrb53: a fast 53-bit string hash (public domain, bryc). Returns an integer in [0, 2^53).
 */
export function hash53(str: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** `hash53` as a fraction in [0, 1). */
export function hashUnit(str: string, seed = 0): number {
  return hash53(str, seed) / 9007199254740992;
}
