/**
 * Order-statistic selection on the device: a mask of the k largest values among valid positions,
 * with k itself a tensor, found by bisection on the threshold (no sort kernel and no host read).
 *
 * Design decision: `@rlvr/tensor` has no sort/top-k kernel, and reading the values back to the
 * host would make every GPU loss synchronous. Bisection needs only compare/sum/where kernels: keep
 * `lo` (at least k values ≥ lo) and `hi` (fewer than k values ≥ hi, or hi is the maximum) and
 * halve the interval a fixed number of times, then snap the threshold to the smallest data value
 * above it. After 64 halvings the interval is 2⁻⁶⁴ of the value range, so the result is exact
 * unless the k-th and (k+1)-th largest values differ by less than that. Ties at the threshold are
 * all kept (`torch.topk` would break them arbitrarily and keep exactly k).
 *
 * @module
 */

import { noGrad, type Tensor, tidy, where } from "@rlvr/tensor";
import { and } from "./_util.ts";

/** Number of halvings of the bisection. */
export const BISECTION_STEPS = 64;

/**
 * An f32 0/1 mask (same shape as `values`) of the `k` largest values among positions where
 * `valid` (bool) is true. `k` is a scalar tensor; `k < 1` selects nothing and `k` above the
 * number of valid positions selects them all. Not differentiable.
 */
export function topKMask(values: Tensor, valid: Tensor, k: Tensor): Tensor {
  return noGrad(() =>
    tidy(() => {
      const x = values.detach();
      const count = (t: Tensor): Tensor => and(valid, x.ge(t)).cast("f32").sum();
      let lo = where(valid, x, Infinity).min();
      let hi = where(valid, x, -Infinity).max();
      for (let i = 0; i < BISECTION_STEPS; i++) {
        const [nextLo, nextHi] = tidy(() => {
          const mid = lo.add(hi).mul(0.5);
          const ok = count(mid).ge(k);
          return [where(ok, mid, lo), where(ok, hi, mid)];
        });
        lo.dispose();
        hi.dispose();
        lo = nextLo!;
        hi = nextHi!;
      }
      const t = where(count(hi).ge(k), hi, lo);
      const snapped = where(and(valid, x.ge(t)), x, Infinity).min();
      return and(and(valid, x.ge(snapped)), k.ge(1)).cast("f32");
    })
  );
}
