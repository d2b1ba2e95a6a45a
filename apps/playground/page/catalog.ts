/**
 * The recipes a playground tab can run: {@link RecipeCatalog}, the `recipes.json` the build
 * writes (`catalog_build.ts`, from the shipped recipes resolved by `loadConfig` in Deno) and the
 * page reads (`browserRecipeProblem` of `catalog_build.ts` decides what a tab can run).
 *
 * Design decisions:
 * - **Resolved in Deno, run in the tab**: a recipe is YAML with `extends:` chains, aliases and a
 *   schema, which the config loader reads from files; the build resolves each recipe once and the
 *   page gets the finished {@link Config} objects, so a tab and `deno task train --config <name>`
 *   start from the same config.
 * - **What a tab can run** is decided from the config alone: the shipped tiny policy (the one
 *   the page serves), a built-in single-turn task with its own verifier, synchronous rollouts
 *   (the asynchronous modes need rollout workers), no LoRA (the page downloads a full model).
 *   Everything else is listed as excluded, with the reason.
 * - **Group sizes are offered, not typed**: the build lists the `rollout.groupSize` values the
 *   config schema accepts with the recipe's batch size (checked by `validateConfig`), so the
 *   page never starts a run its schema would refuse.
 *
 * @module
 */

import type { Config } from "../../train/config/types.ts";

/** The checkpoint the page serves (as `model/`), the only one a tab trains. */
export const PLAYGROUND_CHECKPOINT = "builtin:tiny";

/** One recipe a tab can run. */
export interface PlaygroundRecipe {
  /** The recipe's name (`grpo`, `dapo`, ...). */
  name: string;
  /** The first line of the recipe file's header (`GRPO: Group Relative Policy Optimization.`). */
  title: string;
  /** One line: the estimator, the loss, the aggregation, KL and what else differs. */
  summary: string;
  /** The resolved config (`loadConfig({ config: name })`). */
  config: Config;
  /** The `rollout.groupSize` values the schema accepts with this recipe's batch size. */
  groupSizes: number[];
}

/** What `recipes.json` holds. */
export interface RecipeCatalog {
  /** The recipe selected when the page opens. */
  default: string;
  /** The recipes a tab can run, by name. */
  recipes: PlaygroundRecipe[];
  /** Shipped recipes a tab cannot run, and why. */
  excluded: { name: string; reason: string }[];
}

/**
 * A one-line summary of what a recipe trains with: estimator, loss, aggregation, KL, and the
 * options that set it apart (mini-batches, dynamic sampling, a value head).
 *
 * @param config A resolved config.
 * @returns The summary.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { recipeSummary } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const summary = recipeSummary(await validateConfig(defaultConfig()));
 * assert.match(summary, /^estimator grpo, loss vanilla/);
 * ```
 */
export function recipeSummary(config: Config): string {
  const a = config.algorithm;
  const r = config.rollout;
  const parts = [
    `estimator ${a.estimator}`,
    `loss ${a.loss}`,
    `aggregation ${a.aggregation}`,
    a.kl.beta > 0 ? `KL β ${a.kl.beta} (${a.kl.placement})` : "no KL",
    `lr ${config.optimizer.lr} ${config.optimizer.schedule}`,
    `${r.batchSize} responses in groups of ${r.groupSize}`,
  ];
  if (a.ppoMiniBatchSize != null) parts.push(`mini-batches of ${a.ppoMiniBatchSize}`);
  if (r.dynamicSampling.enabled) parts.push("dynamic sampling");
  if (config.model.valueHead) parts.push("value head");
  return parts.join(", ");
}

/**
 * Checks the shape of a parsed `recipes.json` (the page reads it over the network) and returns
 * it typed; throws naming what is wrong and that the page must be rebuilt.
 *
 * @param value The parsed JSON.
 * @returns The catalog.
 *
 * @example Usage
 * ```ts
 * import { checkCatalog } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => checkCatalog({ default: "grpo", recipes: [] }), /no recipe named "grpo"/);
 * ```
 */
export function checkCatalog(value: unknown): RecipeCatalog {
  const fail = (what: string): never => {
    throw new Error(
      `recipes.json: ${what}; rebuild the page (deno task playground) so that it matches`,
    );
  };
  if (typeof value !== "object" || value === null) fail("not a JSON object");
  const c = value as Partial<RecipeCatalog>;
  if (typeof c.default !== "string") fail("no default recipe name");
  if (!Array.isArray(c.recipes)) fail("no recipes list");
  for (const r of c.recipes!) {
    if (
      typeof r?.name !== "string" || typeof r.config !== "object" || r.config === null ||
      !Array.isArray(r.groupSizes)
    ) {
      fail(`a recipe without name, config or groupSizes (${JSON.stringify(r?.name)})`);
    }
  }
  if (!c.recipes!.some((r) => r.name === c.default)) {
    fail(`no recipe named ${JSON.stringify(c.default)} (the default)`);
  }
  return { default: c.default!, recipes: c.recipes!, excluded: c.excluded ?? [] };
}
