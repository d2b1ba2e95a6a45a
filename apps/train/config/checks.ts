/**
 * The checks of a config that a field schema cannot express: rules between fields
 * ({@link crossFieldProblems}) and trial calls of the real registries with the config's
 * settings on a tiny synthetic batch ({@link registryProblems}).
 *
 * Design decision: the registries already validate their options (unknown names, ranges,
 * missing inputs such as `passk_analytic`'s `k`), with messages that name the field. Calling
 * them once at load time, on a 2-token batch, catches everything they check before any model
 * is loaded, without duplicating their rules here; each registry message is attached to the
 * config key it came from. A rule between fields names the other keys it read (`related`), so
 * the error's source names the layer that set each of them (a `--set` of the other key, not the
 * defaults of the key the problem is filed under).
 *
 * @module
 */

import { fromRows, getEstimator } from "@rlvr/advantage";
import { computePolicyLoss, disposeMetrics } from "@rlvr/objectives";
import { resolveSamplingParams } from "@rlvr/sampling";
import { tensor, tidy } from "@rlvr/tensor";
import type { ConfigProblem } from "./errors.ts";
import { describeIssues, type IssueContext } from "./issues.ts";
import {
  estimatorNeeds,
  estimatorSettings,
  LOSS_OPTION_FIELDS,
  policyLossOptions,
} from "./mapping.ts";
import type { Config } from "./schema.ts";
import { builtinEnv } from "./envs.ts";
import { builtinRewardType, parseRewardPath, rewardName } from "./rewards.ts";
import { existsSync } from "node:fs";
import { builtinTask, builtinTaskNames } from "./tasks.ts";
import { methodKey } from "./methods.ts";

/** A URL with its `user:pass@` part masked (the secret must not reach a message). */
function redactUserinfo(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1***@");
}

/** `rollout.nats` / `rollout.natsAuth`: no secret in the URL, one way to log in, TLS files. */
function natsProblems(config: Config): ConfigProblem[] {
  const r = config.rollout;
  const out: ConfigProblem[] = [];
  if (r.nats != null && /^[a-z][a-z0-9+.-]*:\/\/[^@/]*@/i.test(r.nats)) {
    out.push({
      path: "rollout.nats",
      message: `${
        redactUserinfo(r.nats)
      } carries credentials, which would be saved in the run's config.yaml, printed and sent to every worker; remove the user:password@ part and set rollout.natsAuth.user with rollout.natsAuth.passwordFile or NATS_PASSWORD (a token: rollout.natsAuth.tokenFile or NATS_TOKEN)`,
    });
  }
  const a = r.natsAuth;
  if (a == null) return out;
  if (r.nats == null) {
    out.push({
      path: "rollout.natsAuth",
      message:
        `is set but rollout.nats is null (no NATS server to log in to); set rollout.nats to the server's URL, or rollout.natsAuth to null`,
    });
  }
  const ways = [
    a.user !== undefined || a.passwordFile !== undefined ? "user/passwordFile" : null,
    a.tokenFile !== undefined ? "tokenFile" : null,
    a.credsFile !== undefined ? "credsFile" : null,
    a.nkeyFile !== undefined ? "nkeyFile" : null,
  ].filter((w) => w !== null);
  if (ways.length > 1) {
    out.push({
      path: "rollout.natsAuth",
      message: `sets ${ways.join(" and ")}; keep one way to log in`,
    });
  }
  if (a.passwordFile !== undefined && a.user === undefined) {
    out.push({
      path: "rollout.natsAuth.passwordFile",
      message: `a password needs a user; set rollout.natsAuth.user`,
    });
  }
  const t = a.tls;
  if (t != null) {
    if ((t.certFile === undefined) !== (t.keyFile === undefined)) {
      out.push({
        path: `rollout.natsAuth.tls.${t.certFile === undefined ? "keyFile" : "certFile"}`,
        message: `a client certificate needs both tls.certFile and tls.keyFile; set the other one`,
      });
    }
    if (!t.required && (t.caFile ?? t.certFile ?? t.keyFile) !== undefined) {
      out.push({
        path: "rollout.natsAuth.tls.required",
        message:
          `is false but TLS files are set, which the client uses only when TLS is required; set required to true, or remove the files`,
      });
    }
  }
  return out;
}

function divisors(n: number): number[] {
  const out: number[] = [];
  for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d);
  return out;
}

/** Losses whose `clip.low` is not the lower bound of a trust region paired with `clip.high`. */
const NO_CLIP_ORDER = new Set(["cispo"]);

/**
 * Rules between fields: task kind, divisibility of the batch, clip order, what PPO needs,
 * overlong buffer, eval sizes. Returns the problems (empty when the config is consistent).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { crossFieldProblems } from "./checks.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.deepEqual(crossFieldProblems(config), []);
 * config.rollout.groupSize = 3; // 16 is not a multiple of 3
 * assert.equal(crossFieldProblems(config)[0]!.path, "rollout.groupSize");
 * ```
 */
export function crossFieldProblems(config: Config, _ctx: IssueContext = {}): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const { task, rollout, algorithm: a, model, trainer } = config;

  if (task.env != null) {
    for (const key of ["name", "options", "data"] as const) {
      if (task[key] != null) {
        out.push({
          path: `task.${key}`,
          message:
            `set together with task.env (${task.env.name}); an environment brings its own problems (its options go in task.env.options): set task.${key} to null, or task.env to null for single-turn training`,
        });
      }
    }
    for (
      const [on, path] of [
        [rollout.dynamicSampling.enabled, "rollout.dynamicSampling.enabled"],
        [a.overlong.enabled, "algorithm.overlong.enabled"],
      ] as const
    ) {
      if (on) {
        out.push({
          path,
          message: `true, but it is not applied to episodes (task.env) yet; set it to false`,
        });
      }
    }
    if (task.formatWeight > 0) {
      out.push({
        path: "task.formatWeight",
        message:
          `${task.formatWeight}, but the format reward applies to single-turn completions, not episodes; set it to 0 with task.env`,
      });
    }
    const built = builtinEnv(task.env.name);
    const parsed = built?.options.safeParse(task.env.options);
    if (parsed !== undefined && !parsed.success) {
      const issue = parsed.error.issues[0]!;
      out.push({
        path: `task.env.options${issue.path.length > 0 ? `.${issue.path.join(".")}` : ""}`,
        message: `${issue.message} (environment ${task.env.name})`,
      });
    }
  } else if (task.name == null && task.data === undefined) {
    out.push({
      path: "task",
      message: `no task; set task.name to a built-in task (${
        builtinTaskNames().join(", ")
      }) or task.data to a dataset {path, format, promptField, answerField} (--data <file>)`,
    });
  } else if (task.name != null && task.data !== undefined) {
    out.push({
      path: "task.data",
      message:
        `both task.name (${task.name}) and task.data (${task.data.path}) are set; keep one: remove task.name to train on the dataset or task.data to use the built-in task (--data <file> replaces task.name)`,
    });
  } else if (task.data !== undefined && Object.keys(task.options ?? {}).length > 0) {
    out.push({
      path: "task.options",
      message:
        "options configure built-in tasks and are ignored with task.data; remove them or set task.name",
    });
  }

  const { batchSize, groupSize } = rollout;
  if (batchSize % groupSize !== 0) {
    out.push({
      path: "rollout.groupSize",
      message: `${groupSize} does not divide rollout.batchSize ${batchSize}; use one of ${
        divisors(batchSize).join(", ")
      } or change rollout.batchSize to a multiple of ${groupSize}`,
      related: ["rollout.batchSize"],
    });
  }
  // A micro-batch larger than the batch (or the mini-batch) is capped at it: one pass.
  if (a.microBatchSize < batchSize && batchSize % a.microBatchSize !== 0) {
    out.push({
      path: "algorithm.microBatchSize",
      message: `${a.microBatchSize} does not divide rollout.batchSize ${batchSize}; use one of ${
        divisors(batchSize).join(", ")
      } (or any size >= ${batchSize}: one pass)`,
      related: ["rollout.batchSize"],
    });
  }
  const mini = a.ppoMiniBatchSize ?? null;
  if (mini !== null && (mini > batchSize || batchSize % mini !== 0)) {
    out.push({
      path: "algorithm.ppoMiniBatchSize",
      message: `${mini} does not divide rollout.batchSize ${batchSize}; use one of ${
        divisors(batchSize).join(", ")
      } (responses per optimizer step), or null for one step per epoch`,
      related: ["rollout.batchSize"],
    });
  } else if (mini !== null && a.microBatchSize < mini && mini % a.microBatchSize !== 0) {
    out.push({
      path: "algorithm.microBatchSize",
      message:
        `${a.microBatchSize} does not divide algorithm.ppoMiniBatchSize ${mini}; use one of ${
          divisors(mini).join(", ")
        } (a micro-batch larger than the mini-batch is capped at it)`,
      related: ["algorithm.ppoMiniBatchSize"],
    });
  }
  if (a.clip.high < a.clip.low && !NO_CLIP_ORDER.has(a.loss)) {
    out.push({
      path: "algorithm.clip.high",
      message:
        `${a.clip.high} is below algorithm.clip.low ${a.clip.low}; use clip.high >= ${a.clip.low} (clip-higher widens the upper bound, never narrows it)`,
      related: ["algorithm.clip.low"],
    });
  }
  out.push(...partialProblems(config));
  out.push(...decodeLoopProblems(config));
  if ((rollout.mode ?? "sync") === "sync" && rollout.nats != null) {
    out.push({
      path: "rollout.nats",
      message: `${
        redactUserinfo(rollout.nats)
      } is set but rollout.mode is sync (rollouts on the trainer's thread); set rollout.mode to one_step_off or async to use remote workers, or rollout.nats to null`,
    });
  }
  out.push(...natsProblems(config));
  if (rollout.dynamicSampling.enabled && groupSize < 2) {
    out.push({
      path: "rollout.dynamicSampling.enabled",
      message:
        `dynamic sampling drops groups whose rewards are all equal, which every group of size ${groupSize} is; use rollout.groupSize >= 2 or set enabled: false`,
      related: ["rollout.groupSize"],
    });
  }

  if (estimatorNeeds(config).values) {
    if (!model.valueHead) {
      out.push({
        path: "model.valueHead",
        message: "false, but estimator gae (PPO) needs critic values; set model.valueHead: true",
        related: ["algorithm.estimator"],
      });
    }
    if (a.gae == null) {
      out.push({
        path: "algorithm.gae",
        message: "missing; estimator gae needs algorithm.gae {gamma, lambda} (e.g. 1 and 0.95)",
        related: ["algorithm.estimator"],
      });
    }
    if (a.value == null) {
      out.push({
        path: "algorithm.value",
        message:
          "missing; estimator gae trains a value head and needs algorithm.value {coef, clipRange} (e.g. 0.5 and 0.2)",
        related: ["algorithm.estimator"],
      });
    }
  } else {
    if (a.gae != null) {
      out.push({
        path: "algorithm.gae",
        message:
          `only estimator gae reads it, the estimator is ${a.estimator}; remove it (null) or use estimator gae`,
        related: ["algorithm.estimator"],
      });
    }
    if (model.valueHead) {
      out.push({
        path: "model.valueHead",
        message:
          `true, but only estimator gae uses a value head (the estimator is ${a.estimator}); set it to false or use estimator gae`,
        related: ["algorithm.estimator"],
      });
    }
  }

  out.push(...samplingProblems(config));
  out.push(...rewardProblems(config));
  if (a.kl.target != null && a.kl.beta <= 0) {
    out.push({
      path: "algorithm.kl.target",
      message:
        `${a.kl.target} needs algorithm.kl.beta > 0 as the controller's initial coefficient (it scales β, and 0 stays 0); set kl.beta, e.g. 0.01`,
      related: ["algorithm.kl.beta"],
    });
  }
  if (a.overlong.enabled && a.overlong.buffer > rollout.maxNewTokens) {
    out.push({
      path: "algorithm.overlong.buffer",
      message:
        `${a.overlong.buffer} exceeds rollout.maxNewTokens ${rollout.maxNewTokens}; use a buffer in [0, ${rollout.maxNewTokens}]`,
      related: ["rollout.maxNewTokens", "algorithm.overlong.enabled"],
    });
  }
  if (trainer.evalK > trainer.evalSamples) {
    out.push({
      path: "trainer.evalK",
      message:
        `${trainer.evalK} exceeds trainer.evalSamples ${trainer.evalSamples}; pass@k needs k <= n samples per problem, use evalK <= ${trainer.evalSamples}`,
      related: ["trainer.evalSamples"],
    });
  }
  if (trainer.samplesCount > batchSize) {
    out.push({
      path: "trainer.samplesCount",
      message:
        `${trainer.samplesCount} exceeds rollout.batchSize ${batchSize}; samples are taken from one step's batch, use at most ${batchSize}`,
      related: ["rollout.batchSize"],
    });
  }
  return out;
}

/** Where `rollout.partial` (interruptible rollouts, `loop/partial.ts`) cannot act. */
function partialProblems(config: Config): ConfigProblem[] {
  const r = config.rollout;
  if (r.partial !== true) return [];
  const conflicts: [boolean, string][] = [
    [
      (r.mode ?? "sync") === "sync",
      `rollout.mode is sync (rollouts on the trainer's thread always use the newest weights); set rollout.mode to async or one_step_off`,
    ],
    [
      r.nats != null,
      `rollout.nats is set, and remote workers finish a job under the weights they started it with (they are not sent weights in the middle of a job yet); set rollout.nats to null for Web Workers`,
    ],
    [
      config.task.env != null,
      `task.env is set, and episode turns end at the environment's stop strings, which a generation continued after an interruption cannot see across it; use single-turn tasks`,
    ],
  ];
  return conflicts.filter(([on]) => on).map(([, why]) => ({
    path: "rollout.partial",
    message: `true, but ${why}, or set rollout.partial to false`,
  }));
}

/**
 * `rollout.decodeLoop: device` runs the decode steps on WebGPU with sampling on the GPU
 * (`generate`'s `decodeLoop`); what it cannot run is refused here rather than at the first batch.
 */
function decodeLoopProblems(config: Config): ConfigProblem[] {
  const { rollout: r, trainer } = config;
  if (r.decodeLoop !== "device") return [];
  const conflicts: [boolean, string][] = [
    [
      trainer.device === "cpu",
      "trainer.device is cpu, and the device loop runs on WebGPU; set trainer.device to webgpu",
    ],
  ];
  return conflicts.filter(([on]) => on).map(([, why]) => ({
    path: "rollout.decodeLoop",
    message: `device, but ${why}, or set rollout.decodeLoop to host`,
  }));
}

/** The rules of the `rewards` section (see loop/reward_set.ts). */
function rewardProblems(config: Config): ConfigProblem[] {
  const list = config.rewards;
  const noAnswers = config.task.data?.answerField === null;
  if (list == null) {
    return noAnswers
      ? [{
        path: "task.data.answerField",
        message:
          "null (rows without reference answers), but no rewards section scores them; add rewards (e.g. [{type: code}] for rows with tests) or name the answer field",
      }]
      : [];
  }
  const out: ConfigProblem[] = [];
  if (noAnswers) {
    list.forEach((spec, i) => {
      if (spec.type === "task" || (spec.type === "math" && spec.options?.goldField == null)) {
        out.push({
          path: `rewards[${i}].type`,
          message:
            `${spec.type} compares with the row's reference answer, but task.data.answerField is null; name the answer field or use another reward`,
        });
      }
    });
  }
  const conflicts: [boolean, string, string][] = [
    [
      config.task.env != null,
      "task.env",
      "an environment scores its own episodes; set rewards to null with task.env",
    ],
    [
      config.task.formatWeight > 0,
      "task.formatWeight",
      "add {type: format, weight: <w>} to rewards instead and set task.formatWeight to 0",
    ],
  ];
  for (const [on, path, fix] of conflicts) {
    if (on) out.push({ path, message: `set together with rewards: ${fix}` });
  }
  const mode = config.rollout.mode ?? "sync";
  list.forEach((spec, i) => {
    if (spec.inline != null && mode !== "sync") {
      out.push({
        path: `rewards[${i}].inline`,
        message:
          `"${spec.inline}" is a reward passed in code, which rollout workers (rollout.mode ${mode}) cannot receive; write it in a module and use path: ./file.ts#name, or rollout.mode: sync`,
      });
    }
    if (spec.type != null && builtinRewardType(spec.type)?.logprobs && config.rollout.partial) {
      out.push({
        path: `rewards[${i}].type`,
        message:
          `${spec.type} reads the sampler's per-token distributions, which partial rollouts do not keep; set rollout.partial to false`,
      });
    }
  });
  return out;
}

/** The rules of the `sampling` section (see prompt_source.ts). */
function samplingProblems(config: Config): ConfigProblem[] {
  const s = config.sampling;
  if (s === undefined) return [];
  const out: ConfigProblem[] = [];
  const strategies = [
    ["selection", s.selection !== "stream"],
    ["mastery", s.mastery !== null],
    ["greso", s.greso !== null],
    ["curriculum", s.curriculum !== null],
    ["replay", s.replay !== null],
    ["budget", s.budget !== null],
  ].filter(([, on]) => on).map(([k]) => `sampling.${k}`);
  if (s.pool === null && strategies.length > 0) {
    out.push({
      path: "sampling.pool",
      message: `null, but ${
        strategies.join(", ")
      } draw from a finite pool of training problems (a problem must come back for its history to count); set sampling.pool, e.g. 512`,
      related: strategies,
    });
  }
  if (s.pool !== null && config.task.trainProblems != null) {
    out.push({
      path: "sampling.pool",
      message:
        `${s.pool} set together with task.trainProblems ${config.task.trainProblems} (1-shot RLVR cycles over its own problems); keep one of them`,
      related: ["task.trainProblems"],
    });
  }
  if (s.mastery !== null && s.selection === "stream") {
    out.push({
      path: "sampling.mastery",
      message:
        "mastered problems are removed from draws, but sampling.selection is stream (each problem once); use selection uniform or priority",
      related: ["sampling.selection"],
    });
  }
  if (s.greso !== null && s.greso.minP > s.greso.maxP) {
    out.push({
      path: "sampling.greso.minP",
      message: `${s.greso.minP} exceeds sampling.greso.maxP ${s.greso.maxP}; use minP <= maxP`,
      related: ["sampling.greso.maxP"],
    });
  }
  const b = s.budget;
  if (b !== null) {
    const g = config.rollout.groupSize;
    if (!(b.min <= g && g <= b.max)) {
      out.push({
        path: "sampling.budget",
        message:
          `min ${b.min} and max ${b.max} must bracket rollout.groupSize ${g} (the mean samples per problem, which the budget redistributes)`,
        related: ["rollout.groupSize"],
      });
    } else if (b.min < 2) {
      out.push({
        path: "sampling.budget.min",
        message: `${b.min}: a group of one response has no group baseline; use min >= 2`,
      });
    }
    const conflicts: [boolean, string, string][] = [
      [config.rollout.dynamicSampling.enabled, "rollout.dynamicSampling.enabled", "false"],
      [(config.rollout.mode ?? "sync") !== "sync", "rollout.mode", "sync"],
      [config.task.env != null, "task.env", "null"],
    ];
    for (const [on, path, fix] of conflicts) {
      if (on) {
        out.push({
          path: "sampling.budget",
          message:
            `not supported with ${path} (per-problem group sizes are applied by the single-turn sampler on the trainer's thread); set ${path} to ${fix} or sampling.budget to null`,
          related: [path],
        });
      }
    }
  }
  return out;
}

/** Estimator input fields the trainer fills from the batch; a config must not set them. */
const ESTIMATOR_DATA_FIELDS = [
  "tokenRewards",
  "rewards",
  "responseMask",
  "index",
  "groupSize",
  "klInReward",
  "values",
  "baselineRewards",
  "processRewards",
  "entropy",
];

/** Values to suggest for estimator settings that have no default. */
const REQUIRED_HINTS: Record<string, string> = {
  entropyAlpha: " (Cheng et al. use entropyAlpha: 0.4, entropyKappa: 2)",
  entropyKappa: " (Cheng et al. use entropyKappa: 2)",
  k: " (the k of pass@k to optimise, at most rollout.groupSize, e.g. k: 4)",
};

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function taskProblems(config: Config, ctx: IssueContext): Promise<ConfigProblem[]> {
  const env = config.task.env;
  if (env != null) {
    // Names and types were checked with the schema; the ranges by building the environment.
    const spec = builtinEnv(env.name);
    if (spec === undefined || !spec.options.safeParse(env.options).success) return [];
    try {
      await spec(env.options, { maxTurns: env.maxTurns, syntax: env.syntax });
    } catch (e) {
      return [{
        path: "task.env.options",
        message: `rejected by environment ${env.name}: ${message(e)}`,
      }];
    }
    return [];
  }
  const name = config.task.name;
  if (name == null) return [];
  const spec = builtinTask(name);
  if (spec === undefined) return []; // the schema already reported the name
  const options = config.task.options ?? {};
  const parsed = spec.options.safeParse(options, { reportInput: true });
  if (!parsed.success) {
    return describeIssues(parsed.error.issues, {
      ...ctx,
      prefix: ["task", "options"],
      knownKeys: () => Object.keys((spec.options as unknown as { shape: object }).shape),
      allKeys: [],
    });
  }
  try {
    await spec(parsed.data);
  } catch (e) {
    const field = /options\.(\w+)/.exec(message(e))?.[1];
    return [{
      path: field === undefined ? "task.options" : `task.options.${field}`,
      message: `rejected by the ${name} task: ${message(e)}`,
    }];
  }
  return [];
}

function samplerProblems(config: Config): ConfigProblem[] {
  try {
    resolveSamplingParams({ ...config.rollout.sampler });
    return [];
  } catch (e) {
    const field = /\b(temperature|topP|topK|minP)\b/.exec(message(e))?.[1];
    return [{
      path: field === undefined ? "rollout.sampler" : `rollout.sampler.${field}`,
      message: `rejected by the token sampler: ${message(e)}`,
    }];
  }
}

function estimatorProblems(config: Config): ConfigProblem[] {
  const a = config.algorithm;
  const out: ConfigProblem[] = [];
  for (const key of Object.keys(a.estimatorOptions)) {
    if (ESTIMATOR_DATA_FIELDS.includes(key)) {
      out.push({
        path: `algorithm.estimatorOptions.${key}`,
        message: `${key} is filled by the trainer from each batch, not by the config; remove it${
          key === "groupSize" ? " (set rollout.groupSize)" : ""
        }${key === "klInReward" ? " (set algorithm.kl.placement: reward)" : ""}`,
      });
    }
    if (a.estimator === "gae" && (key === "gamma" || key === "lam")) {
      out.push({
        path: `algorithm.estimatorOptions.${key}`,
        message: `set algorithm.gae.${key === "lam" ? "lambda" : "gamma"} instead; remove it here`,
      });
    }
  }
  if (out.length > 0) return out;
  const settings = estimatorSettings(config);
  // A tiny batch of two groups with a correct and a wrong answer in each, so group-relative
  // estimators see non-zero variance; every per-token input an estimator may read is present.
  const g = config.rollout.groupSize;
  const batch = 2 * g;
  const rows = (v: (i: number) => number) =>
    fromRows(Array.from({ length: batch }, (_, i) => [v(i), v(i)]));
  const input = {
    ...settings.options,
    rewards: Array.from({ length: batch }, (_, i) => i % 2),
    responseMask: rows(() => 1),
    groupSize: g,
    values: rows(() => 0),
    baselineRewards: Array.from({ length: batch }, () => 0.5),
    processRewards: rows(() => 0),
    entropy: rows(() => 1),
    // two turns per response, from states shared across the group (gigpo's anchor states)
    turns: Array.from({ length: batch }, () => [
      { state: "s0", start: 0, end: 1 },
      { state: "s1", start: 1, end: 2 },
    ]),
    ...(settings.klInReward === null ? {} : {
      klInReward: {
        logProbs: rows(() => -1),
        refLogProbs: rows(() => -1.1),
        coef: settings.klInReward.coef,
        penalty: settings.klInReward.penalty,
      },
    }),
  };
  try {
    getEstimator(methodKey(a.estimator))(input);
  } catch (e) {
    const text = message(e);
    if (/penalty/.test(text) && settings.klInReward !== null) {
      return [{
        path: "algorithm.kl.estimator",
        message:
          `${a.kl.estimator} cannot be used with kl.placement reward: ${text}; use kl.placement loss or another estimator`,
      }];
    }
    const missing = UNSUPPLIED_INPUTS.find((k) => text.includes(`${k} is required`));
    if (missing !== undefined) {
      return [{
        path: "algorithm.estimator",
        message:
          `${a.estimator} reads ${missing} per batch, which this trainer does not supply yet (it is not a setting); use another estimator`,
      }];
    }
    const field = Object.keys(a.estimatorOptions).find((k) => text.includes(k));
    return [{
      path: field === undefined
        ? "algorithm.estimatorOptions"
        : `algorithm.estimatorOptions.${field}`,
      message: `rejected by estimator ${a.estimator}: ${text}${
        /is required/.test(text)
          ? `; set it in algorithm.estimatorOptions${
            Object.entries(REQUIRED_HINTS).find(([k]) => text.includes(`${k} is required`))?.[1] ??
              ""
          }`
          : ""
      }`,
    }];
  }
  return [];
}

/**
 * Per-batch inputs some registered estimators read that the trainer does not fill (veRL's
 * optimal-token baselines need the old policy's log-probs and Σπ² of every position).
 */
const UNSUPPLIED_INPUTS = ["oldLogProbs", "sumPiSquared"] as const;

function lossProblems(config: Config): ConfigProblem[] {
  const a = config.algorithm;
  const out: ConfigProblem[] = [];
  for (const key of Object.keys(a.lossOptions)) {
    const field = LOSS_OPTION_FIELDS[key];
    if (field !== undefined) {
      out.push({
        path: `algorithm.lossOptions.${key}`,
        message: `set ${field} instead; remove ${key} from lossOptions`,
      });
    }
  }
  if (a.oldLogProbs === "rollout" && a.lossOptions.offPolicy != null) {
    out.push({
      path: "algorithm.lossOptions.offPolicy",
      message:
        `set with algorithm.oldLogProbs rollout, where π_old is the sampler's policy: its weights π_old/π_rollout are all 1; remove offPolicy, or set algorithm.oldLogProbs to recompute`,
      related: ["algorithm.oldLogProbs"],
    });
  }
  if (out.length > 0) return out;
  const options = policyLossOptions(config);
  const needsRef = (options.klCoef ?? 0) > 0;
  try {
    tidy(() => {
      const { loss, metrics } = computePolicyLoss(methodKey(a.loss), {
        logProbs: tensor([[-1, -1.2, -0.8], [-0.5, -2, -1]], { requiresGrad: true }),
        oldLogProbs: tensor([[-1.1, -1.2, -0.7], [-0.5, -1.9, -1]]),
        // The sampler's log-probs, read by decoupled PPO and the off-policy corrections.
        rolloutLogProbs: tensor([[-1.1, -1.25, -0.7], [-0.45, -1.9, -1]]),
        advantages: tensor([[1, 1, 1], [-1, -1, -1]]),
        responseMask: tensor([[1, 1, 1], [1, 1, 0]]),
        entropy: tensor([[1, 0.5, 0.2], [0.7, 0.3, 0]]),
        ...(needsRef ? { refLogProbs: tensor([[-1, -1, -1], [-1, -1, -1]]) } : {}),
      }, options);
      disposeMetrics(metrics);
      loss.dispose();
    });
  } catch (e) {
    const text = message(e);
    const known: [RegExp, string][] = [
      [/clipRatioLow/, "algorithm.clip.low"],
      [/clipRatioHigh/, "algorithm.clip.high"],
      [/clipRatioC/, "algorithm.clip.dual"],
      [/klType|KL estimator/i, "algorithm.kl.estimator"],
      [/klCoef/, "algorithm.kl.beta"],
      [/entropyCoef/, "algorithm.entropyCoef"],
      [/aggregation/, "algorithm.aggregation"],
    ];
    const lossKey = Object.keys(a.lossOptions).find((k) => text.includes(k));
    const path = lossKey !== undefined
      ? `algorithm.lossOptions.${lossKey}`
      : known.find(([re]) => re.test(text))?.[1] ?? "algorithm.lossOptions";
    return [{ path, message: `rejected by policy loss ${a.loss}: ${text}` }];
  }
  return [];
}

async function rewardBuildProblems(config: Config): Promise<ConfigProblem[]> {
  const list = config.rewards;
  if (list == null) return [];
  const out: ConfigProblem[] = [];
  for (const [i, spec] of list.entries()) {
    if (spec.path != null) {
      const file = parseRewardPath(spec.path).file;
      if (!/^[a-z][a-z0-9+.-]+:/i.test(file) && !existsSync(file)) {
        out.push({
          path: `rewards[${i}].path`,
          message: `${
            JSON.stringify(file)
          } does not exist (relative to ${Deno.cwd()}); use ./file.ts#exportName`,
        });
      }
      continue;
    }
    const type = spec.type == null ? undefined : builtinRewardType(spec.type);
    if (type === undefined) continue; // inline, or a bad type the schema reported
    try {
      // The task is built by the run; a trial build only checks the options.
      await type(spec.options, { task: null });
    } catch (e) {
      const text = message(e);
      if (/needs a task/.test(text)) continue;
      out.push({
        path: `rewards[${i}].options`,
        message: `rejected by reward ${spec.type}: ${text}`,
      });
    }
  }
  const names = list.map(rewardName);
  names.forEach((n, i) => {
    if (n === "total" || names.indexOf(n) !== i) {
      out.push({
        path: `rewards[${i}].name`,
        message: `"${n}" is ${
          n === "total" ? "reserved" : "used by an earlier reward"
        }; give each reward a distinct name (it is its metric key)`,
      });
    }
  });
  return out;
}

async function overlongProblems(config: Config): Promise<ConfigProblem[]> {
  const o = config.algorithm.overlong;
  if (!o.enabled) return [];
  try {
    // Lazy for the same reason as in tasks.ts: @rlvr/rewards is slow to load.
    const { dapoOverlongReward } = await import("@rlvr/rewards");
    dapoOverlongReward({ maxLength: config.rollout.maxNewTokens, cacheLength: o.buffer });
    return [];
  } catch (e) {
    return [{
      path: "algorithm.overlong.buffer",
      message: `rejected by the overlong shaping: ${message(e)}`,
      related: ["rollout.maxNewTokens"],
    }];
  }
}

/**
 * Trial calls of the registries with the config's settings: built-in task options (strict
 * names, then the generator's range checks), sampler parameters, estimator settings (on a
 * two-group batch of `rollout.groupSize`), policy-loss options (on a 2×3 batch) and the
 * overlong shaping. Returns the problems, each attached to the config key it concerns.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { registryProblems } from "./checks.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.deepEqual(await registryProblems(config), []);
 * config.algorithm.lossOptions = { clipRatioHigh: 0.3 }; // has a first-class field
 * assert.equal((await registryProblems(config))[0]!.path, "algorithm.lossOptions.clipRatioHigh");
 * ```
 */
export async function registryProblems(
  config: Config,
  ctx: IssueContext = {},
): Promise<ConfigProblem[]> {
  return [
    ...(await taskProblems(config, ctx)),
    ...samplerProblems(config),
    ...estimatorProblems(config),
    ...lossProblems(config),
    ...(await overlongProblems(config)),
    ...(await rewardBuildProblems(config)),
  ];
}
