/**
 * Builds the playground's `recipes.json` ({@link RecipeCatalog}) in Deno: every shipped recipe
 * resolved by the config loader (`loadConfig`, as `deno task train --config <name>` resolves
 * it), kept when a tab can run it (`browserRecipeProblem`), with the group sizes the schema
 * accepts for it (`validateConfig`). See `catalog.ts` for the design.
 *
 * @module
 */

import { join } from "node:path";
import { listRecipes, loadConfig, RECIPES_DIR } from "../../train/config/load.ts";
import { validateConfig } from "../../train/config/schema.ts";
import type { Config } from "../../train/config/types.ts";
import { builtinJobProblem } from "../../train/loop/builtin_job.ts";
import {
  PLAYGROUND_CHECKPOINT,
  type PlaygroundRecipe,
  type RecipeCatalog,
  recipeSummary,
} from "./catalog.ts";

/**
 * Why a browser tab cannot run `config`, or null when it can (see the module doc).
 *
 * @param config A resolved config.
 * @returns The reason (naming the key and its value), or null.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { browserRecipeProblem } from "./catalog_build.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * assert.equal(browserRecipeProblem(config), null);
 * config.rollout.mode = "async";
 * assert.match(browserRecipeProblem(config)!, /^rollout\.mode: async/);
 * ```
 */
export function browserRecipeProblem(config: Config): string | null {
  if (config.model.checkpoint !== PLAYGROUND_CHECKPOINT) {
    return `model.checkpoint: ${config.model.checkpoint}; the page serves ${PLAYGROUND_CHECKPOINT} only`;
  }
  if (config.rollout.mode !== "sync") {
    return `rollout.mode: ${config.rollout.mode} needs rollout workers; a tab samples on its ` +
      `own thread (rollout.mode: sync)`;
  }
  if (config.model.lora != null) {
    return `model.lora: the page trains and downloads the full model`;
  }
  return builtinJobProblem(config);
}

/** The recipe the page opens with: `deno task train`'s default. */
export const PLAYGROUND_DEFAULT_RECIPE = "grpo";

/** Options of {@link buildCatalog}. */
export interface BuildCatalogOptions {
  /** The recipes to consider (default: every shipped one, `listRecipes()`). */
  names?: readonly string[];
  /** The recipe the page opens with (default {@link PLAYGROUND_DEFAULT_RECIPE}). */
  defaultRecipe?: string;
}

/**
 * The `rollout.groupSize` values `validateConfig` accepts for `config` with its batch size: the
 * divisors of `rollout.batchSize` that pass every check (dynamic sampling needs 2 or more, ...).
 *
 * @param config A resolved config.
 * @returns The accepted group sizes, increasing.
 *
 * @example Usage
 * ```ts
 * import { loadConfig } from "@rlvr/train";
 * import { acceptedGroupSizes } from "./catalog_build.ts";
 * import assert from "node:assert/strict";
 * const { config } = await loadConfig({ config: "dapo" }); // 64 responses, dynamic sampling
 * assert.deepEqual(await acceptedGroupSizes(config), [2, 4, 8, 16, 32, 64]);
 * ```
 */
export async function acceptedGroupSizes(config: Config): Promise<number[]> {
  const { batchSize } = config.rollout;
  const sizes: number[] = [];
  for (let g = 1; g <= batchSize; g++) {
    if (batchSize % g !== 0) continue;
    const candidate = structuredClone(config);
    candidate.rollout.groupSize = g;
    try {
      await validateConfig(candidate);
      sizes.push(g);
    } catch {
      // refused by the schema for this recipe: not offered
    }
  }
  return sizes;
}

/**
 * The first line of a shipped recipe's header comment (what `deno task train --help` lists),
 * or "" when it has none.
 *
 * @param name The recipe's name.
 * @returns The line, without `#`.
 *
 * @example Usage
 * ```ts
 * import { recipeTitle } from "./catalog_build.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await recipeTitle("grpo"), "GRPO: Group Relative Policy Optimization.");
 * ```
 */
export async function recipeTitle(name: string): Promise<string> {
  try {
    const text = await Deno.readTextFile(join(RECIPES_DIR, `${name}.yaml`));
    return /^#\s*(.+)$/m.exec(text)?.[1]?.trim() ?? "";
  } catch {
    return "";
  }
}

/**
 * Resolves the recipes and sorts them into those a tab can run and those it cannot (see the
 * module doc). A recipe that does not load is excluded with the loader's message.
 *
 * @param options Which recipes, and the default.
 * @returns The catalog.
 * @throws Error when the default recipe is not among those a tab can run.
 *
 * @example Usage
 * ```ts
 * import { buildCatalog } from "./catalog_build.ts";
 * import assert from "node:assert/strict";
 * const catalog = await buildCatalog({ names: ["grpo", "grpo_async"] });
 * assert.deepEqual(catalog.recipes.map((r) => r.name), ["grpo"]);
 * assert.match(catalog.excluded[0]!.reason, /^rollout\.mode: async/);
 * ```
 */
export async function buildCatalog(options: BuildCatalogOptions = {}): Promise<RecipeCatalog> {
  const names = options.names ?? listRecipes();
  const defaultRecipe = options.defaultRecipe ?? PLAYGROUND_DEFAULT_RECIPE;
  const recipes: PlaygroundRecipe[] = [];
  const excluded: RecipeCatalog["excluded"] = [];
  for (const name of names) {
    let config: Config;
    try {
      config = (await loadConfig({ config: name })).config;
    } catch (e) {
      excluded.push({ name, reason: `does not load: ${(e as Error).message.split("\n")[0]}` });
      continue;
    }
    const problem = browserRecipeProblem(config);
    if (problem !== null) {
      excluded.push({ name, reason: problem });
      continue;
    }
    recipes.push({
      name,
      title: await recipeTitle(name),
      summary: recipeSummary(config),
      config,
      groupSizes: await acceptedGroupSizes(config),
    });
  }
  if (!recipes.some((r) => r.name === defaultRecipe)) {
    throw new Error(
      `buildCatalog: the default recipe ${JSON.stringify(defaultRecipe)} is not one a tab can ` +
        `run (${
          excluded.find((e) => e.name === defaultRecipe)?.reason ?? "not among the recipes"
        }); pass another defaultRecipe`,
    );
  }
  return { default: defaultRecipe, recipes, excluded };
}
