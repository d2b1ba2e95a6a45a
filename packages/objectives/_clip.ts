/**
 * The PPO clipped surrogate shared by `ppo_clip.ts` (vanilla, decoupled PPO) and `gppo.ts`.
 *
 * @module
 */

import { noGrad, type Tensor, where } from "@rlvr/tensor";
import { and } from "./_util.ts";
import type { PolicyLossContext, PolicyLossTerms } from "./policy_loss.ts";

/**
 * The clipped surrogate with dual clip on a given ratio and clipped ratio (internal; shared with
 * GPPO, which passes its gradient-preserving clipped ratio): per-token loss and clip indicators.
 */
export function clippedSurrogate(
  ctx: PolicyLossContext,
  ratio: Tensor,
  clipped: Tensor,
): PolicyLossTerms {
  const a = ctx.advantages;
  const pg1 = a.neg().mul(ratio);
  const pg2 = a.neg().mul(clipped);
  const clip1 = pg1.maximum(pg2);
  const negative = a.lt(0);
  const c = ctx.options.clipRatioC;
  let perToken = clip1;
  let dual: Tensor | undefined;
  if (Number.isFinite(c)) {
    const pg3 = a.neg().mul(c);
    perToken = where(negative, pg3.minimum(clip1), clip1);
    dual = noGrad(() => and(clip1.gt(pg3), negative));
  }
  return noGrad(() => {
    const isClipped = pg2.gt(pg1);
    const terms: PolicyLossTerms = {
      perToken,
      clippedLow: and(isClipped, negative),
      clippedHigh: and(isClipped, a.gt(0)),
    };
    if (dual !== undefined) terms.clippedDual = dual;
    return terms;
  });
}
