/**
 * AdamW: Adam with decoupled weight decay (Loshchilov & Hutter, "Decoupled Weight Decay
 * Regularization", ICLR 2019), with the defaults and semantics of `torch.optim.AdamW`.
 *
 * Design: one run of the backend's fused `adamw` kernel per parameter and step, which updates
 * the parameter and both moment estimates in place; the optimizer only computes the bias
 * corrections `1 − β^t` on the host. The moments `m` and `v` are tensors of the parameter's
 * shape owned by the optimizer, allocated on the parameter's first update, so a step allocates
 * nothing and the number of live buffers stays constant across steps.
 *
 * @module
 */

import type { Tensor } from "../tensor.ts";
import { checkNumber, mergeOptions, show } from "./_check.ts";
import {
  type BaseHyperparams,
  Optimizer,
  type OptimizerParams,
  type ParamGroup,
  type ParamState,
} from "./optimizer.ts";

/** Hyperparameters of {@link AdamW}, per parameter group. */
export interface AdamWHyperparams extends BaseHyperparams {
  /** Learning rate `γ` (default 1e-3, as torch). */
  lr: number;
  /** Decoupled weight decay `λ`: each step multiplies the parameter by `1 − γλ` (default 0.01). */
  weightDecay: number;
  /** `[β1, β2]`, decay rates of the first and second moment estimates (default [0.9, 0.999]). */
  betas: readonly [number, number];
  /** `ε` added to `√v̂` in the denominator (default 1e-8). */
  eps: number;
}

/** Options of {@link AdamW}: defaults for every group (a group may override each of them). */
export type AdamWOptions = Partial<AdamWHyperparams>;

const DEFAULTS: AdamWHyperparams = { lr: 1e-3, weightDecay: 0.01, betas: [0.9, 0.999], eps: 1e-8 };

function validate(h: AdamWHyperparams, prefix: string): void {
  checkNumber("AdamW", `${prefix}lr`, h.lr, { min: 0 });
  checkNumber("AdamW", `${prefix}weightDecay`, h.weightDecay, { min: 0 });
  checkNumber("AdamW", `${prefix}eps`, h.eps, { min: 0 });
  if (!Array.isArray(h.betas) || h.betas.length !== 2) {
    throw new TypeError(
      `AdamW: ${prefix}betas must be a pair [beta1, beta2], got ${show(h.betas)}`,
    );
  }
  checkNumber("AdamW", `${prefix}betas[0]`, h.betas[0], { min: 0, max: 1, maxExclusive: true });
  checkNumber("AdamW", `${prefix}betas[1]`, h.betas[1], { min: 0, max: 1, maxExclusive: true });
}

/**
 * AdamW (Loshchilov & Hutter, 2019), matching `torch.optim.AdamW` (without `amsgrad`,
 * `maximize` or `capturable`). For each parameter `θ` with gradient `g`, at its own step `t`:
 *
 * ```
 * θ ← θ − γλθ                              (decoupled weight decay)
 * m ← β1·m + (1 − β1)·g
 * v ← β2·v + (1 − β2)·g²
 * θ ← θ − γ · (m / (1 − β1^t)) / (√(v / (1 − β2^t)) + ε)
 * ```
 *
 * Defaults as torch: `lr` 1e-3, `betas` [0.9, 0.999], `eps` 1e-8, `weightDecay` 0.01. The
 * update runs as one `adamw` kernel per parameter, in place (same tensor, same buffer).
 * Parameters with `grad === null` are skipped and keep their own `t`. Exclude biases and norm
 * weights from decay with {@link paramGroupsNoDecay}.
 *
 * @example Usage
 * ```ts
 * import { AdamW, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([1, -2], { requiresGrad: true });
 * const opt = new AdamW([w], { lr: 0.1, weightDecay: 0 });
 * const loss = w.square().sum(); // d/dw = 2w
 * loss.backward();
 * opt.step(); // first step: m̂ = g and v̂ = g², so each weight moves by lr against sign(g)
 * opt.zeroGrad();
 * const [a, b] = await w.data();
 * assert.ok(Math.abs(a! - 0.9) < 1e-6 && Math.abs(b! + 1.9) < 1e-6);
 * opt.dispose();
 * ```
 */
export class AdamW extends Optimizer<AdamWHyperparams> {
  /**
   * Builds the optimizer over `params` (a list of tensors, or groups `{params, lr?, ...}`), with
   * `options` as the defaults of every group.
   */
  constructor(params: OptimizerParams<AdamWHyperparams>, options: AdamWOptions = {}) {
    const defaults = mergeOptions("AdamW", DEFAULTS, options);
    validate(defaults, "options.");
    super(params, { kind: "AdamW", defaults, validate, bufferNames: ["m", "v"] });
  }

  /** One fused `adamw` kernel run: updates `param`, `m` and `v` in place. */
  protected override update(
    param: Tensor,
    grad: Tensor,
    group: ParamGroup<AdamWHyperparams>,
    state: ParamState,
  ): void {
    const m = this.buffer(state, "m", param);
    const v = this.buffer(state, "v", param);
    const [beta1, beta2] = group.betas;
    param.backend.run("adamw", [grad.buffer], [param.buffer, m.buffer, v.buffer], {
      lr: group.lr,
      beta1,
      beta2,
      eps: group.eps,
      weightDecay: group.weightDecay,
      bc1: 1 - beta1 ** state.step,
      bc2: 1 - beta2 ** state.step,
    });
  }
}
