/**
 * Schedules over training steps: stepwise and linear schedules (e.g. POLARIS's staged
 * temperatures 1.40 → 1.45 → 1.50), staged response-length budgets (DeepScaleR / ProRL's
 * 8k → 16k → 24k context lengthening), and an entropy-targeted temperature controller.
 *
 * Design: a schedule is a plain function of the step, `(step) => value`, built once from a
 * validated spec, with no hidden state, so a resumed run needs only its step to recover every
 * value. The one thing that does depend on the run's history, the entropy controller, is a small
 * class whose whole state is explicit: `state()` returns it as plain JSON and `load()` restores
 * it, to be saved with the checkpoint.
 *
 * Steps are finite numbers ≥ 0 (usually the optimizer step or the rollout step). A stage that
 * starts at step `s` is in force for every step `≥ s` until the next stage starts.
 *
 * @module
 */

import { checkChoice, checkKnownFields, checkNumber, checkObject, show } from "./_args.ts";

/** A function of the training step. */
export type Schedule = (step: number) => number;

/** One stage of a {@link stepwiseSchedule}: `value` from step `from` on. */
export interface Stage {
  /** The first step of the stage (the first stage must start at 0). */
  from: number;
  /** The value during the stage. */
  value: number;
}

function checkStep(owner: string, step: unknown): number {
  return checkNumber(owner, "step", step, { min: 0 });
}

function checkStages<T extends { from: number }>(
  owner: string,
  stages: unknown,
  what: string,
): T[] {
  if (!Array.isArray(stages) || stages.length === 0) {
    throw new TypeError(
      `${owner}: stages must be a non-empty array of ${what}, got ${show(stages)}`,
    );
  }
  let prev = -Infinity;
  for (let i = 0; i < stages.length; i++) {
    const s: unknown = stages[i];
    checkObject(owner, `stages[${i}]`, s, what);
    const from = checkNumber(owner, `stages[${i}].from`, (s as T).from, { min: 0 });
    if (i === 0 && from !== 0) {
      throw new RangeError(
        `${owner}: stages[0].from is ${from}; the first stage must start at step 0`,
      );
    }
    if (from <= prev) {
      throw new RangeError(
        `${owner}: stages[${i}].from is ${from} but stages[${
          i - 1
        }].from is ${prev}; stages must start at strictly increasing steps`,
      );
    }
    prev = from;
  }
  return stages as T[];
}

/** Index of the last stage whose `from` ≤ step (binary search). */
function stageIndex(stages: readonly { from: number }[], step: number): number {
  let lo = 0;
  let hi = stages.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (stages[mid]!.from <= step) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * A piecewise-constant schedule: `stages[i].value` for steps in `[stages[i].from,
 * stages[i+1].from)`, and the last value from the last stage on.
 *
 * @example Usage
 * ```ts
 * import { stepwiseSchedule } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * // POLARIS-4B's staged temperatures
 * const temperature = stepwiseSchedule([
 *   { from: 0, value: 1.4 },
 *   { from: 300, value: 1.45 },
 *   { from: 600, value: 1.5 },
 * ]);
 * assert.deepEqual([0, 299, 300, 599, 600, 10_000].map(temperature), [1.4, 1.4, 1.45, 1.45, 1.5, 1.5]);
 * ```
 */
export function stepwiseSchedule(stages: readonly Stage[]): Schedule {
  const owner = "stepwiseSchedule";
  const checked = checkStages<Stage>(owner, stages, "{from, value}").map((s, i) => {
    checkKnownFields(owner, `stages[${i}]`, s, ["from", "value"]);
    return { from: s.from, value: checkNumber(owner, `stages[${i}].value`, s.value) };
  });
  return (step: number) => {
    checkStep(owner, step);
    return checked[stageIndex(checked, step)]!.value;
  };
}

/** Spec of a {@link linearSchedule}. */
export interface LinearScheduleSpec {
  /** The value up to `startStep`. */
  start: number;
  /** The value from `endStep` on. */
  end: number;
  /** Where the ramp begins (default 0). */
  startStep?: number;
  /** Where the ramp ends; must be > `startStep`. */
  endStep: number;
}

/**
 * A linear ramp: `start` up to `startStep`, `end` from `endStep` on, and the straight line
 * between (`start + (end − start)·(step − startStep)/(endStep − startStep)`).
 *
 * @example Usage
 * ```ts
 * import { linearSchedule } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const t = linearSchedule({ start: 0.7, end: 1.1, startStep: 100, endStep: 500 });
 * assert.equal(t(0), 0.7);
 * assert.ok(Math.abs(t(300) - 0.9) < 1e-15);
 * assert.equal(t(900), 1.1);
 * ```
 */
export function linearSchedule(spec: LinearScheduleSpec): Schedule {
  const owner = "linearSchedule";
  checkObject(owner, "spec", spec, "{start, end, startStep?, endStep}");
  checkKnownFields(owner, "spec", spec, ["start", "end", "startStep", "endStep"]);
  const start = checkNumber(owner, "start", spec.start);
  const end = checkNumber(owner, "end", spec.end);
  const startStep = checkNumber(owner, "startStep", spec.startStep ?? 0, { min: 0 });
  const endStep = checkNumber(owner, "endStep", spec.endStep, {
    min: startStep,
    minExclusive: true,
  });
  return (step: number) => {
    checkStep(owner, step);
    if (step <= startStep) return start;
    if (step >= endStep) return end;
    return start + (end - start) * ((step - startStep) / (endStep - startStep));
  };
}

/** One stage of a {@link lengthBudgetSchedule}. */
export interface LengthStage {
  /** The first step of the stage (the first stage must start at 0). */
  from: number;
  /** The response-length budget (max new tokens) during the stage, an integer ≥ 1. */
  maxTokens: number;
}

/**
 * A staged response-length budget (staged context lengthening: train at a short budget that
 * forces concise reasoning, then lengthen). Returns the max response tokens at a step.
 *
 * @example Usage
 * ```ts
 * import { lengthBudgetSchedule } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * // DeepScaleR-style 8k → 16k → 24k
 * const maxTokens = lengthBudgetSchedule([
 *   { from: 0, maxTokens: 8192 },
 *   { from: 1040, maxTokens: 16384 },
 *   { from: 1520, maxTokens: 24576 },
 * ]);
 * assert.deepEqual([0, 1039, 1040, 1519, 1520].map(maxTokens), [8192, 8192, 16384, 16384, 24576]);
 * ```
 */
export function lengthBudgetSchedule(stages: readonly LengthStage[]): Schedule {
  const owner = "lengthBudgetSchedule";
  const checked = checkStages<LengthStage>(owner, stages, "{from, maxTokens}").map((s, i) => {
    checkKnownFields(owner, `stages[${i}]`, s, ["from", "maxTokens"]);
    return {
      from: s.from,
      maxTokens: checkNumber(owner, `stages[${i}].maxTokens`, s.maxTokens, {
        min: 1,
        integer: true,
      }),
    };
  });
  return (step: number) => {
    checkStep(owner, step);
    return checked[stageIndex(checked, step)]!.maxTokens;
  };
}

/** Options of an {@link EntropyTemperatureController}. */
export interface EntropyControllerOptions {
  /** The target entropy (nats per token, e.g. 0.3), ≥ 0. */
  target: number;
  /** The starting temperature, within [min, max]. */
  initial: number;
  /** The gain: temperature change per nat of error (default 0.1); > 0. */
  gain?: number;
  /** The lowest temperature (default 0.1); > 0. */
  min?: number;
  /** The highest temperature (default 2). */
  max?: number;
  /** The largest change of one update (default Infinity). */
  maxChange?: number;
  /**
   * `"additive"` (default): `T ← T + gain·(target − H)`. `"multiplicative"`:
   * `T ← T·exp(gain·(target − H))`, which moves in proportion to T.
   */
  mode?: "additive" | "multiplicative";
}

/** The state of an {@link EntropyTemperatureController}, as plain JSON. */
export interface EntropyControllerState {
  /** The current temperature. */
  temperature: number;
  /** How many updates have been applied. */
  updates: number;
  /** The entropy of the last update (`null` before the first). */
  lastEntropy: number | null;
}

/**
 * A proportional controller that steers the sampling temperature toward a target entropy
 * (keep the post-scaling entropy near e.g. 0.3 nats; E3-RL4LLMs, Confucius3-Math). Each
 * `update(H)` with the measured mean token entropy `H` moves the temperature by `gain·(target −
 * H)` (additive) or by the factor `exp(gain·(target − H))` (multiplicative), limited to
 * `±maxChange` and clamped to `[min, max]`. Entropy above the target lowers the temperature.
 * The step is proportional to the error, which is integral action on the temperature, so it
 * settles where the entropy equals the target when the bounds allow it. Its state is explicit:
 * save `state()` with the checkpoint and `load()` it on resume.
 *
 * @example Usage
 * ```ts
 * import { EntropyTemperatureController } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const ctl = new EntropyTemperatureController({ target: 0.3, initial: 1, gain: 0.5 });
 * assert.equal(ctl.update(0.5), 0.9); // entropy too high: 1 + 0.5·(0.3 − 0.5)
 * assert.equal(ctl.update(0.1), 1); // too low: 0.9 + 0.5·0.2
 * const saved = ctl.state();
 * const resumed = new EntropyTemperatureController({ target: 0.3, initial: 1, gain: 0.5 });
 * resumed.load(saved);
 * assert.equal(resumed.update(0.3), ctl.update(0.3));
 * ```
 */
export class EntropyTemperatureController {
  /** The validated options. */
  readonly options: Readonly<Required<EntropyControllerOptions>>;
  #temperature: number;
  #updates = 0;
  #lastEntropy: number | null = null;

  /** A controller at `options.initial`; throws on invalid options. */
  constructor(options: EntropyControllerOptions) {
    const owner = "EntropyTemperatureController";
    checkObject(owner, "options", options, "{target, initial, gain?, min?, max?, ...}");
    checkKnownFields(owner, "options", options, [
      "target",
      "initial",
      "gain",
      "min",
      "max",
      "maxChange",
      "mode",
    ]);
    const target = checkNumber(owner, "target", options.target, { min: 0 });
    const min = checkNumber(owner, "min", options.min ?? 0.1, { min: 0, minExclusive: true });
    const max = checkNumber(owner, "max", options.max ?? 2, { min });
    const initial = checkNumber(owner, "initial", options.initial, { min, max });
    const gain = checkNumber(owner, "gain", options.gain ?? 0.1, { min: 0, minExclusive: true });
    const maxChange = options.maxChange ?? Infinity;
    if (typeof maxChange !== "number" || !(maxChange > 0)) {
      throw new RangeError(
        `${owner}: maxChange must be a number > 0 (Infinity for no limit), got ${show(maxChange)}`,
      );
    }
    const mode = checkChoice(
      owner,
      "mode",
      options.mode ?? "additive",
      [
        "additive",
        "multiplicative",
      ] as const,
    );
    this.options = Object.freeze({ target, initial, gain, min, max, maxChange, mode });
    this.#temperature = initial;
  }

  /** The current temperature. */
  get temperature(): number {
    return this.#temperature;
  }

  /** Applies one measurement (mean token entropy in nats, ≥ 0) and returns the new temperature. */
  update(entropy: number): number {
    const o = this.options;
    const H = checkNumber("EntropyTemperatureController.update", "entropy", entropy, { min: 0 });
    const error = o.target - H;
    const T = this.#temperature;
    let next = o.mode === "additive" ? T + o.gain * error : T * Math.exp(o.gain * error);
    if (next > T + o.maxChange) next = T + o.maxChange;
    if (next < T - o.maxChange) next = T - o.maxChange;
    this.#temperature = Math.min(o.max, Math.max(o.min, next));
    this.#updates++;
    this.#lastEntropy = H;
    return this.#temperature;
  }

  /** A copy of the state (plain JSON). */
  state(): EntropyControllerState {
    return {
      temperature: this.#temperature,
      updates: this.#updates,
      lastEntropy: this.#lastEntropy,
    };
  }

  /** Restores a saved state; throws if it is malformed or outside `[min, max]`. */
  load(state: EntropyControllerState): void {
    const owner = "EntropyTemperatureController.load";
    checkObject(owner, "state", state, "{temperature, updates, lastEntropy}");
    const temperature = checkNumber(owner, "state.temperature", state.temperature, {
      min: this.options.min,
      max: this.options.max,
    });
    const updates = checkNumber(owner, "state.updates", state.updates, { min: 0, integer: true });
    const lastEntropy = state.lastEntropy === null
      ? null
      : checkNumber(owner, "state.lastEntropy", state.lastEntropy, { min: 0 });
    this.#temperature = temperature;
    this.#updates = updates;
    this.#lastEntropy = lastEntropy;
  }
}
