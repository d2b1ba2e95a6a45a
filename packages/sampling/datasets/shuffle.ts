/**
 * Deterministic per-epoch shuffling.
 *
 * Design: the permutation of epoch `e` is a Fisher–Yates shuffle driven by this package's
 * xoshiro128** generator seeded with `(seed, e)`, so it depends only on `(n, seed, epoch)`: any
 * epoch's order can be recomputed directly (which is what makes iterators resumable) and
 * different epochs get unrelated orders.
 *
 * @module
 */

import { checkNumber } from "../_args.ts";
import { checkSeed, Prng } from "../_prng.ts";

/**
 * The permutation of `0..n−1` for `(seed, epoch)`: `order[k]` is the item visited `k`-th.
 *
 * @example Usage
 * ```ts
 * import { epochPermutation } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const a = epochPermutation(5, 42, 0);
 * assert.deepEqual([...a].sort(), [0, 1, 2, 3, 4]);
 * assert.deepEqual(epochPermutation(5, 42, 0), a); // deterministic
 * assert.notDeepEqual(epochPermutation(50, 42, 1), epochPermutation(50, 42, 0));
 * ```
 */
export function epochPermutation(n: number, seed: number, epoch: number): Uint32Array {
  const owner = "epochPermutation";
  checkNumber(owner, "n", n, { integer: true, min: 0, max: 4294967295 });
  checkSeed(owner, seed);
  checkSeed(owner, epoch, "epoch");
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const rng = Prng.fromSeed(seed, epoch);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order;
}

/**
 * A shuffled copy of `items` for `(seed, epoch)`.
 *
 * @example Usage
 * ```ts
 * import { shuffled } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const xs = ["a", "b", "c", "d"];
 * assert.deepEqual(shuffled(xs, 1, 0), shuffled(xs, 1, 0));
 * assert.deepEqual([...shuffled(xs, 1, 0)].sort(), xs);
 * ```
 */
export function shuffled<T>(items: readonly T[], seed: number, epoch = 0): T[] {
  return Array.from(epochPermutation(items.length, seed, epoch), (i) => items[i]!);
}
