/**
 * Test helpers for this package (not exported): a closeness assertion that names the worst
 * element, a seeded PRNG for the larger random reference cases, and fast-check arbitraries for
 * batches (masks, rewards, ragged interleaved group ids).
 *
 * @module
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { mulberry32 } from "@rlvr/common";
import type { TokenMatrix } from "./types.ts";

/** Asserts `|a − e| <= atol + rtol·|e|` elementwise, naming the worst element on failure. */
export function assertClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  { rtol = 1e-12, atol = 1e-12, msg = "" }: { rtol?: number; atol?: number; msg?: string } = {},
): void {
  assert.equal(actual.length, expected.length, `${msg} length`);
  let worst = -1;
  let worstErr = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const err = Math.abs(a - e) - (atol + rtol * Math.abs(e));
    if (!(err <= 0) && (worst < 0 || err > worstErr || Number.isNaN(err))) {
      worst = i;
      worstErr = err;
    }
  }
  if (worst >= 0) {
    assert.fail(
      `${msg} element ${worst}: got ${actual[worst]}, expected ${
        expected[worst]
      } (rtol ${rtol}, atol ${atol})`,
    );
  }
}

/** A seeded PRNG (`@rlvr/common`'s mulberry32) returning floats in [0, 1). */
export const rng: (seed: number) => () => number = mulberry32;

/** A random batch for reference comparisons. */
export interface RandomBatch {
  /** Response mask: a prefix of 1s per row (length >= 1), optionally with interior holes. */
  mask: TokenMatrix;
  /** Sequence rewards. */
  rewards: number[];
  /** Ragged, interleaved group ids. */
  index: string[];
  /** Token rewards with garbage (NaN) at masked positions. */
  tokenRewards: TokenMatrix;
  /** Another token matrix (values, log-probs ...), garbage at masked positions. */
  other: TokenMatrix;
}

/**
 * A batch of `batch` responses of padded length `length` in ragged groups, drawn from `seed`.
 * `binary` gives 0/1 rewards; `holes` punches 0s inside responses (observation tokens).
 */
export function randomBatch(
  seed: number,
  batch: number,
  length: number,
  { binary = false, holes = false, minGroup = 1 }: {
    binary?: boolean;
    holes?: boolean;
    minGroup?: number;
  } = {},
): RandomBatch {
  const r = rng(seed);
  const mask = new Float64Array(batch * length);
  const tok = new Float64Array(batch * length);
  const other = new Float64Array(batch * length);
  for (let i = 0; i < batch; i++) {
    const l = 1 + Math.floor(r() * length);
    for (let t = 0; t < length; t++) {
      const k = i * length + t;
      const valid = t < l && !(holes && t > 0 && t < l - 1 && r() < 0.2);
      mask[k] = valid ? 1 : 0;
      tok[k] = valid ? (r() - 0.5) * 2 : NaN;
      other[k] = valid ? (r() - 0.5) * 3 : NaN;
    }
  }
  const rewards = Array.from({ length: batch }, () => binary ? (r() < 0.4 ? 1 : 0) : r() * 2 - 0.5);
  // ragged groups: sizes drawn >= minGroup, then the ids are shuffled (interleaved groups)
  const index: string[] = [];
  let g = 0;
  while (index.length < batch) {
    const size = Math.min(batch - index.length, minGroup + Math.floor(r() * 6));
    for (let j = 0; j < size; j++) index.push(`g${g}`);
    g++;
  }
  if (minGroup > 1) {
    // keep the last group at least minGroup large by merging a short tail into the previous one
    const last = index[index.length - 1]!;
    const count = index.filter((x) => x === last).length;
    if (count < minGroup && g > 1) {
      for (let j = 0; j < index.length; j++) if (index[j] === last) index[j] = `g${g - 2}`;
    }
  }
  for (let i = index.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [index[i], index[j]] = [index[j]!, index[i]!];
  }
  return {
    mask: { data: mask, batch, length },
    rewards,
    index,
    tokenRewards: { data: tok, batch, length },
    other: { data: other, batch, length },
  };
}

/** fast-check: a batch with prefix masks (every row >= 1 valid token), rewards and group ids. */
export function arbBatch(
  { binary = false, maxBatch = 12, maxLength = 6, maxGroups = 4 }: {
    binary?: boolean;
    maxBatch?: number;
    maxLength?: number;
    maxGroups?: number;
  } = {},
): fc.Arbitrary<{ mask: TokenMatrix; rewards: number[]; index: number[] }> {
  return fc.integer({ min: 1, max: maxLength }).chain((length) =>
    fc.array(
      fc.record({
        len: fc.integer({ min: 1, max: length }),
        reward: binary
          ? fc.constantFrom(0, 1)
          : fc.double({ min: -5, max: 5, noNaN: true, noDefaultInfinity: true }),
        group: fc.integer({ min: 0, max: maxGroups - 1 }),
      }),
      { minLength: 1, maxLength: maxBatch },
    ).map((rows) => {
      const batch = rows.length;
      const data = new Float64Array(batch * length);
      rows.forEach((row, i) => data.fill(1, i * length, i * length + row.len));
      return {
        mask: { data, batch, length },
        rewards: rows.map((row) => row.reward),
        index: rows.map((row) => row.group),
      };
    })
  );
}

/** Rows of a flat buffer, for readable assertions. */
export function rowsOf(data: ArrayLike<number>, length: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < data.length; i += length) out.push(Array.from(data).slice(i, i + length));
  return out;
}
