/**
 * The knobs of the playground page (steps, learning rate, seed, group size, evaluation
 * schedule, backend) and what they change in a recipe's config.
 *
 * Design decisions:
 * - **Knobs are `--set` overrides**: {@link knobOverrides} turns the knobs into `[key, value]`
 *   pairs of config keys, which the page applies to the recipe's resolved config
 *   ({@link applyOverrides}) and which {@link setFlags} writes as the `--set key=value` flags of
 *   `deno task train`; so the reference run of a tab is `deno task train --config <recipe>`
 *   with those flags, and `knobs_test.ts` checks that both give the same config.
 * - **Checked before a run starts**, with a message naming the knob, its value and the range:
 *   integers where the schema wants integers, the group sizes the build found valid for the
 *   recipe, `trainer.evalK` lowered to `trainer.evalSamples` when fewer samples are asked for.
 * - **URL parameters preset the form** (`?recipe=grpo&steps=30&seed=1&backend=wasm`), so a
 *   link (or a test) opens the page with a run set up.
 *
 * @module
 */

import type { Config } from "../../train/config/types.ts";
import type { PlaygroundRecipe } from "./catalog.ts";

/** Where a tab computes: `auto` (WebGPU on a hardware adapter), `webgpu` or `wasm`. */
export type BackendChoice = "auto" | "webgpu" | "wasm";

/** The backend choices, in the order the page offers them. */
export const BACKEND_CHOICES: readonly BackendChoice[] = Object.freeze([
  "auto",
  "webgpu",
  "wasm",
]);

/** The settings of one run (see the module doc). */
export interface Knobs {
  /** The recipe's name. */
  recipe: string;
  /** `trainer.steps`. */
  steps: number;
  /** `optimizer.lr`. */
  lr: number;
  /** `trainer.seed`. */
  seed: number;
  /** `rollout.groupSize` (one of the recipe's `groupSizes`). */
  groupSize: number;
  /** `trainer.evalEvery` (0: before and after training only). */
  evalEvery: number;
  /** `trainer.evalProblems` (0: no held-out evaluation). */
  evalProblems: number;
  /** `trainer.evalSamples` (`trainer.evalK` is lowered to it when larger). */
  evalSamples: number;
  /** Where to compute. */
  backend: BackendChoice;
}

/** The numeric knobs: their config key, whether integer, and their range. */
export const NUMERIC_KNOBS: Readonly<
  Record<
    Exclude<keyof Knobs, "recipe" | "backend">,
    { key: string; integer: boolean; min: number; max: number; label: string }
  >
> = Object.freeze({
  steps: { key: "trainer.steps", integer: true, min: 1, max: 100_000, label: "steps" },
  lr: { key: "optimizer.lr", integer: false, min: 1e-8, max: 1, label: "learning rate" },
  seed: { key: "trainer.seed", integer: true, min: 0, max: 2 ** 31 - 1, label: "seed" },
  groupSize: { key: "rollout.groupSize", integer: true, min: 1, max: 4096, label: "group size" },
  evalEvery: { key: "trainer.evalEvery", integer: true, min: 0, max: 100_000, label: "eval every" },
  evalProblems: {
    key: "trainer.evalProblems",
    integer: true,
    min: 0,
    max: 4096,
    label: "eval problems",
  },
  evalSamples: {
    key: "trainer.evalSamples",
    integer: true,
    min: 1,
    max: 256,
    label: "eval samples",
  },
});

/** A config key and the value a run sets it to. */
export type Override = readonly [key: string, value: number | string];

/**
 * The knobs a recipe starts with: its own config's values, the `auto` backend.
 *
 * @param recipe The recipe.
 * @returns The knobs.
 *
 * @example Usage
 * ```ts
 * import { loadConfig } from "@rlvr/train";
 * import { knobDefaults } from "./knobs.ts";
 * import assert from "node:assert/strict";
 * const { config } = await loadConfig({ config: "grpo" });
 * const k = knobDefaults({ name: "grpo", title: "", summary: "", config, groupSizes: [8] });
 * assert.equal(k.steps, config.trainer.steps);
 * assert.equal(k.backend, "auto");
 * ```
 */
export function knobDefaults(recipe: PlaygroundRecipe): Knobs {
  const c = recipe.config;
  return {
    recipe: recipe.name,
    steps: c.trainer.steps,
    lr: c.optimizer.lr,
    seed: c.trainer.seed,
    groupSize: c.rollout.groupSize,
    evalEvery: c.trainer.evalEvery,
    evalProblems: c.trainer.evalProblems,
    evalSamples: c.trainer.evalSamples,
    backend: "auto",
  };
}

/**
 * Reads knobs from text fields (a form, URL parameters), on top of `base`: each present field is
 * parsed and checked; absent or empty ones keep `base`'s value. Returns the knobs and one
 * message per bad field (naming it, its value and the range); `recipe` is not read here (the
 * caller picks the recipe first, then its defaults are `base`).
 *
 * @param fields Field name → text (e.g. `Object.fromEntries(new URLSearchParams(...))`).
 * @param base The knobs the fields change (the recipe's {@link knobDefaults}).
 * @param groupSizes The recipe's accepted group sizes.
 * @returns The knobs and the problems (empty when all are valid).
 *
 * @example Usage
 * ```ts
 * import { readKnobs } from "./knobs.ts";
 * import assert from "node:assert/strict";
 * const base = {
 *   recipe: "grpo", steps: 600, lr: 5e-4, seed: 0, groupSize: 8, evalEvery: 50,
 *   evalProblems: 64, evalSamples: 8, backend: "auto" as const,
 * };
 * const { knobs, problems } = readKnobs({ steps: "30", backend: "wasm" }, base, [4, 8]);
 * assert.deepEqual(problems, []);
 * assert.equal(knobs.steps, 30);
 * assert.equal(knobs.backend, "wasm");
 * assert.match(readKnobs({ groupSize: "3" }, base, [4, 8]).problems[0]!, /group size: 3/);
 * ```
 */
export function readKnobs(
  fields: Readonly<Record<string, string | undefined>>,
  base: Knobs,
  groupSizes: readonly number[],
): { knobs: Knobs; problems: string[] } {
  const knobs: Knobs = { ...base };
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(NUMERIC_KNOBS)) {
    const text = fields[name]?.trim();
    if (text === undefined || text === "") continue;
    const value = Number(text);
    const range = `${spec.integer ? "an integer" : "a number"} in [${spec.min}, ${spec.max}]`;
    if (
      !Number.isFinite(value) || (spec.integer && !Number.isInteger(value)) ||
      value < spec.min || value > spec.max
    ) {
      problems.push(`${spec.label}: ${JSON.stringify(text)} is not ${range} (${spec.key})`);
      continue;
    }
    if (name === "groupSize" && !groupSizes.includes(value)) {
      problems.push(
        `group size: ${value} is not accepted with this recipe's batch size; use one of ${
          groupSizes.join(", ")
        } (rollout.groupSize)`,
      );
      continue;
    }
    (knobs as unknown as Record<string, number>)[name] = value;
  }
  const backend = fields.backend?.trim();
  if (backend !== undefined && backend !== "") {
    if ((BACKEND_CHOICES as readonly string[]).includes(backend)) {
      knobs.backend = backend as BackendChoice;
    } else {
      problems.push(
        `backend: ${JSON.stringify(backend)} is not one of ${BACKEND_CHOICES.join(", ")}`,
      );
    }
  }
  return { knobs, problems };
}

/**
 * The config keys the knobs set, with their values (see the module doc); `trainer.evalK` is
 * lowered to `evalSamples` when the recipe's is larger.
 *
 * @param knobs The knobs.
 * @param config The recipe's resolved config.
 * @returns `[key, value]` pairs, in a fixed order.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig } from "@rlvr/train";
 * import { knobOverrides } from "./knobs.ts";
 * import assert from "node:assert/strict";
 * const knobs = {
 *   recipe: "grpo", steps: 30, lr: 5e-4, seed: 1, groupSize: 8, evalEvery: 10,
 *   evalProblems: 32, evalSamples: 4, backend: "wasm" as const,
 * };
 * const o = new Map(knobOverrides(knobs, defaultConfig()));
 * assert.equal(o.get("trainer.steps"), 30);
 * assert.equal(o.get("trainer.evalK"), 4);
 * ```
 */
export function knobOverrides(knobs: Knobs, config: Config): Override[] {
  const out: Override[] = [];
  for (const [name, spec] of Object.entries(NUMERIC_KNOBS)) {
    out.push([spec.key, (knobs as unknown as Record<string, number>)[name]!]);
  }
  if (config.trainer.evalK > knobs.evalSamples) out.push(["trainer.evalK", knobs.evalSamples]);
  return out;
}

/**
 * A copy of `config` with the overrides applied (each key a dotted path to an existing field).
 *
 * @param config A resolved config (not changed).
 * @param overrides `[key, value]` pairs.
 * @returns The new config.
 * @throws Error naming a key that is not a field of the config.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig } from "@rlvr/train";
 * import { applyOverrides } from "./knobs.ts";
 * import assert from "node:assert/strict";
 * const c = applyOverrides(defaultConfig(), [["trainer.steps", 3], ["trainer.device", "cpu"]]);
 * assert.equal(c.trainer.steps, 3);
 * assert.throws(() => applyOverrides(defaultConfig(), [["trainer.stepz", 3]]), /trainer\.stepz/);
 * ```
 */
export function applyOverrides(config: Config, overrides: readonly Override[]): Config {
  const out = structuredClone(config);
  for (const [key, value] of overrides) {
    const path = key.split(".");
    let node = out as unknown as Record<string, unknown>;
    for (const part of path.slice(0, -1)) {
      const next = node[part];
      if (typeof next !== "object" || next === null) {
        throw new Error(`applyOverrides: ${key} is not a key of the config (no section ${part})`);
      }
      node = next as Record<string, unknown>;
    }
    const last = path.at(-1)!;
    if (!(last in node)) throw new Error(`applyOverrides: ${key} is not a key of the config`);
    node[last] = value;
  }
  return out;
}

/**
 * The overrides as `deno task train` flags' values (`--set key=value`), numbers written so the
 * config loader reads them back as the same numbers.
 *
 * @param overrides `[key, value]` pairs.
 * @returns `key=value` strings.
 *
 * @example Usage
 * ```ts
 * import { setFlags } from "./knobs.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(setFlags([["optimizer.lr", 5e-4], ["trainer.device", "webgpu"]]), [
 *   "optimizer.lr=0.0005",
 *   "trainer.device=webgpu",
 * ]);
 * ```
 */
export function setFlags(overrides: readonly Override[]): string[] {
  return overrides.map(([key, value]) => `${key}=${String(value)}`);
}

/**
 * The knobs as URL parameters (`?recipe=grpo&steps=30&...`), which preset the page's form.
 *
 * @param knobs The knobs (all or some).
 * @returns The query string, without `?`.
 *
 * @example Usage
 * ```ts
 * import { knobQuery } from "./knobs.ts";
 * import assert from "node:assert/strict";
 * assert.equal(knobQuery({ recipe: "grpo", steps: 30, backend: "wasm" }), "recipe=grpo&steps=30&backend=wasm");
 * ```
 */
export function knobQuery(knobs: Partial<Knobs>): string {
  return new URLSearchParams(
    Object.entries(knobs).map(([k, v]) => [k, String(v)]),
  ).toString();
}
