/**
 * Stochastic gradient descent with momentum, dampening, Nesterov momentum and L2 weight decay,
 * with the semantics of `torch.optim.SGD`.
 *
 * Design: the backend has no SGD kernel, so the update is composed from tensor ops inside a
 * `tidy` scope (all temporaries freed) and the result is written back into the parameter's
 * buffer with the `copy` kernel, so the parameter stays the same tensor on the same buffer. The
 * momentum buffer is owned by the optimizer and overwritten in place the same way.
 *
 * @module
 */

import { tidy } from "../runtime.ts";
import type { Tensor } from "../tensor.ts";
import { checkBoolean, checkNumber, mergeOptions } from "./_check.ts";
import {
  type BaseHyperparams,
  Optimizer,
  type OptimizerParams,
  type ParamGroup,
  type ParamState,
} from "./optimizer.ts";

/** Hyperparameters of {@link SGD}, per parameter group. */
export interface SGDHyperparams extends BaseHyperparams {
  /** Learning rate `γ` (default 1e-3, as torch). */
  lr: number;
  /** L2 penalty `λ`: `λθ` is added to the gradient before momentum (default 0). */
  weightDecay: number;
  /** Momentum factor `μ` (default 0: plain SGD). */
  momentum: number;
  /** Dampening `τ` of the gradient in the momentum buffer (default 0). */
  dampening: number;
  /** Nesterov momentum (default false; needs `momentum > 0` and `dampening = 0`). */
  nesterov: boolean;
}

/** Options of {@link SGD}: defaults for every group (a group may override each of them). */
export type SGDOptions = Partial<SGDHyperparams>;

const DEFAULTS: SGDHyperparams = {
  lr: 1e-3,
  weightDecay: 0,
  momentum: 0,
  dampening: 0,
  nesterov: false,
};

function validate(h: SGDHyperparams, prefix: string): void {
  checkNumber("SGD", `${prefix}lr`, h.lr, { min: 0 });
  checkNumber("SGD", `${prefix}weightDecay`, h.weightDecay, { min: 0 });
  checkNumber("SGD", `${prefix}momentum`, h.momentum, { min: 0 });
  checkNumber("SGD", `${prefix}dampening`, h.dampening, { min: 0, max: 1 });
  checkBoolean("SGD", `${prefix}nesterov`, h.nesterov);
  if (h.nesterov && (h.momentum <= 0 || h.dampening !== 0)) {
    throw new RangeError(
      `SGD: ${prefix}nesterov needs momentum > 0 and dampening = 0, got momentum ${h.momentum} and ` +
        `dampening ${h.dampening}; set momentum (e.g. 0.9) or turn nesterov off`,
    );
  }
}

/** Overwrites `dst`'s buffer with `src`'s values (same size, contiguous). */
function writeInto(dst: Tensor, src: Tensor): void {
  dst.backend.run("copy", [src.buffer], [dst.buffer], {
    shape: [dst.size],
    inStrides: [1],
    inOffset: 0,
    outStrides: [1],
    outOffset: 0,
  });
}

/**
 * SGD with momentum, matching `torch.optim.SGD` (without `maximize`). For each parameter `θ`
 * with gradient `g`:
 *
 * ```
 * g ← g + λθ                                  (L2 weight decay, coupled, as torch)
 * b ← g on the first step, else μ·b + (1 − τ)·g (when μ ≠ 0)
 * g ← g + μ·b if nesterov, else b             (when μ ≠ 0)
 * θ ← θ − γ·g
 * ```
 *
 * Defaults as torch: `lr` 1e-3, `momentum` 0, `dampening` 0, `weightDecay` 0, `nesterov`
 * false. Parameters are updated in place; those with `grad === null` are skipped.
 *
 * @example Usage
 * ```ts
 * import { SGD, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([1, -2], { requiresGrad: true });
 * const opt = new SGD([w], { lr: 0.1, momentum: 0.9 });
 * for (const g of [[0.5, -1], [0.5, 1]]) {
 *   w.grad = tensor(g);
 *   opt.step(); // b1 = g1; b2 = 0.9·b1 + g2 = [0.95, 0.1]
 *   opt.zeroGrad();
 * }
 * const [a, b] = await w.data();
 * assert.ok(Math.abs(a! - 0.855) < 1e-6 && Math.abs(b! + 1.91) < 1e-6);
 * opt.dispose();
 * ```
 */
export class SGD extends Optimizer<SGDHyperparams> {
  /**
   * Builds the optimizer over `params` (a list of tensors, or groups `{params, lr?, ...}`), with
   * `options` as the defaults of every group.
   */
  constructor(params: OptimizerParams<SGDHyperparams>, options: SGDOptions = {}) {
    const defaults = mergeOptions("SGD", DEFAULTS, options);
    validate(defaults, "options.");
    super(params, { kind: "SGD", defaults, validate, bufferNames: ["momentumBuffer"] });
  }

  /** Composes the update from tensor ops and writes it into `param` (and the momentum buffer). */
  protected override update(
    param: Tensor,
    grad: Tensor,
    group: ParamGroup<SGDHyperparams>,
    state: ParamState,
  ): void {
    const { lr, weightDecay, momentum, dampening, nesterov } = group;
    tidy(() => {
      let d = weightDecay !== 0 ? grad.add(param.mul(weightDecay)) : grad;
      if (momentum !== 0) {
        const first = !state.buffers.has("momentumBuffer");
        const buf = this.buffer(state, "momentumBuffer", param);
        const next = first ? d : buf.mul(momentum).add(dampening !== 0 ? d.mul(1 - dampening) : d);
        writeInto(buf, next);
        d = nesterov ? d.add(buf.mul(momentum)) : buf;
      }
      writeInto(param, param.sub(d.mul(lr)));
    });
  }
}
