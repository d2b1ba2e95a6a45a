/**
 * `@rlvr/rewards`: verifiable rewards for RL of reasoning language models: the math verifier
 * (`mathReward`) and the sandboxed code reward (`codeReward`, in `@rlvr/rewards/code`), the
 * reward contract
 * and its runner, composition (weighted sums, gates, per-reward normalisation), format and
 * length shaping (DAPO, Kimi k1.5, L1), repetition and calibration (RLCR) terms, seeded
 * procedural tasks with verifiers (arithmetic, Countdown, Knights and Knaves, 4×4 Sudoku,
 * shortest path), rubric and citation rubrics, unsupervised rewards (TTRL majority vote,
 * self-certainty, negative entropy) and an LLM-judge adapter. Needs no tensor library.
 *
 * Design: a reward is plain data, `{name, score | scoreBatch, timeoutMs?}` (see `types.ts`),
 * returning a number or `null` for "not applicable". Rewards never guard themselves: the runner
 * ({@link scoreRewards}) gives every call a time budget and an AbortSignal and turns exceptions,
 * timeouts and non-finite values into a fallback score plus a recorded reason, so one bad sample
 * never fails a batch. Composites expose their components, which the runner scores and reports
 * one by one.
 *
 * Entry points: this module holds every part that runs on the web platform as well as in Deno
 * (no subprocess, no file system: a browser can import it); each part is also a subpath of its
 * own that loads only what it needs: `@rlvr/rewards/core` (the contract, runner and
 * composition), `/math` (the verifier; no Pyodide, no code sandbox), `/tasks`, `/format`,
 * `/length`, `/judge`, `/unsupervised`, `/rubric`, `/calibration`, `/repetition`, `/random` and
 * `/vision` (the visual tasks). Two subpaths need Deno and are not re-exported here: `/code`
 * (the code sandboxes, subprocesses, and `codeReward`) and `/env` (tools and multi-turn
 * environments, whose code interpreter runs in those sandboxes).
 *
 * @example Usage
 * ```ts
 * import {
 *   countdownTask,
 *   dapoOverlongReward,
 *   formatReward,
 *   scoreRewards,
 *   weightedSum,
 * } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = countdownTask({ count: 3 });
 * const row = task.row(0, 0);
 * const reward = weightedSum([
 *   { reward: task.reward, weight: 1 },
 *   { reward: formatReward(), weight: 0.1 },
 *   { reward: dapoOverlongReward({ maxLength: 512, cacheLength: 128 }), weight: 1 },
 * ], { name: "countdown_total" });
 * const good = `<think>search</think><answer>${row.answer}</answer>`;
 * const r = await scoreRewards([reward], [
 *   { prompt: row.prompt, completion: good, row },
 *   { prompt: row.prompt, completion: "<answer>1 + 1</answer>", row },
 * ]);
 * assert.ok(Math.abs(r.totals[0]! - 1.1) < 1e-12);
 * assert.equal(r.totals[1], 0);
 * assert.equal(r.metrics["countdown_total/format"]!.mean, 0.5);
 * ```
 *
 * @module
 */

export * from "./core.ts";
export {
  checkFormat,
  type FormatMode,
  type FormatOptions,
  formatReward,
  parseThinkAnswer,
  type ThinkAnswer,
} from "./format.ts";
export {
  charCount,
  dapoOverlongPenalty,
  dapoOverlongReward,
  kimiLengthLambdas,
  type KimiLengthOptions,
  kimiLengthReward,
  type L1LengthOptions,
  l1LengthReward,
  type OverlongLimits,
  type OverlongOptions,
  type TokenCounter,
  wordCount,
} from "./length.ts";
export {
  repeatedNgramFraction,
  type RepetitionOptions,
  repetitionPenalty,
  type Tokenizer,
} from "./repetition.ts";
export { parseConfidence, type RlcrOptions, rlcrReward, rlcrScore } from "./calibration.ts";
export { randomReward, type RandomRewardOptions } from "./random.ts";
export {
  citationRubric,
  type CitationRubricOptions,
  type ClaimCriterion,
  type Criterion,
  type CriterionCheck,
  type RowCriterion,
  type RowRubricOptions,
  rowRubricReward,
  type RubricOptions,
  rubricReward,
} from "./rubric.ts";
export {
  type LogprobOptions,
  type LogprobRewardOptions,
  type MajorityVoteOptions,
  majorityVoteReward,
  negativeEntropyReward,
  type RewardInputWithLogprobs,
  selfCertainty,
  selfCertaintyReward,
  tokenEntropy,
  type TokenLogprobs,
} from "./unsupervised.ts";
export {
  type JudgeCacheOptions,
  type JudgeOptions,
  type JudgeReward,
  judgeReward,
  type JudgeStats,
  parseJudgeScore,
} from "./judge.ts";
export * from "./tasks/mod.ts";
export * from "./math/mod.ts";
