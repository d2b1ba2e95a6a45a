/**
 * Test-only helpers: fast-check arbitraries for shapes (including broadcast pairs) and leaves on
 * a float64 CPU backend for finite-difference checks. Private to the package's tests.
 *
 * @module
 */

import fc from "fast-check";
import { createCpuBackend } from "./backend/cpu/cpu_backend.ts";
import type { Backend } from "./backend/types.ts";
import { tensor } from "./creation.ts";
import { Rng } from "./random.ts";
import { sizeOf } from "./shape.ts";
import type { Tensor } from "./tensor.ts";

/** A float64 CPU backend for gradient checks. */
export const f64: Backend = createCpuBackend({ precision: "f64" });

/** Shapes of 1..maxRank dimensions of size 1..maxDim. */
export function arbShape(maxRank = 3, maxDim = 4, minRank = 1): fc.Arbitrary<number[]> {
  return fc.array(fc.integer({ min: 1, max: maxDim }), { minLength: minRank, maxLength: maxRank });
}

/** Two shapes that broadcast together: the second drops leading axes and sets some to 1. */
export function arbBroadcastPair(maxRank = 3, maxDim = 4): fc.Arbitrary<[number[], number[]]> {
  return arbShape(maxRank, maxDim).chain((full) =>
    fc.tuple(
      fc.integer({ min: 0, max: full.length - 1 }),
      fc.array(fc.boolean(), { minLength: full.length, maxLength: full.length }),
      fc.boolean(),
    ).map(([drop, ones, swap]) => {
      const other = full.slice(drop).map((d, i) => (ones[i + drop] ? 1 : d));
      return (swap ? [other, full] : [full, other]) as [number[], number[]];
    })
  );
}

/**
 * A leaf tensor on the f64 backend with seeded normal values passed through `map` (to keep
 * values inside an op's domain or away from kinks).
 */
export function leaf(
  shape: readonly number[],
  seed: number,
  map: (v: number) => number = (v) => v,
  requiresGrad = true,
): Tensor {
  const rng = new Rng(seed);
  const values = Array.from({ length: sizeOf(shape) }, () => map(rng.normal()));
  return tensor(values, { shape, backend: f64, requiresGrad });
}

/** Moves a value at least `gap` away from zero, keeping its sign. */
export function awayFromZero(gap = 0.2): (v: number) => number {
  return (v) => (v >= 0 ? v + gap : v - gap);
}
