/**
 * Activation checkpointing (PyTorch's `torch.utils.checkpoint`): run a block without keeping its
 * intermediate tensors, and run it again during the backward pass to get them back.
 *
 * A transformer's backward pass needs every layer's intermediates (normed inputs, projections,
 * attention weights, the MLP's hidden activations), which for a long batch dwarf the weights.
 * With `checkpoint` only each block's inputs stay alive between forward and backward; the
 * block's forward runs twice, so a training step costs about a third more compute.
 *
 * Design decisions:
 * - **Same gradients**: the recomputation runs the same kernels on the same inputs, so it
 *   reproduces the forward bit for bit and the gradients of the block's inputs and of the
 *   parameters it uses equal those of the plain graph (a parameter used by several blocks sums
 *   its contributions in another order, so it may differ by rounding).
 * - **The block's parameters need not be inputs**: the node is recorded whenever gradients are
 *   on, even if no input requires grad (a frozen embedding under LoRA), because the block's own
 *   parameters may; the recomputed graph's `backward` accumulates into their `.grad` directly.
 * - Every tensor the block reads that may be freed before the backward pass (RoPE tables, masks)
 *   must be passed in `inputs`: the node keeps views of its inputs alive, nothing else.
 * - The block must be deterministic (no dropout here; a sampler inside would draw again).
 *
 * @module
 */

import { GradNode } from "./autograd.ts";
import { enableGrad, isGradEnabled, noGrad, tidy, untracked } from "./runtime.ts";
import type { Tensor } from "./tensor.ts";

/**
 * `fn(...inputs)`, keeping none of its intermediates for the backward pass, which runs `fn`
 * again (see the module doc). Without gradients it is just `fn(...inputs)`.
 *
 * @param fn The block: a deterministic function of `inputs` and of tensors that outlive the
 *   backward pass (parameters).
 * @param inputs Every tensor `fn` reads that the caller may free before the backward pass.
 * @returns The block's output.
 *
 * @example Usage
 * ```ts
 * import { checkpoint, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([2, 3], { requiresGrad: true });
 * const x = tensor([1, 4], { requiresGrad: true });
 * const y = checkpoint((a) => a.mul(w).exp().sum(), [x]);
 * y.backward();
 * const plainW = tensor([2, 3], { requiresGrad: true });
 * const plainX = tensor([1, 4], { requiresGrad: true });
 * plainX.mul(plainW).exp().sum().backward();
 * assert.deepEqual(await x.grad!.toArray(), await plainX.grad!.toArray());
 * assert.deepEqual(await w.grad!.toArray(), await plainW.grad!.toArray());
 * ```
 */
export function checkpoint(fn: (...inputs: Tensor[]) => Tensor, inputs: readonly Tensor[]): Tensor {
  if (!isGradEnabled()) return fn(...inputs);
  // Its own scope: the intermediates go now, not when the caller's scope closes.
  const out = noGrad(() => tidy(() => fn(...inputs)));
  const wants = inputs.map((x) => x.requiresGrad);
  const saved = untracked(() => inputs.map((t) => t.share()));
  out.requiresGrad = true;
  out.gradFn = new GradNode("checkpoint", inputs, saved, (g, views) =>
    enableGrad(() => {
      const leaves = views.map((v, i) => {
        const leaf = v.detach();
        leaf.requiresGrad = wants[i]!;
        return leaf;
      });
      const y = fn(...leaves);
      if (y.requiresGrad) y.backward(g);
      y.dispose();
      // Take the gradients off the leaves first: disposing a leaf disposes its `.grad`.
      return leaves.map((leaf) => {
        const gi = leaf.grad;
        leaf.grad = null;
        leaf.dispose();
        return gi;
      });
    }));
  return out;
}
