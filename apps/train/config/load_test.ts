import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";
import { ConfigError } from "./errors.ts";
import {
  configToYaml,
  listRecipes,
  loadConfig,
  type LoadOptions,
  recipeLayers,
  RECIPES_DIR,
  resolveRecipe,
  rewardFlagLayers,
} from "./load.ts";

async function rejects(options: LoadOptions, re: RegExp): Promise<ConfigError> {
  const t0 = performance.now();
  try {
    await loadConfig(options);
  } catch (e) {
    const ms = performance.now() - t0;
    if (!(e instanceof ConfigError)) throw e;
    assert.match(e.message, re);
    // Bound from the acceptance criterion (a bad config fails in under a second).
    assert.ok(ms < 1000, `took ${ms.toFixed(1)} ms`);
    return e;
  }
  assert.fail(`expected a ConfigError matching ${re}`);
}

async function withRecipes(files: Record<string, string>, fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    for (const [name, text] of Object.entries(files)) {
      await Deno.writeTextFile(join(dir, name), text);
    }
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("loadConfig: default recipe grpo, output.name from the recipe file, provenance of each layer", async () => {
  const { config, provenance, recipe, resume } = await loadConfig();
  assert.equal(recipe, join(RECIPES_DIR, "grpo.yaml"));
  assert.equal(resume, null);
  assert.equal(config.output.name, "grpo");
  assert.equal(config.output.dir, "runs");
  assert.match(provenance.get("algorithm.clip.low")!, /^recipe .*grpo\.yaml$/);
  assert.equal(provenance.get("trainer.seed"), "defaults");
  assert.match(provenance.get("output.name")!, /^recipe file name/);
});

Deno.test("loadConfig: flags are shortcuts for --set, parsed the same way; --out stays a string", async () => {
  const { config, provenance } = await loadConfig({
    config: "dapo",
    device: "cpu",
    seed: "3",
    steps: "7",
    out: "123",
    set: ["trainer.seed=1", "trainer.evalEvery=0"],
  });
  assert.equal(config.trainer.device, "cpu");
  assert.equal(config.trainer.seed, 3, "the flag comes after --set");
  assert.equal(config.trainer.steps, 7);
  assert.equal(config.output.dir, "123");
  assert.equal(config.trainer.evalEvery, 0);
  assert.equal(provenance.get("trainer.seed"), "--seed 3");
  const e = await rejects(
    { seed: "abc" },
    /trainer\.seed: "abc" is not allowed; use an integer \(from --seed abc\)/,
  );
  assert.equal(e.problems.length, 1);
  await rejects(
    { device: "tpu" },
    /trainer\.device: "tpu" is not allowed; use one of auto, webgpu, cpu \(from --device tpu\)/,
  );
  await rejects({ steps: "0" }, /trainer\.steps: 0 is not allowed; use a number >= 1/);
});

Deno.test("loadConfig: --model sets model.checkpoint as a path string, checked to exist", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A folder named like a YAML scalar stays a path.
    const folder = join(dir, "1e3");
    await Deno.mkdir(folder);
    const { config, provenance } = await loadConfig({ model: folder, set: ["model.checkpoint=x"] });
    assert.equal(config.model.checkpoint, folder, "the flag comes after --set");
    assert.equal(provenance.get("model.checkpoint"), `--model ${folder}`);
    assert.equal(
      (await loadConfig({ model: "builtin:tiny" })).config.model.checkpoint,
      "builtin:tiny",
    );
    await rejects(
      { model: join(dir, "missing") },
      /model\.checkpoint: ".*missing" does not exist .*; use builtin:tiny, builtin:tiny-agent, builtin:tiny-code, builtin:tiny-cot, builtin:tiny-vl or a checkpoint directory .*\(from --model /,
    );
    await rejects({ model: "builtin:huge" }, /"builtin:huge" is not a built-in model/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resolveRecipe / listRecipes: names, paths, unknown names with a suggestion", async () => {
  assert.deepEqual(listRecipes(), [
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
  ]);
  assert.equal(resolveRecipe("apps/train/recipes/dapo.yaml"), join(RECIPES_DIR, "dapo.yaml"));
  await rejects(
    { config: "gsop" },
    /--config gsop: no recipe named "gsop" in .*; use one of agent_calc, .* \(closest: gspo\)/,
  );
  await rejects({ config: "nope/x.yaml" }, /--config nope\/x\.yaml: file .* does not exist/);
  assert.deepEqual(listRecipes("/nonexistent-dir"), []);
});

Deno.test("recipe files: extends chains, relative paths, cycles, bad YAML, bad shapes", async () => {
  await withRecipes({
    "base.yaml": "trainer:\n  steps: 5\n",
    "mid.yaml": "extends: ./base.yaml\ntrainer:\n  seed: 9\n",
    "top.yaml": "extends: mid.yaml\noptimizer: { lr: 3.0e-4 }\n",
    "a.yaml": "extends: b\n",
    "b.yaml": "extends: a\n",
    "broken.yaml": "trainer:\n  steps: [1\n  seed: 2\n",
    "list.yaml": "- 1\n- 2\n",
    "badext.yaml": "extends: 3\n",
    "missing.yaml": "extends: nowhere\n",
  }, async (dir) => {
    const layers = await recipeLayers(join(dir, "top.yaml"), dir);
    assert.deepEqual(layers.map((l) => l.source.replace(/.*\//, "")), [
      "base.yaml",
      "mid.yaml",
      "top.yaml",
    ]);
    const { config } = await loadConfig({ config: join(dir, "top.yaml"), recipesDir: dir });
    assert.deepEqual([config.trainer.steps, config.trainer.seed, config.optimizer.lr], [
      5,
      9,
      3e-4,
    ]);
    assert.equal(config.output.name, "top");
    await rejects(
      { config: "a", recipesDir: dir },
      /config: extends: cycle: .*a\.yaml -> .*b\.yaml -> .*a\.yaml/,
    );
    await rejects(
      { config: "broken", recipesDir: dir },
      /broken\.yaml is not valid YAML: .*; fix the syntax there \(from recipe .*broken\.yaml\)/,
    );
    await rejects(
      { config: "list", recipesDir: dir },
      /list\.yaml must be a mapping of sections .* got a list/,
    );
    await rejects(
      { config: "badext", recipesDir: dir },
      /extends: 3 is not allowed; use the name of a recipe/,
    );
    await rejects(
      { config: "missing", recipesDir: dir },
      /extends: nowhere: no recipe named "nowhere"/,
    );
  });
});

Deno.test("loadConfig: errors name the recipe file that set a bad value", async () => {
  await withRecipes({ "x.yaml": "extends: grpo\nalgorithm:\n  estimator: grpx\n" }, async (dir) => {
    await rejects(
      { config: join(dir, "x.yaml") },
      /^config: algorithm\.estimator: "grpx" is not a known estimator; use one of .* \(from recipe .*x\.yaml\)$/,
    );
  });
});

Deno.test("loadConfig: checkpoint and dataset paths must exist (unless checkPaths is false)", async () => {
  await rejects(
    { set: ["model.checkpoint=./no/such/model"] },
    /model\.checkpoint: "\.\/no\/such\/model" does not exist .*; use builtin:tiny, builtin:tiny-agent, builtin:tiny-code, builtin:tiny-cot, builtin:tiny-vl or a checkpoint directory/,
  );
  const ok = await loadConfig({ set: ["model.checkpoint=./no/such/model"], checkPaths: false });
  assert.equal(ok.config.model.checkpoint, "./no/such/model");
  const dir = await Deno.makeTempDir();
  try {
    const data = join(dir, "d.jsonl");
    await Deno.writeTextFile(data, '{"q":"1+1","a":"2"}\n');
    const set = [
      "task.data.format=jsonl",
      "task.data.promptField=q",
      "task.data.answerField=a",
      `task.data.path=${data}`,
      `model.checkpoint=${dir}`,
    ];
    const { config } = await loadConfig({ set });
    assert.equal(config.task.name, undefined, "a dataset replaces the built-in task");
    assert.equal(config.task.data!.path, data);
    await rejects(
      { set: [...set.slice(0, 3), "task.data.path=/no/such.jsonl"] },
      /task\.data\.path: "\/no\/such\.jsonl" does not exist/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfig --resume: the run's own config; only steps and device may change", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const original = (await loadConfig({ config: "dapo", seed: "11" })).config;
    const runDir = join(dir, "my-run");
    await Deno.mkdir(runDir);
    await Deno.writeTextFile(join(runDir, "config.yaml"), configToYaml(original));
    const resumed = await loadConfig({ resume: runDir, steps: "500", device: "cpu" });
    assert.equal(resumed.recipe, null);
    assert.equal(resumed.resume, runDir);
    assert.equal(resumed.config.trainer.steps, 500);
    assert.equal(resumed.config.trainer.device, "cpu");
    assert.deepEqual(
      { ...resumed.config, trainer: original.trainer, output: original.output },
      original,
      "everything else is the original config",
    );
    assert.deepEqual(resumed.config.output, {
      dir,
      name: "my-run",
      tensorboard: false,
      sinks: ["jsonl"],
    });
    const e = await rejects(
      { resume: runDir, set: ["trainer.seed=1", "trainer.steps=9"], out: "elsewhere" },
      /trainer\.seed: cannot change when resuming/,
    );
    assert.deepEqual(e.problems.map((p) => p.path), ["trainer.seed", "output.dir"]);
    await rejects(
      { resume: runDir, model: "builtin:tiny" },
      /model\.checkpoint: cannot change when resuming .*\(from --model builtin:tiny\)/,
    );
    const flags = await rejects(
      { resume: runDir, reward: ["./r.ts"], set: ["num_generations=4"] },
      /rewards: cannot change when resuming .*\(from --reward \.\/r\.ts\)/,
    );
    assert.deepEqual(flags.problems.map((p) => p.path), ["num_generations", "rewards"]);
    // A veRL/TRL name of trainer.steps may change, like trainer.steps.
    const longer = await loadConfig({ resume: runDir, set: ["trainer.total_training_steps=700"] });
    assert.equal(longer.config.trainer.steps, 700);
    await rejects(
      { resume: runDir, config: "grpo" },
      /--resume .* takes the run's own config\.yaml; drop --config grpo/,
    );
    await rejects({ resume: join(dir, "nope") }, /--resume .*nope: .*config\.yaml does not exist/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("configToYaml: every recipe's resolved config survives a YAML round trip", async () => {
  for (const name of listRecipes()) {
    const { config } = await loadConfig({ config: name });
    assert.deepEqual(YAML.parse(configToYaml(config)), JSON.parse(JSON.stringify(config)), name);
  }
});

Deno.test("loadConfig --data: sets task.data.path and its format, drops task.name and its options", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const jsonl = join(dir, "gsm8k.jsonl");
    const parquet = join(dir, "gsm8k.parquet");
    await Deno.writeTextFile(jsonl, '{"question":"1+1","answer":"#### 2"}\n');
    await Deno.writeTextFile(parquet, "");
    const { config, provenance } = await loadConfig({ data: jsonl });
    assert.equal(config.task.name, undefined);
    assert.equal(config.task.options, undefined);
    assert.deepEqual(config.task.data, {
      path: jsonl,
      format: "jsonl",
      promptField: "prompt", // the schema's defaults
      answerField: "answer",
      testFraction: 0.1,
    });
    assert.equal(provenance.get("task.data.path"), `--data ${jsonl}`);
    assert.equal((await loadConfig({ data: parquet })).config.task.data!.format, "parquet");
    // The field mapping comes from --set, which the flag does not override.
    const mapped = await loadConfig({
      data: jsonl,
      set: ["task.data.promptField=question", "task.data.template=Q: {{question}}"],
    });
    assert.equal(mapped.config.task.data!.promptField, "question");
    assert.equal(mapped.config.task.data!.template, "Q: {{question}}");
    await rejects(
      { data: join(dir, "gsm8k.csv") },
      /task\.data\.path: cannot tell the format of ".*gsm8k\.csv" from its extension; use a \.jsonl, \.ndjson or \.parquet file .*\(from --data /,
    );
    await rejects(
      { data: join(dir, "none.jsonl") },
      /task\.data\.path: ".*none\.jsonl" does not exist .*; use an existing \.jsonl or \.parquet file \(from --data /,
    );
    // A recipe that names both a task and a dataset gets one clear error.
    const both = join(dir, "both.yaml");
    await Deno.writeTextFile(
      both,
      `extends: grpo\ntask:\n  name: countdown\n  data: { path: ${jsonl}, format: jsonl }\n`,
    );
    await rejects(
      { config: both },
      /task\.data: both task\.name \(countdown\) and task\.data \(.*gsm8k\.jsonl\) are set; keep one: remove task\.name to train on the dataset or task\.data to use the built-in task \(--data <file> replaces task\.name\)/,
    );
    // --data replaces a recipe's task.name.
    assert.equal((await loadConfig({ config: both, data: jsonl })).config.task.name, undefined);
    // Resuming cannot switch datasets.
    const runDir = join(dir, "run");
    await Deno.mkdir(runDir);
    await Deno.writeTextFile(join(runDir, "config.yaml"), configToYaml(config));
    await rejects(
      { resume: runDir, data: jsonl },
      /task\.data\.path: cannot change when resuming .*\(from --data /,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("recipes by URL: names resolve against a URL recipesDir, extends: follows URLs, a missing recipe names its URL", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const name = decodeURIComponent(new URL(req.url).pathname).replace(/^\/recipes\//, "");
    if (name.includes("/")) return new Response("not found", { status: 404 });
    try {
      return new Response(await Deno.readFile(join(RECIPES_DIR, name)));
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  const dir = `http://127.0.0.1:${server.addr.port}/recipes/`;
  try {
    assert.deepEqual(listRecipes(dir), []);
    assert.equal(resolveRecipe("dapo", dir), `${dir}dapo.yaml`);
    assert.equal(resolveRecipe("./x.yaml", RECIPES_DIR, dir), `${dir}x.yaml`);
    const remote = await loadConfig({ config: "dapo", recipesDir: dir });
    assert.equal(remote.recipe, `${dir}dapo.yaml`);
    assert.deepEqual(remote.config, (await loadConfig({ config: "dapo" })).config);
    const sources = new Set(remote.provenance.values());
    assert.ok(sources.has(`recipe ${dir}grpo.yaml`), [...sources].join(", ")); // dapo extends grpo
    assert.ok(sources.has(`recipe ${dir}dapo.yaml`));
    // A local recipe may extend a built-in one by name.
    await withRecipes({ "mine.yaml": "extends: dapo\ntrainer:\n  seed: 3\n" }, async (local) => {
      const { config } = await loadConfig({ config: join(local, "mine.yaml"), recipesDir: dir });
      assert.deepEqual([config.trainer.seed, config.algorithm.clip.high], [3, 0.28]);
    });
    await rejects(
      { config: "dapx", recipesDir: dir },
      /cannot read http:\/\/127\.0\.0\.1:\d+\/recipes\/dapx\.yaml: no such file \(HTTP 404\)/,
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("--reward: appended to the recipe's rewards after every layer; --set rewards=[...] replaces them", async () => {
  assert.deepEqual(rewardFlagLayers(["./r.ts", "./s.ts#brevity"]), [
    { source: "--reward ./r.ts", data: { rewards: [{ path: "./r.ts#default", weight: 1 }] } },
    {
      source: "--reward ./s.ts#brevity",
      data: { rewards: [{ path: "./s.ts#brevity", weight: 1 }] },
    },
  ]);
  for (const bad of ["", "#f", "./r.ts#", "./r.ts#not-a-name"]) {
    assert.throws(
      () => rewardFlagLayers([bad]),
      (e: unknown) =>
        e instanceof ConfigError && e.problems[0]!.path === "rewards" &&
        e.message.includes(`--reward ${JSON.stringify(bad)}: expected <file>[#<export>]`),
      bad,
    );
  }
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "r.ts");
    await Deno.writeTextFile(file, "export default () => [1];\nexport const short = () => [0];\n");
    const recipe = join(dir, "with_rewards.yaml");
    await Deno.writeTextFile(recipe, "extends: grpo\nrewards:\n  - { type: math }\n");
    const { config, provenance } = await loadConfig({
      config: recipe,
      reward: [file, `${file}#short`],
    });
    assert.deepEqual(config.rewards, [
      { type: "math", weight: 1, options: {} },
      { path: `${file}#default`, weight: 1, options: {} },
      { path: `${file}#short`, weight: 1, options: {} },
    ]);
    assert.equal(provenance.get("rewards[2]"), `--reward ${file}#short`);
    // --set replaces the recipe's list (a list is one value); --reward still appends, whatever
    // the order of the flags.
    const replaced = await loadConfig({
      config: recipe,
      reward: [file],
      set: ["rewards=[{type: format}]"],
    });
    assert.deepEqual(replaced.config.rewards!.map((r) => r.type ?? r.path), [
      "format",
      `${file}#default`,
    ]);
    // Without a rewards list, the flag starts one.
    const fresh = await loadConfig({ reward: [file] });
    assert.deepEqual(fresh.config.rewards, [{ path: `${file}#default`, weight: 1, options: {} }]);
    assert.equal(fresh.provenance.get("rewards"), `--reward ${file}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfig: a rule broken by a --set value names that --set, not the defaults or the recipe", async () => {
  // The key a rule is filed under came from the recipe; the value that broke it from --set.
  const cases: [string[], RegExp][] = [
    [
      ["rollout.batchSize=12"],
      /^config: rollout\.groupSize: 8 does not divide rollout\.batchSize 12; .* \(from recipe .*grpo\.yaml; rollout\.batchSize from --set rollout\.batchSize=12\)$/,
    ],
    [
      ["trainer.evalSamples=2"],
      /^config: trainer\.evalK: 8 exceeds trainer\.evalSamples 2; .*; trainer\.evalSamples from --set trainer\.evalSamples=2\)$/,
    ],
    [
      ["rollout.maxNewTokens=4", "algorithm.overlong.enabled=true"],
      /^config: algorithm\.overlong\.buffer: 8 exceeds rollout\.maxNewTokens 4; .*rollout\.maxNewTokens from --set rollout\.maxNewTokens=4; algorithm\.overlong\.enabled from --set algorithm\.overlong\.enabled=true\)$/,
    ],
    [
      ["algorithm.clip.low=0.5"],
      /^config: algorithm\.clip\.high: .*; algorithm\.clip\.low from --set algorithm\.clip\.low=0\.5\)$/,
    ],
    // A list item's key names the layer that set the list (before: no source at all).
    [
      ["rewards=[{type: math, weight: x}]"],
      /^config: rewards\[0\]\.weight: "x" is not allowed; use a number \(from --set rewards=/,
    ],
    // A veRL name names the flag as typed.
    [
      ["data.train_batch_size=12"],
      /algorithm\.microBatchSize: 64 does not divide rollout\.batchSize 96; .*rollout\.batchSize from --set data\.train_batch_size=12 \(12 prompts × rollout\.groupSize 8\)\)$/,
    ],
  ];
  for (const [set, re] of cases) {
    const e = await rejects({ set }, re);
    assert.doesNotMatch(e.message, /\(from defaults\)$/, set.join(" "));
  }
});

Deno.test("loadConfig --resume: a run another holder has locked is a ConfigError naming the PID", async () => {
  const { RunLock } = await import("../run/run_lock.ts");
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "config.yaml"),
      configToYaml((await loadConfig({})).config),
    );
    const lock = await RunLock.acquire(dir);
    try {
      await rejects(
        { resume: dir },
        new RegExp(`^config: --resume .*: .* is in use by PID ${Deno.pid} on .*kill ${Deno.pid}`),
      );
    } finally {
      await lock.release();
    }
    assert.equal((await loadConfig({ resume: dir })).resume, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
