/**
 * Gradient-norm clipping: {@link gradNorm} and {@link clipGradNorm}, after torch's
 * `clip_grad_norm_`.
 *
 * Design: the norm is reduced on the backend (one partial sum per gradient, accumulated into a
 * scalar there) and read back once, so a GPU backend pays one transfer per call rather than one
 * per parameter. Clipping replaces each `param.grad` by a new scaled tensor and disposes the old
 * handle instead of writing the old buffer: gradient tensors can be views sharing a buffer
 * (autograd passes gradients through `reshape` and `add` by reference), and writing a shared
 * buffer would scale it twice or scale a tensor the caller still owns. For callers the effect
 * is the same as torch's in-place `mul_`: after the call `p.grad` holds the clipped values.
 *
 * @module
 */

import { noGrad, tidy, untracked } from "../runtime.ts";
import { Tensor } from "../tensor.ts";
import { checkNumber, show } from "./_check.ts";

/** Options of {@link gradNorm}. */
export interface GradNormOptions {
  /** The `p` of the p-norm: a finite number > 0, or `Infinity` for the max-norm (default 2). */
  normType?: number;
}

/** Options of {@link clipGradNorm}. */
export interface ClipGradNormOptions extends GradNormOptions {
  /** Throw instead of returning when the total norm is NaN or infinite (default false). */
  errorIfNonfinite?: boolean;
}

function gradsOf(op: string, params: Iterable<Tensor>): Tensor[] {
  if (params === null || typeof (params as Iterable<Tensor>)?.[Symbol.iterator] !== "function") {
    throw new TypeError(`${op}: params must be an iterable of tensors, got ${show(params)}`);
  }
  const seen = new Set<Tensor>();
  let i = 0;
  for (const p of params) {
    if (!(p instanceof Tensor)) {
      throw new TypeError(`${op}: params[${i}] must be a Tensor, got ${show(p)}`);
    }
    seen.add(p);
    i++;
  }
  return [...seen].filter((p) => p.grad !== null);
}

function normTypeOf(op: string, options: GradNormOptions): number {
  const p = options.normType ?? 2;
  if (p === Infinity) return p;
  return checkNumber(op, "normType", p, { min: 0, minExclusive: true });
}

async function totalNorm(op: string, params: Tensor[], p: number): Promise<number> {
  if (params.length === 0) return 0;
  const acc = noGrad(() =>
    tidy(() => {
      let total: Tensor | null = null;
      for (const param of params) {
        const g = param.grad!;
        const part = p === Infinity
          ? g.abs().max()
          : p === 2
          ? g.square().sum()
          : p === 1
          ? g.abs().sum()
          : g.abs().pow(p).sum();
        total = total === null ? part : p === Infinity ? total.maximum(part) : total.add(part);
      }
      return total!;
    })
  );
  try {
    const v = await acc.item();
    return p === Infinity || p === 1 ? v : p === 2 ? Math.sqrt(v) : v ** (1 / p);
  } catch (e) {
    throw new Error(
      `${op}: reading the gradient norm failed: ${e instanceof Error ? e.message : show(e)}`,
    );
  } finally {
    acc.dispose();
  }
}

/**
 * The total p-norm of the gradients of `params`, as if all gradients were concatenated into one
 * vector: `(Σ_i Σ_j |g_ij|^p)^(1/p)`, or `max |g_ij|` for `normType: Infinity`. Parameters
 * without a gradient are ignored and a parameter listed twice counts once; with no gradients
 * at all the norm is 0. Sums run on the backend in f32; the root is taken on the host.
 *
 * @example Usage
 * ```ts
 * import { gradNorm, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const a = tensor([1, 1], { requiresGrad: true });
 * const b = tensor([1], { requiresGrad: true });
 * a.grad = tensor([3, 0]);
 * b.grad = tensor([4]);
 * assert.equal(await gradNorm([a, b]), 5);
 * assert.equal(await gradNorm([a, b], { normType: Infinity }), 4);
 * ```
 */
export async function gradNorm(
  params: Iterable<Tensor>,
  options: GradNormOptions = {},
): Promise<number> {
  const p = normTypeOf("gradNorm", options);
  return await totalNorm("gradNorm", gradsOf("gradNorm", params), p);
}

/**
 * Clips the gradients of `params` so that their total norm (see {@link gradNorm}) is at most
 * `maxNorm`, as torch's `clip_grad_norm_`: with `coef = maxNorm / (total + 1e-6)`, every
 * gradient is multiplied by `coef` when `coef < 1` (i.e. `total > maxNorm`, up to the 1e-6) and
 * left untouched otherwise. Returns the total norm
 * **before** clipping (log it: spikes flag instability).
 *
 * Non-finite norms (a NaN or infinite gradient entry): the norm is returned and the gradients
 * are left as they are, so the caller can skip the step; with `errorIfNonfinite: true` it throws
 * instead. (torch would scale by NaN or 0 here.) Clipped gradients are new tensors assigned to
 * `p.grad`; the previous gradient handles are disposed.
 *
 * @example Usage
 * ```ts
 * import { clipGradNorm, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([0, 0], { requiresGrad: true });
 * w.grad = tensor([3, 4]);
 * const total = await clipGradNorm([w], 1); // norm 5 > 1: scale by 1 / (5 + 1e-6)
 * assert.equal(total, 5);
 * const [gx, gy] = await w.grad!.data();
 * assert.ok(Math.abs(gx! - 0.6) < 1e-6 && Math.abs(gy! - 0.8) < 1e-6);
 * ```
 */
export async function clipGradNorm(
  params: Iterable<Tensor>,
  maxNorm: number,
  options: ClipGradNormOptions = {},
): Promise<number> {
  checkNumber("clipGradNorm", "maxNorm", maxNorm, { min: 0 });
  const p = normTypeOf("clipGradNorm", options);
  const withGrad = gradsOf("clipGradNorm", params);
  const total = await totalNorm("clipGradNorm", withGrad, p);
  if (!Number.isFinite(total)) {
    if (options.errorIfNonfinite) {
      throw new RangeError(
        `clipGradNorm: the total ${p}-norm of the gradients is ${total}; the loss or a gradient overflowed. ` +
          `Skip this step (zeroGrad) or lower the learning rate; pass errorIfNonfinite: false to get the norm back instead`,
      );
    }
    return total;
  }
  const coef = maxNorm / (total + 1e-6);
  if (coef < 1) {
    // Keyed by the old gradient object, in case two parameters were handed the same one.
    const scaled = new Map<Tensor, Tensor>();
    for (const param of withGrad) {
      const g = param.grad!;
      let s = scaled.get(g);
      if (s === undefined) {
        s = untracked(() => noGrad(() => g.mul(coef)));
        scaled.set(g, s);
      } else {
        const first = s;
        s = untracked(() => first.share());
      }
      param.grad = s;
    }
    for (const g of scaled.keys()) g.dispose();
  }
  return total;
}
