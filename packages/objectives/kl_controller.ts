/**
 * KL coefficient controllers for the KL-in-reward penalty: fixed β, or the adaptive controller of
 * Ziegler et al. ("Fine-Tuning Language Models from Human Preferences", arXiv 1909.08593), which
 * nudges β toward a target KL:
 *
 * `e = clip(KL/target − 1, −0.2, 0.2)`, `β ← β·(1 + e·n_steps/horizon)`.
 *
 * Matches veRL `FixedKLController` / `AdaptiveKLController` / `get_kl_controller`
 * (`algorithm.kl_ctrl.type: fixed | adaptive`, `kl_coef`, `target_kl`, `horizon`). Design
 * decision: controllers are plain host objects updated with a number (the caller reads the
 * batch KL once per step, e.g. from `applyKlPenalty(...).kl`), since β is a host-side
 * hyper-parameter of the next step.
 *
 * @module
 */

import { checkNumber } from "./_util.ts";

/** A KL coefficient controller: `value` is β for the next step. */
export interface KlController {
  /** The current coefficient β. */
  readonly value: number;
  /** Updates β from the measured KL of the last batch and the number of samples in it. */
  update(currentKl: number, nSteps: number): void;
}

/**
 * A constant β (veRL `FixedKLController`).
 *
 * @example Usage
 * ```ts
 * import { FixedKlController } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * const ctl = new FixedKlController(0.05);
 * ctl.update(10, 256);
 * assert.equal(ctl.value, 0.05);
 * ```
 */
export class FixedKlController implements KlController {
  /** The coefficient β. */
  readonly value: number;

  /** A controller that always returns `coef`. */
  constructor(coef: number) {
    this.value = checkNumber("FixedKlController", "coef", coef, { min: 0 });
  }

  /** No-op (the arguments are still checked). */
  update(currentKl: number, nSteps: number): void {
    checkNumber("FixedKlController.update", "currentKl", currentKl);
    checkNumber("FixedKlController.update", "nSteps", nSteps, { min: 0 });
  }
}

/** Options of {@link AdaptiveKlController}. */
export interface AdaptiveKlOptions {
  /** Initial β (veRL `kl_coef`). */
  initCoef: number;
  /** Target KL per token (veRL `target_kl`), > 0. */
  target: number;
  /** Horizon in samples (veRL `horizon`, e.g. 10000), > 0. */
  horizon: number;
}

/**
 * Adaptive β (Ziegler et al. 2019, arXiv 1909.08593; veRL `AdaptiveKLController`):
 * `β ← β·(1 + clip(KL/target − 1, −0.2, 0.2)·n_steps/horizon)`.
 *
 * @example Usage
 * ```ts
 * import { AdaptiveKlController } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * const ctl = new AdaptiveKlController({ initCoef: 0.1, target: 0.01, horizon: 1000 });
 * ctl.update(0.05, 100); // KL 5× the target: error clipped to +0.2
 * assert.ok(Math.abs(ctl.value - 0.1 * (1 + 0.2 * 100 / 1000)) < 1e-12);
 * ctl.update(0.01, 100); // on target: unchanged
 * assert.ok(Math.abs(ctl.value - 0.102) < 1e-12);
 * ```
 */
export class AdaptiveKlController implements KlController {
  #value: number;
  /** Target KL. */
  readonly target: number;
  /** Horizon in samples. */
  readonly horizon: number;

  /** A controller starting at `initCoef`. */
  constructor(options: AdaptiveKlOptions) {
    this.#value = checkNumber("AdaptiveKlController", "initCoef", options.initCoef, { min: 0 });
    this.target = checkNumber("AdaptiveKlController", "target", options.target, {
      min: 0,
      minExclusive: true,
    });
    this.horizon = checkNumber("AdaptiveKlController", "horizon", options.horizon, {
      min: 0,
      minExclusive: true,
    });
  }

  /** The current coefficient β. */
  get value(): number {
    return this.#value;
  }

  /** `β ← β·(1 + clip(currentKl/target − 1, ±0.2)·nSteps/horizon)`. */
  update(currentKl: number, nSteps: number): void {
    checkNumber("AdaptiveKlController.update", "currentKl", currentKl);
    checkNumber("AdaptiveKlController.update", "nSteps", nSteps, { min: 0 });
    const error = Math.min(Math.max(currentKl / this.target - 1, -0.2), 0.2);
    this.#value *= 1 + error * nSteps / this.horizon;
  }
}

/** Configuration of {@link createKlController} (veRL `algorithm.kl_ctrl`). */
export type KlControllerConfig =
  | { type: "fixed"; coef: number }
  | { type: "adaptive"; coef: number; target: number; horizon: number };

/**
 * A controller from a config (veRL `get_kl_controller`); unknown types throw.
 *
 * @example Usage
 * ```ts
 * import { createKlController } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * assert.equal(createKlController({ type: "fixed", coef: 0.2 }).value, 0.2);
 * const ada = createKlController({ type: "adaptive", coef: 0.2, target: 6, horizon: 10000 });
 * assert.equal(ada.value, 0.2);
 * ```
 */
export function createKlController(config: KlControllerConfig): KlController {
  switch (config?.type) {
    case "fixed":
      return new FixedKlController(config.coef);
    case "adaptive":
      return new AdaptiveKlController({
        initCoef: config.coef,
        target: config.target,
        horizon: config.horizon,
      });
    default:
      throw new RangeError(
        `createKlController: unknown type ${
          JSON.stringify((config as { type?: unknown })?.type)
        }; valid types: fixed, adaptive`,
      );
  }
}
