/**
 * The training config schema (zod): eight sections (`model`, `task`, `rollout`, `algorithm`,
 * `sampling`, `optimizer`, `trainer`, `output`), every object strict, registry keys checked against the live
 * registries of `@rlvr/advantage` and `@rlvr/objectives`, then cross-field rules and trial calls
 * of the registries (see `checks.ts`).
 *
 * Design decisions:
 * - Every field is required here; defaults live in one plain object (`defaults.ts`) merged
 *   under the recipe, so the resolved config written to `config.yaml` is complete and the
 *   schema stays a description of what is *allowed*, not of what is assumed.
 * - Registry keys are validated with a refinement that reads the registry when the config is
 *   validated, so an estimator or loss registered by a plugin before loading is accepted.
 * - `null` is a value, not "delete": it means "off" where a field documents it (`clip.dual`,
 *   `optimizer.gradClip`) and "absent" for the optional sections (`model.lora`,
 *   `algorithm.gae`, `algorithm.value`), so `--set model.lora=null` removes a section.
 * - Cross-field rules run only once every field has the right type (zod skips object
 *   refinements after a field error), so one run can report a wrong type and, after the fix,
 *   a rule violation.
 * - Sizes have upper bounds ({@link LIMITS}) far above any run this toolkit can make, so a typo
 *   (`rollout.batchSize=1e9`) is an error in milliseconds instead of a process that grows until
 *   the machine kills it; what a given model and machine can hold is checked once the model is
 *   loaded (the run's memory estimate and context window, `loop/run.ts`).
 *
 * @module
 */

import { estimatorNames } from "@rlvr/advantage";
import { isLoadedMethod, isMethodPath, methodKey } from "./methods.ts";
import { aggregationNames, klEstimatorNames, policyLossNames } from "@rlvr/objectives";
import { BLAS_CHOICES, DEVICE_CHOICES } from "@rlvr/tensor";
import { z } from "zod";
import { int } from "./_zod.ts";
import { crossFieldProblems, registryProblems } from "./checks.ts";
import {
  ConfigError,
  type ConfigProblem,
  problemSource,
  type Provenance,
  showValue,
} from "./errors.ts";
import { closest, describeIssues } from "./issues.ts";
import { builtinTaskNames } from "./tasks.ts";
import { builtinEnvNames } from "./envs.ts";
import { builtinRewardNames } from "./rewards.ts";
import type { Config } from "./types.ts";

export type { Config } from "./types.ts";

/** Module names of Llama/Qwen2-family blocks that LoRA adapters can target (HF names). */
export const LORA_TARGETS: readonly string[] = Object.freeze([
  "q_proj",
  "k_proj",
  "v_proj",
  "o_proj",
  "gate_proj",
  "up_proj",
  "down_proj",
]);

/** The built-in model checkpoints (`builtin:<name>`); anything else is a path. */
export const BUILTIN_MODELS: readonly string[] = Object.freeze([
  "builtin:tiny",
  "builtin:tiny-agent",
  "builtin:tiny-code",
  "builtin:tiny-cot",
  "builtin:tiny-vl",
]);

/**
 * The upper bounds of the sizes a config sets, each with what it counts (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { LIMITS } from "./schema.ts";
 * import assert from "node:assert/strict";
 * assert.equal(LIMITS["rollout.batchSize"]!.max, 65536);
 * ```
 */
export const LIMITS: Readonly<Record<string, { max: number; what: string }>> = Object.freeze({
  "rollout.batchSize": { max: 65536, what: "responses per step, all generated at once" },
  "rollout.groupSize": { max: 4096, what: "responses per prompt" },
  "rollout.maxNewTokens": { max: 131072, what: "new tokens per response" },
  "rollout.dynamicSampling.maxRetries": { max: 1000, what: "extra sampling rounds per step" },
  "algorithm.microBatchSize": { max: 65536, what: "responses per forward/backward pass" },
  "algorithm.ppoMiniBatchSize": { max: 65536, what: "responses per optimizer step" },
  "algorithm.ppoEpochs": { max: 1000, what: "passes over each batch" },
  "trainer.evalProblems": { max: 1_000_000, what: "held-out problems" },
  "trainer.evalSamples": { max: 4096, what: "samples per held-out problem" },
  "trainer.evalK": { max: 4096, what: "the k of pass@k" },
  "trainer.samplesCount": { max: 65536, what: "samples logged per step" },
});

/** An integer in [`min`, the {@link LIMITS} bound of `key`], whose error says why. */
function sized(key: string, min: number) {
  const limit = LIMITS[key]!;
  return int().min(min).superRefine((value, ctx) => {
    if (value <= limit.max) return;
    ctx.addIssue({
      code: "custom",
      input: value,
      message: `${value} is not allowed; use an integer <= ${limit.max} (${limit.what}; ` +
        `more cannot be held in memory, and the run checks what the model and this machine ` +
        `can hold before step 1)`,
    });
  });
}

function registryKey(kind: string, names: () => readonly string[]): z.ZodString {
  return z.string().superRefine((value, ctx) => {
    const allowed = names();
    // A module export (`./my_adv.ts#myAdv`) was registered by loadMethods under its key.
    if (
      isMethodPath(value)
        ? isLoadedMethod(value) && allowed.includes(methodKey(value))
        : allowed.includes(value)
    ) {
      return;
    }
    const near = closest(value, allowed);
    ctx.addIssue({
      code: "custom",
      input: value,
      message: `${showValue(value)} is not a known ${kind}; use one of ${allowed.join(", ")}${
        near === undefined ? "" : ` (closest: ${near})`
      }`,
    });
  });
}

const checkpoint = z.string().min(1).superRefine((value, ctx) => {
  if (value.startsWith("builtin:") && !BUILTIN_MODELS.includes(value)) {
    ctx.addIssue({
      code: "custom",
      input: value,
      message: `${showValue(value)} is not a built-in model; use one of ${
        BUILTIN_MODELS.join(", ")
      } or a path to a Hugging Face checkpoint directory`,
    });
  }
});

const model = z.strictObject({
  checkpoint,
  valueHead: z.boolean(),
  lora: z.strictObject({
    rank: int().min(1),
    alpha: z.number().gt(0),
    targetModules: z.array(z.enum(LORA_TARGETS as [string, ...string[]])).min(1),
  }).nullable().optional(),
  // Optional (absent: f32) so that config.yaml files written before it existed stay as they were.
  storage: z.enum(["f32", "bf16"]).optional(),
  // Optional (absent: false) for the same reason; read only for a vision-language checkpoint.
  freezeVisionTower: z.boolean().optional(),
});

const data = z.strictObject({
  path: z.string().min(1),
  format: z.enum(["jsonl", "parquet"]),
  promptField: z.string().min(1).default("prompt"),
  // null: rows carry no reference answer (a `rewards:` section scores them, e.g. code tests)
  answerField: z.string().min(1).nullable().default("answer"),
  template: z.string().min(1).nullable().optional(),
  testFraction: z.number().gt(0).lt(1).default(0.1),
  // Optional (absent: skip) so that config.yaml files written before it existed stay as they were.
  overlong: z.enum(["skip", "truncate", "error"]).optional(),
});

const env = z.strictObject({
  name: registryKey("built-in environment", builtinEnvNames),
  options: z.record(z.string(), z.unknown()).default({}),
  maxTurns: int().min(1).max(64).default(3),
  syntax: z.enum(["compact", "tagged"]).default("compact"),
});

const task = z.strictObject({
  // null: none (a recipe with task.env removes the task it extends this way)
  name: registryKey("built-in task", builtinTaskNames).nullable().optional(),
  options: z.record(z.string(), z.unknown()).nullable().optional(),
  data: data.optional(),
  env: env.nullable().optional(),
  trainProblems: int().min(1).nullable().optional(),
  formatWeight: z.number().min(0),
});

/** A key whose secret must not be in the config (`rollout.natsAuth.password` / `.token`). */
function refusedSecret(key: string, file: string, envName: string) {
  // A custom issue, so the message never repeats the value (it is a secret).
  return z.custom<undefined>((v) => v === undefined, {
    error: `a ${key} in the config would be saved in the run's config.yaml and sent to every ` +
      `worker in the run record; remove it and put it in a file named by rollout.natsAuth.` +
      `${file}, or in the trainer's environment as ${envName}`,
  }).optional();
}

const natsFile = () => z.string().min(1).optional();

/**
 * Problems with NATS secrets masked in their text and source (`--set rollout.natsAuth.password=…`,
 * a `user:pass@` URL), so an error about them does not print them.
 */
function redactNatsSecrets(problems: ConfigProblem[]): ConfigProblem[] {
  const mask = (text: string) =>
    text
      .replace(/(rollout\.natsAuth\.(?:password|token)\s*[=:]\s*)\S+/g, "$1***")
      .replace(/([a-z][a-z0-9+.-]*:\/\/)[^@\s/"']*@/gi, "$1***@");
  return problems.map((p) => {
    const out = { ...p, message: mask(p.message) };
    if (p.source !== undefined) out.source = mask(p.source);
    return out;
  });
}

const natsAuth = z.strictObject({
  user: z.string().min(1).optional(),
  passwordFile: natsFile(),
  tokenFile: natsFile(),
  credsFile: natsFile(),
  nkeyFile: natsFile(),
  password: refusedSecret("password", "passwordFile", "NATS_PASSWORD"),
  token: refusedSecret("token", "tokenFile", "NATS_TOKEN"),
  tls: z.strictObject({
    caFile: natsFile(),
    certFile: natsFile(),
    keyFile: natsFile(),
    required: z.boolean().default(true),
  }).nullable().optional(),
});

const rollout = z.strictObject({
  batchSize: sized("rollout.batchSize", 1),
  groupSize: sized("rollout.groupSize", 1),
  maxNewTokens: sized("rollout.maxNewTokens", 1),
  sampler: z.strictObject({
    temperature: z.number().min(0),
    topP: z.number().gt(0).max(1),
    topK: int().min(-1),
    minP: z.number().min(0).max(1),
  }),
  dynamicSampling: z.strictObject({
    enabled: z.boolean(),
    maxRetries: sized("rollout.dynamicSampling.maxRetries", 0),
  }),
  // Optional only so that runs written before these keys existed still resume (as sync runs);
  // the defaults give every new run all four.
  mode: z.enum(["sync", "one_step_off", "async"]).optional(),
  workers: int().min(1).max(64).optional(),
  maxStaleness: int().min(0).optional(),
  stalePolicy: z.enum(["drop", "regenerate"]).optional(),
  nats: z.string().min(1).nullable().optional(),
  natsAuth: natsAuth.nullable().optional(),
  partial: z.boolean().optional(),
  // Absent is "host": the logits of every decode step are sampled on the host.
  decodeLoop: z.enum(["host", "device"]).optional(),
});

const algorithm = z.strictObject({
  estimator: registryKey("estimator", estimatorNames),
  estimatorOptions: z.record(z.string(), z.unknown()),
  loss: registryKey("policy loss", policyLossNames),
  lossOptions: z.record(z.string(), z.unknown()),
  aggregation: registryKey("aggregation", aggregationNames),
  clip: z.strictObject({
    low: z.number().min(0).max(1),
    high: z.number().min(0),
    dual: z.number().gt(1).nullable(),
  }),
  kl: z.strictObject({
    beta: z.number().min(0),
    estimator: registryKey("KL estimator", klEstimatorNames),
    placement: z.enum(["loss", "reward"]),
    target: z.number().gt(0).nullable().optional(),
    horizon: z.number().gt(0).optional(),
  }),
  entropyCoef: z.number(),
  ppoEpochs: sized("algorithm.ppoEpochs", 1),
  // Optional only so that runs written before these keys existed still resume.
  ppoMiniBatchSize: sized("algorithm.ppoMiniBatchSize", 1).nullable().optional(),
  shuffleMiniBatches: z.boolean().optional(),
  oldLogProbs: z.enum(["recompute", "rollout"]).optional(),
  microBatchSize: sized("algorithm.microBatchSize", 1),
  gae: z.strictObject({
    gamma: z.number().min(0).max(1),
    lambda: z.number().min(0).max(1),
  }).nullable().optional(),
  value: z.strictObject({
    coef: z.number().gt(0),
    clipRange: z.number().gt(0),
  }).nullable().optional(),
  overlong: z.strictObject({
    enabled: z.boolean(),
    buffer: int().min(0),
    penalty: z.number().min(0),
  }),
  prime: z.strictObject({ beta: z.number().gt(0) }).nullable().optional(),
});

const rewardSpec = z.strictObject({
  type: registryKey("reward type", builtinRewardNames).optional(),
  path: z.string().min(1).optional(),
  inline: z.string().min(1).optional(),
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, {
    error: "use letters, digits and '_', starting with a letter (it is a metric key)",
  }).optional(),
  weight: z.number().default(1),
  options: z.record(z.string(), z.unknown()).default({}),
}).superRefine((spec, ctx) => {
  const kinds = (["type", "path", "inline"] as const).filter((k) => spec[k] !== undefined);
  if (kinds.length !== 1) {
    ctx.addIssue({
      code: "custom",
      input: spec,
      message: `give exactly one of type (a built-in reward: ${
        builtinRewardNames().join(", ")
      }), path (./my_reward.ts#exportName) or inline; got ${
        kinds.length === 0 ? "none" : kinds.join(" and ")
      }`,
    });
  }
});

const rewards = z.array(rewardSpec).min(1);

const unit = () => z.number().min(0).max(1);
const openUnit = () => z.number().gt(0).lt(1);

// The optional strategies take their papers' values for the fields a config leaves out, so
// `sampling.greso: {}` switches GRESO on as published.
const sampling = z.strictObject({
  pool: int().min(1).nullable(),
  selection: z.enum(["stream", "uniform", "priority"]),
  priority: z.strictObject({
    epsilon: z.number().gt(0).max(1).default(0.05),
    unseenRate: unit().default(0),
  }),
  passRateDecay: z.number().min(0).lt(1),
  mastery: z.strictObject({
    threshold: unit().default(1),
    consecutive: int().min(1).max(8).default(2),
  }).nullable(),
  greso: z.strictObject({
    pEasy: openUnit().default(0.5),
    pHard: openUnit().default(0.5),
    targetZeroVariance: unit().default(0.25),
    adjust: unit().default(0.01),
    minP: openUnit().default(0.05),
    maxP: openUnit().default(0.95),
  }).nullable(),
  curriculum: z.strictObject({
    schedule: z.enum(["linear", "root"]).default("root"),
    steps: int().min(1),
    initial: z.number().gt(0).max(1).default(0.1),
    power: z.number().min(1).default(2),
  }).nullable(),
  replay: z.strictObject({
    mode: z.enum(["success", "prioritized"]).default("success"),
    perGroup: int().min(1).default(2),
    capacity: int().min(1).default(8),
    maxAge: int().min(1).default(100),
  }).nullable(),
  budget: z.strictObject({
    min: int().min(1),
    max: int().min(1),
    shape: z.enum(["medium", "hard"]).default("medium"),
  }).nullable(),
});

const optimizer = z.strictObject({
  lr: z.number().gt(0),
  betas: z.tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)]),
  weightDecay: z.number().min(0),
  warmupSteps: int().min(0),
  schedule: z.enum(["constant", "cosine", "linear"]),
  gradClip: z.number().gt(0).nullable(),
});

const trainer = z.strictObject({
  steps: int().min(1),
  seed: int().min(0),
  device: z.enum(DEVICE_CHOICES as unknown as ["auto", "webgpu", "cpu"]),
  blas: z.enum(BLAS_CHOICES as unknown as ["auto", "openblas", "wasm", "ts"]),
  activationCheckpointing: z.boolean(),
  evalEvery: int().min(0),
  evalProblems: sized("trainer.evalProblems", 0),
  evalSamples: sized("trainer.evalSamples", 1),
  evalK: sized("trainer.evalK", 1),
  saveEvery: int().min(0),
  samplesEvery: int().min(0),
  samplesCount: sized("trainer.samplesCount", 1),
});

const output = z.strictObject({
  dir: z.string().min(1),
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, {
    error: "use letters, digits, '.', '_' and '-' (a single directory name)",
  }).optional(),
  // Optional only so that runs written before they existed still resume.
  tensorboard: z.boolean().optional(),
  sinks: z.array(z.enum(["jsonl", "csv", "console"])).optional(),
});

const sections = z.strictObject({
  model,
  task,
  // Optional: absent (or null) means the task's verifier, as before the section existed.
  rewards: rewards.nullable().optional(),
  rollout,
  algorithm,
  // Optional only so that runs written before it existed still resume.
  sampling: sampling.optional(),
  optimizer,
  trainer,
  output,
  // Modules that register estimators, losses or aggregations on import (see methods.ts).
  plugins: z.array(z.string().min(1)).nullable().optional(),
});

// Compile-time check that the schema produces exactly the hand-written Config type.
type Output = z.output<typeof sections>;
const _schemaMatchesConfig: [Output] extends [Config] ? ([Config] extends [Output] ? true : false)
  : false = true;

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) {
      s = s.unwrap() as z.ZodType;
    } else return s;
  }
}

/**
 * The keys of the config section at a dotted path (`""` for the top level), or `[]` when the
 * path is not a section.
 *
 * @example Usage
 * ```ts
 * import { sectionKeys } from "./schema.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(sectionKeys("algorithm.clip"), ["low", "high", "dual"]);
 * assert.deepEqual(sectionKeys("optimizer.lr"), []);
 * ```
 */
export function sectionKeys(path: string): string[] {
  let s: z.ZodType = sections;
  for (const part of path === "" ? [] : path.split(".")) {
    const inner = unwrap(s);
    if (!(inner instanceof z.ZodObject)) return [];
    const next = (inner.shape as Record<string, z.ZodType>)[part];
    if (next === undefined) return [];
    s = next;
  }
  const inner = unwrap(s);
  return inner instanceof z.ZodObject ? Object.keys(inner.shape) : [];
}

/**
 * Every dotted key of the schema (sections and leaves), e.g. `optimizer.lr`.
 *
 * @example Usage
 * ```ts
 * import { schemaKeys } from "./schema.ts";
 * import assert from "node:assert/strict";
 * assert.ok(schemaKeys().includes("optimizer.lr"));
 * assert.ok(schemaKeys().includes("rollout.sampler.topP"));
 * ```
 */
export function schemaKeys(): string[] {
  const out: string[] = [];
  const walk = (prefix: string) => {
    for (const key of sectionKeys(prefix)) {
      const path = prefix === "" ? key : `${prefix}.${key}`;
      out.push(path);
      walk(path);
    }
  };
  walk("");
  return out;
}

/**
 * Validates an assembled config: schema, then cross-field rules, then trial calls of the
 * registries. Rejects with a {@link ConfigError} listing every problem found in the first failing
 * stage; returns the config with `task.data.testFraction` filled in when `task.data` is set.
 *
 * @example Usage
 * ```ts
 * import { ConfigError, defaultConfig, validateConfig } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.equal(config.algorithm.estimator, "grpo");
 * const bad = { ...defaultConfig(), optimizer: { ...defaultConfig().optimizer, lr: -1 } };
 * await assert.rejects(validateConfig(bad), (e: unknown) =>
 *   e instanceof ConfigError && e.problems[0]!.path === "optimizer.lr");
 * ```
 */
export async function validateConfig(
  raw: unknown,
  provenance: Provenance = new Map(),
): Promise<Config> {
  const ctx = {
    provenance,
    knownKeys: (path: string) => sectionKeys(path),
    allKeys: schemaKeys(),
  };
  const parsed = sections.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    throw new ConfigError(redactNatsSecrets(describeIssues(parsed.error.issues, ctx)));
  }
  const config = parsed.data;
  const withSources = (problems: ConfigProblem[]) =>
    problems.map((p) => {
      if (p.source !== undefined) return p;
      const source = problemSource(provenance, p.path, p.related);
      return source === undefined ? p : { ...p, source };
    });
  const cross = redactNatsSecrets(withSources(crossFieldProblems(config, ctx)));
  if (cross.length > 0) throw new ConfigError(cross);
  const registry = withSources(await registryProblems(config, ctx));
  if (registry.length > 0) throw new ConfigError(registry);
  return config;
}
