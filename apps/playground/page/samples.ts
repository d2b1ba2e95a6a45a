/**
 * The held-out completions the page shows side by side: each logged problem's completion at the
 * first evaluation (before training) and at the latest one, from the session's held-out samples
 * (`MemorySink.evalSamples`: the first sample of each of the first `trainer.samplesCount`
 * problems, logged at every evaluation when `trainer.samplesEvery` > 0).
 *
 * @module
 */

import type { SampleRecord } from "../../train/run/records.ts";

/** One completion of a problem at an evaluation. */
export interface ShownCompletion {
  /** The evaluation's step. */
  step: number;
  /** The completion. */
  completion: string;
  /** Its reward (1: solved). */
  reward: number;
}

/** One row of the before/after table. */
export interface BeforeAfterRow {
  /** The problem's index among the held-out problems. */
  problem: number;
  /** The prompt as the model saw it. */
  prompt: string;
  /** The reference answer, or null. */
  answer: string | null;
  /** At the first evaluation. */
  before: ShownCompletion;
  /** At the latest evaluation (the same as `before` until a second one). */
  after: ShownCompletion;
}

/**
 * The before/after rows of the held-out samples: one per problem logged at the first
 * evaluation, in problem order; empty before the first evaluation or without logged samples.
 *
 * @param samples The held-out samples, in the order logged.
 * @returns The rows.
 *
 * @example Usage
 * ```ts
 * import { beforeAfter } from "./samples.ts";
 * import assert from "node:assert/strict";
 * const rows = beforeAfter([
 *   { step: 0, problem: 0, prompt: "1+1=", completion: "3", reward: 0, answer: "2" },
 *   { step: 10, problem: 0, prompt: "1+1=", completion: "2", reward: 1, answer: "2" },
 * ]);
 * assert.equal(rows[0]!.before.completion, "3");
 * assert.equal(rows[0]!.after.completion, "2");
 * assert.equal(rows[0]!.after.step, 10);
 * ```
 */
export function beforeAfter(samples: readonly SampleRecord[]): BeforeAfterRow[] {
  if (samples.length === 0) return [];
  const first = samples[0]!.step;
  const last = samples.at(-1)!.step;
  const key = (s: SampleRecord, i: number) => typeof s.problem === "number" ? s.problem : i;
  const shown = (s: SampleRecord): ShownCompletion => ({
    step: s.step,
    completion: s.completion,
    reward: s.reward,
  });
  const firstOnes = samples.filter((s) => s.step === first);
  const lastOnes = new Map(
    samples.filter((s) => s.step === last).map((s, i) => [key(s, i), s] as const),
  );
  return firstOnes.map((s, i) => {
    const problem = key(s, i);
    const after = lastOnes.get(problem) ?? s;
    return {
      problem,
      prompt: s.prompt,
      answer: typeof s.answer === "string" ? s.answer : s.answer == null ? null : String(s.answer),
      before: shown(s),
      after: shown(after),
    };
  }).sort((a, b) => a.problem - b.problem);
}
