/**
 * A fast seeded standard-normal sampler: the ziggurat method of Marsaglia & Tsang (2000, "The
 * Ziggurat Method for Generating Random Variables", J. Stat. Softw. 5(8)) with 256 layers, driven
 * by the same xoshiro128** generator, seeded the same way, as {@link Rng}. An opt-in alternative to
 * `Rng.normal()` (Box–Muller), whose `Math.log`/`sqrt`/`sin`/`cos` per pair make it several times
 * slower per draw (measured in `packages/tensor/README.md`); the Box–Muller stream stays the
 * default everywhere because shipped checkpoints and pinned tests are reproduced bit for bit from
 * it.
 *
 * Design:
 * - **One 32-bit word per draw on the fast path**: draw j takes word j of the generator and splits
 *   it into disjoint bits: the low 8 pick the layer, bit 8 the sign and the top 23 the position in
 *   the layer (so the layer and the value are independent, avoiding the correlation Doornik (2005)
 *   found in the original, which reused the layer bits in the value). 98.5% of draws end there
 *   with one integer compare and one multiply.
 * - **Exact elsewhere**: the wedges use the rejection test against `exp(-x²/2)` (a rejected point
 *   starts the draw over), and the tail beyond r = 3.654… uses Marsaglia's (1964) exact tail
 *   algorithm. The words these need come from a second stream: the generator jumped 2^64 words
 *   ahead (xoshiro128**'s `jump`), so the two never overlap. The value of draw j is thus a function
 *   of word j and, for the 1.5% that miss the fast path, of the next words of the second stream.
 * - **Bulk fills**: {@link ZigguratNormal.fillNormal} runs a branch-free pass over a chunk (the
 *   generator state in locals, no call per element, the misses' indices noted) and then finishes
 *   the misses in order; it gives exactly the values of repeated {@link ZigguratNormal.normal}
 *   calls times `std`.
 * - **Reproducible**: the uniform part is 32-bit integer arithmetic only; the values are products
 *   of those integers with a table computed once in float64, and the slow path calls
 *   `Math.exp`/`Math.log` (V8's own fdlibm ports, as Box–Muller's `Math.log`/`sin`/`cos`), so a
 *   seed gives the same stream on every platform; `ziggurat_test.ts` pins it.
 *
 * @module
 */

import { type NormalSource, Rng, seedXoshiro } from "./random.ts";

/** Layers of the ziggurat (a power of two: the layer is the word's low bits). */
const LAYERS = 256;
/** Start of the tail: the right edge of the base strip, for 256 layers of equal area. */
const R = 3.6541528853610088;
/** The area of each layer under the unnormalised density exp(-x²/2). */
const V = 0.004928673233974655;
/** 2^-23: a 23-bit position in the layer times this is in [0, 1). */
const TWO_M23 = 1 / 8388608;

interface Tables {
  /** Layer right edges: layer i is [0, x[i]) × [f[i], f[i + 1]]; x[0] is the base strip's width. */
  x: Float64Array;
  /** exp(-x²/2) at the edges (f[256] = 1). */
  f: Float64Array;
  /**
   * ±x[i] / 2^23 at index sign · 256 + i: the value of position m in layer i with sign bit b is
   * (m + 0.5) · w[b · 256 + i] (the word's low 9 bits index it directly).
   */
  w: Float64Array;
  /** Positions m < k[i] lie under the curve in layer i (or in the base strip for i = 0). */
  k: Int32Array;
}

let tables: Tables | null = null;

/** The layer tables, computed on first use (internal; exported for the tests). */
export function zigguratTables(): Tables {
  if (tables !== null) return tables;
  const x = new Float64Array(LAYERS + 1);
  const f = new Float64Array(LAYERS + 1);
  const fr = Math.exp(-0.5 * R * R);
  x[0] = V / fr; // the base strip [0, r] × [0, f(r)] plus the tail, as one rectangle of area V
  x[1] = R;
  for (let i = 1; i < LAYERS - 1; i++) {
    const xi = x[i]!;
    x[i + 1] = Math.sqrt(-2 * Math.log(V / xi + Math.exp(-0.5 * xi * xi)));
  }
  x[LAYERS] = 0;
  for (let i = 0; i <= LAYERS; i++) f[i] = Math.exp(-0.5 * x[i]! * x[i]!);
  f[0] = 0; // the base strip reaches down to 0 (never read: layer 0 has no wedge)
  const w = new Float64Array(2 * LAYERS);
  const k = new Int32Array(LAYERS);
  for (let i = 0; i < LAYERS; i++) {
    w[i] = x[i]! * TWO_M23;
    w[i + LAYERS] = -w[i]!;
    // (m + 0.5) · x[i] / 2^23 < x[i + 1]  ⟺  m < ceil(2^23 · x[i + 1] / x[i] − 0.5)
    k[i] = Math.max(0, Math.ceil(x[i + 1]! / x[i]! * 8388608 - 0.5));
  }
  tables = { x, f, w, k };
  return tables;
}

/** Draws per chunk of {@link ZigguratNormal.fillNormal}'s two passes. */
const CHUNK = 4096;
/** Indices and first words of a chunk's fast-path misses (one spare slot: the pass always writes). */
const missIndex = new Int32Array(CHUNK + 1);
const missWord = new Int32Array(CHUNK + 1);

/** xoshiro128**'s jump polynomial: `jump` advances the state by 2^64 words. */
const JUMP = [0x8764000b, 0xf542d2d3, 0x6fa035c3, 0x77f2db5b];

/** One xoshiro128** step on an int32 state (the bits of `Xoshiro128ss.next()`, as an int32). */
function step(s: Int32Array): number {
  const s0 = s[0]!, s1 = s[1]!;
  const s2 = s[2]! ^ s0, s3 = s[3]! ^ s1;
  const m5 = Math.imul(s1, 5);
  const result = Math.imul((m5 << 7) | (m5 >>> 25), 9);
  s[0] = s0 ^ s3;
  s[1] = s1 ^ s2;
  s[2] = s2 ^ (s1 << 9);
  s[3] = (s3 << 11) | (s3 >>> 21);
  return result;
}

/**
 * The xoshiro128** state 2^64 words after `state` (Blackman & Vigna's `jump`; internal, exported
 * for the tests).
 */
export function xoshiroJump(state: readonly number[]): Int32Array {
  const s = Int32Array.from(state);
  const acc = new Int32Array(4);
  for (const word of JUMP) {
    for (let b = 0; b < 32; b++) {
      if (((word >>> b) & 1) !== 0) {
        for (let q = 0; q < 4; q++) acc[q]! ^= s[q]!;
      }
      step(s);
    }
  }
  return acc;
}

/**
 * Seeded standard normals by the ziggurat method (256 layers), several times faster than
 * Box–Muller's `Rng.normal()`. The generator is xoshiro128** seeded as `new Rng(seed)`, but the
 * values are a different stream from `Rng.normal()`'s: use it where the draws need not match the
 * default stream (e.g. `CausalLM.random(config, { init: "ziggurat" })`).
 *
 * @example Usage
 * ```ts
 * import { ZigguratNormal } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const a = new ZigguratNormal(7), b = new ZigguratNormal(7);
 * assert.equal(a.normal(), b.normal());
 * const w = a.fillNormal(new Float32Array(100_000), 0.02);
 * const mean = w.reduce((s, v) => s + v, 0) / w.length;
 * assert.ok(Math.abs(mean) < 0.001);
 * ```
 */
export class ZigguratNormal implements NormalSource {
  // Int32 words, as Xoshiro128ss: V8 keeps them untagged. #s gives each draw its first word; #t,
  // the same generator 2^64 words ahead, the words of the slow path.
  #s: Int32Array;
  #t: Int32Array;

  /**
   * Seeds the generator as `new Rng(seed)` does; any integer (or float, truncated) works.
   *
   * @param seed The seed.
   * @throws {RangeError} when the seed is not finite.
   */
  constructor(seed: number) {
    if (!Number.isFinite(seed)) {
      throw new RangeError(`ZigguratNormal: seed must be a finite number, got ${seed}`);
    }
    const state = seedXoshiro(seed).state();
    this.#s = Int32Array.from(state);
    this.#t = xoshiroJump(state);
    zigguratTables();
  }

  /** A uniform in (0, 1) from the slow-path stream. */
  #open01(): number {
    return ((step(this.#t) >>> 0) + 0.5) * 2.3283064365386963e-10; // 2^-32
  }

  /** The draw whose first word `u` missed the fast path: wedges, tail and restarts. */
  #slow(u: number): number {
    const { w, k, f } = tables!;
    for (;;) {
      const i = u & 255;
      const m = u >>> 9;
      // Only true on restarts: the first word missed this test.
      if (m < k[i]!) return (m + 0.5) * w[u & 511]!;
      if (i === 0) {
        // The tail beyond R (Marsaglia 1964): x = -ln(U1)/R, y = -ln(U2) until 2y > x².
        let a: number, b: number;
        do {
          a = -Math.log(this.#open01()) / R;
          b = -Math.log(this.#open01());
        } while (b + b < a * a);
        return (u & 256) !== 0 ? -(R + a) : R + a;
      }
      const v = (m + 0.5) * w[u & 511]!;
      // The wedge: a uniform height in [f(x[i]), f(x[i + 1])] under the curve at v.
      if (f[i]! + this.#open01() * (f[i + 1]! - f[i]!) < Math.exp(-0.5 * v * v)) return v;
      u = step(this.#t);
    }
  }

  /**
   * The next standard normal.
   *
   * @returns A draw from N(0, 1).
   *
   * @example Usage
   * ```ts
   * import { ZigguratNormal } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const z = new ZigguratNormal(1);
   * const xs = Array.from({ length: 1000 }, () => z.normal());
   * assert.ok(xs.every(Number.isFinite));
   * assert.ok(Math.abs(xs.reduce((s, x) => s + x, 0) / 1000) < 0.2);
   * ```
   */
  normal(): number {
    const u = step(this.#s);
    const m = u >>> 9;
    const { w, k } = tables!;
    return m < k[u & 255]! ? (m + 0.5) * w[u & 511]! : this.#slow(u);
  }

  /**
   * Fills `out` with `normal() * std`, element by element in order: the same values as that many
   * {@link ZigguratNormal.normal} calls, without a call per element.
   *
   * @param out The array to fill (f32 values are the f64 draws rounded).
   * @param std The standard deviation (default 1).
   * @returns `out`.
   *
   * @example Usage
   * ```ts
   * import { ZigguratNormal } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const filled = new ZigguratNormal(3).fillNormal(new Float64Array(4), 2);
   * const z = new ZigguratNormal(3);
   * assert.deepEqual([...filled], [0, 1, 2, 3].map(() => z.normal() * 2));
   * ```
   */
  fillNormal<T extends Float32Array | Float64Array>(out: T, std = 1): T {
    const { w, k } = tables!;
    const s = this.#s;
    let s0 = s[0]!, s1 = s[1]!, s2 = s[2]!, s3 = s[3]!;
    const n = out.length;
    for (let start = 0; start < n; start += CHUNK) {
      const end = Math.min(n, start + CHUNK);
      let misses = 0;
      for (let j = start; j < end; j++) {
        // xoshiro128** inline (the state in locals): result = rotl(s1 · 5, 7) · 9.
        const m5 = Math.imul(s1, 5);
        const u = Math.imul((m5 << 7) | (m5 >>> 25), 9);
        const t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        const m = u >>> 9;
        out[j] = (m + 0.5) * w[u & 511]! * std;
        // Branch-free: note j and u, and keep them only when m >= k (m − k is then >= 0).
        missIndex[misses] = j;
        missWord[misses] = u;
        misses += 1 ^ ((m - k[u & 255]!) >>> 31);
      }
      for (let q = 0; q < misses; q++) out[missIndex[q]!] = this.#slow(missWord[q]!) * std;
    }
    s[0] = s0, s[1] = s1, s[2] = s2, s[3] = s3;
    return out;
  }
}

/**
 * How normal draws are made: `"box-muller"` is `Rng.normal()` (the default stream, which seeded
 * inits and pinned values depend on); `"ziggurat"` is {@link ZigguratNormal} (a different stream,
 * about 8x faster per draw).
 *
 * @example Usage
 * ```ts
 * import type { NormalMethod } from "@rlvr/tensor";
 * const method: NormalMethod = "ziggurat";
 * ```
 */
export type NormalMethod = "box-muller" | "ziggurat";

/**
 * Every {@link NormalMethod}, the default first.
 *
 * @example Usage
 * ```ts
 * import { NORMAL_METHODS } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(NORMAL_METHODS, ["box-muller", "ziggurat"]);
 * ```
 */
export const NORMAL_METHODS: readonly NormalMethod[] = Object.freeze(["box-muller", "ziggurat"]);

/**
 * A seeded source of standard normals by `method`: `new Rng(seed)` for `"box-muller"` (default),
 * `new ZigguratNormal(seed)` for `"ziggurat"`.
 *
 * @param seed The seed (a finite number).
 * @param method The method (default `"box-muller"`).
 * @returns The source.
 * @throws {RangeError} naming the value and the choices when `method` is unknown.
 *
 * @example Usage
 * ```ts
 * import { normalSource, Rng } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(normalSource(5).normal(), new Rng(5).normal()); // the default stream
 * const fast = normalSource(5, "ziggurat").fillNormal(new Float32Array(8), 0.02);
 * assert.equal(fast.length, 8);
 * ```
 */
export function normalSource(seed: number, method: NormalMethod = "box-muller"): NormalSource {
  if (method === "box-muller") return new Rng(seed);
  if (method === "ziggurat") return new ZigguratNormal(seed);
  throw new RangeError(
    `normalSource: method must be one of ${NORMAL_METHODS.join(", ")}, got ${
      JSON.stringify(method)
    }`,
  );
}

/**
 * Fills `out` with seeded N(0, std²) draws in one call: `normalSource(seed, method)
 * .fillNormal(out, std)`.
 *
 * @param out The array to fill.
 * @param opts `seed` (default 0), `std` (default 1) and `method` (default `"box-muller"`).
 * @returns `out`.
 *
 * @example Usage
 * ```ts
 * import { normalFill } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const a = normalFill(new Float32Array(1000), { seed: 1, std: 0.02, method: "ziggurat" });
 * const b = normalFill(new Float32Array(1000), { seed: 1, std: 0.02, method: "ziggurat" });
 * assert.deepEqual(a, b);
 * ```
 */
export function normalFill<T extends Float32Array | Float64Array>(
  out: T,
  opts: { seed?: number; std?: number; method?: NormalMethod } = {},
): T {
  const std = opts.std ?? 1;
  if (!Number.isFinite(std)) {
    throw new RangeError(`normalFill: std must be a finite number, got ${std}`);
  }
  return normalSource(opts.seed ?? 0, opts.method ?? "box-muller").fillNormal(out, std);
}
