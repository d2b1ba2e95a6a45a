import assert from "node:assert/strict";
import { loadConfig } from "../../train/config/load.ts";
import { validateConfig } from "../../train/config/schema.ts";
import { WASM_OVERRIDES, WEBGPU_OVERRIDES } from "./backend.ts";
import { buildCatalog } from "./catalog_build.ts";
import {
  applyOverrides,
  knobDefaults,
  knobOverrides,
  knobQuery,
  type Knobs,
  readKnobs,
  setFlags,
} from "./knobs.ts";

const catalog = await buildCatalog();

const SETTINGS: readonly Partial<Knobs>[] = [
  {},
  { steps: 30, seed: 1, evalEvery: 10, evalProblems: 32, evalSamples: 4 },
  { steps: 7, lr: 1.5e-5, seed: 123456, groupSize: 4, evalEvery: 0, evalProblems: 0 },
  { lr: 3e-4, groupSize: 16, evalSamples: 1 },
];

Deno.test("knobs: the page's config (recipe + overrides) is deno task train's with the same --set flags, for every recipe", async () => {
  for (const recipe of catalog.recipes) {
    for (const setting of SETTINGS) {
      for (const device of [WASM_OVERRIDES, WEBGPU_OVERRIDES]) {
        const knobs = { ...knobDefaults(recipe), ...setting };
        if (!recipe.groupSizes.includes(knobs.groupSize)) continue;
        const overrides = [...knobOverrides(knobs, recipe.config), ...device];
        const page = applyOverrides(recipe.config, overrides);
        const deno = (await loadConfig({ config: recipe.name, set: setFlags(overrides) })).config;
        assert.deepEqual(page, deno, `${recipe.name} ${JSON.stringify(setting)}`);
        await validateConfig(structuredClone(page)); // and the schema accepts it
      }
    }
  }
});

Deno.test("knobs: URL parameters round-trip through knobQuery and readKnobs", () => {
  const recipe = catalog.recipes.find((r) => r.name === "grpo")!;
  const knobs: Knobs = {
    ...knobDefaults(recipe),
    steps: 30,
    lr: 2.5e-4,
    seed: 9,
    groupSize: 4,
    evalEvery: 5,
    evalProblems: 16,
    evalSamples: 2,
    backend: "webgpu",
  };
  const fields = Object.fromEntries(new URLSearchParams(knobQuery(knobs)));
  const back = readKnobs(fields, knobDefaults(recipe), recipe.groupSizes);
  assert.deepEqual(back, { knobs, problems: [] });
});

Deno.test("knobs: bad values are refused naming the knob, the value and the range; the rest still apply", () => {
  const recipe = catalog.recipes.find((r) => r.name === "dapo")!; // dynamic sampling: groups >= 2
  const base = knobDefaults(recipe);
  const { knobs, problems } = readKnobs(
    {
      steps: "0",
      lr: "fast",
      seed: "1.5",
      groupSize: "1",
      evalEvery: "",
      evalSamples: " 2 ",
      backend: "gpu",
    },
    base,
    recipe.groupSizes,
  );
  assert.deepEqual(problems, [
    'steps: "0" is not an integer in [1, 100000] (trainer.steps)',
    'learning rate: "fast" is not a number in [1e-8, 1] (optimizer.lr)',
    'seed: "1.5" is not an integer in [0, 2147483647] (trainer.seed)',
    "group size: 1 is not accepted with this recipe's batch size; use one of 2, 4, 8, 16, 32, " +
    "64 (rollout.groupSize)",
    'backend: "gpu" is not one of auto, webgpu, wasm',
  ]);
  assert.deepEqual(knobs, { ...base, evalSamples: 2 });
});

Deno.test("knobs: every value readKnobs accepts gives a config validateConfig accepts", async () => {
  const recipe = catalog.recipes.find((r) => r.name === "grpo")!;
  for (
    const fields of [
      { steps: "1", lr: "1e-8", seed: "0", evalProblems: "0", evalSamples: "1", evalEvery: "0" },
      { steps: "100000", lr: "1", seed: "2147483647", evalProblems: "4096", evalSamples: "256" },
      ...recipe.groupSizes.map((g) => ({ groupSize: String(g) })),
    ]
  ) {
    const { knobs, problems } = readKnobs(fields, knobDefaults(recipe), recipe.groupSizes);
    assert.deepEqual(problems, [], JSON.stringify(fields));
    await validateConfig(applyOverrides(recipe.config, knobOverrides(knobs, recipe.config)));
  }
});
