/**
 * Learning-rate schedules: plain functions from the step number to a factor of the base
 * learning rate, and {@link LrScheduler}, which applies one to an optimizer's groups.
 *
 * Design: a schedule is just `(step) => factor`, pure and stateless, so it can be plotted,
 * tested and composed without an optimizer, as with torch's `LambdaLR` and the Hugging Face
 * `get_*_schedule_with_warmup` helpers, whose numbers these reproduce. The only state is the
 * scheduler's step counter and base learning rates, which {@link LrScheduler.state} exposes
 * for checkpoints. Warm-up is linear from a factor of 0 at step 0 (HF semantics: the very first
 * optimizer step runs with lr 0 when warm-up is on).
 *
 * @module
 */

import { checkNumber, show } from "./_check.ts";

/** A schedule: maps the scheduler step (0, 1, 2, ...) to a factor of the base learning rate. */
export type LrFactor = (step: number) => number;

function stepArg(owner: string, step: number): number {
  return checkNumber(owner, "step", step, { min: 0 });
}

/**
 * The constant schedule: factor 1 at every step (torch `LambdaLR(lambda _: 1)`, HF
 * `get_constant_schedule`).
 *
 * @example Usage
 * ```ts
 * import { constantSchedule } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(constantSchedule()(1000), 1);
 * ```
 */
export function constantSchedule(): LrFactor {
  return (step) => {
    stepArg("constantSchedule", step);
    return 1;
  };
}

/**
 * Linear warm-up then constant (HF `get_constant_schedule_with_warmup`):
 * `factor = step / warmupSteps` for `step < warmupSteps`, then 1.
 *
 * @example Usage
 * ```ts
 * import { linearWarmup } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const f = linearWarmup(4);
 * assert.deepEqual([0, 1, 2, 4, 100].map(f), [0, 0.25, 0.5, 1, 1]);
 * ```
 */
export function linearWarmup(warmupSteps: number): LrFactor {
  const warmup = checkNumber("linearWarmup", "warmupSteps", warmupSteps, { min: 0, integer: true });
  return (step) => {
    stepArg("linearWarmup", step);
    return step < warmup ? step / Math.max(1, warmup) : 1;
  };
}

/** Options of {@link cosineSchedule} and {@link linearDecay}. */
export interface DecayScheduleOptions {
  /** Steps of linear warm-up from 0 to 1 (integer >= 0, default 0). */
  warmupSteps?: number;
  /** Step at which the decay reaches `minLrRatio` (integer >= warmupSteps). */
  totalSteps: number;
  /** Final factor, in [0, 1] (default 0). */
  minLrRatio?: number;
}

function decayArgs(owner: string, options: DecayScheduleOptions): [number, number, number] {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(
      `${owner}: options must be {totalSteps, warmupSteps?, minLrRatio?}, got ${show(options)}`,
    );
  }
  const warmup = checkNumber(owner, "warmupSteps", options.warmupSteps ?? 0, {
    min: 0,
    integer: true,
  });
  const total = checkNumber(owner, "totalSteps", options.totalSteps, {
    min: warmup,
    integer: true,
  });
  const minRatio = checkNumber(owner, "minLrRatio", options.minLrRatio ?? 0, { min: 0, max: 1 });
  return [warmup, total, minRatio];
}

/**
 * Linear warm-up, then a half-cosine decay from 1 to `minLrRatio` at `totalSteps`, constant
 * afterwards. With `p = (step − warmupSteps) / (totalSteps − warmupSteps)`:
 *
 * ```
 * factor = step / warmupSteps                                  for step < warmupSteps
 * factor = minLrRatio + (1 − minLrRatio) · 0.5·(1 + cos(π·p))  otherwise (p clamped to 1)
 * ```
 *
 * Up to `totalSteps` this equals HF `get_cosine_schedule_with_warmup` (`minLrRatio` 0) and
 * `get_cosine_with_min_lr_schedule_with_warmup` (`min_lr_rate`); past it HF's cosine would rise
 * again, here it stays at `minLrRatio`.
 *
 * @example Usage
 * ```ts
 * import { cosineSchedule } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const f = cosineSchedule({ warmupSteps: 10, totalSteps: 110, minLrRatio: 0.1 });
 * assert.equal(f(5), 0.5); // half-way through warm-up
 * assert.equal(f(10), 1); // warm-up done
 * assert.ok(Math.abs(f(60) - 0.55) < 1e-12); // mid-decay: 0.1 + 0.9·0.5
 * assert.ok(Math.abs(f(110) - 0.1) < 1e-12); // end: minLrRatio
 * ```
 */
export function cosineSchedule(options: DecayScheduleOptions): LrFactor {
  const [warmup, total, minRatio] = decayArgs("cosineSchedule", options);
  return (step) => {
    stepArg("cosineSchedule", step);
    if (step < warmup) return step / Math.max(1, warmup);
    const progress = Math.min(1, (step - warmup) / Math.max(1, total - warmup));
    const cosine = 0.5 * (1 + Math.cos(Math.PI * progress));
    return Math.max(0, cosine * (1 - minRatio) + minRatio);
  };
}

/**
 * Linear warm-up, then a linear decay from 1 to `minLrRatio` at `totalSteps`, constant
 * afterwards (HF `get_linear_schedule_with_warmup` when `minLrRatio` is 0):
 *
 * ```
 * factor = step / warmupSteps                                             for step < warmupSteps
 * factor = minLrRatio + (1 − minLrRatio) · max(0, (totalSteps − step) / (totalSteps − warmupSteps))
 * ```
 *
 * @example Usage
 * ```ts
 * import { linearDecay } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const f = linearDecay({ warmupSteps: 2, totalSteps: 12 });
 * assert.deepEqual([0, 1, 2, 7, 12, 20].map(f), [0, 0.5, 1, 0.5, 0, 0]);
 * ```
 */
export function linearDecay(options: DecayScheduleOptions): LrFactor {
  const [warmup, total, minRatio] = decayArgs("linearDecay", options);
  return (step) => {
    stepArg("linearDecay", step);
    if (step < warmup) return step / Math.max(1, warmup);
    const decay = Math.max(0, (total - step) / Math.max(1, total - warmup));
    return decay * (1 - minRatio) + minRatio;
  };
}

/** What {@link LrScheduler} needs of an optimizer: groups with a writable `lr`. */
export interface LrSchedulable {
  /** The parameter groups whose `lr` the scheduler sets. */
  readonly paramGroups: readonly { lr: number }[];
}

/** Checkpoint of an {@link LrScheduler}. */
export interface LrSchedulerState {
  /** Number of `step()` calls. */
  stepCount: number;
  /** The learning rates the factors multiply, one per group. */
  baseLrs: number[];
}

/**
 * Sets each parameter group's learning rate to `baseLr × factor(step)`, where `baseLr` is the
 * group's lr when the scheduler was built (torch `LambdaLR`). Construction applies
 * `factor(0)`; call `step()` once after each `optimizer.step()`. `factor` may be one schedule
 * for all groups or one per group.
 *
 * @example Usage
 * ```ts
 * import { AdamW, cosineSchedule, LrScheduler, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([1], { requiresGrad: true });
 * const opt = new AdamW([w], { lr: 0.1 });
 * const sched = new LrScheduler(opt, cosineSchedule({ warmupSteps: 2, totalSteps: 4 }));
 * const lrs = [opt.lr];
 * for (let i = 0; i < 4; i++) {
 *   w.grad = tensor([1]);
 *   opt.step();
 *   opt.zeroGrad();
 *   sched.step();
 *   lrs.push(opt.lr);
 * }
 * const expected = [0, 0.05, 0.1, 0.05, 0];
 * lrs.forEach((lr, i) => assert.ok(Math.abs(lr - expected[i]!) < 1e-12));
 * opt.dispose();
 * ```
 */
export class LrScheduler {
  /** The optimizer whose group learning rates are set. */
  readonly optimizer: LrSchedulable;
  #factors: readonly LrFactor[];
  #baseLrs: number[];
  #stepCount = 0;

  /** Captures the groups' current learning rates as base rates and applies `factor(0)`. */
  constructor(optimizer: LrSchedulable, factor: LrFactor | readonly LrFactor[]) {
    if (
      typeof optimizer !== "object" || optimizer === null || !Array.isArray(optimizer.paramGroups)
    ) {
      throw new TypeError(
        `LrScheduler: optimizer must have paramGroups (an AdamW or SGD), got ${show(optimizer)}`,
      );
    }
    const n = optimizer.paramGroups.length;
    const factors = typeof factor === "function" ? Array.from({ length: n }, () => factor) : factor;
    if (
      !Array.isArray(factors) || factors.length !== n ||
      factors.some((f) => typeof f !== "function")
    ) {
      throw new TypeError(
        `LrScheduler: factor must be a function (step) => number or an array of ${n} of them (one per group), ` +
          `got ${Array.isArray(factor) ? `an array of ${factor.length}` : show(factor)}`,
      );
    }
    this.optimizer = optimizer;
    this.#factors = [...factors];
    this.#baseLrs = optimizer.paramGroups.map((g, i) =>
      checkNumber("LrScheduler", `optimizer.paramGroups[${i}].lr`, g.lr, { min: 0 })
    );
    this.#apply();
  }

  /** Number of `step()` calls (the step the current learning rates belong to). */
  get stepCount(): number {
    return this.#stepCount;
  }

  /** The base learning rates, one per group. */
  get baseLrs(): readonly number[] {
    return [...this.#baseLrs];
  }

  /** The learning rates the scheduler set last, one per group. */
  get lrs(): number[] {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** Advances one step and sets every group's lr to `baseLr × factor(stepCount)`. */
  step(): void {
    this.#stepCount++;
    this.#apply();
  }

  /** The scheduler's checkpoint. */
  state(): LrSchedulerState {
    return { stepCount: this.#stepCount, baseLrs: [...this.#baseLrs] };
  }

  /** Restores a checkpoint from {@link LrScheduler.state} and re-applies the learning rates. */
  loadState(state: LrSchedulerState): void {
    const n = this.optimizer.paramGroups.length;
    if (typeof state !== "object" || state === null) {
      throw new TypeError(
        `LrScheduler.loadState: state must be an object from state(), got ${show(state)}`,
      );
    }
    const stepCount = checkNumber("LrScheduler.loadState", "state.stepCount", state.stepCount, {
      min: 0,
      integer: true,
    });
    if (!Array.isArray(state.baseLrs) || state.baseLrs.length !== n) {
      throw new RangeError(
        `LrScheduler.loadState: state.baseLrs must hold ${n} learning rates (one per group), got ${
          show(state.baseLrs)
        }`,
      );
    }
    const base = state.baseLrs.map((lr, i) =>
      checkNumber("LrScheduler.loadState", `state.baseLrs[${i}]`, lr, { min: 0 })
    );
    this.#stepCount = stepCount;
    this.#baseLrs = base;
    this.#apply();
  }

  #apply(): void {
    const step = this.#stepCount;
    const lrs = this.#factors.map((f, i) => {
      const factor = f(step);
      if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 0) {
        throw new RangeError(
          `LrScheduler: the schedule of group ${i} returned ${
            show(factor)
          } at step ${step}; a schedule must return a finite number >= 0`,
        );
      }
      return this.#baseLrs[i]! * factor;
    });
    this.optimizer.paramGroups.forEach((g, i) => (g.lr = lrs[i]!));
  }
}
