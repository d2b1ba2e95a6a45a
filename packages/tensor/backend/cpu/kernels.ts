/**
 * The CPU kernel table: one entry per kernel name of the catalogue.
 *
 * The `satisfies` clause makes the compiler reject a catalogue entry without a CPU kernel.
 *
 * @module
 */

import type { HostArray, KernelName, KernelParams } from "../types.ts";
import { adamw } from "./adamw.ts";
import { binary, cast, copy, fill, unary, where } from "./elementwise.ts";
import { gather, indexAdd, indexSelect, scatterAdd } from "./index.ts";
import { matmul } from "./matmul.ts";
import { cumsum, logsumexp, reduce, softmax, softmaxBackward } from "./reduce.ts";

/** A CPU kernel: reads `inputs`, writes `outputs`. */
export type CpuKernel<K extends KernelName> = (
  inputs: HostArray[],
  outputs: HostArray[],
  params: KernelParams[K],
) => void;

/** Every kernel of the catalogue, on the CPU. */
export const CPU_KERNELS: { [K in KernelName]: CpuKernel<K> } = {
  fill,
  cast,
  unary,
  binary,
  where,
  copy,
  reduce,
  matmul,
  softmax,
  softmax_backward: softmaxBackward,
  logsumexp,
  cumsum,
  gather,
  scatter_add: scatterAdd,
  index_select: indexSelect,
  index_add: indexAdd,
  adamw,
  // TODO(helper): the norm, rope, attention and loss kernels are being written; remove this cast.
} as unknown as { [K in KernelName]: CpuKernel<K> };
