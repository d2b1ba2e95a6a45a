/**
 * A small seeded pseudo-random generator for the task generators (this package must not depend
 * on `@rlvr/tensor`).
 *
 * Design: sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, 128-bit state, passes
 * PractRand) seeded through splitmix32 from any list of integers, so `seededRng(seed, index)`
 * gives an independent stream per row: row `i` of a task never depends on how many rows came
 * before it. Same seed, same numbers, on every platform (only 32-bit integer arithmetic). The
 * generator and the seed mixer are `@rlvr/common`'s (`Sfc32`, `splitmix32`), the workspace's one
 * PRNG module; the stream (and so every task's rows and the held-out set) is pinned by
 * `rng_test.ts`.
 *
 * @module
 */

import { Sfc32, splitmix32 } from "@rlvr/common";
import { checkNumber, show } from "../_check.ts";

/** A seeded random stream. */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number;
  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
  /** True with probability `p`. */
  chance(p: number): boolean;
}

/**
 * A seeded generator from one or more integer seeds (e.g. `seededRng(seed, rowIndex)`).
 *
 * @example Usage
 * ```ts
 * import { seededRng } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const a = seededRng(42, 7), b = seededRng(42, 7);
 * const u = a.next();
 * assert.equal(b.next(), u); // same seeds, same stream
 * assert.ok(u >= 0 && u < 1);
 * assert.equal(a.int(1, 6), b.int(1, 6));
 * assert.deepEqual(a.shuffle([1, 2, 3]), b.shuffle([1, 2, 3]));
 * ```
 */
export function seededRng(...seeds: number[]): Rng {
  if (seeds.length === 0) {
    throw new TypeError("seededRng: give at least one integer seed, got none");
  }
  let state = 0x6a09e667;
  let word: number;
  for (const [k, s] of seeds.entries()) {
    checkNumber("seededRng", `seeds[${k}]`, s, { integer: true });
    // Fold the seed in 32-bit halves so large safe integers keep all their bits.
    const lo = s % 0x100000000 | 0;
    const hi = Math.floor(s / 0x100000000) | 0;
    [state, word] = splitmix32(state ^ lo);
    [state, word] = splitmix32(state ^ hi ^ word);
  }
  const words: number[] = [];
  for (let i = 0; i < 4; i++) {
    [state, word] = splitmix32(state);
    words.push(word);
  }
  const sfc = new Sfc32(words);
  const nextU32 = (): number => sfc.next();
  for (let i = 0; i < 12; i++) nextU32();
  const next = () => nextU32() / 0x100000000;
  const int = (lo: number, hi: number): number => {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) {
      throw new RangeError(`Rng.int: need integers lo <= hi, got lo=${show(lo)}, hi=${show(hi)}`);
    }
    return lo + Math.floor(next() * (hi - lo + 1));
  };
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) {
        throw new RangeError("Rng.pick: the array is empty; pass at least one item");
      }
      return items[int(0, items.length - 1)]!;
    },
    shuffle<T>(items: readonly T[]): T[] {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
    chance(p: number): boolean {
      return next() < p;
    },
  };
}
