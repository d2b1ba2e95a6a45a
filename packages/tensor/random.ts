/**
 * A small seeded generator (xoshiro128**, seeded through splitmix32) for reproducible
 * initialisation and tests. The same seed gives the same stream on every platform because only
 * 32-bit integer arithmetic is used. The generator and the seed mixer are `@rlvr/common`'s
 * (`Xoshiro128ss`, `splitmix32`), the workspace's one PRNG module; the stream is pinned by
 * `random_test.ts`. `Rng.normal()` (Box–Muller) is the default normal stream; `ziggurat.ts` holds
 * the opt-in, faster `ZigguratNormal` on the same seeded generator.
 *
 * @module
 */

import { splitmix32, Xoshiro128ss } from "@rlvr/common";

/**
 * A seeded source of standard normals: {@link Rng} (Box–Muller, the default stream) and
 * `ZigguratNormal` (the ziggurat method, a faster different stream); `normalSource` picks one
 * by method.
 *
 * @example Usage
 * ```ts
 * import { type NormalSource, Rng } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const src: NormalSource = new Rng(1);
 * const out = src.fillNormal(new Float32Array(3), 0.5);
 * const again = new Rng(1);
 * assert.deepEqual([...out], [0, 1, 2].map(() => Math.fround(again.normal() * 0.5)));
 * ```
 */
export interface NormalSource {
  /** The next standard normal. */
  normal(): number;
  /** Fills `out` with `normal() * std` (std default 1), element by element; returns `out`. */
  fillNormal<T extends Float32Array | Float64Array>(out: T, std?: number): T;
}

/** xoshiro128** seeded from one number through splitmix32, as {@link Rng} seeds (internal). */
export function seedXoshiro(seed: number): Xoshiro128ss {
  let st = Math.trunc(seed) | 0;
  const s: number[] = [];
  for (let i = 0; i < 4; i++) {
    const [next, out] = splitmix32(st);
    st = next;
    s.push(out);
  }
  return new Xoshiro128ss(s);
}

/**
 * A seeded pseudo-random generator.
 *
 * @example Usage
 * ```ts
 * import { Rng } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const a = new Rng(7), b = new Rng(7);
 * assert.equal(a.uniform(), b.uniform());
 * ```
 */
export class Rng implements NormalSource {
  #g: Xoshiro128ss;
  #spare: number | null = null;

  /** Seeds the generator; any integer (or float, truncated) works. */
  constructor(seed: number) {
    if (!Number.isFinite(seed)) {
      throw new RangeError(`Rng: seed must be a finite number, got ${seed}`);
    }
    this.#g = seedXoshiro(seed);
  }

  /** Next uniformly distributed unsigned 32-bit integer. */
  nextUint32(): number {
    return this.#g.next();
  }

  /** Uniform in [0, 1) with 32 random bits. */
  uniform(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Standard normal (Box–Muller; the second value of each pair is kept for the next call). */
  normal(): number {
    if (this.#spare !== null) {
      const v = this.#spare;
      this.#spare = null;
      return v;
    }
    const u1 = 1 - this.uniform(); // in (0, 1], so log is finite
    const u2 = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u1));
    this.#spare = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  }

  /**
   * Fills `out` with `normal() * std`, element by element in order (the default Box–Muller
   * stream, as a loop of {@link Rng.normal} calls would give).
   *
   * @param out The array to fill (f32 values are the f64 products rounded).
   * @param std The standard deviation (default 1).
   * @returns `out`.
   *
   * @example Usage
   * ```ts
   * import { Rng } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const a = new Rng(2).fillNormal(new Float64Array(3), 0.02);
   * const r = new Rng(2);
   * assert.deepEqual([...a], [r.normal() * 0.02, r.normal() * 0.02, r.normal() * 0.02]);
   * ```
   */
  fillNormal<T extends Float32Array | Float64Array>(out: T, std = 1): T {
    for (let i = 0; i < out.length; i++) out[i] = this.normal() * std;
    return out;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }
}

let globalRng = new Rng(0);

/**
 * Reseeds the generator used by `randn`/`rand`/`randint` when no `seed` option is given.
 *
 * @example Usage
 * ```ts
 * import { manualSeed, randn } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * manualSeed(1);
 * const a = await randn([3]).toArray();
 * manualSeed(1);
 * assert.deepEqual(await randn([3]).toArray(), a);
 * ```
 */
export function manualSeed(seed: number): void {
  globalRng = new Rng(seed);
}

/** The generator behind `randn`/`rand` when no seed is given (internal). */
export function defaultRng(): Rng {
  return globalRng;
}
