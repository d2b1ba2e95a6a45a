/**
 * `train()`: the typed entry point of `@rlvr/train`, TRL's `GRPOTrainer(model, reward_funcs,
 * train_dataset, args)` for this toolkit. Everything `deno task train` does is reachable from it:
 * a recipe, a typed deep-partial config, your model, your rows, your rewards, callbacks.
 *
 * ```ts ignore
 * import { train } from "@rlvr/train";
 * const result = await train({
 *   data: [{ prompt: "7+8=", answer: "15" }, ...],
 *   rewards: [({ completions, rows }) => completions.map((c, i) => c.trim() === rows[i].answer ? 1 : 0)],
 *   config: { trainer: { steps: 100 } },
 * });
 * ```
 *
 * Design decisions:
 * - **Everything lands in the run directory**, so a run started in code is a run like any other
 *   (report, resume, `deno task eval`): rows given as an (async) iterable are written to
 *   `<out>/data/<name>.jsonl` and used as `task.data`; a model given as an object is saved to
 *   `<out>/models/<name>/` and used as `model.checkpoint`; rewards given as functions or `Reward`
 *   objects are recorded in `config.yaml` as `inline` entries by name.
 * - **Functions stay in this process**: an inline reward cannot reach rollout workers, so it needs
 *   `rollout.mode: sync` (the config check says so), and resuming such a run means calling
 *   `train({ resume, rewards })` with the same rewards again.
 * - **One config path**: the `config` object is a layer between the recipe and `set`, validated
 *   by the same schema and checks as a YAML recipe, with errors naming `train({ config })`.
 *
 * @module
 */

import { join } from "node:path";
import { type EstimatorFn, estimatorNames, registerEstimator } from "@rlvr/advantage";
import {
  type AggregationFn,
  aggregationNames,
  type PolicyLossFn,
  policyLossNames,
  registerAggregation,
  registerPolicyLoss,
} from "@rlvr/objectives";
import type { CausalLM, Tokenizer } from "@rlvr/policy";
import type { Row } from "@rlvr/rewards";
import { loadConfig, type LoadedConfig } from "./config/load.ts";
import type { Config, RewardSpec } from "./config/types.ts";
import type { RewardLike } from "./loop/reward_set.ts";
import { type RunOptions, type RunResult, runTraining } from "./loop/run.ts";

/** A deep-partial of a config object (what `train({ config })` takes). */
export type DeepPartial<T> = T extends readonly (infer _)[] ? T
  : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> | null }
  : T;

/** A reward for {@link train}: a function or `Reward` object, optionally named and weighted. */
export type TrainReward =
  | RewardLike
  | {
    /** The reward. */
    reward: RewardLike;
    /** Its metric name (default: the function's or the `Reward`'s name, else `reward_<i>`). */
    name?: string;
    /** Its weight in the total (default 1). */
    weight?: number;
    /** Passed to a function as its second argument. */
    options?: Record<string, unknown>;
  }
  | TrainRewardSpec;

/** A `rewards:` entry as a config writes it, `weight` and `options` optional. */
export type TrainRewardSpec = Omit<RewardSpec, "weight" | "options"> & {
  /** Weight in the total (default 1). */
  weight?: number;
  /** The reward's options. */
  options?: Record<string, unknown>;
};

/** A method for {@link TrainOptions.methods}: its registry key and the function. */
export interface NamedMethod<F> {
  /** The registry key (lowercase letters, digits and `_`; not a built-in name). */
  name: string;
  /** The function (an `EstimatorFn`, a `definePolicyLoss` result, an `AggregationFn`). */
  fn: F;
}

/** The methods of {@link TrainOptions.methods}. */
export interface TrainMethods {
  /** An advantage estimator (`registerEstimator`'s function). */
  estimator?: NamedMethod<EstimatorFn>;
  /** A policy loss (`definePolicyLoss` of `@rlvr/objectives`). */
  loss?: NamedMethod<PolicyLossFn>;
  /** A loss aggregation. */
  aggregation?: NamedMethod<AggregationFn>;
}

/** Names train() registered, which it may register again (a resumed or repeated run). */
const ownMethods = new Set<string>();

function registerMethods(methods: TrainMethods): Record<string, string> {
  const out: Record<string, string> = {};
  const slots = [
    ["estimator", estimatorNames, registerEstimator],
    ["loss", policyLossNames, registerPolicyLoss],
    ["aggregation", aggregationNames, registerAggregation],
  ] as const;
  for (const [slot, names, register] of slots) {
    const m = methods[slot];
    if (m === undefined) continue;
    const key = `${slot}:${m.name}`;
    if (names().includes(m.name) && !ownMethods.has(key)) {
      throw new RangeError(
        `train: methods.${slot}.name ${
          JSON.stringify(m.name)
        } is already registered (a built-in or another module's); choose another name`,
      );
    }
    (register as (k: string, f: unknown, o: { override: boolean }) => void)(m.name, m.fn, {
      override: true,
    });
    ownMethods.add(key);
    out[slot] = m.name;
  }
  return out;
}

/** Callbacks of {@link train}. */
export interface TrainCallbacks {
  /** Each step's metrics record, after it is written. */
  onStep?: RunOptions["onStep"];
  /** Each held-out evaluation record, after it is written. */
  onEval?: RunOptions["onEval"];
  /** Each checkpoint (its step and folder), after it is complete. */
  onCheckpoint?: RunOptions["onCheckpoint"];
  /** Asked after every step; true stops the run there with a checkpoint (resumable). */
  shouldStop?: RunOptions["shouldStop"];
}

/** What {@link train} takes. */
export interface TrainOptions {
  /**
   * The policy: `"builtin:tiny"`, a Hugging Face checkpoint folder, or a model with its tokenizer
   * (saved to the run's output folder first). Default: the recipe's `model.checkpoint`.
   */
  model?: string | { model: CausalLM; tokenizer: Tokenizer; name?: string };
  /**
   * Training problems: a `.jsonl`/`.parquet` path, or rows (an array or (async) iterable of
   * objects with a prompt and an answer field, `task.data.promptField`/`answerField` naming them;
   * default `prompt` and `answer`). Default: the recipe's task.
   */
  data?: string | Iterable<Row> | AsyncIterable<Row>;
  /** The rewards (replacing the recipe's; default: the task's verifier). */
  rewards?: readonly TrainReward[];
  /**
   * Methods given as functions, each registered under its `name` (a registry key, not a built-in
   * name) and set as `algorithm.estimator`, `algorithm.loss` or `algorithm.aggregation`. The
   * run's config records the names, so pass the same methods again to resume (as inline rewards).
   */
  methods?: TrainMethods;
  /** A recipe name (`dapo`) or YAML path (default `grpo`). */
  recipe?: string;
  /** Config values over the recipe, typed. */
  config?: DeepPartial<Config>;
  /** `key=value` overrides applied last (as the CLI's `--set`). */
  set?: readonly string[];
  /** The folder the run directory is created in (default `output.dir`, `runs`). */
  out?: string;
  /** Resume the run in this directory instead of starting one (pass the same rewards). */
  resume?: string;
  /** Callbacks. */
  callbacks?: TrainCallbacks;
  /** Output lines (default: console.log); `() => {}` for none. */
  log?: (line: string) => void;
  /** Progress bar output (default: stdout). */
  progress?: (text: string) => void;
  /** Write report.html (default true). */
  report?: boolean;
  /** Handle Ctrl-C (default false here: the caller owns its process). */
  handleSignals?: boolean;
  /**
   * A config already resolved by `loadConfig` (what the CLI passes: its flags are `loadConfig`'s
   * options); `model`, `data`, `recipe`, `config`, `set`, `out` and `resume` must then be absent.
   */
  resolved?: LoadedConfig;
  /** Metrics sinks that receive every record (`@rlvr/infra`'s `MetricsSink`); the caller closes them. */
  sinks?: RunOptions["sinks"];
}

/** What {@link train} returns. */
export interface TrainResult extends RunResult {
  /** The resolved config the run used. */
  config: Config;
}

function isSpec(x: TrainReward): x is TrainRewardSpec {
  return typeof x === "object" && x !== null &&
    ("type" in x || "path" in x || "inline" in x) && !("reward" in x) &&
    typeof (x as { score?: unknown }).score !== "function" &&
    typeof (x as { scoreBatch?: unknown }).scoreBatch !== "function";
}

/** The config specs and the inline map of {@link TrainOptions.rewards}. */
export function rewardSpecs(
  rewards: readonly TrainReward[],
): { specs: RewardSpec[]; inline: Map<string, RewardLike> } {
  const specs: RewardSpec[] = [];
  const inline = new Map<string, RewardLike>();
  rewards.forEach((r, i) => {
    if (isSpec(r)) {
      specs.push({ ...r, weight: r.weight ?? 1, options: r.options ?? {} });
      return;
    }
    const wrapped = typeof r === "object" && r !== null && "reward" in r
      ? r
      : { reward: r as RewardLike };
    const own = typeof wrapped.reward === "function"
      ? wrapped.reward.name
      : (wrapped.reward as { name?: string }).name;
    let name = wrapped.name ?? (own && /^[A-Za-z][A-Za-z0-9_]*$/.test(own) ? own : `reward_${i}`);
    while (inline.has(name)) name = `${name}_${i}`;
    inline.set(name, wrapped.reward);
    specs.push({
      inline: name,
      weight: wrapped.weight ?? 1,
      options: wrapped.options ?? {},
    });
  });
  return { specs, inline };
}

async function writeRows(
  dir: string,
  rows: Iterable<Row> | AsyncIterable<Row>,
): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `rows-${Date.now().toString(36)}.jsonl`);
  const file = await Deno.open(path, { write: true, createNew: true });
  const enc = new TextEncoder();
  try {
    let n = 0;
    for await (const row of rows as AsyncIterable<Row>) {
      if (typeof row !== "object" || row === null || Array.isArray(row)) {
        throw new TypeError(
          `train: data[${n}] must be an object (a row), got ${JSON.stringify(row)}`,
        );
      }
      await file.write(enc.encode(JSON.stringify(row) + "\n"));
      n++;
    }
    if (n === 0) throw new RangeError("train: data has no rows; give at least one row");
  } finally {
    file.close();
  }
  return path;
}

/**
 * Trains a policy (see the module doc) and returns the run directory, the evaluations before
 * and after, and the resolved config.
 *
 * @example Usage
 * ```ts
 * import { train } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const out = await Deno.makeTempDir();
 * const steps: number[] = [];
 * const r = await train({
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
 *   callbacks: { onStep: (m) => { steps.push(m.step!); } },
 *   log: () => {}, progress: () => {}, report: false,
 * });
 * assert.deepEqual(steps, [1, 2]);
 * assert.equal(r.config.rewards![0]!.inline, "exact");
 * await Deno.remove(out, { recursive: true });
 * ```
 */
export async function train(options: TrainOptions = {}): Promise<TrainResult> {
  const { specs, inline } = rewardSpecs(options.rewards ?? []);
  let loaded: LoadedConfig;
  if (options.resume !== undefined && options.methods !== undefined) {
    registerMethods(options.methods);
  }
  if (options.resolved !== undefined) {
    const also = (["model", "data", "recipe", "config", "set", "out", "resume"] as const)
      .filter((k) => options[k] !== undefined);
    if (also.length > 0) {
      throw new TypeError(
        `train: resolved is a whole config; ${
          also.join(", ")
        } would be ignored with it, so pass them to loadConfig instead`,
      );
    }
    loaded = options.resolved;
  } else if (options.resume !== undefined) {
    loaded = await loadConfig({
      resume: options.resume,
      ...(options.set ? { set: options.set } : {}),
    });
  } else {
    const out = options.out ?? options.config?.output?.dir ?? "runs";
    const layer: Record<string, unknown> = structuredClone(
      (options.config ?? {}) as Record<string, unknown>,
    );
    const task = { ...(layer.task as Record<string, unknown> | undefined) };
    if (options.data !== undefined) {
      const path = typeof options.data === "string"
        ? options.data
        : await writeRows(join(out, "data"), options.data);
      const lower = path.toLowerCase();
      task.data = {
        format: lower.endsWith(".parquet") ? "parquet" : "jsonl",
        ...(task.data as Record<string, unknown> | undefined),
        path,
      };
      task.name = null;
      task.options = null;
      layer.task = task;
    }
    if (options.model !== undefined) {
      const m = options.model;
      let checkpoint: string;
      if (typeof m === "string") checkpoint = m;
      else {
        const { saveCheckpoint } = await import("@rlvr/policy/fs");
        checkpoint = join(out, "models", m.name ?? `model-${Date.now().toString(36)}`);
        await saveCheckpoint(checkpoint, { config: m.model.config, params: m.model.params });
        await m.tokenizer.save(checkpoint);
      }
      layer.model = { ...(layer.model as Record<string, unknown> | undefined), checkpoint };
    }
    if (specs.length > 0) layer.rewards = specs;
    if (options.methods !== undefined) {
      layer.algorithm = {
        ...(layer.algorithm as Record<string, unknown> | undefined),
        ...registerMethods(options.methods),
      };
    }
    loaded = await loadConfig({
      ...(options.recipe !== undefined ? { config: options.recipe } : {}),
      overrides: layer,
      overridesSource: "train({ config })",
      out,
      ...(options.set !== undefined ? { set: options.set } : {}),
    });
  }
  const cb = options.callbacks ?? {};
  const result = await runTraining(loaded, {
    handleSignals: options.handleSignals ?? false,
    ...(options.log !== undefined ? { log: options.log } : {}),
    ...(options.progress !== undefined ? { progress: options.progress } : {}),
    ...(options.report !== undefined ? { report: options.report } : {}),
    ...(inline.size > 0 ? { rewards: inline } : {}),
    ...(options.sinks !== undefined ? { sinks: options.sinks } : {}),
    ...(cb.onStep !== undefined ? { onStep: cb.onStep } : {}),
    ...(cb.onEval !== undefined ? { onEval: cb.onEval } : {}),
    ...(cb.onCheckpoint !== undefined ? { onCheckpoint: cb.onCheckpoint } : {}),
    ...(cb.shouldStop !== undefined ? { shouldStop: cb.shouldStop } : {}),
  });
  return { ...result, config: loaded.config };
}
