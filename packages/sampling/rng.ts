/**
 * Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel Random
 * Numbers: As Easy as 1, 2, 3", SC 2011), the generator behind cuRAND's and PyTorch's CUDA
 * `philox` and JAX's and NumPy's `Philox`.
 *
 * Design: a draw is a pure function `philox(counter, key)` of a 128-bit counter and a 64-bit key,
 * so no generator state is threaded between calls. The token samplers key every draw by
 * `(seed; step, sequence, position)`, which makes the token drawn for sequence 3 at position 17
 * the same whether sequences 0..2 were sampled first, in another batch, in another order or on
 * another worker. For the consumers that do want a stream (replay buffers, bootstrap
 * resampling), {@link CounterRng} walks a 53-bit block index through the counter and hands out
 * the block's words in order; its whole state is `{ seed, stream, index, word }`, four integers
 * that serialise as JSON and restore exactly.
 *
 * Counter layout (four uint32 words; the fourth is a domain tag so the two uses never overlap):
 *
 * | use                    | word 0       | word 1       | word 2   | word 3 |
 * | ---------------------- | ------------ | ------------ | -------- | ------ |
 * | token draw             | step         | sequence     | position | 0      |
 * | `CounterRng` block `i` | `i mod 2^32` | `⌊i / 2^32⌋` | stream   | 1      |
 *
 * The key is the seed (an integer in [0, 2^53)) split into its low and high 32-bit words. A
 * uniform in [0, 1) takes 53 bits from output words 0 and 1 (`(w0 >>> 5)·2^26 + (w1 >>> 6)`,
 * divided by 2^53), the construction of NumPy's `random_standard_uniform` and of JavaScript
 * generators that yield doubles; its resolution is 2^-53 and it is never 1.
 *
 * @module
 */

import { checkNumber, show } from "./_args.ts";

const TWO32 = 4294967296;
const TWO53 = 9007199254740992;
const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;

/** The domain tag (counter word 3) of token draws. */
export const TOKEN_DOMAIN = 0;
/** The domain tag (counter word 3) of {@link CounterRng} draws. */
export const STREAM_DOMAIN = 1;

/**
 * High 32 bits of the 64-bit product of two uint32s, exactly: the float64 product `a·b` is off
 * by at most 2^10 and so is subtracting the exact low word, so `(a·b − lo)/2^32` lies within
 * 2^−21 of the integer high word and rounding recovers it.
 */
function mulhi(a: number, b: number, lo: number): number {
  return Math.round((a * b - lo) / TWO32);
}

function checkWord(owner: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value >= TWO32) {
    throw new RangeError(`${owner}: ${field} must be an integer in [0, 2^32), got ${show(value)}`);
  }
  return value;
}

/** Throws unless `seed` is an integer in [0, 2^53); returns it. */
export function checkSeed(owner: string, seed: unknown, field = "seed"): number {
  if (typeof seed !== "number" || !Number.isSafeInteger(seed) || seed < 0) {
    throw new RangeError(
      `${owner}: ${field} must be an integer in [0, 2^53) (e.g. 0 or 42), got ${show(seed)}`,
    );
  }
  return seed;
}

/** Philox on words known to be valid; writes into `out`. */
function philoxInto(
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  k0: number,
  k1: number,
  rounds: number,
  out: Uint32Array,
): void {
  for (let r = 0; r < rounds; r++) {
    if (r > 0) {
      k0 = (k0 + W0) >>> 0;
      k1 = (k1 + W1) >>> 0;
    }
    const lo0 = Math.imul(M0, c0) >>> 0;
    const hi0 = mulhi(M0, c0, lo0);
    const lo1 = Math.imul(M1, c2) >>> 0;
    const hi1 = mulhi(M1, c2, lo1);
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/**
 * The Philox4x32 block function: four output words from a four-word counter and a two-word key
 * (all uint32), with `rounds` rounds (10 is the standard Philox4x32-10). Matches the Random123
 * known-answer vectors, e.g. counter 0 and key 0 give `6627e8d5 e169c58d bc57ac4c 9b00dbd8`.
 *
 * @example Usage
 * ```ts
 * import { philox4x32 } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const out = philox4x32([0, 0, 0, 0], [0, 0]);
 * assert.deepEqual([...out], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
 * ```
 */
export function philox4x32(
  counter: ArrayLike<number>,
  key: ArrayLike<number>,
  rounds = 10,
): Uint32Array {
  const owner = "philox4x32";
  if (counter?.length !== 4) {
    throw new RangeError(`${owner}: counter must hold 4 uint32 words, got ${show(counter)}`);
  }
  if (key?.length !== 2) {
    throw new RangeError(`${owner}: key must hold 2 uint32 words, got ${show(key)}`);
  }
  const c = [0, 1, 2, 3].map((i) => checkWord(owner, `counter[${i}]`, counter[i]));
  const k = [0, 1].map((i) => checkWord(owner, `key[${i}]`, key[i]));
  checkNumber(owner, "rounds", rounds, { min: 1, max: 16, integer: true });
  const out = new Uint32Array(4);
  philoxInto(c[0]!, c[1]!, c[2]!, c[3]!, k[0]!, k[1]!, rounds, out);
  return out;
}

const scratch = new Uint32Array(4);

/** Uniform in [0, 1) from unchecked words (the hot path of the samplers). */
export function uniformUnchecked(
  seed: number,
  c0: number,
  c1: number,
  c2: number,
  c3: number,
): number {
  philoxInto(c0, c1, c2, c3, seed % TWO32 >>> 0, Math.floor(seed / TWO32) >>> 0, 10, scratch);
  return ((scratch[0]! >>> 5) * 67108864 + (scratch[1]! >>> 6)) / TWO53;
}

/**
 * A uniform double in [0, 1) that is a pure function of `seed` (an integer in [0, 2^53)) and a
 * four-word counter: Philox4x32-10 output words 0 and 1 give 53 random bits. Equal arguments
 * always give the same number, in any order and on any machine.
 *
 * @example Usage
 * ```ts
 * import { uniformAt } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const u = uniformAt(42, [7, 3, 17, 0]); // e.g. step 7, sequence 3, position 17
 * assert.equal(u, uniformAt(42, [7, 3, 17, 0]));
 * assert.ok(u >= 0 && u < 1);
 * assert.notEqual(u, uniformAt(43, [7, 3, 17, 0]));
 * ```
 */
export function uniformAt(seed: number, counter: ArrayLike<number>): number {
  const owner = "uniformAt";
  checkSeed(owner, seed);
  if (counter?.length !== 4) {
    throw new RangeError(`${owner}: counter must hold 4 uint32 words, got ${show(counter)}`);
  }
  const c = [0, 1, 2, 3].map((i) => checkWord(owner, `counter[${i}]`, counter[i]));
  return uniformUnchecked(seed, c[0]!, c[1]!, c[2]!, c[3]!);
}

/** The serialisable state of a {@link CounterRng}. */
export interface CounterRngState {
  /** The key, an integer in [0, 2^53). */
  seed: number;
  /** The stream number, an integer in [0, 2^32). */
  stream: number;
  /** How many Philox blocks have been generated, an integer in [0, 2^53). */
  index: number;
  /** How many of the last block's four words have been used, 0 to 4 (0 when `index` is 0). */
  word: number;
}

/**
 * A sequential generator over Philox4x32-10. Block `i` is `philox([i mod 2^32, ⌊i/2^32⌋,
 * stream, 1], seed)`, and its four words are handed out in order: `nextInt` uses one word per
 * attempt, `next` uses two consecutive words (skipping a block's last word when only one is
 * left). The state is therefore four integers: `state()` returns them and
 * `CounterRng.fromState` continues exactly where a saved generator stopped. Different `stream`
 * numbers under one seed give independent sequences (e.g. one per replay buffer).
 *
 * @example Usage
 * ```ts
 * import { CounterRng } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const rng = new CounterRng(42);
 * rng.next();
 * const saved = JSON.parse(JSON.stringify(rng.state())); // { seed: 42, stream: 0, index: 1, word: 2 }
 * const a = [rng.next(), rng.nextInt(10)];
 * const b = CounterRng.fromState(saved);
 * assert.deepEqual([b.next(), b.nextInt(10)], a);
 * ```
 */
export class CounterRng {
  #seed: number;
  #stream: number;
  #index: number;
  #word: number;
  #k0: number;
  #k1: number;
  #out = new Uint32Array(4);

  /**
   * A generator for `seed` (an integer in [0, 2^53)) and `stream` (in [0, 2^32), default 0),
   * optionally positioned at block `index`, word `word` (as in {@link CounterRngState}).
   */
  constructor(seed: number, stream = 0, index = 0, word = 0) {
    const owner = "CounterRng";
    this.#seed = checkSeed(owner, seed);
    this.#stream = checkWord(owner, "stream", stream);
    this.#index = checkNumber(owner, "index", index, {
      min: 0,
      max: Number.MAX_SAFE_INTEGER,
      integer: true,
    });
    this.#word = checkNumber(owner, "word", word, { min: 0, max: 4, integer: true });
    if (this.#index === 0 && this.#word !== 0) {
      throw new RangeError(`${owner}: word must be 0 when index is 0, got ${word}`);
    }
    this.#k0 = this.#seed % TWO32 >>> 0;
    this.#k1 = Math.floor(this.#seed / TWO32) >>> 0;
    if (this.#index > 0 && this.#word < 4) this.#generate(this.#index - 1);
  }

  /** A generator continuing from a saved {@link CounterRngState}; throws on a malformed one. */
  static fromState(state: CounterRngState): CounterRng {
    if (typeof state !== "object" || state === null) {
      throw new TypeError(
        `CounterRng.fromState: state must be {seed, stream, index, word} from state(), got ${
          show(state)
        }`,
      );
    }
    return new CounterRng(state.seed, state.stream, state.index, state.word);
  }

  /** A copy of the state: `{ seed, stream, index, word }`. */
  state(): CounterRngState {
    return { seed: this.#seed, stream: this.#stream, index: this.#index, word: this.#word };
  }

  #generate(i: number): void {
    philoxInto(
      i % TWO32 >>> 0,
      Math.floor(i / TWO32) >>> 0,
      this.#stream,
      STREAM_DOMAIN,
      this.#k0,
      this.#k1,
      10,
      this.#out,
    );
  }

  /** Makes sure `n` words are left in the current block, generating the next block if not. */
  #need(n: number): void {
    if (this.#index > 0 && this.#word + n <= 4) return;
    if (this.#index >= Number.MAX_SAFE_INTEGER) {
      throw new RangeError(
        "CounterRng: the 2^53 blocks of this stream are used up; use a new stream",
      );
    }
    this.#generate(this.#index);
    this.#index++;
    this.#word = 0;
  }

  /** The next uniform double in [0, 1) (53 random bits from two consecutive words). */
  next(): number {
    this.#need(2);
    const w = this.#out;
    const j = this.#word;
    this.#word = j + 2;
    return ((w[j]! >>> 5) * 67108864 + (w[j + 1]! >>> 6)) / TWO53;
  }

  /**
   * The next uniformly distributed integer in [0, n) for an integer `1 ≤ n ≤ 2^32`, exactly
   * unbiased (rejection on a 32-bit word, one word per attempt; at most half of the attempts
   * are rejected).
   */
  nextInt(n: number): number {
    if (!(n >= 1 && n <= TWO32 && Number.isInteger(n))) {
      checkNumber("CounterRng.nextInt", "n", n, { min: 1, max: TWO32, integer: true });
    }
    const limit = TWO32 - (TWO32 % n);
    for (;;) {
      this.#need(1);
      const x = this.#out[this.#word++]!;
      if (x < limit) return x % n;
    }
  }
}
