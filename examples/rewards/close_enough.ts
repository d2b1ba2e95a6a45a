/**
 * A user reward for `deno task train --reward`: partial credit for numeric answers close to the
 * row's reference, `max(0, 1 − |answer − reference| / 10)` (1 when exact, 0 ten or more away,
 * `null` when the row has no numeric reference, e.g. a row of another task).
 *
 * It is a TRL-style batch function (TRL's `reward_funcs`): it gets the round's prompts,
 * completions, completion token ids and dataset rows, and returns one number (or null) per
 * completion. Run it with
 *
 * ```sh
 * npx -y deno@2.9.6 task train --reward ./examples/rewards/close_enough.ts --set trainer.steps=100
 * ```
 *
 * @module
 */

/** The round a batch reward receives (see `BatchRewardFn` in `@rlvr/train`). */
export interface Batch {
  /** The rendered prompts. */
  prompts: string[];
  /** The decoded completions. */
  completions: string[];
  /** The completions' token ids. */
  completionIds: number[][];
  /** The dataset rows (for the built-in arithmetic task: `answer`, `expression`, ...). */
  rows: Record<string, unknown>[];
}

/**
 * The reward (the module's default export, so `--reward ./close_enough.ts` finds it).
 *
 * @example Usage
 * ```ts
 * import closeEnough from "./close_enough.ts";
 * import assert from "node:assert/strict";
 * const rows = [{ answer: "42" }, { answer: "42" }, { answer: "42" }, {}];
 * const r = closeEnough({ prompts: [], completions: ["42", "45", "7", "42"], completionIds: [], rows });
 * assert.deepEqual(r, [1, 0.7, 0, null]);
 * ```
 */
export default function closeEnough(batch: Batch): (number | null)[] {
  return batch.completions.map((completion, i) => {
    const reference = Number(batch.rows[i]?.answer);
    if (!Number.isFinite(reference)) return null;
    const answer = Number(completion.trim());
    if (completion.trim() === "" || !Number.isFinite(answer)) return 0;
    return Math.max(0, 1 - Math.abs(answer - reference) / 10);
  });
}
