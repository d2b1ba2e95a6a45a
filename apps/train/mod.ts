/**
 * @module
 *
 * `@rlvr/train`: the `deno task train` application, the parts that do not need the model:
 *
 * - **config**: a zod schema of the training config (`model`, `task`, `rollout`, `algorithm`,
 *   `optimizer`, `trainer`, `output`) whose registry keys are checked against
 *   `@rlvr/advantage` and `@rlvr/objectives`; defaults, YAML recipes with `extends:`, dotted
 *   `--set` overrides and flag shortcuts; errors that name the key, the value, the fix and the
 *   layer the value came from;
 * - **recipes** in `apps/train/recipes/`: grpo, dr_grpo, dapo, rloo, reinforce_pp, gspo,
 *   cispo, ppo, nsr, grpo_async, agent_calc (and example configs in `apps/train/examples/`);
 * - **run directory**: atomic `config.yaml`, append-only `metrics.jsonl`/`eval.jsonl`/
 *   `samples.jsonl`, `checkpoints/step-N/` with `COMPLETE` markers, crash-tolerant reading and
 *   truncation for resume;
 * - **report**: a self-contained `report.html` with inline SVG plots;
 * - **progress**: a TTY-aware progress bar and the final summary table.
 *
 * Design: every piece is a plain function or small class over files and data, so the training
 * loop (wired later, once `@rlvr/policy` exists) only composes them.
 *
 * @example Usage
 * ```ts
 * import { loadConfig, policyLossOptions, summaryTable } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const { config } = await loadConfig({ config: "dapo", set: ["trainer.steps=5"] });
 * assert.equal(config.algorithm.clip.high, 0.28);
 * assert.equal(policyLossOptions(config).clipRatioHigh, 0.28);
 * assert.match(summaryTable([{ metric: "steps", value: config.trainer.steps }]), /steps +5/);
 * ```
 */

export { type CliCommand, CliError, parseCli, usage } from "./cli.ts";
export { main } from "./main.ts";
export {
  ConfigError,
  type ConfigProblem,
  formatProblem,
  type Provenance,
  showValue,
  sourceOf,
} from "./config/errors.ts";
export {
  closest,
  describeIssues,
  dottedPath,
  editDistance,
  type IssueContext,
  type IssueLike,
} from "./config/issues.ts";
export type {
  AlgorithmSection,
  Config,
  DataSection,
  EnvSection,
  LoraConfig,
  ModelSection,
  OptimizerSection,
  OutputSection,
  RewardSpec,
  RolloutSection,
  SamplerSection,
  SamplingSection,
  TaskSection,
  TrainerSection,
} from "./config/types.ts";
export {
  BUILTIN_MODELS,
  LORA_TARGETS,
  schemaKeys,
  sectionKeys,
  validateConfig,
} from "./config/schema.ts";
export { crossFieldProblems, registryProblems } from "./config/checks.ts";
export {
  type Alias,
  type AliasedLayers,
  ALIASES,
  type AliasFramework,
  aliasLayers,
  type AliasOccurrence,
  aliasOf,
  type AliasResolveContext,
  aliasTable,
  type AliasWriteContext,
  resolveAliases,
  type ResolvedAliases,
  VERL_SECTIONS,
} from "./config/aliases.ts";
export {
  type EstimatorNeeds,
  estimatorNeeds,
  type EstimatorSettings,
  estimatorSettings,
  LOSS_OPTION_FIELDS,
  needsReference,
  policyLossOptions,
  PRIME_BETA_DEFAULT,
  type RolloutSchedule,
  rolloutSchedule,
  samplingParams,
} from "./config/mapping.ts";
export { builtinTaskDescription, builtinTaskNames } from "./config/tasks.ts";
export { builtinEnvNames } from "./config/envs.ts";
export { defaultConfig } from "./config/defaults.ts";
export { isPlainObject, type Layer, type Merged, mergeLayers } from "./config/merge.ts";
export {
  nest,
  type Override,
  overrideLayers,
  parseOverride,
  parseScalar,
} from "./config/overrides.ts";
export {
  configToYaml,
  DEFAULT_RECIPE,
  listRecipes,
  loadConfig,
  type LoadedConfig,
  type LoadOptions,
  recipeLayers,
  RECIPES_DIR,
  resolveRecipe,
  RESUME_MUTABLE,
  rewardFlagLayers,
} from "./config/load.ts";
export { writeFileAtomic } from "./run/atomic.ts";
export {
  type JsonlContent,
  JsonlWriter,
  type JsonlWriterOptions,
  parseJsonl,
  readJsonl,
  truncateJsonl,
} from "./run/jsonl.ts";
export {
  checkEvalRecord,
  checkSampleRecord,
  checkStepMetrics,
  type EvalRecord,
  REQUIRED_METRICS,
  type SampleRecord,
  type StepMetrics,
} from "./run/records.ts";
export {
  beginCheckpoint,
  type CheckpointInfo,
  COMPLETE_MARKER,
  completeCheckpoint,
  latestCompleteCheckpoint,
  listCheckpoints,
  removeIncomplete,
} from "./run/checkpoints.ts";
export {
  type CreateOptions,
  type OpenOptions,
  type ResumeInfo,
  RUN_FILES,
  RunDir,
  type RunStream,
} from "./run/run_dir.ts";
export {
  markdownCell,
  RunTrackers,
  type SampleRow,
  samplesMarkdown,
  SINK_NAMES,
  type SinkName,
  TRACKER_FILES,
  type TrackerOptions,
  trackerOptions,
  type TrackerTruncation,
  truncateTrackers,
} from "./run/trackers.ts";
// Types of the registries this package's API mentions, re-exported so its documentation is
// complete on its own.
export type {
  AdvantageOutput,
  EpisodeWeighting,
  EstimatorInput,
  GigpoMode,
  GigpoTurn,
  GroupIndex,
  KlInReward,
  KlPenalty,
  PrimeBaseline,
  TokenMatrix,
} from "@rlvr/advantage";
export type {
  Histogram,
  HistogramState,
  RolloutMode,
  StalenessCounts,
  StalenessDecision,
  StalenessGate,
  StalenessGateOptions,
  StalenessGateState,
  StalenessPartition,
  StalePolicy,
  VersionedSample,
  WeightSnapshot,
} from "@rlvr/infra";
export type {
  AggregationMode,
  AggregationOptions,
  KlEstimator,
  OffPolicyLevel,
  OffPolicyOptions,
  PolicyLossOptions,
} from "@rlvr/objectives";
export type {
  ConfidenceInterval,
  GresoOptions,
  GresoState,
  PassRateEntry,
  PassRateState,
  SamplingOrder,
  SamplingParams,
} from "@rlvr/sampling";
// `AggregationOptions` mentions `Tensor`; it and the types its public methods mention.
export type * from "@rlvr/tensor/types";
export {
  escapeXml,
  formatTick,
  linePlot,
  niceTicks,
  PALETTE,
  type PlotOptions,
  type Series,
} from "./report/plot.ts";
export { formatNumber, runSummary, type SummaryRow } from "./report/summary.ts";
export {
  readReportData,
  renderReport,
  REPORT_PLOTS,
  type ReportData,
  writeReport,
} from "./report/report.ts";
export { REPORT_USAGE, reportMain } from "./report/main.ts";
export {
  formatDuration,
  type LiveMetrics,
  ProgressBar,
  progressLine,
  type ProgressOptions,
  type ProgressState,
  summaryTable,
} from "./progress.ts";
export {
  answerText,
  completionReward,
  promptText,
  TINY_ALPHABET,
  tinyTokenizer,
} from "./demo/format.ts";
export {
  DEFAULT_TASK_OPTIONS,
  defaultTask,
  pretrain,
  type PretrainOptions,
  type PretrainResult,
  tinyModelConfig,
} from "./demo/pretrain.ts";
export {
  AGENT_TASK_OPTIONS,
  agentCalcEnv,
  pretrainAgent,
  type PretrainAgentOptions,
  type PretrainAgentResult,
} from "./demo/pretrain_agent.ts";
export {
  OPS_DATA_PATH,
  opsProblems,
  type OpsRow,
  pretrainCode,
  type PretrainCodeOptions,
  type PretrainCodeResult,
  writeOpsData,
} from "./demo/pretrain_code.ts";
export { HELD_OUT_SEED, heldOutProblems, TrainStream } from "./loop/problems.ts";
export {
  BAD_ROWS_SHOWN,
  type DataRow,
  type DataTask,
  dataTask,
  type DataTaskOptions,
  isDataTask,
  referenceAnswers,
  type SkippedRow,
} from "./loop/data_task.ts";
export { taskFromConfig, trainingTask } from "./loop/task.ts";
export {
  checkpointDir,
  type LoadedPolicy,
  loadPolicy,
  stopTokenIds,
  TINY_AGENT_CHECKPOINT_DIR,
  TINY_CHECKPOINT_DIR,
  TINY_CODE_CHECKPOINT_DIR,
} from "./loop/policy.ts";
export {
  encodeRendered,
  type PromptFormat,
  promptFormat,
  promptIds,
  renderPrompt,
  renderText,
} from "./loop/prompt.ts";
export {
  DEVICE_FILE,
  deviceLine,
  type DeviceRecord,
  readDeviceRecords,
  recordDevice,
  selectTrainDevice,
  type TrainDevice,
} from "./loop/device.ts";
export {
  type AttachedLora,
  attachRunLora,
  isLoraCheckpoint,
  loadLoraCheckpoint,
  LORA_FILES,
  type LoraCheckpoint,
  loraParamNames,
  policySnapshot,
  saveLoraCheckpoint,
  saveMergedModel,
  withMergedParams,
  withoutAdapters,
} from "./loop/lora.ts";
export {
  EVAL_DRAW_STEP,
  type EvalResult,
  type EvalSample,
  evaluate,
  type EvaluateOptions,
} from "./loop/eval.ts";
export {
  CI_LEVEL,
  CI_METHOD,
  CI_RESAMPLES,
  EVAL_METRICS,
  type EvalMetricName,
  type EvalMetrics,
  evalMetrics,
  type EvalMetricsOptions,
  finalAnswer,
  type ProblemSamples,
  voteKey,
} from "./loop/eval_metrics.ts";
export {
  collectRollout,
  type RewardOptions,
  type RewardParts,
  type RewardStats,
  type Rollout,
  type RolloutItem,
  type RolloutOptions,
  rolloutReward,
} from "./loop/rollout.ts";
export { scoreNeedsOf, type TrainContext, trainStep, type UpdateMetrics } from "./loop/trainer.ts";
export { gatherRows, tokensOf, type TrainBatch, trainBatch } from "./loop/train_batch.ts";
export { microBatches, miniBatchPlan, type MiniBatchPlanOptions } from "./loop/minibatch.ts";
export {
  completionValues,
  type PreScores,
  scoreBeforeUpdate,
  type ScoreNeeds,
  type ScoringModels,
} from "./loop/scoring.ts";
export { batchAdvantages, estimatorInput } from "./loop/advantages.ts";
export { miniBatchUpdates, type UpdateContext, type UpdateStats } from "./loop/update.ts";
export { type Learner, loadLearner } from "./loop/learner.ts";
export {
  episodeIo,
  episodeMetrics,
  episodeRollouts,
  type RolloutSource,
  scheduledRollouts,
  type ScheduledStart,
  type SourceContext,
  type StepBatch,
  syncRollouts,
} from "./loop/rollout_source.ts";
export { stepRecord, type StepTimes } from "./loop/step_record.ts";
export {
  PromptSource,
  type PromptSourceState,
  type ReplayedItem,
  type ReplayRecord,
  type RowStream,
  usesStrategies,
} from "./loop/prompt_source.ts";
export {
  batchVersions,
  episodeOptionsOf,
  type ExecutedJob,
  jobRowCount,
  listStream,
  type RolloutExecutor,
  type RolloutJob,
  rolloutOptionsOf,
  type VersionedRollout,
} from "./loop/rollout_job.ts";
export {
  generatePartial,
  type PartialGenerateOptions,
  type PartialRollouts,
  type VersionedSequence,
} from "./loop/partial.ts";
export { type JobTask, jobTask, type JobWorkspace, runRolloutJob } from "./loop/job_runner.ts";
export {
  type AsyncRolloutMode,
  RolloutScheduler,
  type ScheduledBatch,
  type SchedulerOptions,
  type SchedulerState,
} from "./loop/scheduler.ts";
export {
  collectEpisodes,
  type EpisodeItem,
  type EpisodeOptions,
  type EpisodeRollout,
  evaluateEpisodes,
  type EvaluateEpisodesOptions,
  type TurnSpan,
} from "./loop/episode.ts";
export { WorkerExecutor } from "./loop/worker_executor.ts";
export type { WorkerHold } from "./loop/rollout_worker.ts";
export {
  type PolicyServer,
  type ServedPolicy,
  type ServerOptions,
  startServer,
} from "./serve/server.ts";
export {
  parseServeArgs,
  SERVE_USAGE,
  type ServeArgs,
  serveMain,
  ServeUsageError,
} from "./serve/main.ts";
export { type NatsExecutorOptions, startNatsExecutors } from "./loop/nats_executor.ts";
export {
  ACTIVE_RUN,
  decodeJson,
  encodeJson,
  type NatsJob,
  type NatsResult,
  type NatsRun,
  newIncarnation,
  RUN_BUCKET,
} from "./loop/nats_protocol.ts";
export {
  parseWorkerArgs,
  WORKER_USAGE,
  type WorkerArgs,
  WorkerArgsError,
  workerMain,
} from "./worker.ts";
export {
  type LoadedTrainState,
  loadSamplingState,
  loadSchedulerState,
  loadTrainState,
  SAMPLING_FILE,
  type SamplingCheckpoint,
  saveSamplingState,
  saveSchedulerState,
  saveTrainState,
  type SaveTrainStateOptions,
  SCHEDULER_FILE,
  STATE_FILES,
  type TrainState,
} from "./loop/state.ts";
export { type RunOptions, type RunResult, runTraining } from "./loop/run.ts";
export { DEFAULT_EVAL_PROBLEMS, EVAL_USAGE, evalMain, type EvalReport } from "./loop/eval_main.ts";
// Types of the packages the training loop's API mentions, re-exported so its documentation is
// complete on its own.
export type {
  ApplyChatTemplateOptions,
  CausalLM,
  CharTokenizer,
  ChatMessage,
  DecodeOptions,
  EncodeOptions,
  FinishReason,
  ForwardOptions,
  GeneratedSequence,
  GenerateOptions,
  GenerateStep,
  KVCache,
  LayerKV,
  Llama3RopeScaling,
  ModelConfig,
  ModelExtension,
  ModelType,
  SamplerConfig,
  ScoreItem,
  Tokenizer,
} from "@rlvr/policy";
export { MODEL_TYPES } from "@rlvr/policy";
export type {
  ArithmeticRow,
  Environment,
  Episode,
  ResetOptions,
  Reward,
  RewardContext,
  RewardInput,
  RewardValue,
  Row,
  ScoreBatchFn,
  ScoreFn,
  StepResult,
  Task,
  TaskRow,
} from "@rlvr/rewards";
export type {
  AdamWHyperparams,
  BaseHyperparams,
  DeviceChoice,
  Optimizer,
  OptimizerState,
  ParamGroup,
  ParamState,
  SerializedParamState,
  StateArray,
} from "@rlvr/tensor";
export {
  asReward,
  type BatchRewardFn,
  type RewardComponent,
  type RewardError,
  type RewardLike,
  type RewardScores,
  RewardSet,
  type RewardSetContext,
} from "./loop/reward_set.ts";
export {
  builtinRewardNames,
  type BuiltinRewardType,
  builtinRewardType,
  parseRewardPath,
  type RewardBuildContext,
  rewardName,
  type TrainRewardInput,
} from "./config/rewards.ts";
export {
  type DeepPartial,
  rewardSpecs,
  train,
  type TrainCallbacks,
  type TrainOptions,
  type TrainResult,
  type TrainReward,
  type TrainRewardSpec,
} from "./train.ts";
