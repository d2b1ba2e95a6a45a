/**
 * Deterministic train/test splits by hash of a key.
 *
 * Design: an item goes to the test split when `hash53(salt ␀ key) / 2^53 < testFraction`, with
 * `hash53` the cyrb53 string hash. The assignment depends only on the item's key and the salt,
 * never on the other items or their order, so it is stable when rows are added, removed or
 * reordered, the splits never overlap, and equal keys (duplicate prompts) land on the same side,
 * which keeps duplicates from leaking between train and test. The default key is the item's
 * `uid` (an {@link Example}'s uid, itself a hash of the prompt unless mapped).
 *
 * @module
 */

import { checkUnit, show } from "../_args.ts";
import { hashUnit } from "../_prng.ts";

/** Options of the split functions. */
export interface SplitOptions {
  /** Fraction of keys sent to the test split, in [0, 1]. */
  testFraction: number;
  /** Salt: a different salt gives an independent split (default `""`). */
  salt?: string;
}

/**
 * The split of one key.
 *
 * @example Usage
 * ```ts
 * import { splitOf } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const s = splitOf("prompt-17", { testFraction: 0.1 });
 * assert.ok(s === "train" || s === "test");
 * assert.equal(splitOf("prompt-17", { testFraction: 0.1 }), s); // stable
 * assert.equal(splitOf("prompt-17", { testFraction: 0 }), "train");
 * assert.equal(splitOf("prompt-17", { testFraction: 1 }), "test");
 * ```
 */
export function splitOf(key: string, options: SplitOptions): "train" | "test" {
  const owner = "splitOf";
  if (typeof key !== "string") {
    throw new TypeError(`${owner}: key must be a string, got ${show(key)}`);
  }
  const f = checkUnit(owner, "testFraction", options?.testFraction);
  const salt = options.salt ?? "";
  return hashUnit(`${salt}\u0000${key}`) < f ? "test" : "train";
}

/**
 * Splits items by the hash of their key (default: their `uid`).
 *
 * @example Usage
 * ```ts
 * import { trainTestSplit } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const items = Array.from({ length: 1000 }, (_, i) => ({ uid: `q${i}` }));
 * const { train, test } = trainTestSplit(items, { testFraction: 0.2, salt: "v1" });
 * assert.equal(train.length + test.length, 1000);
 * assert.ok(test.length > 150 && test.length < 250);
 * // adding rows never moves an existing one
 * const more = trainTestSplit([...items, { uid: "q1000" }], { testFraction: 0.2, salt: "v1" });
 * assert.deepEqual(more.test.filter((x) => x.uid !== "q1000"), test);
 * ```
 */
export function trainTestSplit<T>(
  items: Iterable<T>,
  options: SplitOptions & { key?: (item: T) => string },
): { train: T[]; test: T[] } {
  const keyOf = options.key ?? ((item: T) => {
    const uid = (item as { uid?: unknown } | null)?.uid;
    if (typeof uid !== "string") {
      throw new TypeError(
        `trainTestSplit: an item has no string uid (got ${show(uid)}); pass options.key`,
      );
    }
    return uid;
  });
  const train: T[] = [];
  const test: T[] = [];
  for (const item of items) (splitOf(keyOf(item), options) === "test" ? test : train).push(item);
  return { train, test };
}
