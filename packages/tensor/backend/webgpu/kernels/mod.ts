/**
 * The WebGPU kernel table: one WGSL kernel builder per kernel name of the catalogue.
 *
 * The mapped type annotation makes the compiler reject a catalogue entry without a GPU kernel,
 * exactly as `CPU_KERNELS` does for the CPU backend.
 *
 * @module
 */

import type { KernelName } from "../../types.ts";
import type { GpuKernel } from "./_wgsl.ts";
import { adamw } from "./adamw.ts";
import { attention, attentionBackward } from "./attention.ts";
import { accumulate, binary, cast, copy, fill, unary, where } from "./elementwise.ts";
import { gather, indexAdd, indexSelect, scatterAdd } from "./index.ts";
import { entropy, entropyBackward, logprobs, logprobsBackward } from "./loss.ts";
import { matmul } from "./matmul.ts";
import { layerNorm, layerNormBackward, rmsNorm, rmsNormBackward } from "./norm.ts";
import { cumsum, logsumexp, reduce, softmax, softmaxBackward } from "./reduce.ts";
import { rope } from "./rope.ts";

/** Every kernel of the catalogue, in WGSL. */
export const GPU_KERNELS: { [K in KernelName]: GpuKernel<K> } = {
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
