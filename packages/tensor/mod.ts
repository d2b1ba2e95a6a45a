/**
 * @module
 *
 * `@rlvr/tensor`: tensors with reverse-mode autograd on a pluggable backend.
 *
 * Design: eager, PyTorch-shaped API (`tensor`, `zeros`, `randn`, `t.matmul`, `t.backward()`),
 * with every op written once against a narrow backend interface (`alloc`, `free`, `write`, `read`,
 * `run(kernel)`). The CPU backend here is the numerical oracle; a WebGPU backend implements the
 * same kernel catalogue. Memory is released explicitly (`dispose`, `tidy`, `using`) because GPU
 * buffers are not garbage-collected. Reads are async; ops are not.
 *
 * @example Usage
 * ```ts
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([[0.5, -1]], { requiresGrad: true });
 * const x = tensor([[2], [3]]);
 * const loss = w.matmul(x).square().sum();
 * loss.backward();
 * assert.deepEqual(await w.grad!.toArray(), [[-8, -12]]);
 * ```
 */

export * from "./dtype.ts";
export * from "./shape.ts";
export * from "./tensor.ts";
export * from "./creation.ts";
export { manualSeed, Rng } from "./random.ts";
export type { NormalSource } from "./random.ts";
export { NORMAL_METHODS, normalFill, normalSource, ZigguratNormal } from "./ziggurat.ts";
export type { NormalMethod } from "./ziggurat.ts";
export {
  enableGrad,
  getBackend,
  isGradEnabled,
  keep,
  noGrad,
  setBackend,
  tidy,
  withBackend,
} from "./runtime.ts";
export type { Disposable } from "./runtime.ts";
export { GradNode } from "./autograd.ts";
export { checkpoint } from "./checkpoint.ts";
export { setStorageFormat, STORAGE_FORMATS, storageFormat } from "./storage.ts";
export type { BackwardFn } from "./autograd.ts";
export * from "./backend/types.ts";
export * from "./backend/cpu/cpu_backend.ts";
export * from "./backend/cpu/blas.ts";
export * from "./ops/elementwise.ts";
export { argmax, argmin, cumsum, max, mean, min, sum, variance } from "./ops/reduce.ts";
export type { VarOptions } from "./ops/reduce.ts";
export * from "./ops/shape.ts";
export * from "./ops/softmax.ts";
export * from "./ops/index.ts";
export * from "./ops/matmul.ts";
export * from "./ops/norm.ts";
export * from "./ops/rope.ts";
export * from "./ops/attention.ts";
export * from "./ops/loss.ts";
export * from "./optim/mod.ts";
export * from "./io/mod.ts";
export * from "./backend/webgpu/mod.ts";
export * from "./backend/select.ts";
