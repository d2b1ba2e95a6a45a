/**
 * The CPU kernel table: one entry per kernel name of the catalogue.
 *
 * The mapped type annotation makes the compiler reject a catalogue entry without a CPU kernel.
 *
 * @module
 */

import type { HostArray, KernelName, KernelParams } from "../types.ts";
import { adamw } from "./adamw.ts";
import { attention, attentionBackward } from "./attention.ts";
import { accumulate, binary, cast, copy, fill, unary, where } from "./elementwise.ts";
import { gather, indexAdd, indexSelect, scatterAdd } from "./index.ts";
import { entropy, entropyBackward, logprobs, logprobsBackward } from "./loss.ts";
import { matmul } from "./matmul.ts";
import { layerNorm, layerNormBackward, rmsNorm, rmsNormBackward } from "./norm.ts";
import { cumsum, logsumexp, reduce, softmax, softmaxBackward } from "./reduce.ts";
import { rope } from "./rope.ts";

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
  accumulate,
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
  rms_norm: rmsNorm,
  rms_norm_backward: rmsNormBackward,
  layer_norm: layerNorm,
  layer_norm_backward: layerNormBackward,
  rope,
  attention,
  attention_backward: attentionBackward,
  logprobs,
  logprobs_backward: logprobsBackward,
  entropy,
  entropy_backward: entropyBackward,
  adamw,
};
