/**
 * veRL and TRL names for config keys, accepted in every layer of a config (a recipe, the typed
 * API's config object, `--set` and bare `key=value` overrides) and translated to ours, each with a
 * one-line notice (`note: data.train_batch_size=16 (veRL) is rollout.batchSize=128 (16 prompts ×
 * rollout.groupSize 8)`), so that a veRL or TRL user's numbers mean here what they meant there.
 * {@link ALIASES} is the table; {@link aliasTable} prints it as the table of
 * `apps/train/README.md#config` (a test keeps the two equal).
 *
 * veRL keys are its dotted Hydra paths (`actor_rollout_ref.rollout.n`, `data.train_batch_size`,
 * `algorithm.kl_ctrl.kl_coef`); TRL keys are the flat field names of `GRPOConfig` and of the
 * `TrainingArguments` it extends (`num_generations`, `beta`, `max_steps`), at the top level of a
 * layer. Only the keys a layer gives are translated: neither framework's defaults are imported
 * (veRL's `clip_ratio_c: 3` dual clip, TRL's `loss_type: dapo`), the recipe's stay.
 *
 * Design decisions:
 * - **Renamed within the alias's own layer** ({@link aliasLayers}), before the layers merge, so
 *   the usual rule holds: a later layer wins whichever name it used, an alias and its own key in
 *   one layer are an error, and our merge rules (a new estimator drops the old estimator's
 *   options) apply to the translated keys.
 * - **Conversions that depend on other keys happen after the merge** ({@link resolveAliases}),
 *   when the final values are known: veRL counts `data.train_batch_size` and
 *   `ppo_mini_batch_size` in prompts and we count responses, so they are multiplied by the final
 *   `rollout.groupSize`, whatever the order of the flags; TRL counts `max_steps`, `warmup_steps`,
 *   `save_steps` and `eval_steps` in optimizer steps and we count rollout steps, each of
 *   `ppoEpochs × mini-batches` optimizer steps, so they are divided by that (rounded up). The
 *   conversion applies only while the alias's value is the final one (a later layer's own key
 *   replaces it, unconverted), and the provenance of the key names it, so an error about the
 *   converted value says where the number came from.
 * - **No silent drops**: a key or value with no equivalent here is an error naming the key, the
 *   value, why and what to do instead; a value that is inert in its own framework too (veRL's
 *   `kl_loss_coef` beside `use_kl_loss=false`) or already our behaviour is accepted with a notice
 *   saying so. A leftover key under a veRL-only section (`actor_rollout_ref`, `data`,
 *   `reward_model` ...) is an error naming it rather than "unknown key actor_rollout_ref".
 * - Keys the framework reads together are read together, from the merged values of the alias
 *   keys across all layers, so the order of the flags does not matter among them: veRL
 *   `clip_ratio` sets both bounds except one that `clip_ratio_low`/`clip_ratio_high` gives, TRL
 *   `epsilon` sets `epsilon_high` unless it is given, `loss_type` and
 *   `importance_sampling_level` choose the loss together, `kl_loss_coef` is inert beside
 *   `use_kl_loss=false` as it is in veRL.
 *
 * @module
 */

import { type ConfigProblem, type Provenance, showValue, sourceOf } from "./errors.ts";
import { isPlainObject, type Layer } from "./merge.ts";

/** The framework an alias comes from. */
export type AliasFramework = "veRL" | "TRL";

/** What an alias's `write` sees besides its value: the other aliases of the config. */
export interface AliasWriteContext {
  /**
   * The value of another alias key, as the last layer that gives it gives it (undefined when
   * none does): veRL and TRL read their keys together from their merged config.
   */
  sibling(key: string): unknown;
  /** Adds a detail to the alias's notice. */
  note(text: string): void;
}

/** What an alias's `resolve` sees, after the layers are merged. */
export interface AliasResolveContext extends AliasWriteContext {
  /** The alias's value as given. */
  readonly value: unknown;
  /** The merged value at a dotted path (before validation). */
  get(path: string): unknown;
  /** Whether this alias's own write at `path` is still the merged value (no later layer set it). */
  survived(path: string): boolean;
  /** The alias key whose write in its own layer is the merged value at `path`, if any. */
  origin(path: string): string | undefined;
  /** Whether a layer after this alias's set `path` (then {@link set} leaves it alone). */
  later(path: string): boolean;
  /** Sets a merged value (unless a later layer set it) and records this alias as its source. */
  set(path: string, value: unknown): void;
}

/** One accepted foreign key (see the module doc). */
export interface Alias {
  /** veRL or TRL. */
  readonly framework: AliasFramework;
  /** Their key: a dotted veRL path or a flat TRL field name. */
  readonly key: string;
  /** Our keys it sets (empty when it is refused). */
  readonly targets: readonly string[];
  /** The unit conversion or meaning, one line (the table's last column). */
  readonly conversion: string;
  /**
   * Translates the value within its layer: our dotted keys → values, or a string that refuses
   * it (`has no equivalent here: <why>; <fix>`, shown after the value).
   */
  readonly write?: (value: unknown, ctx: AliasWriteContext) => Record<string, unknown> | string;
  /** Order of {@link Alias.resolve} among the aliases (lower first; default 0). */
  readonly stage?: number;
  /** Finishes a conversion after the merge; returns a refusal like `write`'s, or nothing. */
  readonly resolve?: (ctx: AliasResolveContext) => string | undefined;
}

const V: AliasFramework = "veRL";
const T: AliasFramework = "TRL";
const ACTOR = "actor_rollout_ref.actor";
const OPTIM = "actor_rollout_ref.actor.optim";
const ROLLOUT = "actor_rollout_ref.rollout";

/** Top-level sections that exist only in veRL's config: a leftover key under one is refused. */
export const VERL_SECTIONS: readonly string[] = Object.freeze([
  "actor_rollout_ref",
  "data",
  "critic",
  "reward_model",
  "reward_manager",
  "custom_reward_function",
  "ray_kwargs",
  "ray_init",
  "global_profiler",
  "transfer_queue",
]);

function posInt(x: unknown): x is number {
  return typeof x === "number" && Number.isInteger(x) && x > 0;
}

function same(framework: AliasFramework, key: string, target: string, conversion = ""): Alias {
  return { framework, key, targets: [target], conversion, write: (v) => ({ [target]: v }) };
}

function choice(
  framework: AliasFramework,
  key: string,
  target: string,
  table: Readonly<Record<string, unknown>>,
  conversion: string,
): Alias {
  return {
    framework,
    key,
    targets: [target],
    conversion,
    write: (v) => {
      const name = String(v);
      if (Object.hasOwn(table, name)) return { [target]: table[name] };
      return `has no equivalent here; use one of ${
        Object.keys(table).join(", ")
      }, or set ${target}`;
    },
  };
}

function refused(framework: AliasFramework, key: string, why: string, fix: string): Alias {
  return {
    framework,
    key,
    targets: [],
    conversion: `refused: ${why}`,
    write: () => `has no equivalent here: ${why}; ${fix}`,
  };
}

/** A veRL count in prompts at `target`, multiplied by the final `rollout.groupSize`. */
function perPrompt(key: string, target: string, stage: number): Alias {
  return {
    framework: V,
    key,
    targets: [target],
    conversion: "prompts × `rollout.groupSize` (responses here)",
    write: (v) => ({ [target]: v }),
    stage,
    resolve: (ctx) => {
      const g = ctx.get("rollout.groupSize");
      if (!ctx.survived(target) || !posInt(ctx.value) || !posInt(g)) return undefined;
      ctx.set(target, ctx.value * g);
      ctx.note(`${ctx.value} prompts × rollout.groupSize ${g}`);
      return undefined;
    },
  };
}

/** Optimizer steps per rollout step of the merged config, or undefined when not yet valid. */
function updatesPerStep(ctx: AliasResolveContext): { n: number; text: string } | undefined {
  const batch = ctx.get("rollout.batchSize");
  const mini = ctx.get("algorithm.ppoMiniBatchSize") ?? batch;
  const epochs = ctx.get("algorithm.ppoEpochs");
  if (!posInt(batch) || !posInt(mini) || !posInt(epochs) || batch % mini !== 0) return undefined;
  const minis = batch / mini;
  return { n: epochs * minis, text: `ppoEpochs ${epochs} × ${minis} mini-batches` };
}

/** A TRL count of optimizer steps at `target`, divided by the optimizer steps of one step here. */
function optimizerSteps(key: string, target: string, zeroOk: boolean): Alias {
  return {
    framework: T,
    key,
    targets: [target],
    conversion:
      "optimizer steps ÷ (`ppoEpochs` × mini-batches per step), rounded up (steps here are rollout steps)",
    write: (v) =>
      typeof v === "number" && (v > 0 || (zeroOk && v === 0)) && Number.isInteger(v)
        ? { [target]: v }
        : `is not a whole number of optimizer steps${
          zeroOk ? " (>= 0)" : " (> 0)"
        }; give one, or set ${target} (in rollout steps)`,
    stage: 4,
    resolve: (ctx) => {
      const u = updatesPerStep(ctx);
      if (!ctx.survived(target) || u === undefined || typeof ctx.value !== "number") {
        return undefined;
      }
      ctx.set(target, Math.ceil(ctx.value / u.n));
      ctx.note(
        u.n === 1
          ? "1 optimizer step per rollout step here"
          : `${ctx.value} optimizer steps ÷ ${u.n} per rollout step (${u.text}), rounded up`,
      );
      return undefined;
    },
  };
}

/** veRL `*_freq` (-1 or 0: off) to our `*Every` (0: off). */
function frequency(key: string, target: string): Alias {
  return {
    framework: V,
    key,
    targets: [target],
    conversion: "same; -1 (off) is 0",
    write: (v) => ({ [target]: typeof v === "number" && v < 0 ? 0 : v }),
  };
}

/** veRL `algorithm.gamma` / `algorithm.lam` (defaults 1): read by `gae`, γ also by others. */
function discount(key: "algorithm.gamma" | "algorithm.lam"): Alias {
  const isGamma = key === "algorithm.gamma";
  const field = isGamma ? "gamma" : "lambda";
  const other = isGamma ? "lambda" : "gamma";
  const readers = isGamma ? ["reinforce_plus_plus", "prime", "gigpo"] : [];
  return {
    framework: V,
    key,
    targets: isGamma
      ? ["algorithm.gae.gamma", "algorithm.estimatorOptions.gamma"]
      : ["algorithm.gae.lambda"],
    conversion: isGamma
      ? "`algorithm.gae.gamma` for estimator gae, `estimatorOptions.gamma` for reinforce_plus_plus, prime, gigpo"
      : "`algorithm.gae.lambda` (estimator gae only)",
    resolve: (ctx) => {
      const estimator = ctx.get("algorithm.estimator");
      if (estimator === "gae") {
        ctx.set(`algorithm.gae.${field}`, ctx.value);
        // veRL's default for the other one (1) where no layer gave it.
        if (ctx.get(`algorithm.gae.${other}`) === undefined) ctx.set(`algorithm.gae.${other}`, 1);
        return undefined;
      }
      if (readers.includes(String(estimator))) {
        ctx.set("algorithm.estimatorOptions.gamma", ctx.value);
        return undefined;
      }
      if (ctx.value === 1) {
        ctx.note(`no discount, which is what estimator ${String(estimator)} does`);
        return undefined;
      }
      return `has no equivalent here: estimator ${String(estimator)} reads no ${
        isGamma ? "discount" : "λ"
      } (veRL applies ${key} to ${isGamma ? "gae and reinforce_plus_plus" : "gae"} only); ${
        isGamma
          ? "use estimator gae (algorithm.gae.gamma) or reinforce_plus_plus"
          : "use estimator gae (algorithm.gae.lambda)"
      }, or drop it`;
    },
  };
}

/**
 * A veRL KL setting that applies where the KL is (`placement`): in the loss
 * (`actor_rollout_ref.actor.*`) or in the reward (`algorithm.*`).
 */
function klSetting(
  key: string,
  target: "algorithm.kl.beta" | "algorithm.kl.estimator",
  placement: "loss" | "reward",
): Alias {
  const flag = placement === "loss" ? `${ACTOR}.use_kl_loss` : "algorithm.use_kl_in_reward";
  const otherFlag = placement === "loss" ? "algorithm.use_kl_in_reward" : `${ACTOR}.use_kl_loss`;
  return {
    framework: V,
    key,
    targets: [target],
    conversion: `\`${target}\` when \`algorithm.kl.placement\` is ${placement} (\`${flag}\`)`,
    write: (v, ctx) => {
      if (ctx.sibling(flag) === false || ctx.sibling(otherFlag) === true) {
        ctx.note(
          `unused, as in veRL: ${
            ctx.sibling(flag) === false ? `${flag} is false` : `${otherFlag} is true`
          }`,
        );
        return {};
      }
      return { [target]: v };
    },
    resolve: (ctx) => {
      if (!ctx.survived(target)) return undefined;
      const now = ctx.get("algorithm.kl.placement");
      if (now === placement) return undefined;
      return `sets the KL ${
        placement === "loss" ? "loss" : "reward penalty"
      } but algorithm.kl.placement is ${
        String(now)
      } (one KL term here, in the loss or the reward); add ${flag}=true or give ${
        placement === "loss"
          ? "algorithm.kl_ctrl.kl_coef / algorithm.kl_penalty"
          : `${ACTOR}.kl_loss_coef / kl_loss_type`
      } instead`;
    },
  };
}

/** veRL `use_kl_loss` / `use_kl_in_reward`. */
function klFlag(key: string, placement: "loss" | "reward"): Alias {
  const otherFlag = placement === "loss" ? "algorithm.use_kl_in_reward" : `${ACTOR}.use_kl_loss`;
  const coef = placement === "loss" ? `${ACTOR}.kl_loss_coef` : "algorithm.kl_ctrl.kl_coef";
  return {
    framework: V,
    key,
    targets: ["algorithm.kl.placement", "algorithm.kl.beta"],
    conversion:
      `true: \`algorithm.kl.placement\` ${placement} (β must be > 0); false: β 0 where the KL is in the ${placement}`,
    write: (v) => {
      if (v === true) return { "algorithm.kl.placement": placement };
      if (v === false) return {};
      return "is not a boolean; use true or false";
    },
    resolve: (ctx) => {
      if (ctx.value === true) {
        if (ctx.sibling(otherFlag) === true) {
          return `has no equivalent here together with ${otherFlag}=true: the KL is in the loss or in the reward, not both; keep one`;
        }
        if (!ctx.survived("algorithm.kl.placement")) return undefined;
        if (ctx.get("algorithm.kl.beta") === 0) {
          return `turns a KL term on but algorithm.kl.beta is 0 (veRL's default coefficient is not imported); give ${coef} or algorithm.kl.beta`;
        }
        return undefined;
      }
      if (ctx.later("algorithm.kl.beta")) {
        ctx.note("algorithm.kl.beta is set by a later layer");
      } else if (
        ctx.get("algorithm.kl.placement") === placement && ctx.get("algorithm.kl.beta") !== 0
      ) {
        ctx.set("algorithm.kl.beta", 0);
        ctx.note(`no KL in the ${placement}`);
      } else {
        ctx.note(`no KL in the ${placement}, which is already the case`);
      }
      return undefined;
    },
  };
}

/** TRL `loss_type` → our loss and aggregation. */
const TRL_LOSS_TYPES: Readonly<Record<string, readonly [string, string]>> = Object.freeze({
  grpo: ["vanilla", "seq-mean-token-mean"],
  bnpo: ["vanilla", "token-mean"],
  dr_grpo: ["vanilla", "seq-mean-token-sum-norm"],
  dapo: ["vanilla", "token-mean"],
  cispo: ["cispo", "token-mean"],
  sapo: ["sapo", "seq-mean-token-mean"],
});

/** TRL's cispo caps the weight at the absolute `epsilon_high` and has no lower bound. */
function cispoBounds(ctx: KeyedContext, path: "low" | "high"): string | undefined {
  if (ctx.get("algorithm.loss") !== "cispo" || !ctx.survived(`algorithm.clip.${path}`)) {
    return undefined;
  }
  if (path === "low") {
    ctx.set("algorithm.clip.low", 1);
    ctx.note("TRL's cispo has no lower bound: clip.low 1");
    return undefined;
  }
  const cap = ctx.key === "epsilon_high" ? ctx.value : undefined;
  if (typeof cap === "number" && cap > 1) {
    ctx.set("algorithm.clip.high", cap - 1);
    ctx.note(`TRL's cispo caps the weight at ${cap}: clip.high ${cap} − 1`);
    return undefined;
  }
  return `is TRL's cispo cap on the IS weight itself (${
    ctx.key === "epsilon" ? "epsilon_high defaults to epsilon" : "an absolute bound"
  }), so a value <= 1 clips every weight below 1; give epsilon_high > 1 (MiniMax-M1 / ScaleRL: 5.0) or set algorithm.clip.high (the bound is 1 + clip.high here)`;
}

/** The resolve context of one alias occurrence also knows its key (for shared helpers). */
interface KeyedContext extends AliasResolveContext {
  readonly key: string;
}

function trlEpsilon(key: "epsilon" | "epsilon_high"): Alias {
  const low = key === "epsilon";
  return {
    framework: T,
    key,
    targets: low ? ["algorithm.clip.low", "algorithm.clip.high"] : ["algorithm.clip.high"],
    conversion: low
      ? "`algorithm.clip.low`, and `clip.high` unless `epsilon_high` is given; loss cispo: no lower bound (clip.low 1)"
      : "`algorithm.clip.high`; loss cispo: the cap − 1 (TRL's cispo bound is absolute)",
    write: (v, ctx) =>
      low
        ? {
          "algorithm.clip.low": v,
          ...(ctx.sibling("epsilon_high") === undefined ? { "algorithm.clip.high": v } : {}),
        }
        : { "algorithm.clip.high": v },
    resolve: (ctx) => {
      const k = ctx as KeyedContext;
      // The low bound's fix never refuses, so both checks run for epsilon.
      if (low) return cispoBounds(k, "low") ?? cispoBounds(k, "high");
      return cispoBounds(k, "high");
    },
  };
}

function betaIndex(key: "adam_beta1" | "adam_beta2"): Alias {
  const i = key === "adam_beta1" ? 0 : 1;
  return {
    framework: T,
    key,
    targets: ["optimizer.betas"],
    conversion: `\`optimizer.betas[${i}]\``,
    resolve: (ctx) => {
      const betas = ctx.get("optimizer.betas");
      if (!Array.isArray(betas) || betas.length !== 2) return undefined;
      const next = [...betas];
      next[i] = ctx.value;
      ctx.set("optimizer.betas", next);
      return undefined;
    },
  };
}

/**
 * The accepted veRL and TRL keys, in the order of the README's table (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { ALIASES } from "./aliases.ts";
 * import assert from "node:assert/strict";
 * const n = ALIASES.find((a) => a.key === "actor_rollout_ref.rollout.n")!;
 * assert.deepEqual(n.targets, ["rollout.groupSize"]);
 * assert.ok(ALIASES.filter((a) => a.framework === "veRL").length >= 20);
 * ```
 */
export const ALIASES: readonly Alias[] = Object.freeze(
  [
    // ---- veRL: data and rollout
    perPrompt("data.train_batch_size", "rollout.batchSize", 1),
    same(V, `${ROLLOUT}.n`, "rollout.groupSize", "same (responses per prompt)"),
    same(V, "data.max_response_length", "rollout.maxNewTokens", "same (tokens)"),
    same(V, `${ROLLOUT}.response_length`, "rollout.maxNewTokens", "same (tokens)"),
    refused(
      V,
      "data.max_prompt_length",
      "prompts are not truncated or filtered by length here",
      "drop it",
    ),
    {
      framework: V,
      key: "data.train_files",
      targets: ["task.data.path", "task.data.format"],
      conversion: "one .parquet / .jsonl file, as `--data` (several files are refused)",
      write: (v) => {
        const file = Array.isArray(v) && v.length === 1 ? v[0] : v;
        if (typeof file !== "string") {
          return "has no equivalent here: one dataset file is read; merge the files or pass one with --data";
        }
        const lower = file.toLowerCase();
        const format = lower.endsWith(".parquet")
          ? "parquet"
          : lower.endsWith(".jsonl") || lower.endsWith(".ndjson")
          ? "jsonl"
          : null;
        if (format === null) return "is not a .parquet, .jsonl or .ndjson file; convert it to one";
        return { "task.data.path": file, "task.data.format": format };
      },
    },
    same(V, "data.prompt_key", "task.data.promptField", "same (field name)"),
    same(V, "data.seed", "trainer.seed", "same (one seed drives everything here)"),
    same(V, `${ROLLOUT}.temperature`, "rollout.sampler.temperature"),
    same(V, `${ROLLOUT}.top_p`, "rollout.sampler.topP"),
    same(V, `${ROLLOUT}.top_k`, "rollout.sampler.topK", "same (-1 or 0: off)"),
    same(
      V,
      "actor_rollout_ref.model.path",
      "model.checkpoint",
      "same (a local HF checkpoint folder)",
    ),
    same(
      V,
      "actor_rollout_ref.model.enable_gradient_checkpointing",
      "trainer.activationCheckpointing",
      "same (the policy's decoder layers)",
    ),
    same(
      V,
      `${ACTOR}.freeze_vision_tower`,
      "model.freezeVisionTower",
      "same (a vision-language checkpoint's tower)",
    ),
    // ---- veRL: the actor's loss
    {
      framework: V,
      key: `${ACTOR}.clip_ratio`,
      targets: ["algorithm.clip.low", "algorithm.clip.high"],
      conversion:
        "both bounds, except one `clip_ratio_low`/`_high` gives in the same layer (veRL itself uses clip_ratio only where those are null)",
      write: (v, ctx) => ({
        ...(ctx.sibling(`${ACTOR}.clip_ratio_low`) === undefined
          ? { "algorithm.clip.low": v }
          : {}),
        ...(ctx.sibling(`${ACTOR}.clip_ratio_high`) === undefined
          ? { "algorithm.clip.high": v }
          : {}),
      }),
    },
    same(V, `${ACTOR}.clip_ratio_low`, "algorithm.clip.low"),
    same(V, `${ACTOR}.clip_ratio_high`, "algorithm.clip.high"),
    same(V, `${ACTOR}.clip_ratio_c`, "algorithm.clip.dual", "same (dual-clip constant, > 1)"),
    same(V, `${ACTOR}.loss_agg_mode`, "algorithm.aggregation", "same names"),
    same(V, `${ACTOR}.loss_scale_factor`, "algorithm.lossOptions.lossScaleFactor"),
    same(V, `${ACTOR}.policy_loss.loss_mode`, "algorithm.loss", "same names"),
    klFlag(`${ACTOR}.use_kl_loss`, "loss"),
    klSetting(`${ACTOR}.kl_loss_coef`, "algorithm.kl.beta", "loss"),
    klSetting(`${ACTOR}.kl_loss_type`, "algorithm.kl.estimator", "loss"),
    same(V, `${ACTOR}.entropy_coeff`, "algorithm.entropyCoef"),
    same(V, `${ACTOR}.ppo_epochs`, "algorithm.ppoEpochs"),
    perPrompt(`${ACTOR}.ppo_mini_batch_size`, "algorithm.ppoMiniBatchSize", 3),
    same(
      V,
      `${ACTOR}.ppo_micro_batch_size_per_gpu`,
      "algorithm.microBatchSize",
      "same (responses; one device)",
    ),
    same(
      V,
      `${ACTOR}.ppo_micro_batch_size`,
      "algorithm.microBatchSize",
      "same (responses; one device)",
    ),
    same(V, `${ACTOR}.shuffle`, "algorithm.shuffleMiniBatches"),
    same(V, `${ACTOR}.grad_clip`, "optimizer.gradClip"),
    // ---- veRL: the actor's optimizer
    same(V, `${OPTIM}.lr`, "optimizer.lr"),
    same(V, `${OPTIM}.weight_decay`, "optimizer.weightDecay"),
    same(V, `${OPTIM}.betas`, "optimizer.betas"),
    same(V, `${OPTIM}.clip_grad`, "optimizer.gradClip"),
    {
      framework: V,
      key: `${OPTIM}.lr_warmup_steps`,
      targets: ["optimizer.warmupSteps"],
      conversion: "same (steps); negative defers to `lr_warmup_steps_ratio` (default 0)",
      write: (v, ctx) => {
        if (typeof v === "number" && v < 0) {
          if (ctx.sibling(`${OPTIM}.lr_warmup_steps_ratio`) !== undefined) return {};
          ctx.note("negative: veRL's lr_warmup_steps_ratio (default 0) decides");
          return { "optimizer.warmupSteps": 0 };
        }
        return { "optimizer.warmupSteps": v };
      },
    },
    {
      framework: V,
      key: `${OPTIM}.lr_warmup_steps_ratio`,
      targets: ["optimizer.warmupSteps"],
      conversion: "⌊ratio × `trainer.steps`⌋, unless `lr_warmup_steps` >= 0 is given",
      write: (v, ctx) => {
        const steps = ctx.sibling(`${OPTIM}.lr_warmup_steps`);
        if (typeof steps === "number" && steps >= 0) {
          ctx.note("unused, as in veRL: lr_warmup_steps is given");
          return {};
        }
        if (typeof v !== "number" || v < 0 || v > 1) return "is not a ratio in [0, 1]";
        return { "optimizer.warmupSteps": v };
      },
      stage: 5,
      resolve: (ctx) => {
        const steps = ctx.get("trainer.steps");
        if (!ctx.survived("optimizer.warmupSteps") || !posInt(steps)) return undefined;
        const n = Math.floor((ctx.value as number) * steps);
        ctx.set("optimizer.warmupSteps", n);
        ctx.note(`⌊${ctx.value} × trainer.steps ${steps}⌋`);
        return undefined;
      },
    },
    choice(V, `${OPTIM}.lr_scheduler_type`, "optimizer.schedule", {
      constant: "constant",
      cosine: "cosine",
    }, "same (constant, cosine)"),
    choice(V, `${OPTIM}.warmup_style`, "optimizer.schedule", {
      constant: "constant",
      cosine: "cosine",
    }, "same (constant, cosine; veRL's older name)"),
    {
      framework: V,
      key: `${OPTIM}.min_lr_ratio`,
      targets: [],
      conversion: "0 only (the schedules here decay to 0); others refused",
      write: (v, ctx) => {
        if (v === 0 || v === null) {
          ctx.note("the schedules here decay to 0");
          return {};
        }
        return "has no equivalent here: the cosine and linear schedules decay to 0; drop it";
      },
    },
    // ---- veRL: algorithm
    choice(V, "algorithm.adv_estimator", "algorithm.estimator", {
      gae: "gae",
      grpo: "grpo",
      grpo_vectorized: "grpo_vectorized",
      rloo: "rloo",
      rloo_vectorized: "rloo_vectorized",
      reinforce_plus_plus: "reinforce_plus_plus",
      reinforce_plus_plus_baseline: "reinforce_plus_plus_baseline",
      remax: "remax",
      opo: "opo",
      gpg: "gpg",
      grpo_passk: "grpo_passk",
      gigpo: "gigpo",
    }, "same names (`*_vectorized` are grpo, rloo)"),
    {
      framework: V,
      key: "algorithm.norm_adv_by_std_in_grpo",
      targets: ["algorithm.estimatorOptions.normByStd"],
      conversion: "same (grpo, grpo_passk)",
      write: (v) =>
        typeof v === "boolean"
          ? { "algorithm.estimatorOptions.normByStd": v }
          : "is not a boolean; use true or false",
    },
    discount("algorithm.gamma"),
    discount("algorithm.lam"),
    {
      framework: V,
      key: "algorithm.rollout_correction.bypass_mode",
      targets: ["algorithm.oldLogProbs"],
      conversion: "true: rollout (π_old is the sampler's log-probs); false: recompute",
      write: (v) =>
        typeof v === "boolean"
          ? { "algorithm.oldLogProbs": v ? "rollout" : "recompute" }
          : "is not a boolean; use true or false",
    },
    klFlag("algorithm.use_kl_in_reward", "reward"),
    klSetting("algorithm.kl_ctrl.kl_coef", "algorithm.kl.beta", "reward"),
    klSetting("algorithm.kl_penalty", "algorithm.kl.estimator", "reward"),
    {
      framework: V,
      key: "algorithm.kl_ctrl.type",
      targets: ["algorithm.kl.target"],
      conversion: "fixed: `kl.target` null; adaptive: `kl.target` = `target_kl` (veRL default 0.1)",
      write: (v, ctx) => {
        if (v === "fixed") return { "algorithm.kl.target": null };
        if (v === "adaptive") {
          const target = ctx.sibling("algorithm.kl_ctrl.target_kl");
          if (target === undefined) ctx.note("target_kl not given: veRL's default 0.1");
          return { "algorithm.kl.target": target ?? 0.1 };
        }
        return "has no equivalent here; use fixed or adaptive";
      },
    },
    {
      framework: V,
      key: "algorithm.kl_ctrl.target_kl",
      targets: ["algorithm.kl.target"],
      conversion: "`algorithm.kl.target`, with `kl_ctrl.type=adaptive` in the same layer",
      write: (_v, ctx) => {
        const type = ctx.sibling("algorithm.kl_ctrl.type");
        if (type === "adaptive") return {}; // kl_ctrl.type writes it
        if (type === "fixed") {
          ctx.note("unused, as in veRL: kl_ctrl.type is fixed");
          return {};
        }
        return "is read by veRL only with algorithm.kl_ctrl.type=adaptive; add that (or set algorithm.kl.target)";
      },
    },
    same(V, "algorithm.kl_ctrl.horizon", "algorithm.kl.horizon", "same (samples)"),
    same(V, "algorithm.filter_groups.enable", "rollout.dynamicSampling.enabled"),
    {
      framework: V,
      key: "algorithm.filter_groups.max_num_gen_batches",
      targets: ["rollout.dynamicSampling.maxRetries"],
      conversion:
        "value − 1 (retries after the first round); <= 0 (unlimited) refused; when they run out the step trains on what it has (veRL stops)",
      write: (v) =>
        posInt(v)
          ? { "rollout.dynamicSampling.maxRetries": v - 1 }
          : "has no equivalent here: the sampling rounds of a step are bounded; give a positive number",
    },
    {
      framework: V,
      key: "algorithm.filter_groups.metric",
      targets: [],
      conversion:
        "score, seq_reward, seq_final_reward: the total reward, which is what is filtered here; acc refused",
      write: (v, ctx) => {
        if (v === "score" || v === "seq_reward" || v === "seq_final_reward") {
          ctx.note("groups are filtered on their total reward here");
          return {};
        }
        return "has no equivalent here: dynamic sampling drops groups whose total reward is equal; use metric score (the same here), or drop it";
      },
    },
    perPrompt("algorithm.ppo_mini_batch_size", "algorithm.ppoMiniBatchSize", 3),
    same(V, "algorithm.ppo_epochs", "algorithm.ppoEpochs", "same (short form)"),
    // ---- veRL: trainer and rewards
    same(V, "trainer.total_training_steps", "trainer.steps", "same (rollout steps)"),
    refused(
      V,
      "trainer.total_epochs",
      "runs are counted in steps, not passes over a dataset",
      "set trainer.total_training_steps (or trainer.steps)",
    ),
    frequency("trainer.test_freq", "trainer.evalEvery"),
    frequency("trainer.save_freq", "trainer.saveEvery"),
    same(V, "reward_model.overlong_buffer.enable", "algorithm.overlong.enabled"),
    same(V, "reward_model.overlong_buffer.len", "algorithm.overlong.buffer", "same (tokens)"),
    same(V, "reward_model.overlong_buffer.penalty_factor", "algorithm.overlong.penalty"),
    refused(
      V,
      "custom_reward_function.path",
      "a Python reward function cannot run here",
      "write it in TypeScript and pass --reward ./my_reward.ts#name",
    ),
    refused(
      V,
      "custom_reward_function.name",
      "a Python reward function cannot run here",
      "write it in TypeScript and pass --reward ./my_reward.ts#name",
    ),
    // ---- TRL GRPOConfig / TrainingArguments
    same(T, "num_generations", "rollout.groupSize", "same (completions per prompt)"),
    {
      framework: T,
      key: "generation_batch_size",
      targets: ["rollout.batchSize"],
      conversion: "same (completions per generation)",
      write: (v, ctx) =>
        ctx.sibling("steps_per_generation") !== undefined
          ? "is set together with steps_per_generation, which TRL refuses too; give one"
          : { "rollout.batchSize": v },
    },
    {
      framework: T,
      key: "per_device_train_batch_size",
      targets: ["algorithm.ppoMiniBatchSize", "rollout.batchSize"],
      conversion:
        "`ppoMiniBatchSize` (completions per optimizer step: one device, no accumulation) and `rollout.batchSize` (× `steps_per_generation`) unless `generation_batch_size` is given",
      write: (v, ctx) => ({
        "algorithm.ppoMiniBatchSize": v,
        ...(ctx.sibling("generation_batch_size") === undefined ? { "rollout.batchSize": v } : {}),
      }),
      stage: 2,
      resolve: (ctx) => {
        const spg = ctx.sibling("steps_per_generation");
        if (!ctx.survived("rollout.batchSize") || !posInt(ctx.value) || !posInt(spg)) {
          return undefined;
        }
        ctx.set("rollout.batchSize", ctx.value * spg);
        ctx.note(`generation batch ${ctx.value} × steps_per_generation ${spg}`);
        return undefined;
      },
    },
    {
      framework: T,
      key: "steps_per_generation",
      targets: ["rollout.batchSize", "algorithm.ppoMiniBatchSize"],
      conversion:
        "optimizer steps per generation: `rollout.batchSize` = value × `per_device_train_batch_size` if that set the batch, else `ppoMiniBatchSize` = `rollout.batchSize` ÷ value",
      stage: 3,
      resolve: (ctx) => {
        const spg = ctx.value;
        if (!posInt(spg)) return "is not a whole number >= 1";
        const batch = ctx.get("rollout.batchSize");
        if (!posInt(batch)) return undefined;
        if (ctx.origin("rollout.batchSize") === "per_device_train_batch_size") {
          ctx.note("the generation batch is per_device_train_batch_size × steps_per_generation");
          return undefined;
        }
        if (batch % spg !== 0) {
          return `does not divide rollout.batchSize ${batch} into mini-batches; use a divisor of ${batch} or set algorithm.ppoMiniBatchSize`;
        }
        ctx.set("algorithm.ppoMiniBatchSize", batch / spg);
        ctx.note(`rollout.batchSize ${batch} ÷ ${spg}`);
        return undefined;
      },
    },
    {
      framework: T,
      key: "gradient_accumulation_steps",
      targets: [],
      conversion:
        "1 only: a mini-batch is one optimizer step here, split for memory by `algorithm.microBatchSize`",
      write: (v, ctx) => {
        if (v === 1) {
          ctx.note("one optimizer step per mini-batch, as here");
          return {};
        }
        return "has no equivalent here: a mini-batch is one optimizer step, and algorithm.microBatchSize splits it for memory; set algorithm.ppoMiniBatchSize to per_device_train_batch_size × gradient_accumulation_steps instead";
      },
    },
    same(T, "num_iterations", "algorithm.ppoEpochs"),
    optimizerSteps("max_steps", "trainer.steps", false),
    optimizerSteps("save_steps", "trainer.saveEvery", true),
    optimizerSteps("eval_steps", "trainer.evalEvery", true),
    optimizerSteps("warmup_steps", "optimizer.warmupSteps", true),
    {
      framework: T,
      key: "warmup_ratio",
      targets: ["optimizer.warmupSteps"],
      conversion: "⌈ratio × `trainer.steps`⌉",
      write: (v) =>
        typeof v === "number" && v >= 0 && v <= 1
          ? { "optimizer.warmupSteps": v }
          : "is not a ratio in [0, 1]",
      stage: 5,
      resolve: (ctx) => {
        const steps = ctx.get("trainer.steps");
        if (!ctx.survived("optimizer.warmupSteps") || !posInt(steps)) return undefined;
        ctx.set("optimizer.warmupSteps", Math.ceil((ctx.value as number) * steps));
        ctx.note(`⌈${ctx.value} × trainer.steps ${steps}⌉`);
        return undefined;
      },
    },
    refused(
      T,
      "num_train_epochs",
      "runs are counted in steps, not passes over a dataset",
      "set max_steps (or trainer.steps)",
    ),
    same(T, "learning_rate", "optimizer.lr"),
    same(T, "weight_decay", "optimizer.weightDecay"),
    {
      framework: T,
      key: "max_grad_norm",
      targets: ["optimizer.gradClip"],
      conversion: "same; 0 or null (off) is null",
      write: (v) => ({ "optimizer.gradClip": v === 0 || v === null ? null : v }),
    },
    betaIndex("adam_beta1"),
    betaIndex("adam_beta2"),
    choice(T, "lr_scheduler_type", "optimizer.schedule", {
      linear: "linear",
      cosine: "cosine",
      constant: "constant",
      constant_with_warmup: "constant",
    }, "same; constant_with_warmup is constant (which warms up here)"),
    same(T, "seed", "trainer.seed"),
    same(
      T,
      "gradient_checkpointing",
      "trainer.activationCheckpointing",
      "same (the policy's decoder layers)",
    ),
    same(T, "max_completion_length", "rollout.maxNewTokens", "same (tokens)"),
    same(T, "temperature", "rollout.sampler.temperature"),
    same(T, "top_p", "rollout.sampler.topP"),
    {
      framework: T,
      key: "top_k",
      targets: ["rollout.sampler.topK"],
      conversion: "same; 0 or null (off) is 0",
      write: (v) => ({ "rollout.sampler.topK": v ?? 0 }),
    },
    {
      framework: T,
      key: "min_p",
      targets: ["rollout.sampler.minP"],
      conversion: "same; null (off) is 0",
      write: (v) => ({ "rollout.sampler.minP": v ?? 0 }),
    },
    {
      framework: T,
      key: "beta",
      targets: ["algorithm.kl.beta", "algorithm.kl.placement", "algorithm.kl.estimator"],
      conversion: "`algorithm.kl.beta`, in the loss, estimator k3 (TRL's KL)",
      write: (v) => ({
        "algorithm.kl.beta": v,
        "algorithm.kl.placement": "loss",
        "algorithm.kl.estimator": "k3",
      }),
    },
    trlEpsilon("epsilon"),
    trlEpsilon("epsilon_high"),
    same(
      T,
      "delta",
      "algorithm.clip.dual",
      "same (INTELLECT-2 two-sided clip = dual clip; null: off)",
    ),
    {
      framework: T,
      key: "loss_type",
      targets: ["algorithm.loss", "algorithm.aggregation"],
      conversion:
        "grpo: vanilla + seq-mean-token-mean; bnpo, dapo: vanilla + token-mean; dr_grpo: vanilla + seq-mean-token-sum-norm (÷ `maxNewTokens`); cispo: cispo + token-mean; sapo: sapo + seq-mean-token-mean; luspo, vespo refused",
      write: (v, ctx) => {
        const name = String(v);
        const pair = Object.hasOwn(TRL_LOSS_TYPES, name) ? TRL_LOSS_TYPES[name] : undefined;
        if (pair === undefined) {
          return `has no equivalent here${
            name === "luspo" || name === "vespo" ? ` (no ${name} loss)` : ""
          }; use one of ${Object.keys(TRL_LOSS_TYPES).join(", ")}, or set algorithm.loss`;
        }
        let loss = pair[0];
        const aggregation = pair[1];
        if (name === "bnpo") {
          ctx.note(
            "tokens counted per optimizer step, not per micro-batch (equal when microBatchSize = the mini-batch)",
          );
        }
        if (ctx.sibling("importance_sampling_level") === "sequence") {
          if (loss !== "vanilla") {
            return `has no equivalent here with importance_sampling_level=sequence (no sequence-level ${loss}); use loss_type grpo for GSPO`;
          }
          // TRL broadcasts the sequence ratio to every token and aggregates by loss_type:
          // veRL's token form (gspo_token), whose aggregation is not forced as gspo's is.
          loss = "gspo_token";
        }
        return { "algorithm.loss": loss, "algorithm.aggregation": aggregation };
      },
      resolve: (ctx) => {
        if (ctx.value === "cispo" && ctx.survived("algorithm.loss")) {
          ctx.set("algorithm.clip.low", 1);
          ctx.note("TRL's cispo has no lower bound: clip.low 1");
        }
        return undefined;
      },
    },
    {
      framework: T,
      key: "importance_sampling_level",
      targets: ["algorithm.loss"],
      conversion:
        "sequence: loss gspo_token (GSPO, TRL's aggregation); token: the ratio of every other loss",
      write: (v, ctx) => {
        if (v === "token") {
          ctx.note("token-level ratios, as every loss here but gspo");
          return {};
        }
        if (v !== "sequence") return "has no equivalent here; use token or sequence";
        if (ctx.sibling("loss_type") === undefined) return { "algorithm.loss": "gspo_token" };
        ctx.note("loss_type chooses the loss: gspo_token for grpo, bnpo, dr_grpo, dapo");
        return {};
      },
      resolve: (ctx) => {
        if (ctx.value !== "token" || ctx.later("algorithm.loss")) return undefined;
        const loss = ctx.get("algorithm.loss");
        return loss === "gspo" || loss === "gspo_token" || loss === "gspo_seq"
          ? `contradicts algorithm.loss ${loss} (sequence-level ratios); set loss_type or algorithm.loss=vanilla for token-level ratios`
          : undefined;
      },
    },
    same(T, "sapo_temperature_pos", "algorithm.lossOptions.tauPos", "same (loss sapo)"),
    same(T, "sapo_temperature_neg", "algorithm.lossOptions.tauNeg", "same (loss sapo)"),
    {
      framework: T,
      key: "scale_rewards",
      targets: ["algorithm.estimator", "algorithm.estimatorOptions"],
      conversion:
        "group / true: grpo, ε 1e-4; batch: grpo_batch_std; none / false: grpo without the std division",
      write: (v) => {
        if (v === "group" || v === true) {
          return {
            "algorithm.estimator": "grpo",
            "algorithm.estimatorOptions.epsilon": 1e-4,
            "algorithm.estimatorOptions.normByStd": true,
          };
        }
        if (v === "batch") return { "algorithm.estimator": "grpo_batch_std" };
        if (v === "none" || v === false) {
          return { "algorithm.estimator": "grpo", "algorithm.estimatorOptions.normByStd": false };
        }
        return "has no equivalent here; use group, batch or none";
      },
    },
    {
      framework: T,
      key: "mask_truncated_completions",
      targets: [],
      conversion:
        "false only (truncated completions stay in the loss here); true refused (DAPO's overlong shaping is the nearest)",
      write: (v, ctx) => {
        if (v === false) {
          ctx.note("truncated completions stay in the loss, as here");
          return {};
        }
        return "has no equivalent here: truncated completions are not masked out of the loss; drop it, or penalise them with DAPO's overlong shaping (algorithm.overlong.enabled=true)";
      },
    },
  ] satisfies Alias[],
);

const BY_KEY: ReadonlyMap<string, Alias> = new Map(ALIASES.map((a) => [a.key, a]));

/**
 * The alias of a dotted key, if it is one.
 *
 * @example Usage
 * ```ts
 * import { aliasOf } from "./aliases.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(aliasOf("trainer.total_training_steps")?.targets, ["trainer.steps"]);
 * assert.equal(aliasOf("trainer.steps"), undefined);
 * ```
 */
export function aliasOf(key: string): Alias | undefined {
  return BY_KEY.get(key);
}

function getPath(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const part of path) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

function setPath(obj: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let cur = obj;
  for (const part of path.slice(0, -1)) {
    if (!isPlainObject(cur[part])) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[path.at(-1)!] = value;
}

/** Deletes `path` and the mappings it leaves empty. */
function deletePath(obj: Record<string, unknown>, path: readonly string[]): void {
  const parent = getPath(obj, path.slice(0, -1));
  if (!isPlainObject(parent)) return;
  delete parent[path.at(-1)!];
  if (path.length > 1 && Object.keys(parent).length === 0) deletePath(obj, path.slice(0, -1));
}

function leaves(value: unknown, prefix: string, out: [string, unknown][]): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(v, `${prefix}.${k}`, out);
  } else out.push([prefix, value]);
}

/** One alias found in a layer. */
export interface AliasOccurrence {
  /** The alias. */
  alias: Alias;
  /** Its value as given. */
  value: unknown;
  /** The index of its layer. */
  layer: number;
  /** The layer's source. */
  source: string;
  /** The merged value of every alias key given by some layer (see `sibling`). */
  siblings: ReadonlyMap<string, unknown>;
  /** Our keys it wrote in its layer → the value written. */
  writes: Map<string, unknown>;
  /** Our keys it set after the merge. */
  sets: Set<string>;
  /** Details for the notice. */
  notes: string[];
}

/** What {@link aliasLayers} returns. */
export interface AliasedLayers {
  /** The layers with every alias translated to our keys. */
  layers: Layer[];
  /** The aliases found, in layer order. */
  occurrences: AliasOccurrence[];
  /** Refused aliases, an alias set beside its own key, leftover veRL keys. */
  problems: ConfigProblem[];
}

/**
 * Translates the aliases of every layer to our keys within the layer (see the module doc);
 * the conversions that need the merged config follow in {@link resolveAliases}.
 *
 * @example Usage
 * ```ts
 * import { aliasLayers } from "./aliases.ts";
 * import assert from "node:assert/strict";
 * const r = aliasLayers([{ source: "--set actor_rollout_ref.rollout.n=4", data: { actor_rollout_ref: { rollout: { n: 4 } } } }]);
 * assert.deepEqual(r.layers[0]!.data, { rollout: { groupSize: 4 } });
 * assert.deepEqual(r.problems, []);
 * const bad = aliasLayers([{ source: "--set num_train_epochs=3", data: { num_train_epochs: 3 } }]);
 * assert.match(bad.problems[0]!.message, /^3 has no equivalent here/);
 * ```
 */
export function aliasLayers(layers: readonly Layer[]): AliasedLayers {
  const problems: ConfigProblem[] = [];
  const occurrences: AliasOccurrence[] = [];
  const found = layers.map((layer) =>
    ALIASES.filter((a) => getPath(layer.data, a.key.split(".")) !== undefined)
  );
  // The merged value of every alias key (the last layer giving it wins), read by `sibling`.
  const siblings = new Map<string, unknown>();
  layers.forEach((layer, i) => {
    for (const alias of found[i]!) {
      siblings.set(alias.key, getPath(layer.data, alias.key.split(".")));
    }
  });
  const out = layers.map((layer, index): Layer => {
    const hasVerl = VERL_SECTIONS.some((s) => Object.hasOwn(layer.data, s));
    if (found[index]!.length === 0 && !hasVerl) return layer;
    const data = structuredClone(layer.data);
    const own = new Map<string, unknown>();
    for (const alias of found[index]!) {
      own.set(alias.key, getPath(data, alias.key.split(".")));
      deletePath(data, alias.key.split("."));
    }
    const problem = (path: string, message: string) =>
      problems.push({ path, message, source: layer.source });
    const writers = new Map<string, AliasOccurrence>();
    const writes: [string, unknown][] = [];
    for (const alias of found[index]!) {
      const value = own.get(alias.key);
      const occ: AliasOccurrence = {
        alias,
        value,
        layer: index,
        source: layer.source,
        siblings,
        writes: new Map(),
        sets: new Set(),
        notes: [],
      };
      const ctx: AliasWriteContext = {
        sibling: (key) => key === alias.key ? undefined : siblings.get(key),
        note: (text) => occ.notes.push(text),
      };
      const result = alias.write === undefined ? {} : alias.write(value, ctx);
      if (typeof result === "string") {
        problem(alias.key, `${showValue(value)} ${result}`);
        continue;
      }
      for (const [path, v] of Object.entries(result)) {
        if (getPath(data, path.split(".")) !== undefined) {
          problem(alias.key, `set together with ${path}, its name here; keep one of them`);
          continue;
        }
        const other = writers.get(path);
        if (
          other !== undefined &&
          JSON.stringify(writes.find(([p]) => p === path)?.[1]) !== JSON.stringify(v)
        ) {
          problem(
            alias.key,
            `and ${other.alias.key} in the same layer both set ${path}, to different values; keep one of them`,
          );
          continue;
        }
        writers.set(path, occ);
        writes.push([path, v]);
        occ.writes.set(path, v);
      }
      occurrences.push(occ);
    }
    for (const [path, v] of writes) setPath(data, path.split("."), structuredClone(v));
    for (const section of VERL_SECTIONS) {
      if (!Object.hasOwn(data, section)) continue;
      const rest: [string, unknown][] = [];
      leaves(data[section], section, rest);
      for (const [path, v] of rest.slice(0, 10)) {
        problem(
          path,
          `${
            showValue(v)
          }: a veRL key with no equivalent here; drop it (the veRL and TRL keys read here are listed in apps/train/README.md#config)`,
        );
      }
      if (rest.length > 10) {
        problem(
          section,
          `and ${rest.length - 10} more veRL keys with no equivalent here; drop them`,
        );
      }
      delete data[section];
    }
    return { source: layer.source, data };
  });
  return { layers: out, occurrences, problems };
}

/** What {@link resolveAliases} returns. */
export interface ResolvedAliases {
  /** Refusals found once the merged values are known. */
  problems: ConfigProblem[];
  /** One line per alias: `note: <key>=<value> (<framework>) is <our key>=<value> (<details>)`. */
  notices: string[];
}

function shown(value: unknown): string {
  return typeof value === "string" && /^[\w.+:/@-]+$/.test(value) ? value : showValue(value);
}

function forget(provenance: Provenance, path: string): void {
  for (const key of [...provenance.keys()]) {
    if (key === path || key.startsWith(`${path}.`)) provenance.delete(key);
  }
}

/**
 * Finishes the conversions that depend on other keys, on the merged config of the layers that
 * {@link aliasLayers} returned (in place, with the provenance), and builds the notices.
 *
 * @example Usage
 * ```ts
 * import { aliasLayers, resolveAliases } from "./aliases.ts";
 * import { mergeLayers } from "./merge.ts";
 * import assert from "node:assert/strict";
 * const aliased = aliasLayers([
 *   { source: "defaults", data: { rollout: { batchSize: 64, groupSize: 8 } } },
 *   { source: "--set data.train_batch_size=4", data: { data: { train_batch_size: 4 } } },
 * ]);
 * const { value, provenance } = mergeLayers(aliased.layers);
 * const { notices } = resolveAliases(value, provenance, aliased);
 * assert.deepEqual(value, { rollout: { batchSize: 32, groupSize: 8 } });
 * assert.deepEqual(notices, [
 *   "note: data.train_batch_size=4 (veRL) is rollout.batchSize=32 (4 prompts × rollout.groupSize 8)",
 * ]);
 * ```
 */
export function resolveAliases(
  raw: Record<string, unknown>,
  provenance: Provenance,
  aliased: AliasedLayers,
): ResolvedAliases {
  const index = new Map<string, number>();
  aliased.layers.forEach((l, i) => index.set(l.source, i));
  const indexOf = (source: string | undefined) =>
    source === undefined ? -1 : index.get(source) ?? -1;
  const layerOf = (path: string): number => indexOf(sourceOf(provenance, path));
  // Whether a layer after `layer` set `path` itself, or replaced a mapping above it by a value
  // (a parent's provenance alone says only who made the mapping: a later estimator resets
  // estimatorOptions, but that does not set a veRL γ given before it).
  const setAfter = (path: string, layer: number): boolean => {
    const own = provenance.get(path);
    if (own !== undefined) return indexOf(own) > layer;
    const parts = path.split(".");
    for (let n = parts.length - 1; n > 0; n--) {
      const prefix = parts.slice(0, n).join(".");
      const value = getPath(raw, prefix.split("."));
      if (value !== undefined && !isPlainObject(value)) {
        return indexOf(provenance.get(prefix)) > layer;
      }
    }
    return false;
  };
  const problems: ConfigProblem[] = [];
  const order = aliased.occurrences
    .map((occ, i) => ({ occ, i }))
    .sort((a, b) => (a.occ.alias.stage ?? 0) - (b.occ.alias.stage ?? 0) || a.i - b.i)
    .map(({ occ }) => occ);
  for (const occ of order) {
    const resolve = occ.alias.resolve;
    if (resolve === undefined) continue;
    const survived = (path: string) => occ.writes.has(path) && layerOf(path) === occ.layer;
    const ctx: KeyedContext = {
      key: occ.alias.key,
      value: occ.value,
      sibling: (key) => key === occ.alias.key ? undefined : occ.siblings.get(key),
      note: (text) => occ.notes.push(text),
      get: (path) => getPath(raw, path.split(".")),
      survived,
      origin: (path) =>
        aliased.occurrences.find((o) => o.writes.has(path) && o.layer === layerOf(path))?.alias
          .key,
      later: (path) => setAfter(path, occ.layer),
      set: (path, value) => {
        occ.sets.add(path);
        if (setAfter(path, occ.layer)) return;
        setPath(raw, path.split("."), structuredClone(value));
        forget(provenance, path);
        provenance.set(path, occ.source);
        occ.sets.add(path);
      },
    };
    const refusal = resolve(ctx);
    if (refusal !== undefined) {
      problems.push({
        path: occ.alias.key,
        message: `${showValue(occ.value)} ${refusal}`,
        source: occ.source,
      });
    }
  }
  const notices: string[] = [];
  for (const occ of aliased.occurrences) {
    const { alias, source } = occ;
    const paths = [...new Set([...occ.writes.keys(), ...occ.sets])];
    const parts = paths.map((path) =>
      layerOf(path) === occ.layer
        ? `${path}=${shown(getPath(raw, path.split(".")))}`
        : `${path} (overridden by ${sourceOf(provenance, path)})`
    );
    const details = occ.notes.length > 0 ? occ.notes.join("; ") : "";
    const from = source.startsWith("--set ") ? alias.framework : `${alias.framework}, ${source}`;
    const head = `note: ${alias.key}=${shown(occ.value)} (${from})`;
    if (parts.length > 0) {
      notices.push(`${head} is ${parts.join(", ")}${details === "" ? "" : ` (${details})`}`);
    } else if (details !== "") {
      notices.push(`${head}: ${details}`);
    }
    // The provenance of the keys it set names it, with the conversion.
    for (const path of paths) {
      if (layerOf(path) !== occ.layer) continue;
      const named = source.includes(alias.key)
        ? source
        : `${source}, as ${alias.framework} ${alias.key}`;
      provenance.set(path, details === "" ? named : `${named} (${details})`);
    }
  }
  return { problems, notices };
}

/**
 * The alias table as Markdown (`| framework | key | here | conversion |`), as in
 * `apps/train/README.md#config`.
 *
 * @example Usage
 * ```ts
 * import { aliasTable } from "./aliases.ts";
 * import assert from "node:assert/strict";
 * assert.match(aliasTable(), /\| veRL +\| `data\.train_batch_size` +\| `rollout\.batchSize` +\| prompts ×/);
 * ```
 */
export function aliasTable(): string {
  const rows = ALIASES.map((a) => [
    a.framework,
    `\`${a.key}\``,
    a.targets.length === 0 ? "—" : a.targets.map((t) => `\`${t}\``).join(", "),
    a.conversion === "" ? "same" : a.conversion,
  ]);
  const head = ["from", "key", "here", "conversion"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)]
    .join("\n");
}
