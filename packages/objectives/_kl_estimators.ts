/**
 * The KL-estimator registry itself; the estimators register beside their formulas in `kl.ts`,
 * which exports `klEstimatorNames` and `klPenalty` over it. Option checks elsewhere in the
 * package (`klType` of the policy losses) look keys up here, with their own context in errors.
 *
 * @module
 */

import { Registry } from "@rlvr/common";
import type { Tensor } from "@rlvr/tensor";

/** A per-token KL estimate from `d = log π_θ − log π_ref` (`[B, T]` in, `[B, T]` out). */
export type KlEstimatorFn = (d: Tensor) => Tensor;

/** Every KL estimator, by key (veRL's names included as aliases). */
export const KL_ESTIMATORS: Registry<KlEstimatorFn> = new Registry<KlEstimatorFn>("KL estimator");
