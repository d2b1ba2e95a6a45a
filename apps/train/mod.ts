/**
 * @module
 *
 * `@rlvr/train`: reinforcement learning with verifiable rewards for a causal LM, as a function
 * call or as `deno task train`. This entry point is what a user calls:
 *
 * - **{@link train}**: a recipe (`grpo`, `dapo`, `gspo`, ...), a typed deep-partial config, your
 *   model, your rows and your reward functions in; a run directory (`config.yaml`,
 *   `metrics.jsonl`, `eval.jsonl`, checkpoints, `report.html`) and the evaluations before and
 *   after out. Callbacks see every step, evaluation and checkpoint; {@link MetricsSink}s
 *   (`@rlvr/infra`'s `CsvSink`, `JsonlSink`, `ConsoleSink` or your own) get every record.
 * - **config**: {@link loadConfig} resolves a recipe, `extends:`, overrides and CLI-style flags
 *   into a checked {@link Config}; {@link validateConfig}, {@link defaultConfig} and
 *   {@link configToYaml} work on a config object; a bad config is a {@link ConfigError} whose
 *   problems name the key, the value, the fix and the layer the value came from.
 * - **{@link runTraining}**: runs a config that `loadConfig` resolved (what `train` and the CLI
 *   call).
 * - **{@link main}**: the `deno task train` command line.
 *
 * The app's other modules (`config/`, `loop/`, `run/`, `report/`, `serve/`, `demo/` and the
 * `worker`, `eval`, `report` and `serve` commands) export their own functions for the app and its
 * tests; they are not part of this entry point. Estimators and policy losses are registered in
 * `@rlvr/advantage` and `@rlvr/objectives`, rewards are written with `@rlvr/rewards`.
 *
 * @example Train two steps on your rows with your reward
 * ```ts
 * import { train } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const out = await Deno.makeTempDir();
 * const result = await train({
 *   out,
 *   data: Array.from({ length: 20 }, (_, i) => ({ prompt: `${i}+${i}=`, answer: String(2 * i) })),
 *   rewards: [function exact({ completions, rows }) {
 *     return completions.map((c, i) => c.trim() === rows[i]!.answer ? 1 : 0);
 *   }],
 *   config: {
 *     trainer: { steps: 2, evalProblems: 1, evalSamples: 2, evalK: 2, device: "cpu" },
 *     rollout: { batchSize: 4, groupSize: 2, maxNewTokens: 4 },
 *     algorithm: { microBatchSize: 4 },
 *     task: { data: { testFraction: 0.25 } },
 *   },
 *   log: () => {},
 *   progress: () => {},
 *   report: false,
 * });
 * assert.equal(result.step, 2);
 * assert.equal(result.config.rewards![0]!.inline, "exact");
 * await Deno.remove(out, { recursive: true });
 * ```
 *
 * @example Resolve a recipe with overrides
 * ```ts
 * import { configToYaml, ConfigError, loadConfig } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const { config } = await loadConfig({ config: "dapo", set: ["trainer.steps=5"] });
 * assert.equal(config.algorithm.clip.high, 0.28);
 * assert.match(configToYaml(config), /steps: 5/);
 * await assert.rejects(
 *   loadConfig({ set: ["algorithm.estimator=grpx"] }),
 *   (e) => e instanceof ConfigError && e.problems[0]!.path === "algorithm.estimator",
 * );
 * ```
 */

export {
  type DeepPartial,
  type NamedMethod,
  train,
  type TrainCallbacks,
  type TrainMethods,
  type TrainOptions,
  type TrainResult,
  type TrainReward,
  type TrainRewardSpec,
} from "./train.ts";
export { configToYaml, loadConfig, type LoadedConfig, type LoadOptions } from "./config/load.ts";
export { validateConfig } from "./config/schema.ts";
export { defaultConfig } from "./config/defaults.ts";
export type { Config, RewardSpec } from "./config/types.ts";
export { ConfigError, type ConfigProblem, type Provenance } from "./config/errors.ts";
export { type RunOptions, type RunResult, runTraining } from "./loop/run.ts";
export type { EvalLine, MetricsRecord } from "./loop/run_sink.ts";
export type { EvalResult } from "./loop/eval.ts";
export type { CpuMatmulRecord, DeviceRecord } from "./loop/device.ts";
export type { BatchRewardFn, RewardLike } from "./loop/reward_set.ts";
export type { MetricsSink } from "@rlvr/infra";
export type { Row } from "@rlvr/rewards";
export { main } from "./main.ts";
