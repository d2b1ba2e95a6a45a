/**
 * Reduced-precision storage of f32 tensors: a tensor keeps dtype `f32` and every op still sees
 * f32 values, but the backend holds them as bfloat16 (half the bytes). Values are rounded once,
 * when stored (to nearest, ties to even, as PyTorch's `.to(torch.bfloat16)`), and widened exactly
 * when read. Meant for frozen weights (a LoRA base, a reference model): the CPU backend's matmul
 * and embedding kernels read the bf16 bits directly; other kernels get a widened copy; a kernel
 * that writes such a tensor (an optimizer step) computes in f32 and rounds the result back.
 *
 * Where a backend has no bf16 storage (WebGPU today) {@link setStorageFormat} throws and
 * {@link storageFormat} reports `"f32"`.
 *
 * @module
 */

import type { StorageFormat } from "./backend/types.ts";
import type { Tensor } from "./tensor.ts";

/** The storage formats, for validation messages. */
export const STORAGE_FORMATS: readonly StorageFormat[] = ["f32", "bf16"];

/**
 * How `t`'s values are stored: `"bf16"` after {@link setStorageFormat}, else `"f32"`.
 *
 * @param t A tensor.
 * @returns Its storage format.
 *
 * @example Usage
 * ```ts
 * import { storageFormat, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(storageFormat(tensor([1, 2])), "f32");
 * ```
 */
export function storageFormat(t: Tensor): StorageFormat {
  return t.dtype === "f32" ? t.backend.storageFormat?.(t.buffer) ?? "f32" : "f32";
}

/**
 * Re-stores `t`'s values as `format`, in place (every view of its buffer changes with it):
 * `"bf16"` rounds each value to bfloat16 and halves the bytes held; `"f32"` widens back (exact).
 *
 * @param t An f32 tensor.
 * @param format `"bf16"` or `"f32"`.
 * @throws {TypeError} for a non-f32 tensor, or a backend without bf16 storage.
 *
 * @example Usage
 * ```ts
 * import { createCpuBackend, setStorageFormat, storageFormat, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const backend = createCpuBackend();
 * const w = tensor([1, 1 + 2 ** -9, 3.14159], { backend });
 * setStorageFormat(w, "bf16");
 * assert.equal(storageFormat(w), "bf16");
 * assert.deepEqual(await w.toArray(), [1, 1, 3.140625]); // rounded to 8 significant bits
 * assert.equal(backend.memory().liveBytes, 6); // 2 bytes per value
 * w.dispose();
 * ```
 */
export function setStorageFormat(t: Tensor, format: StorageFormat): void {
  if (!STORAGE_FORMATS.includes(format)) {
    throw new RangeError(
      `setStorageFormat: format must be one of ${STORAGE_FORMATS.join(", ")}, got ${
        JSON.stringify(format)
      }`,
    );
  }
  if (t.dtype !== "f32") {
    throw new TypeError(
      `setStorageFormat: only f32 tensors have a storage format, this one is ${t.dtype}`,
    );
  }
  const set = t.backend.setStorageFormat;
  if (set === undefined) {
    if (format === "f32") return;
    throw new TypeError(
      `setStorageFormat: the ${t.backend.name} backend has no bf16 storage; use the CPU backend, ` +
        `or keep f32 weights (format "f32")`,
    );
  }
  set.call(t.backend, t.buffer, format);
}
