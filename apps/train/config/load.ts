/**
 * Loading a config: defaults, then a recipe (after the recipes it `extends:`), then `--set`
 * overrides and flag shortcuts (`--model`, `--data`, `--device`, `--seed`, `--steps`, `--out`), validated;
 * or, with `--resume <runDir>`, the run's own `config.yaml` with only `trainer.steps` and
 * `trainer.device` allowed to change.
 *
 * Design decisions: the whole load is small file reads plus validation, so a bad config fails
 * in milliseconds, before any model, dataset or device is touched; a recipe named without
 * a path (`dapo`) is looked up in `apps/train/recipes/`, and an `extends:` path is relative to
 * the recipe that contains it; paths *inside* a config (`model.checkpoint`, `task.data.path`)
 * are relative to the working directory, where the run is started.
 *
 * @module
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { aliasLayers, scaleAliases } from "./aliases.ts";
import { defaultConfig } from "./defaults.ts";
import { ConfigError, type ConfigProblem, type Provenance, sourceOf } from "./errors.ts";
import { closest } from "./issues.ts";
import { isPlainObject, type Layer, mergeLayers } from "./merge.ts";
import { nest, overrideLayers, parseOverride, parseScalar } from "./overrides.ts";
import { BUILTIN_MODELS, type Config, validateConfig } from "./schema.ts";

/** The directory of the built-in recipes (`apps/train/recipes/`). */
export const RECIPES_DIR: string = fileURLToPath(new URL("../recipes/", import.meta.url));

/** The recipe used when no `--config` is given. */
export const DEFAULT_RECIPE = "grpo";

/** Keys that may change when a run is resumed; anything else would change its metrics. */
export const RESUME_MUTABLE: readonly string[] = Object.freeze(["trainer.steps", "trainer.device"]);

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
  /** Resume the run in this directory (reads its `config.yaml`). */
  resume?: string;
  /** Where recipes are looked up by name (default {@link RECIPES_DIR}). */
  recipesDir?: string;
  /** Check that `model.checkpoint` and `task.data.path` exist (default true). */
  checkPaths?: boolean;
}

/** What {@link loadConfig} returns. */
export interface LoadedConfig {
  /** The validated, fully resolved config. */
  config: Config;
  /** Where each key's value came from. */
  provenance: Provenance;
  /** The recipe file used (absolute path), or null when resuming. */
  recipe: string | null;
  /** The run directory being resumed, or null. */
  resume: string | null;
}

function display(path: string): string {
  const rel = relative(Deno.cwd(), path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/**
 * The recipe names (file stems) in a directory, sorted.
 *
 * @example Usage
 * ```ts
 * import { listRecipes } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * assert.ok(listRecipes().includes("dapo"));
 * ```
 */
export function listRecipes(recipesDir: string = RECIPES_DIR): string[] {
  let entries: string[];
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
 * directory). Throws a {@link ConfigError} listing the recipes when a name is unknown.
 *
 * @example Usage
 * ```ts
 * import { resolveRecipe } from "@rlvr/train";
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
  const isPath = ref.includes("/") || ref.includes("\\") || /\.ya?ml$/.test(ref);
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
 * import { recipeLayers, resolveRecipe } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const layers = recipeLayers(resolveRecipe("dapo"));
 * assert.match(layers[0]!.source, /grpo\.yaml$/); // dapo extends grpo
 * assert.match(layers.at(-1)!.source, /dapo\.yaml$/);
 * ```
 */
export function recipeLayers(path: string, recipesDir: string = RECIPES_DIR): Layer[] {
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
    const data = readYamlFile(current, source);
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
      current = resolveRecipe(parent, recipesDir, dirname(current), "extends:");
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
  const problems: ConfigProblem[] = [];
  for (const [key, source] of changed) {
    if (RESUME_MUTABLE.includes(key)) continue;
    problems.push({
      path: key,
      message:
        `cannot change when resuming (the resumed metrics would no longer match the run); only ${
          RESUME_MUTABLE.join(" and ")
        } can, or start a new run without --resume`,
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
      ...recipeLayers(recipe, recipesDir),
      ...overrideLayers(options.set ?? []),
      ...flagLayers(options),
    ];
  }
  const aliased = aliasLayers(layers);
  if (aliased.problems.length > 0) throw new ConfigError(aliased.problems);
  const { value, provenance } = mergeLayers(aliased.layers);
  scaleAliases(value, provenance, aliased.perPrompt);
  if (options.data !== undefined && isPlainObject(value.task)) {
    // --data replaces the task, even one a recipe names beside the same task.data (see dataLayer).
    for (const key of ["name", "options"]) {
      delete value.task[key];
      for (const k of [...provenance.keys()]) {
        if (k === `task.${key}` || k.startsWith(`task.${key}.`)) provenance.delete(k);
      }
    }
  }
  const config = await validateConfig(value, provenance);
  if (options.checkPaths !== false) {
    const problems = pathProblems(config, provenance);
    if (problems.length > 0) throw new ConfigError(problems);
  }
  return { config, provenance, recipe, resume: runDir };
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
