/**
 * @module
 *
 * `@rlvr/sampling`: what to sample and from which prompts.
 *
 * - **Token samplers** (greedy, temperature, top-k, top-p, min-p) over logits rows, driven by a
 *   counter-based Philox RNG so that a draw depends only on (seed, step, sequence, position), and
 *   reporting the log-prob under the sampling distribution together with the raw and
 *   temperature-scaled ones, so trainer-side log-probs can be made to agree.
 * - **Rollout planning**: groups of n samples per prompt, DAPO dynamic sampling (never a
 *   zero-variance group; an unfillable batch is reported, not thrown), accuracy-band filtering,
 *   decayed pass-rate tracking.
 * - **Prompt selection**: uniform, failure-prioritised, mastery removal, GRESO pre-rollout
 *   skipping, difficulty curricula, UCB1/Thompson bandits over buckets, per-difficulty rollout
 *   budgets.
 * - **Schedules** (temperature, entropy-targeted temperature, staged length budgets), a **replay
 *   buffer** (FIFO, prioritised, success replay, staleness tags), **datasets** (field mapping,
 *   plain and Jinja chat templates, resumable shuffled iterators, stable splits; the streaming
 *   JSONL and Parquet readers are in `@rlvr/sampling/fs`) and **evaluation metrics** (pass@k,
 *   avg@k, maj@k, bootstrap intervals).
 *
 * Design: plain functions and small classes over plain arrays, with every stateful part exposing
 * `state()`/`toJSON()` so a run resumes exactly; no dependency on the tensor package, so these
 * parts serve any generation backend.
 *
 * @example Usage
 * ```ts
 * import { passAtK, sampleToken } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const draw = sampleToken([2, 1, 0.5], { seed: 1, topK: 2 }, { step: 0, sequence: 0, position: 0 });
 * assert.ok(draw.token === 0 || draw.token === 1);
 * assert.equal(passAtK(10, 10, 3), 1);
 * ```
 */

export {
  CounterRng,
  type CounterRngState,
  philox4x32,
  STREAM_DOMAIN,
  TOKEN_DOMAIN,
  uniformAt,
} from "./rng.ts";
export {
  applyMinP,
  applyTemperature,
  applyTopK,
  applyTopP,
  logitsEntropy,
  type LogitsRow,
  logSoftmax,
  type LogSoftmaxOptions,
  type ResolvedSamplingParams,
  resolveSamplingParams,
  SAMPLING_ORDERS,
  samplingLogprobs,
  type SamplingOrder,
  type SamplingParams,
  type SamplingStage,
  type TokenLogprobs,
  tokenLogprobs,
} from "./samplers/logits.ts";
export {
  type BatchKey,
  type DrawKey,
  greedy,
  type SampleOptions,
  type SamplerConfig,
  sampleToken,
  type TokenSample,
  TokenSampler,
} from "./samplers/sampler.ts";
export {
  type EntropyControllerOptions,
  type EntropyControllerState,
  EntropyTemperatureController,
  lengthBudgetSchedule,
  type LengthStage,
  linearSchedule,
  type LinearScheduleSpec,
  type Schedule,
  type Stage,
  stepwiseSchedule,
} from "./schedules.ts";
export {
  type AddMeta,
  groupHasSuccess,
  ReplayBuffer,
  type ReplayBufferJSON,
  type ReplayCounts,
  type ReplayEntry,
  type ReplayMode,
  type ReplayOptions,
  type ReplaySample,
} from "./replay.ts";
export {
  type Answer,
  avgAtK,
  bootstrapCI,
  type BootstrapOptions,
  chiSquareCdf,
  type ChiSquareResult,
  chiSquareSurvival,
  chiSquareTest,
  type ConfidenceInterval,
  lnGamma,
  majAtK,
  majorityVote,
  passAtK,
  regularizedGammaP,
  regularizedGammaQ,
  type Vote,
} from "./metrics.ts";

export {
  assembleGroups,
  collectGroups,
  type PlannedGroup,
  type PlanOptions,
  planRollouts,
  type RolloutGroup,
  type RolloutPlan,
  type RolloutSlot,
  type TaggedSample,
} from "./rollout.ts";
export {
  type AccuracyBandOptions,
  DynamicBatch,
  type DynamicBatchOptions,
  dynamicSample,
  type DynamicSampleOptions,
  type DynamicSampleResult,
  type DynamicSampleStats,
  type DynamicStopReason,
  filterByAccuracy,
  filterGroups,
  type FilterOptions,
  type FilterResult,
  type GenerateContext,
  hasRewardVariance,
  type PromptSource,
  type RoundPlanContext,
  type ScoredGroup,
} from "./dynamic.ts";
export {
  passRate,
  type PassRateEntry,
  type PassRateOptions,
  type PassRateState,
  PassRateTracker,
} from "./pass_rate.ts";
export {
  type MasteryOptions,
  type PriorityOptions,
  priorityWeights,
  PromptSelector,
  removeMastered,
  type SelectorOptions,
  type SelectorState,
} from "./selection.ts";
export { GresoFilter, type GresoOptions, type GresoState, type GresoVerdict } from "./greso.ts";
export {
  competence,
  type CompetenceSchedule,
  type CurriculumOptions,
  CurriculumSampler,
  type CurriculumState,
  difficultyRanks,
} from "./curriculum.ts";
export {
  type Bandit,
  banditFromState,
  BanditScheduler,
  type BanditState,
  learningProgress,
  type SchedulerReward,
  type SchedulerState,
  ThompsonBandit,
  type ThompsonOptions,
  type ThompsonState,
  Ucb1Bandit,
  type Ucb1Options,
  type Ucb1State,
} from "./bandit.ts";
export {
  allocateBudget,
  budgetForDifficulty,
  budgetForPassRate,
  type BudgetOptions,
  budgetWeight,
} from "./budget.ts";
export {
  type BadRow,
  type BadRowPolicy,
  DatasetError,
  type DatasetErrorInfo,
  MAX_BAD_ROWS_KEPT,
  type ReadStats,
} from "./datasets/errors.ts";
export {
  DEFAULT_FIELDS,
  type Example,
  FieldError,
  type FieldMap,
  getPath,
  lookupPath,
  mapExample,
  type PathLookup,
  promptUid,
} from "./datasets/fields.ts";
// The readers of dataset files are in `@rlvr/sampling/fs` (they need Deno); their types are here.
export type { ExampleStream, ReadOptions } from "./datasets/jsonl.ts";
export type { ParquetReadOptions } from "./datasets/parquet.ts";
export {
  type ChatMessage,
  type ChatRenderOptions,
  ChatTemplate,
  type ChatTemplateOptions,
  type MessageOptions,
  renderTemplate,
  templateFields,
  toMessages,
} from "./datasets/template.ts";
export { epochPermutation, shuffled } from "./datasets/shuffle.ts";
export {
  EpochIterator,
  type EpochIteratorOptions,
  type IteratorEntry,
  type IteratorState,
  type RandomAccess,
} from "./datasets/iterator.ts";
export { splitOf, type SplitOptions, trainTestSplit } from "./datasets/split.ts";
