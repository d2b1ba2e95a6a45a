/**
 * Loading a config: defaults, then a recipe (after the recipes it `extends:`), then `--set`
 * overrides and flag shortcuts (`--model`, `--data`, `--device`, `--seed`, `--steps`, `--out`),
 * with veRL/TRL keys translated in every layer (`aliases.ts`), then `--reward` flags appended to
 * the `rewards` list, validated; or, with `--resume <runDir>`, the run's own `config.yaml` with
 * only `trainer.steps`, `trainer.device`, `trainer.blas` and `trainer.activationCheckpointing`
 * allowed to change.
 *
 * Design decisions: the whole load is small file reads plus validation, so a bad config fails
 * in milliseconds, before any model, dataset or device is touched; a recipe named without
 * a path (`dapo`) is looked up in `apps/train/recipes/`, and an `extends:` path is relative to
 * the recipe that contains it; paths *inside* a config (`model.checkpoint`, `task.data.path`)
 * are relative to the working directory, where the run is started. When this package is
 * imported by URL (`https:`), {@link RECIPES_DIR} is a URL: recipes are then read with `fetch`
 * (a name resolves to `<name>.yaml` there, unchecked until read) and cannot be listed.
 *
 * `--resume` first asks whether another process holds the run (its `run.lock`, see
 * `run/run_lock.ts`): a second `--resume` of a running run is a usage error (exit 2) that names
 * the holder's PID, found before anything is read or truncated. The training run takes the lock
 * itself when it opens the directory, so this check only makes the common case fail early.
 *
 * @module
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import YAML from "yaml";
import { assetLocation, fetchBytes, isRemote } from "../_assets.ts";
import { aliasLayers, aliasOf, resolveAliases } from "./aliases.ts";
import { defaultConfig } from "./defaults.ts";
import { ConfigError, type ConfigProblem, type Provenance, sourceOf } from "./errors.ts";
import { closest } from "./issues.ts";
import { isPlainObject, type Layer, mergeLayers } from "./merge.ts";
import { nest, overrideLayers, parseOverride, parseScalar } from "./overrides.ts";
import { BUILTIN_MODELS, type Config, validateConfig } from "./schema.ts";
import { loadMethods } from "./methods.ts";
import { checkRunLock, RunLockedError } from "../run/run_lock.ts";

/**
 * The directory of the built-in recipes (`apps/train/recipes/`): a path, or a URL ending in `/`
 * when this module was imported by URL (see the module doc).
 */
export const RECIPES_DIR: string = assetLocation(new URL("../recipes/", import.meta.url));

/** The recipe used when no `--config` is given. */
export const DEFAULT_RECIPE = "grpo";

/** Keys that may change when a run is resumed; anything else would change its metrics. */
export const RESUME_MUTABLE: readonly string[] = Object.freeze([
  "trainer.steps",
  "trainer.device",
  "trainer.blas",
  "trainer.activationCheckpointing",
]);

/** What {@link loadConfig} reads. Flag values are strings as typed (parsed as YAML). */
export interface LoadOptions {
  /** A recipe: a name in `recipesDir` (`dapo`) or a path to a YAML file (default `grpo`). */
  config?: string;
  /** `key=value` overrides, applied in order. */
  set?: readonly string[];
  /** Shortcut for `model.checkpoint` (a Hugging Face checkpoint folder or `builtin:tiny`). */
  model?: string;
  /**
   * A dataset file (`.jsonl`, `.ndjson` or `.parquet`) instead of the built-in task: sets
   * `task.data.path` and `task.data.format` (from the extension) and so drops `task.name` and
   * `task.options`; the field mapping stays with `--set task.data.promptField=...`.
   */
  data?: string;
  /** Shortcut for `trainer.device`. */
  device?: string;
  /** Shortcut for `trainer.seed`. */
  seed?: string;
  /** Shortcut for `trainer.steps`. */
  steps?: string;
  /** Shortcut for `output.dir` (the directory the run directory is created in). */
  out?: string;
  /**
   * `--reward <path[#export]>` flags: each appends `{ path: "<path>#<export or default>",
   * weight: 1 }` to the merged `rewards` list (see {@link rewardFlagLayers}).
   */
  reward?: readonly string[];
  /** Resume the run in this directory (reads its `config.yaml`). */
  resume?: string;
  /** Where recipes are looked up by name (default {@link RECIPES_DIR}). */
  recipesDir?: string;
  /** Check that `model.checkpoint` and `task.data.path` exist (default true). */
  checkPaths?: boolean;
  /**
   * A partial config object (the typed API's `config`), applied after the recipe and before
   * `set`; `overridesSource` names it in errors (default `"config object"`).
   */
  overrides?: Record<string, unknown>;
  /** How errors name {@link LoadOptions.overrides} (e.g. `train({ config })`). */
  overridesSource?: string;
}

/** What {@link loadConfig} returns. */
export interface LoadedConfig {
  /** The validated, fully resolved config. */
  config: Config;
  /** Where each key's value came from. */
  provenance: Provenance;
  /** The recipe file used (absolute path, or URL), or null when resuming. */
  recipe: string | null;
  /** The run directory being resumed, or null. */
  resume: string | null;
  /** One `note: ...` line per veRL/TRL alias translated (see `config/aliases.ts`). */
  notices: string[];
}

function display(path: string): string {
  if (isRemote(path)) return path;
  const rel = relative(Deno.cwd(), path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/**
 * The recipe names (file stems) in a directory, sorted; none for a URL (it cannot be listed).
 *
 * @example Usage
 * ```ts
 * import { listRecipes } from "./load.ts";
 * import assert from "node:assert/strict";
 * assert.ok(listRecipes().includes("dapo"));
 * ```
 */
export function listRecipes(recipesDir: string = RECIPES_DIR): string[] {
  let entries: string[];
  if (isRemote(recipesDir)) return [];
  try {
    entries = readdirSync(recipesDir);
  } catch {
    return [];
  }
  return entries.filter((f) => /\.ya?ml$/.test(f)).map((f) => f.replace(/\.ya?ml$/, "")).sort();
}

/**
 * Resolves a recipe reference: a bare name (`dapo`) is a file of `recipesDir`; anything with a
 * `/` or a `.yaml`/`.yml` ending is a path, relative to `base` (default: the working
 * directory). Throws a {@link ConfigError} listing the recipes when a name is unknown. A URL
 * (`https:`, `http:`) is a recipe by URL; a name or relative path resolves against a URL
 * `recipesDir` or `base` without a check (a missing file fails when {@link recipeLayers} reads
 * it).
 *
 * @example Usage
 * ```ts
 * import { resolveRecipe } from "./load.ts";
 * import assert from "node:assert/strict";
 * assert.match(resolveRecipe("dapo"), /recipes[\/\\]dapo\.yaml$/);
 * assert.throws(() => resolveRecipe("dapx"), /no recipe named "dapx".*closest: dapo/);
 * ```
 */
export function resolveRecipe(
  ref: string,
  recipesDir: string = RECIPES_DIR,
  base: string = Deno.cwd(),
  what = "--config",
): string {
  if (isRemote(ref)) return ref;
  const isPath = ref.includes("/") || ref.includes("\\") || /\.ya?ml$/.test(ref);
  if (isPath && isRemote(base)) return new URL(ref, base.replace(/\/*$/, "/")).href;
  if (!isPath && isRemote(recipesDir)) return new URL(`${ref}.yaml`, recipesDir).href;
  if (isPath) {
    const path = resolve(base, ref);
    if (!existsSync(path)) {
      throw new ConfigError([{
        path: "",
        message: `${what} ${ref}: file ${display(path)} does not exist; use a recipe name (${
          listRecipes(recipesDir).join(", ")
        }) or an existing .yaml file`,
      }]);
    }
    return path;
  }
  for (const ext of [".yaml", ".yml"]) {
    const path = join(recipesDir, ref + ext);
    if (existsSync(path)) return path;
  }
  const names = listRecipes(recipesDir);
  const near = closest(ref, names);
  throw new ConfigError([{
    path: "",
    message: `${what} ${ref}: no recipe named ${JSON.stringify(ref)} in ${
      display(recipesDir)
    }; use one of ${names.join(", ")}${near === undefined ? "" : ` (closest: ${near})`}`,
  }]);
}

function readYamlFile(path: string, source: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError([{
      path: "",
      message: `cannot read ${display(path)}: ${(e as Error).message}`,
      source,
    }]);
  }
  return parseYamlText(text, path, source);
}

/** {@link readYamlFile}, or a `fetch` when `path` is a URL (a recipe by URL). */
async function readRecipeFile(path: string, source: string): Promise<Record<string, unknown>> {
  if (!isRemote(path)) return readYamlFile(path, source);
  let bytes: Uint8Array | null;
  try {
    bytes = await fetchBytes(path, "recipe");
  } catch (e) {
    throw new ConfigError([{ path: "", message: (e as Error).message, source }]);
  }
  if (bytes === null) {
    throw new ConfigError([{
      path: "",
      message: `cannot read ${path}: no such file (HTTP 404); use the name of a built-in recipe ` +
        `(e.g. ${DEFAULT_RECIPE}) or the URL of an existing .yaml file`,
      source,
    }]);
  }
  return parseYamlText(new TextDecoder().decode(bytes), path, source);
}

function parseYamlText(text: string, path: string, source: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = YAML.parse(text);
  } catch (e) {
    const first = (e as Error).message.split("\n")[0];
    throw new ConfigError([{
      path: "",
      message: `${display(path)} is not valid YAML: ${first}; fix the syntax there`,
      source,
    }]);
  }
  if (data === null || data === undefined) return {};
  if (!isPlainObject(data)) {
    throw new ConfigError([{
      path: "",
      message: `${display(path)} must be a mapping of sections (model:, task:, ...), got ${
        Array.isArray(data) ? "a list" : typeof data
      }`,
      source,
    }]);
  }
  return data;
}

/**
 * The layers of a recipe: the recipes it extends first (base first), then itself, with
 * `extends:` removed. Cycles and bad `extends:` values are errors.
 *
 * @example Usage
 * ```ts
 * import { recipeLayers, resolveRecipe } from "./load.ts";
 * import assert from "node:assert/strict";
 * const layers = await recipeLayers(resolveRecipe("dapo"));
 * assert.match(layers[0]!.source, /grpo\.yaml$/); // dapo extends grpo
 * assert.match(layers.at(-1)!.source, /dapo\.yaml$/);
 * ```
 */
export async function recipeLayers(
  path: string,
  recipesDir: string = RECIPES_DIR,
): Promise<Layer[]> {
  const chain: Layer[] = [];
  const seen: string[] = [];
  let current: string | null = path;
  while (current !== null) {
    if (seen.includes(current)) {
      throw new ConfigError([{
        path: "extends",
        message: `cycle: ${
          [...seen, current].map(display).join(" -> ")
        }; remove one of the extends: lines`,
      }]);
    }
    seen.push(current);
    const source = `recipe ${display(current)}`;
    const data = await readRecipeFile(current, source);
    const { extends: parent, ...rest } = data;
    chain.unshift({ source, data: rest });
    if (parent === undefined || parent === null) {
      current = null;
    } else if (typeof parent !== "string" || parent === "") {
      throw new ConfigError([{
        path: "extends",
        message: `${
          JSON.stringify(parent)
        } is not allowed; use the name of a recipe (e.g. grpo) or a path to one`,
        source,
      }]);
    } else {
      const base = isRemote(current) ? new URL(".", current).href : dirname(current);
      current = resolveRecipe(parent, recipesDir, base, "extends:");
    }
  }
  return chain;
}

function flagLayers(options: LoadOptions): Layer[] {
  const flags: [string | undefined, string, string][] = [
    [options.model, "model", "model.checkpoint"],
    [options.device, "device", "trainer.device"],
    [options.seed, "seed", "trainer.seed"],
    [options.steps, "steps", "trainer.steps"],
    [options.out, "out", "output.dir"],
  ];
  const out: Layer[] = [];
  for (const [value, flag, key] of flags) {
    if (value === undefined) continue;
    // Paths stay strings (a folder named `1e3` or `null` is still a path).
    const parsed = key === "output.dir" || key === "model.checkpoint" ? value : parseScalar(value);
    out.push({ source: `--${flag} ${value}`, data: nest(key.split("."), parsed) });
  }
  if (options.data !== undefined) out.push(dataLayer(options.data));
  return out;
}

/**
 * The layer of `--data <file>`: `task.data.path` and the format its extension names.
 * `loadConfig` drops `task.name` and `task.options` after merging, and the rest of `task.data`
 * (field mapping, template, test fraction) merges key by key, so `--set
 * task.data.promptField=question` applies whatever the order of the flags.
 */
function dataLayer(path: string): Layer {
  const lower = path.toLowerCase();
  const format = lower.endsWith(".jsonl") || lower.endsWith(".ndjson")
    ? "jsonl"
    : lower.endsWith(".parquet")
    ? "parquet"
    : null;
  if (format === null) {
    throw new ConfigError([{
      path: "task.data.path",
      message: `cannot tell the format of ${
        JSON.stringify(path)
      } from its extension; use a .jsonl, .ndjson or .parquet file (or set task.data.format with --set)`,
      source: `--data ${path}`,
    }]);
  }
  return { source: `--data ${path}`, data: { task: { data: { path, format } } } };
}

/**
 * The layers of `--reward <path[#export]>` flags: each adds `{ path: "<path>#<export>", weight:
 * 1 }` (export `default` when none is given) to the `rewards` list. Unlike every other layer,
 * these are appended to the merged list rather than merged into it, after the recipe and all
 * overrides: `--reward` adds to a recipe's rewards, `--set rewards=[...]` replaces them, and
 * `--set 'rewards=[{type: math}]' --reward ./mine.ts` is both, whatever the order of the flags.
 * Throws a {@link ConfigError} for an empty path or export name.
 *
 * @example Usage
 * ```ts
 * import { rewardFlagLayers } from "./load.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(rewardFlagLayers(["./r.ts", "./s.ts#short"]), [
 *   { source: "--reward ./r.ts", data: { rewards: [{ path: "./r.ts#default", weight: 1 }] } },
 *   { source: "--reward ./s.ts#short", data: { rewards: [{ path: "./s.ts#short", weight: 1 }] } },
 * ]);
 * ```
 */
export function rewardFlagLayers(flags: readonly string[]): Layer[] {
  return flags.map((flag) => {
    const at = flag.lastIndexOf("#");
    const file = at < 0 ? flag : flag.slice(0, at);
    const name = at < 0 ? "default" : flag.slice(at + 1);
    if (file.trim() === "" || !/^[A-Za-z_$][\w$]*$/.test(name)) {
      throw new ConfigError([{
        path: "rewards",
        message: `--reward ${
          JSON.stringify(flag)
        }: expected <file>[#<export>], e.g. --reward ./my_reward.ts or --reward ./rewards.ts#brevity`,
        source: `--reward ${flag}`,
      }]);
    }
    return {
      source: `--reward ${flag}`,
      data: { rewards: [{ path: `${file}#${name}`, weight: 1 }] },
    };
  });
}

/** Appends the `rewards` of each layer to the merged list (see {@link rewardFlagLayers}). */
function appendLayers(
  value: Record<string, unknown>,
  provenance: Provenance,
  layers: readonly Layer[],
): void {
  for (const layer of layers) {
    const items = layer.data.rewards as unknown[];
    if (!Array.isArray(value.rewards)) {
      value.rewards = [];
      for (const key of [...provenance.keys()]) {
        if (key === "rewards" || key.startsWith("rewards.") || key.startsWith("rewards[")) {
          provenance.delete(key);
        }
      }
      provenance.set("rewards", layer.source);
    }
    const list = value.rewards as unknown[];
    for (const item of items) {
      provenance.set(`rewards[${list.length}]`, layer.source);
      list.push(structuredClone(item));
    }
  }
}

function pathProblems(config: Config, provenance: Provenance): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const check = (key: string, path: string, fix: string) => {
    if (existsSync(path)) return;
    const problem: ConfigProblem = {
      path: key,
      message: `${JSON.stringify(path)} does not exist (relative to ${Deno.cwd()}); ${fix}`,
    };
    const source = sourceOf(provenance, key);
    if (source !== undefined) problem.source = source;
    out.push(problem);
  };
  if (!BUILTIN_MODELS.includes(config.model.checkpoint)) {
    check(
      "model.checkpoint",
      config.model.checkpoint,
      `use ${BUILTIN_MODELS.join(", ")} or a checkpoint directory (config.json, *.safetensors)`,
    );
  }
  if (config.task.data !== undefined) {
    check("task.data.path", config.task.data.path, "use an existing .jsonl or .parquet file");
  }
  return out;
}

function resumeLayers(options: LoadOptions): { base: Layer[]; runDir: string } {
  const runDir = resolve(options.resume!);
  if (options.config !== undefined) {
    throw new ConfigError([{
      path: "",
      message:
        `--resume ${options.resume} takes the run's own config.yaml; drop --config ${options.config} (or start a new run without --resume)`,
    }]);
  }
  const file = join(runDir, "config.yaml");
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new ConfigError([{
      path: "",
      message: `--resume ${options.resume}: ${
        display(file)
      } does not exist; pass a run directory created by deno task train (runs/<name>)`,
    }]);
  }
  const source = `run config ${display(file)}`;
  return { base: [{ source, data: readYamlFile(file, source) }], runDir };
}

function checkResumeOverrides(options: LoadOptions): void {
  const changed: [string, string][] = (options.set ?? []).map((
    text,
  ) => [parseOverride(text).path.join("."), `--set ${text}`]);
  if (options.model !== undefined) changed.push(["model.checkpoint", `--model ${options.model}`]);
  if (options.data !== undefined) changed.push(["task.data.path", `--data ${options.data}`]);
  if (options.seed !== undefined) changed.push(["trainer.seed", `--seed ${options.seed}`]);
  if (options.out !== undefined) changed.push(["output.dir", `--out ${options.out}`]);
  for (const path of options.reward ?? []) changed.push(["rewards", `--reward ${path}`]);
  const problems: ConfigProblem[] = [];
  for (const [key, source] of changed) {
    if (RESUME_MUTABLE.includes(key)) continue;
    // A veRL/TRL name of a key that may change (trainer.total_training_steps, max_steps).
    const targets = aliasOf(key)?.targets ?? [];
    if (targets.length > 0 && targets.every((t) => RESUME_MUTABLE.includes(t))) continue;
    problems.push({
      path: key,
      message:
        `cannot change when resuming (the resumed metrics would no longer match the run); only ${
          RESUME_MUTABLE.slice(0, -1).join(", ")
        } and ${RESUME_MUTABLE.at(-1)} can, or start a new run without --resume`,
      source,
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * Assembles and validates a config (see the module doc for the order of layers). Rejects with
 * a {@link ConfigError} with one line per problem.
 *
 * @example Usage
 * ```ts
 * import { ConfigError, loadConfig } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const { config, provenance } = await loadConfig({ config: "dapo", set: ["optimizer.lr=1e-4"], seed: "7" });
 * assert.equal(config.optimizer.lr, 1e-4);
 * assert.equal(config.trainer.seed, 7);
 * assert.equal(provenance.get("optimizer.lr"), "--set optimizer.lr=1e-4");
 * await assert.rejects(loadConfig({ set: ["algorithm.estimator=grpx"] }), (e: unknown) =>
 *   e instanceof ConfigError && /"grpx" is not a known estimator; use one of/.test(e.message));
 * ```
 */
export async function loadConfig(options: LoadOptions = {}): Promise<LoadedConfig> {
  const recipesDir = options.recipesDir ?? RECIPES_DIR;
  let layers: Layer[];
  let recipe: string | null = null;
  let runDir: string | null = null;
  if (options.resume !== undefined) {
    checkResumeOverrides(options);
    const r = resumeLayers(options);
    runDir = r.runDir;
    try {
      await checkRunLock(runDir);
    } catch (e) {
      if (!(e instanceof RunLockedError)) throw e;
      throw new ConfigError([{ path: "", message: `--resume ${options.resume}: ${e.message}` }]);
    }
    layers = [
      ...r.base,
      ...overrideLayers(options.set ?? []),
      // --model, --seed and --out were rejected above when given; only --device and --steps
      // remain.
      ...flagLayers({
        ...(options.device === undefined ? {} : { device: options.device }),
        ...(options.steps === undefined ? {} : { steps: options.steps }),
      }),
      {
        source: `--resume ${options.resume}`,
        data: { output: { dir: dirname(runDir), name: basename(runDir) } },
      },
    ];
  } else {
    recipe = resolveRecipe(options.config ?? DEFAULT_RECIPE, recipesDir);
    const name = basename(recipe).replace(/\.ya?ml$/, "");
    layers = [
      { source: "defaults", data: defaultConfig() as unknown as Record<string, unknown> },
      { source: `recipe file name ${display(recipe)}`, data: { output: { name } } },
      ...(await recipeLayers(recipe, recipesDir)),
      ...(options.overrides !== undefined
        ? [{ source: options.overridesSource ?? "config object", data: options.overrides }]
        : []),
      ...overrideLayers(options.set ?? []),
      ...flagLayers(options),
    ];
  }
  const aliased = aliasLayers(layers);
  if (aliased.problems.length > 0) throw new ConfigError(aliased.problems);
  const { value, provenance } = mergeLayers(aliased.layers);
  const { problems: aliasProblems, notices } = resolveAliases(value, provenance, aliased);
  if (aliasProblems.length > 0) throw new ConfigError(aliasProblems);
  appendLayers(value, provenance, rewardFlagLayers(options.reward ?? []));
  if (options.data !== undefined && isPlainObject(value.task)) {
    // --data replaces the task, even one a recipe names beside the same task.data (see dataLayer).
    for (const key of ["name", "options"]) {
      delete value.task[key];
      for (const k of [...provenance.keys()]) {
        if (k === `task.${key}` || k.startsWith(`task.${key}.`)) provenance.delete(k);
      }
    }
  }
  try {
    await loadMethods(value);
  } catch (e) {
    const [path, ...rest] = (e as Error).message.split(": ");
    throw new ConfigError([{ path: path!, message: rest.join(": ") }]);
  }
  const config = await validateConfig(value, provenance);
  if (options.checkPaths !== false) {
    const problems = pathProblems(config, provenance);
    if (problems.length > 0) throw new ConfigError(problems);
  }
  return { config, provenance, recipe, resume: runDir, notices };
}

/**
 * The config as YAML, as written to a run's `config.yaml` (keys in schema order).
 *
 * @example Usage
 * ```ts
 * import { configToYaml, defaultConfig, validateConfig } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const text = configToYaml(await validateConfig(defaultConfig()));
 * assert.match(text, /^model:\n  checkpoint: builtin:tiny/);
 * ```
 */
export function configToYaml(config: Config): string {
  return YAML.stringify(config, { lineWidth: 0 });
}
