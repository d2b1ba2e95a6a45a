/**
 * The types a `Tensor` in a public signature drags along: `Tensor` itself and every type its
 * public methods mention. Packages whose API takes or returns tensors re-export this module
 * (`export type * from "@rlvr/tensor/types"`), so each package's documentation is complete on its
 * own without repeating the list.
 *
 * @module
 */

export type {
  Backend,
  BinaryOp,
  BufferHandle,
  DType,
  GradNode,
  HostArray,
  KernelName,
  KernelParams,
  MatmulOptions,
  MemoryInfo,
  NestedArray,
  ReduceOp,
  RopeTables,
  Shape,
  StorageFormat,
  Tensor,
  UnaryOp,
  VarOptions,
} from "./mod.ts";
