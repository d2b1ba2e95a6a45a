/**
 * Checkpoint I/O without a file system: half-precision conversions and the safetensors format
 * (parse, validate, serialize, sharded-checkpoint indexes). Reading and atomically saving files
 * is `safetensors_fs.ts`, exported from `@rlvr/tensor/fs`.
 *
 * Design decisions: tensors only have the dtypes f32, i32 and bool, so half-precision storage
 * (F16, BF16) is widened to f32 on load and narrowed on save with round-to-nearest-even; files are
 * validated as strictly as the reference reader and errors name the source, the tensor and the
 * fix. See `half.ts`, `safetensors.ts`, `safetensors_index.ts` and `safetensors_fs.ts` for details.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const bytes = await serializeSafetensors({ w: tensor([1, 2]) }, { dtype: "bf16" });
 * const weights = parseSafetensors(bytes).tensors();
 * assert.deepEqual(await weights.get("w")!.toArray(), [1, 2]);
 * ```
 *
 * @module
 */

export { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from "./half.ts";
export {
  MAX_HEADER_SIZE,
  type ParseOptions,
  parseSafetensors,
  READABLE_DTYPES,
  SAFETENSORS_DTYPES,
  type SafetensorsDType,
  type SafetensorsEntry,
  SafetensorsError,
  SafetensorsFile,
  type SaveDType,
  type SerializeOptions,
  serializeSafetensors,
  type TensorCollection,
  type TensorLoadOptions,
} from "./safetensors.ts";
export { parseSafetensorsIndex, type SafetensorsIndex } from "./safetensors_index.ts";
