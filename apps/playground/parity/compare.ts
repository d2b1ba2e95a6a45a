/**
 * Comparing a backend's values with the oracle's: the error figures a parity report shows and
 * the pass/fail decision, under either of the two kinds of tolerance the `@rlvr/tensor` tests
 * use.
 *
 * - `close`: `|a − e| <= atol + rtol·|e|` per element, decided by `assertClose` of
 *   `@rlvr/tensor/testing` (the helper every backend-vs-oracle test uses; NaN must meet NaN and
 *   infinities must match exactly), whose message becomes the failure detail.
 * - `bound`: a tolerance per element computed from the inputs (the WebAssembly matmul's
 *   `(k + 1)·2⁻²³·Σ|a·b|` of `backend/wasm/matmul_wasm_test.ts`).
 *
 * Reported figures: `maxAbs` = max |a − e|; `maxRel` = max |a − e| / |e| over the elements whose
 * |e| is at least 1e-3 of the largest |e| (near-zero elements are what the absolute term covers,
 * and would only inflate the ratio); `ratio` = max |a − e| / allowed (at most 1 passes, 0 when
 * identical). Non-finite figures are reported as null (JSON has no Infinity).
 *
 * @module
 */

import { assertClose } from "@rlvr/tensor/testing";

/** A tolerance: elementwise `close` (rtol/atol) or a per-element `bound` computed per check. */
export type Tolerance =
  | { kind: "close"; rtol: number; atol: number; source: string }
  | { kind: "bound"; formula: string; source: string };

/** The error figures of one comparison. */
export interface Comparison {
  /** Max |actual − expected| (null when not finite). */
  maxAbs: number | null;
  /** Max relative error over the elements not near zero (see the module doc). */
  maxRel: number | null;
  /** Max |actual − expected| / allowed: at most 1 passes (null when infinite). */
  ratio: number | null;
  /** Whether every element is within its tolerance. */
  pass: boolean;
  /** Why it failed ("" when it passed). */
  detail: string;
}

/**
 * A tolerance in words, e.g. `rtol 1e-4, atol 1e-5` or the bound's formula.
 *
 * @param tol The tolerance.
 * @returns Its description, with the test file it comes from.
 *
 * @example Usage
 * ```ts
 * import { describeTolerance } from "./compare.ts";
 * import assert from "node:assert/strict";
 * const tol = { kind: "close", rtol: 1e-4, atol: 1e-5, source: "parity_test.ts F32" } as const;
 * assert.equal(describeTolerance(tol), "rtol 1e-4, atol 1e-5 (parity_test.ts F32)");
 * ```
 */
export function describeTolerance(tol: Tolerance): string {
  if (tol.kind === "bound") return `${tol.formula} (${tol.source})`;
  const fmt = (x: number) => (x === 0 ? "0" : x.toExponential());
  return tol.rtol === 0 && tol.atol === 0
    ? `exact (${tol.source})`
    : `rtol ${fmt(tol.rtol)}, atol ${fmt(tol.atol)} (${tol.source})`;
}

function finite(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/**
 * Compares `actual` with `expected` under `tol`; for a `bound` tolerance, `allowed` gives each
 * element's limit.
 *
 * @param actual The backend's values.
 * @param expected The oracle's values.
 * @param tol The tolerance.
 * @param allowed Per-element limits (required for a `bound` tolerance).
 * @param label Names the comparison in the failure detail.
 * @returns The error figures and the decision.
 *
 * @example Usage
 * ```ts
 * import { compareValues } from "./compare.ts";
 * import assert from "node:assert/strict";
 * const tol = { kind: "close", rtol: 1e-4, atol: 1e-5, source: "example" } as const;
 * const c = compareValues([1, 2.0001], [1, 2], tol);
 * assert.equal(c.pass, true);
 * assert.ok(Math.abs(c.maxAbs! - 1e-4) < 1e-12);
 * assert.equal(compareValues([1, 2.01], [1, 2], tol).pass, false);
 * ```
 */
export function compareValues(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol: Tolerance,
  allowed?: ArrayLike<number>,
  label = "values",
): Comparison {
  if (actual.length !== expected.length) {
    return {
      maxAbs: null,
      maxRel: null,
      ratio: null,
      pass: false,
      detail: `${label}: ${actual.length} elements, the oracle has ${expected.length}`,
    };
  }
  if (tol.kind === "bound" && (allowed === undefined || allowed.length !== expected.length)) {
    throw new Error(
      `compareValues: ${label}: a "bound" tolerance needs one limit per element ` +
        `(${expected.length}), got ${allowed?.length ?? "none"}`,
    );
  }
  let scale = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = Math.abs(expected[i]!);
    if (Number.isFinite(e) && e > scale) scale = e;
  }
  let maxAbs = 0;
  let maxRel = 0;
  let ratio = 0;
  let worst = -1;
  let failures = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    let diff: number;
    if (Number.isNaN(a) || Number.isNaN(e)) {
      diff = Number.isNaN(a) && Number.isNaN(e) ? 0 : Infinity;
    } else if (!Number.isFinite(a) || !Number.isFinite(e)) diff = a === e ? 0 : Infinity;
    else diff = Math.abs(a - e);
    maxAbs = Math.max(maxAbs, diff);
    if (Math.abs(e) >= 1e-3 * scale && e !== 0) maxRel = Math.max(maxRel, diff / Math.abs(e));
    const limit = tol.kind === "close" ? tol.atol + tol.rtol * Math.abs(e) : allowed![i]!;
    const r = diff === 0 ? 0 : limit > 0 ? diff / limit : Infinity;
    if (r > ratio) {
      ratio = r;
      worst = i;
    }
    if (r > 1) failures++;
  }
  let pass = failures === 0;
  let detail = "";
  if (tol.kind === "close") {
    // The decision is assertClose's, the helper of the @rlvr/tensor tests.
    try {
      assertClose(actual, expected, { rtol: tol.rtol, atol: tol.atol, msg: label });
      pass = true;
    } catch (e) {
      pass = false;
      detail = (e as Error).message;
    }
  } else if (!pass) {
    detail = `${label}: ${failures} of ${actual.length} elements exceed ${tol.formula}; ` +
      `worst at flat index ${worst}: actual ${actual[worst]}, expected ${expected[worst]}, ` +
      `allowed ${allowed![worst]}`;
  }
  return { maxAbs: finite(maxAbs), maxRel: finite(maxRel), ratio: finite(ratio), pass, detail };
}
