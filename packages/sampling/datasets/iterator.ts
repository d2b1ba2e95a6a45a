/**
 * Resumable epoch iterators over a dataset.
 *
 * Design: the position is `(epoch, index)`, the index into epoch `epoch`'s permutation (see
 * {@link epochPermutation}; the identity when `shuffle: false`). Because each epoch's order is a
 * pure function of `(size, seed, epoch)`, the state `{ epoch, index, seed, size }` is all that is
 * needed to continue: restoring it yields exactly the sequence the original iterator would have
 * yielded, across epoch boundaries too. `size` is saved so that restoring against a dataset of a
 * different length (whose permutations differ) is an error rather than a silent change. The items
 * must be random-access (an array, or `{ length, get(i) }`), since a shuffle needs every index;
 * load a streamed file with {@link loadExamples} first.
 *
 * @module
 */

import { checkNumber, show } from "../_args.ts";
import { checkSeed } from "../_prng.ts";
import { epochPermutation } from "./shuffle.ts";

/** The saved position of an {@link EpochIterator}. */
export interface IteratorState {
  /** The current epoch (0-based). */
  epoch: number;
  /** The next position within the epoch's order (0-based, < size). */
  index: number;
  /** The shuffle seed. */
  seed: number;
  /** The dataset length the permutations are for. */
  size: number;
}

/** Random-access items. */
export type RandomAccess<T> = readonly T[] | { readonly length: number; get(index: number): T };

/** Options of {@link EpochIterator}. */
export interface EpochIteratorOptions {
  /** Shuffle seed, an integer in [0, 2^53). */
  seed: number;
  /** Shuffle each epoch (default true); false visits items in order every epoch. */
  shuffle?: boolean;
  /** Stop after this many epochs (default Infinity). */
  epochs?: number;
}

/** One yielded item with where it was. */
export interface IteratorEntry<T> {
  /** The item. */
  value: T;
  /** Its epoch. */
  epoch: number;
  /** Its position within the epoch. */
  index: number;
  /** Its index in the dataset. */
  item: number;
}

/**
 * Iterates a dataset epoch after epoch, shuffled per epoch, with an exact save/restore.
 *
 * @example Usage
 * ```ts
 * import { EpochIterator } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const data = ["a", "b", "c"];
 * const it = new EpochIterator(data, { seed: 5 });
 * const first = it.take(4); // all of epoch 0, then one of epoch 1
 * assert.deepEqual([...first.slice(0, 3)].sort(), data);
 * const saved = JSON.parse(JSON.stringify(it.state()));
 * assert.deepEqual(saved, { epoch: 1, index: 1, seed: 5, size: 3 });
 * const resumed = EpochIterator.restore(data, saved);
 * assert.deepEqual(resumed.take(5), it.take(5));
 * ```
 */
export class EpochIterator<T> implements IterableIterator<T> {
  /** The dataset. */
  readonly items: RandomAccess<T>;
  /** The shuffle seed. */
  readonly seed: number;
  /** Whether each epoch is shuffled. */
  readonly shuffle: boolean;
  /** Epochs before the iterator ends (Infinity: never). */
  readonly epochs: number;
  #epoch = 0;
  #index = 0;
  #order: Uint32Array | undefined;
  #orderEpoch = -1;

  /** An iterator at the start of epoch 0. */
  constructor(items: RandomAccess<T>, options: EpochIteratorOptions) {
    const owner = "EpochIterator";
    if (
      items === null || typeof items !== "object" || !Number.isInteger(items.length) ||
      (!Array.isArray(items) && typeof (items as { get?: unknown }).get !== "function")
    ) {
      throw new TypeError(
        `${owner}: items must be an array or { length, get(i) }, got ${show(items)}`,
      );
    }
    this.items = items;
    this.seed = checkSeed(owner, options?.seed);
    this.shuffle = options.shuffle ?? true;
    this.epochs = checkNumber(owner, "epochs", options.epochs ?? Infinity, {
      integer: true,
      min: 1,
      allowInfinity: true,
    });
  }

  /** An iterator continuing exactly from `state`; throws if it does not fit `items`. */
  static restore<T>(
    items: RandomAccess<T>,
    state: IteratorState,
    options: Omit<EpochIteratorOptions, "seed"> = {},
  ): EpochIterator<T> {
    const owner = "EpochIterator.restore";
    const it = new EpochIterator(items, { ...options, seed: state?.seed });
    const size = checkNumber(owner, "state.size", state.size, { integer: true, min: 0 });
    if (size !== items.length) {
      throw new RangeError(
        `${owner}: the state is for ${size} items but the dataset has ${items.length}; restore against the same data (the shuffles depend on its length)`,
      );
    }
    it.#epoch = checkSeed(owner, state.epoch, "state.epoch");
    it.#index = checkNumber(owner, "state.index", state.index, {
      integer: true,
      min: 0,
      max: Math.max(0, size - 1),
    });
    return it;
  }

  /** The current epoch. */
  get epoch(): number {
    return this.#epoch;
  }

  /** The next position within the current epoch. */
  get index(): number {
    return this.#index;
  }

  /** The saved position (plain JSON). */
  state(): IteratorState {
    return { epoch: this.#epoch, index: this.#index, seed: this.seed, size: this.items.length };
  }

  /** The visiting order of `epoch`. */
  order(epoch: number): Uint32Array {
    if (!this.shuffle) return Uint32Array.from({ length: this.items.length }, (_, i) => i);
    return epochPermutation(this.items.length, this.seed, epoch);
  }

  #at(i: number): T {
    const items = this.items;
    return Array.isArray(items) ? items[i] as T : (items as { get(i: number): T }).get(i);
  }

  /** The next item with its epoch and positions, or `undefined` when done. */
  nextEntry(): IteratorEntry<T> | undefined {
    const n = this.items.length;
    if (n === 0 || this.#epoch >= this.epochs) return undefined;
    if (this.#orderEpoch !== this.#epoch) {
      this.#order = this.order(this.#epoch);
      this.#orderEpoch = this.#epoch;
    }
    const item = this.#order![this.#index]!;
    const entry = { value: this.#at(item), epoch: this.#epoch, index: this.#index, item };
    this.#index++;
    if (this.#index >= n) {
      this.#index = 0;
      this.#epoch++;
    }
    return entry;
  }

  /** The iterator protocol. */
  next(): IteratorResult<T, undefined> {
    const e = this.nextEntry();
    return e === undefined ? { done: true, value: undefined } : { done: false, value: e.value };
  }

  /** The next `k` items (fewer if the epochs run out). */
  take(k: number): T[] {
    checkNumber("EpochIterator.take", "k", k, { integer: true, min: 0 });
    const out: T[] = [];
    while (out.length < k) {
      const e = this.nextEntry();
      if (e === undefined) break;
      out.push(e.value);
    }
    return out;
  }

  /** Itself. */
  [Symbol.iterator](): EpochIterator<T> {
    return this;
  }
}
