/**
 * Process credit for single-turn completions: a reward of the run's `rewards:` list may report
 * the **steps** its value is made of (where each step ends in the completion text, and its part
 * of the value), and with `algorithm.estimator: gigpo` each step becomes a turn of the
 * completion, so GiGPO's step-level advantage compares the same step across the samples of a
 * prompt (its anchor state is the step's position, `step0`, `step1`, …) instead of crediting
 * the whole completion with its total.
 *
 * Design decisions:
 * - **A step is a character offset and a value.** The reward knows its completion as text, so
 *   a step ends at a character offset (exclusive); the values sum to the reward's value for
 *   that completion (so the sequence total, what every other estimator and the metrics read, is
 *   unchanged by reporting steps). {@link checkSteps} refuses anything else.
 * - **Offsets become token columns by decoding**: a step ends after the first token whose
 *   decoded prefix reaches its offset ({@link stepTurns}). The prefix lengths come from decoding
 *   each token alone and summing, checked against decoding the whole completion; where a
 *   tokenizer's pieces do not add up (a byte-level token holding half a character), every
 *   prefix is decoded and counts as far as it agrees with the whole completion, so a step never
 *   ends between the two halves of a character.
 * - **Turns cover the completion**, as GiGPO needs: step `k` spans the tokens from the end of
 *   step `k − 1` to its own end, with reward `weight · value`; the tokens after the last step
 *   are one more turn (state `rest`) without a reward, so GiGPO gives it the sample's total minus
 *   the steps' rewards: what the other components (the task's verifier, the format reward) gave.
 * - **One stepped reward per run**: two would need their steps merged into one sequence of
 *   turns, which nothing defines; `RewardSet` refuses a second.
 *
 * @module
 */

import type { Reward, RewardInput, Row } from "@rlvr/rewards";
import type { GigpoTurn } from "@rlvr/advantage";

/** One step of a completion as a reward reports it. */
export interface RewardStep {
  /** Character offset in the completion where the step ends (exclusive). */
  end: number;
  /** The step's part of the reward's value (the parts sum to the value). */
  value: number;
}

/** A reward that also reports the steps of its value (see the module doc). */
export interface SteppedReward<R extends Row = Row> extends Reward<R> {
  /**
   * The steps of `input`'s completion, in order, or null when the reward has none for it (a
   * row it does not score, a completion without steps): that completion is then one turn.
   */
  steps(input: RewardInput<R>): readonly RewardStep[] | null;
}

/**
 * Whether `reward` reports steps.
 *
 * @example Usage
 * ```ts
 * import { hasSteps, type SteppedReward } from "./reward_steps.ts";
 * import { defineReward } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const plain = defineReward("plain", () => 1);
 * const stepped: SteppedReward = { ...plain, steps: () => null };
 * assert.equal(hasSteps(plain), false);
 * assert.equal(hasSteps(stepped), true);
 * ```
 */
export function hasSteps<R extends Row>(reward: Reward<R>): reward is SteppedReward<R> {
  return typeof (reward as Partial<SteppedReward<R>>).steps === "function";
}

/**
 * Checks the steps a reward reported for one completion: an array of `{end, value}` with
 * integer ends in order within `[0, textLength]` and finite values summing to `value` (the
 * reward's score, within 1e-9 of its size); returns them, or throws naming the reward and what
 * is wrong.
 *
 * @example Usage
 * ```ts
 * import { checkSteps } from "./reward_steps.ts";
 * import assert from "node:assert/strict";
 * const steps = [{ end: 3, value: 0.25 }, { end: 7, value: 0.5 }];
 * assert.equal(checkSteps("r", steps, 0.75, 10), steps);
 * assert.throws(() => checkSteps("r", steps, 1, 10), /sum to 0\.75, not its value 1/);
 * assert.throws(() => checkSteps("r", [{ end: 11, value: 1 }], 1, 10), /steps\[0\]\.end is 11/);
 * ```
 */
export function checkSteps(
  name: string,
  steps: unknown,
  value: number,
  textLength: number,
): readonly RewardStep[] {
  const owner = `reward ${name}: steps`;
  if (!Array.isArray(steps)) {
    throw new TypeError(`${owner} must be an array of {end, value} or null, got ${typeof steps}`);
  }
  let previous = 0;
  let sum = 0;
  steps.forEach((s: unknown, k) => {
    const { end, value: v } = (s ?? {}) as Partial<RewardStep>;
    if (!Number.isInteger(end) || end! < previous || end! > textLength) {
      throw new RangeError(
        `${owner}[${k}].end is ${end}; ends are integer character offsets in order, from ${previous} to the completion's length ${textLength}`,
      );
    }
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new RangeError(`${owner}[${k}].value is ${v}; a step's value is a finite number`);
    }
    previous = end!;
    sum += v;
  });
  if (Math.abs(sum - value) > 1e-9 * Math.max(1, Math.abs(value))) {
    throw new RangeError(
      `${owner} sum to ${sum}, not its value ${value}; a reward's steps are the parts of its value`,
    );
  }
  return steps as RewardStep[];
}

/**
 * The character length of every decoded prefix of `ids` (`ends[k]` = length of
 * `decode(ids[0..k])`): per-token lengths summed when they add up to the whole decode, else
 * each prefix decoded (see the module doc).
 */
function prefixLengths(ids: readonly number[], decode: (ids: number[]) => string): number[] {
  const ends: number[] = [];
  let total = 0;
  for (const id of ids) ends.push(total += decode([id]).length);
  const text = decode([...ids]);
  if (total === text.length) return ends;
  // A prefix ending inside a character decodes to a replacement character: only the part of
  // each decoded prefix that agrees with the whole completion counts as reached.
  return ids.map((_, k) => {
    const prefix = decode(ids.slice(0, k + 1));
    let same = 0;
    while (same < prefix.length && prefix[same] === text[same]) same++;
    return same;
  });
}

/**
 * The turns of one completion from its steps (see the module doc): step `k` becomes turn
 * `{state: "step<k>", reward: weight · value, start, end}` in token columns, and the tokens past
 * the last step a final turn `{state: "rest"}`.
 *
 * @example Usage
 * ```ts
 * import { stepTurns } from "./reward_steps.ts";
 * import assert from "node:assert/strict";
 * // A tokenizer whose tokens are "ab", "c", "de", "f".
 * const pieces = ["ab", "c", "de", "f"];
 * const decode = (ids: number[]) => ids.map((i) => pieces[i]).join("");
 * const turns = stepTurns([{ end: 3, value: 1 }, { end: 4, value: 0 }], [0, 1, 2, 3], decode, 0.5);
 * assert.deepEqual(turns, [
 *   { state: "step0", reward: 0.5, start: 0, end: 2 }, // "abc"
 *   { state: "step1", reward: 0, start: 2, end: 3 }, // offset 4 falls inside "de": the token ends it
 *   { state: "rest", start: 3, end: 4 }, // "f"
 * ]);
 * ```
 */
export function stepTurns(
  steps: readonly RewardStep[],
  completionIds: readonly number[],
  decode: (ids: number[]) => string,
  weight: number,
): GigpoTurn[] {
  const n = completionIds.length;
  const ends = prefixLengths(completionIds, decode);
  const turns: GigpoTurn[] = [];
  let start = 0;
  let k = 0; // first token whose prefix may reach the next offset (offsets are in order)
  steps.forEach((step, i) => {
    while (k < n && ends[k]! < step.end) k++;
    const end = step.end === 0 ? start : Math.max(start, Math.min(n, k + 1));
    turns.push({ state: `step${i}`, reward: weight * step.value, start, end });
    start = end;
  });
  turns.push({ state: "rest", start, end: n });
  return turns;
}
