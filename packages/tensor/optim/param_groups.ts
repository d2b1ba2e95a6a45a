/**
 * Splitting named parameters into a weight-decay group and a no-decay group, as nanoGPT's
 * `configure_optimizers` and Hugging Face's `Trainer` do.
 *
 * Design: decay regularises weight matrices; applied to biases and normalisation gains it only
 * pulls them toward 0 (a norm's gain should stay near 1), so they go into a group with
 * `weightDecay: 0`. The rule is by shape (fewer than 2 dimensions) and by name (`bias`, `norm`,
 * `ln_`), overridable with a predicate. The groups are plain {@link ParamGroupSpec} objects that
 * any optimizer constructor accepts.
 *
 * @module
 */

import { Tensor } from "../tensor.ts";
import { checkNumber, show } from "./_check.ts";
import type { BaseHyperparams, ParamGroupSpec } from "./optimizer.ts";

/** Options of {@link paramGroupsNoDecay}. */
export interface NoDecayOptions {
  /** Weight decay of the decay group (default: the optimizer's own `weightDecay`). */
  weightDecay?: number;
  /**
   * Whether a parameter is exempt from decay. Default {@link defaultNoDecay}: tensors with fewer
   * than 2 dimensions, or names matching `/bias|norm|ln_/i`.
   */
  noDecay?: (name: string, t: Tensor) => boolean;
}

/**
 * The default no-decay rule: true for tensors with fewer than 2 dimensions (biases, norm gains,
 * scalars) and for names matching `/bias|norm|ln_/i`.
 *
 * @example Usage
 * ```ts
 * import { defaultNoDecay, zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(defaultNoDecay("h.0.mlp.weight", zeros([4, 4])), false);
 * assert.equal(defaultNoDecay("h.0.mlp.bias", zeros([4])), true);
 * assert.equal(defaultNoDecay("h.0.ln_1.weight", zeros([4, 4])), true);
 * ```
 */
export function defaultNoDecay(name: string, t: Tensor): boolean {
  return t.ndim < 2 || /bias|norm|ln_/i.test(name);
}

/**
 * Splits named parameters into `[decay, noDecay]` parameter groups: the second has
 * `weightDecay: 0`, the first `options.weightDecay` (or the optimizer default when omitted).
 * Both groups are always returned (possibly empty) so their indices are stable, e.g. for
 * per-group learning rates. Names are taken in insertion order.
 *
 * @example Usage
 * ```ts
 * import { AdamW, paramGroupsNoDecay, zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = zeros([3, 2], { requiresGrad: true });
 * const b = zeros([2], { requiresGrad: true });
 * const groups = paramGroupsNoDecay({ "fc.weight": w, "fc.bias": b }, { weightDecay: 0.1 });
 * assert.deepEqual(groups.map((g) => g.params.length), [1, 1]);
 * const opt = new AdamW(groups, { lr: 1e-3 });
 * assert.equal(opt.paramGroups[0]!.weightDecay, 0.1);
 * assert.equal(opt.paramGroups[1]!.weightDecay, 0);
 * opt.dispose();
 * ```
 */
export function paramGroupsNoDecay(
  named: Readonly<Record<string, Tensor>> | Iterable<readonly [string, Tensor]>,
  options: NoDecayOptions = {},
): [ParamGroupSpec<BaseHyperparams>, ParamGroupSpec<BaseHyperparams>] {
  if (typeof named !== "object" || named === null) {
    throw new TypeError(
      `paramGroupsNoDecay: named must be a record {name: Tensor} or [name, Tensor] pairs, got ${
        show(named)
      }`,
    );
  }
  const entries: (readonly [string, Tensor])[] = Symbol.iterator in named
    ? [...(named as Iterable<readonly [string, Tensor]>)]
    : Object.entries(named as Record<string, Tensor>);
  const isNoDecay = options.noDecay ?? defaultNoDecay;
  if (typeof isNoDecay !== "function") {
    throw new TypeError(
      `paramGroupsNoDecay: options.noDecay must be a function (name, t) => boolean`,
    );
  }
  const decay: Tensor[] = [];
  const noDecay: Tensor[] = [];
  for (const entry of entries) {
    const [name, t] = Array.isArray(entry) ? entry : [undefined, undefined];
    if (typeof name !== "string" || !(t instanceof Tensor)) {
      throw new TypeError(
        `paramGroupsNoDecay: every entry must be [name: string, Tensor], got ${show(name)}`,
      );
    }
    (isNoDecay(name, t) ? noDecay : decay).push(t);
  }
  const first: ParamGroupSpec<BaseHyperparams> = { params: decay };
  if (options.weightDecay !== undefined) {
    first.weightDecay = checkNumber(
      "paramGroupsNoDecay",
      "options.weightDecay",
      options.weightDecay,
      { min: 0 },
    );
  }
  return [first, { params: noDecay, weightDecay: 0 }];
}
