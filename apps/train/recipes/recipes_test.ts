import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";
import { listRecipes, loadConfig, RECIPES_DIR } from "../config/load.ts";
import type { Config } from "../config/types.ts";

const RECIPES = [
  "agent_calc",
  "cispo",
  "dapo",
  "dr_grpo",
  "grpo",
  "grpo_async",
  "grpo_cot",
  "grpo_vision",
  "gspo",
  "nsr",
  "ppo",
  "reinforce_pp",
  "rloo",
];

async function load(name: string): Promise<Config> {
  return (await loadConfig({ config: name })).config;
}

Deno.test("recipes: the thirteen recipes exist, parse as YAML mappings and validate", async () => {
  assert.deepEqual(listRecipes(), RECIPES);
  for (const name of RECIPES) {
    const text = await Deno.readTextFile(join(RECIPES_DIR, `${name}.yaml`));
    const data = YAML.parse(text);
    assert.equal(typeof data, "object", name);
    const config = await load(name);
    assert.equal(config.output.name, name);
  }
});

Deno.test("recipes: each has a comment header citing its paper (arXiv id) and saying how it differs from grpo", async () => {
  for (const name of RECIPES) {
    const text = await Deno.readTextFile(join(RECIPES_DIR, `${name}.yaml`));
    const header = text.slice(0, text.search(/^[^#\n]/m));
    assert.match(header, /arXiv \d{4}\.\d{4,5}/, `${name}: cites a paper`);
    if (name !== "grpo") {
      assert.match(header, /Differs from grpo/, `${name}: says what differs`);
      assert.match(text, /^extends: grpo$/m, `${name}: extends grpo`);
    }
  }
});

Deno.test("recipes: each one actually differs from grpo where its header says", async () => {
  const grpo = await load("grpo");
  const a = Object.fromEntries(
    await Promise.all(RECIPES.map(async (n) => [n, await load(n)] as const)),
  ) as Record<string, Config>;
  assert.deepEqual(
    [grpo.algorithm.estimator, grpo.algorithm.loss, grpo.algorithm.aggregation],
    ["grpo", "vanilla", "seq-mean-token-mean"],
  );
  assert.equal(grpo.algorithm.kl.beta, 0);

  assert.equal(grpo.rollout.mode, "sync");
  assert.deepEqual(
    [a.grpo_async!.rollout.mode, a.grpo_async!.rollout.workers, a.grpo_async!.rollout.maxStaleness],
    ["async", 2, 2],
  );
  assert.deepEqual(a.grpo_async!.algorithm.lossOptions, {
    offPolicy: { tis: { level: "token", cap: 2 } },
  });
  assert.equal(a.grpo_async!.algorithm.loss, grpo.algorithm.loss);

  assert.equal(grpo.task.env, undefined);
  assert.deepEqual(a.agent_calc!.task.env, {
    name: "calc",
    options: { digits: 3, operators: ["+"], chainLength: 1 },
    maxTurns: 3,
    syntax: "compact",
  });
  assert.equal(a.agent_calc!.task.name, null);
  assert.equal(a.agent_calc!.model.checkpoint, "builtin:tiny-agent");

  assert.equal(a.grpo_cot!.model.checkpoint, "builtin:tiny-cot");
  assert.deepEqual(a.grpo_cot!.task.options, { digits: [1, 1], operators: ["+"], chainLength: 3 });
  assert.equal(a.grpo_cot!.task.formatWeight, 0.1);
  assert.equal(a.grpo_cot!.algorithm.estimator, grpo.algorithm.estimator);

  assert.equal(a.grpo_vision!.model.checkpoint, "builtin:tiny-vl");
  assert.equal(a.grpo_vision!.task.name, "count_shapes");
  // Process credit: the vl_rows reward's steps (one per patch row) as GiGPO's turns.
  assert.equal(a.grpo_vision!.algorithm.estimator, "gigpo");
  assert.deepEqual(a.grpo_vision!.algorithm.estimatorOptions, {
    gamma: 0,
    gigpoMode: "mean_std_norm",
    omega: 1,
  });
  assert.deepEqual(a.grpo_vision!.rewards!.map((r) => [r.type, r.weight]), [
    ["task", 1],
    ["format", 0.1],
    ["vl_rows", 0.5],
  ]);
  // π_old from the sampler (one scoring pass fewer); 512 held-out problems.
  assert.equal(a.grpo_vision!.algorithm.oldLogProbs, "rollout");
  assert.equal(a.grpo_vision!.trainer.evalProblems, 512);

  assert.equal(a.dr_grpo!.algorithm.estimator, "dr_grpo");
  assert.equal(a.dr_grpo!.algorithm.aggregation, "seq-mean-token-sum-norm");

  const dapo = a.dapo!.algorithm;
  assert.deepEqual([dapo.clip.low, dapo.clip.high], [0.2, 0.28]);
  assert.equal(a.dapo!.rollout.dynamicSampling.enabled, true);
  assert.equal(dapo.aggregation, "token-mean");
  assert.equal(dapo.overlong.enabled, true);
  assert.equal(dapo.kl.beta, 0);

  assert.equal(a.rloo!.algorithm.estimator, "rloo");
  assert.equal(a.rloo!.algorithm.kl.placement, "reward");
  assert.equal(a.reinforce_pp!.algorithm.estimator, "reinforce_plus_plus");
  assert.equal(a.reinforce_pp!.algorithm.kl.placement, "reward");

  assert.equal(a.gspo!.algorithm.loss, "gspo");
  assert.deepEqual([a.gspo!.algorithm.clip.low, a.gspo!.algorithm.clip.high], [3e-4, 4e-4]);

  assert.equal(a.cispo!.algorithm.loss, "cispo");
  assert.equal(a.cispo!.algorithm.clip.low, 1);

  const ppo = a.ppo!;
  assert.equal(ppo.algorithm.estimator, "gae");
  assert.equal(ppo.model.valueHead, true);
  assert.deepEqual(ppo.algorithm.gae, { gamma: 1, lambda: 0.95 });
  assert.equal(ppo.rollout.groupSize, 1);
  assert.equal(ppo.algorithm.ppoEpochs, 2);

  assert.equal(a.nsr!.algorithm.loss, "nsr");
  assert.equal(a.nsr!.algorithm.estimator, "psr_nsr");
  assert.deepEqual(a.nsr!.algorithm.estimatorOptions, { positiveWeight: 1, negativeWeight: 1 });

  assert.equal(a.nsr!.optimizer.lr, 1e-4);

  // Beyond the run name, no recipe is a copy of grpo.
  const strip = (c: Config) => ({ ...c, output: {} });
  for (const name of RECIPES.filter((n) => n !== "grpo")) {
    assert.notDeepEqual(strip(a[name]!), strip(grpo), name);
  }
});

Deno.test("example configs (apps/train/examples/**) validate", async () => {
  const root = join(RECIPES_DIR, "..", "examples");
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) await walk(path);
      else if (e.name.endsWith(".yaml")) found.push(path);
    }
  };
  await walk(root);
  assert.ok(found.length >= 8, `examples found: ${found.length}`);
  for (const path of found) await loadConfig({ config: path });
});
