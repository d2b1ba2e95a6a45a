/**
 * Tensor element types.
 *
 * Compute happens in `f32`; `i32` holds indices and token ids; `bool` holds masks (one byte each).
 * Half-precision formats (`f16`, `bf16`) are storage formats of checkpoints only: the safetensors
 * reader widens them to `f32` on load, so no op ever sees them.
 *
 * @module
 */

/** Element type of a tensor. */
export type DType = "f32" | "i32" | "bool";

/** All tensor element types, for validation messages.  *
 * @example Usage
 * ```ts
 * import { DTYPES } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(DTYPES, ["f32", "i32", "bool"]);
 * ```
 */
export const DTYPES: readonly DType[] = ["f32", "i32", "bool"];

/** Bytes one element occupies in backend storage (the GPU layout; the CPU oracle may widen f32).  *
 * @example Usage
 * ```ts
 * import { bytesPerElement } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(bytesPerElement("bool"), 1);
 * assert.equal(bytesPerElement("f32"), 4);
 * ```
 */
export function bytesPerElement(dtype: DType): number {
  return dtype === "bool" ? 1 : 4;
}

/** Throws unless `value` names a tensor dtype.  *
 * @example Usage
 * ```ts
 * import { assertDType } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.throws(() => assertDType("f64"), /unknown dtype "f64"; use one of f32, i32, bool/);
 * ```
 */
export function assertDType(value: unknown, what = "dtype"): asserts value is DType {
  if (!DTYPES.includes(value as DType)) {
    throw new TypeError(
      `${what}: unknown dtype ${JSON.stringify(value)}; use one of ${DTYPES.join(", ")}`,
    );
  }
}
