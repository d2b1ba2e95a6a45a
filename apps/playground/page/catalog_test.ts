import assert from "node:assert/strict";
import { loadConfig } from "../../train/config/load.ts";
import { validateConfig } from "../../train/config/schema.ts";
import { checkCatalog } from "./catalog.ts";
import { browserRecipeProblem } from "./catalog_build.ts";
import { acceptedGroupSizes, buildCatalog } from "./catalog_build.ts";

Deno.test("buildCatalog: the shipped sync text recipes on builtin:tiny are in, the others out with the reason", async () => {
  const catalog = await buildCatalog();
  assert.equal(catalog.default, "grpo");
  assert.deepEqual(catalog.recipes.map((r) => r.name), [
    "cispo",
    "dapo",
    "dr_grpo",
    "grpo",
    "gspo",
    "nsr",
    "ppo",
    "reinforce_pp",
    "rloo",
  ]);
  assert.deepEqual(Object.fromEntries(catalog.excluded.map((e) => [e.name, e.reason])), {
    agent_calc: "model.checkpoint: builtin:tiny-agent; the page serves builtin:tiny only",
    grpo_async: "rollout.mode: async needs rollout workers; a tab samples on its own thread " +
      "(rollout.mode: sync)",
    grpo_cot: "model.checkpoint: builtin:tiny-cot; the page serves builtin:tiny only",
    grpo_vision: "model.checkpoint: builtin:tiny-vl; the page serves builtin:tiny only",
  });
  for (const r of catalog.recipes) {
    assert.equal(r.config.model.checkpoint, "builtin:tiny");
    assert.deepEqual(r.config, (await loadConfig({ config: r.name })).config, r.name);
    assert.ok(r.title.length > 0 && r.summary.length > 0, r.name);
    assert.ok(r.groupSizes.includes(r.config.rollout.groupSize), `${r.name}: its own group size`);
  }
  assert.match(
    catalog.recipes.find((r) => r.name === "rloo")!.summary,
    /^estimator rloo, .*KL β 0\.01 \(reward\)/,
  );
  // The catalog survives JSON (it is served as recipes.json).
  assert.deepEqual(checkCatalog(JSON.parse(JSON.stringify(catalog))), catalog);
});

Deno.test("acceptedGroupSizes: exactly the divisors of the batch the schema accepts", async () => {
  const { config } = await loadConfig({ config: "grpo" });
  const sizes = await acceptedGroupSizes(config);
  assert.deepEqual(sizes, [1, 2, 4, 8, 16, 32, 64]);
  const refused = structuredClone(config);
  refused.rollout.groupSize = 3;
  await assert.rejects(validateConfig(refused), /rollout\.groupSize/);
});

Deno.test("browserRecipeProblem: LoRA and other checkpoints are named", async () => {
  const { config } = await loadConfig({
    config: "grpo",
    set: ["model.lora={rank: 4, alpha: 8, targetModules: [q_proj]}"],
  });
  assert.match(browserRecipeProblem(config)!, /^model\.lora: /);
});

Deno.test("checkCatalog: what is wrong with recipes.json, and that the page must be rebuilt", () => {
  assert.throws(() => checkCatalog(null), /recipes\.json: not a JSON object; rebuild the page/);
  assert.throws(() => checkCatalog({ default: 1 }), /no default recipe name/);
  assert.throws(
    () => checkCatalog({ default: "grpo", recipes: [{ name: "grpo" }] }),
    /a recipe without name, config or groupSizes \("grpo"\)/,
  );
});
