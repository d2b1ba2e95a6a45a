import assert from "node:assert/strict";
import { crossFieldProblems, registryProblems } from "./checks.ts";
import { defaultConfig } from "./defaults.ts";
import type { Config } from "./types.ts";

function paths(problems: { path: string }[]): string[] {
  return problems.map((p) => p.path);
}

function config(edit: (c: Config) => void): Config {
  const c = defaultConfig();
  edit(c);
  return c;
}

Deno.test("crossFieldProblems: the defaults are consistent", () => {
  assert.deepEqual(crossFieldProblems(defaultConfig()), []);
});

Deno.test("crossFieldProblems: task is a built-in task or a dataset, exactly one", () => {
  const none = crossFieldProblems(config((c) => {
    delete c.task.name;
  }));
  assert.deepEqual(paths(none), ["task"]);
  assert.match(
    none[0]!.message,
    /set task\.name to a built-in task \(arithmetic, bar_chart, clock, count_shapes, countdown/,
  );
  const data = {
    path: "d.jsonl",
    format: "jsonl" as const,
    promptField: "q",
    answerField: "a",
    testFraction: 0.1,
  };
  assert.deepEqual(paths(crossFieldProblems(config((c) => c.task.data = data))), ["task.data"]);
  assert.deepEqual(
    paths(crossFieldProblems(config((c) => {
      delete c.task.name;
      c.task.data = data;
    }))),
    ["task.options"], // the default task's options do not apply to a dataset
  );
});

Deno.test("crossFieldProblems: batch divisibility, clip order, dynamic sampling", () => {
  const g = crossFieldProblems(config((c) => c.rollout.groupSize = 5));
  assert.deepEqual(paths(g), ["rollout.groupSize"]);
  assert.match(
    g[0]!.message,
    /5 does not divide rollout\.batchSize 64; use one of 1, 2, 4, 8, 16, 32, 64/,
  );
  const m = crossFieldProblems(config((c) => c.algorithm.microBatchSize = 6));
  assert.deepEqual(paths(m), ["algorithm.microBatchSize"]);
  // A micro-batch larger than the batch is one pass over it.
  assert.deepEqual(crossFieldProblems(config((c) => c.algorithm.microBatchSize = 96)), []);
  const clip = crossFieldProblems(
    config((c) => c.algorithm.clip = { low: 0.3, high: 0.2, dual: null }),
  );
  assert.deepEqual(paths(clip), ["algorithm.clip.high"]);
  assert.match(clip[0]!.message, /use clip\.high >= 0\.3/);
  // CISPO's clip.low is not a trust-region bound (1 = no lower bound on the weight)
  assert.deepEqual(
    crossFieldProblems(config((c) => {
      c.algorithm.loss = "cispo";
      c.algorithm.clip = { low: 1, high: 0.2, dual: null };
    })),
    [],
  );
  const ds = crossFieldProblems(config((c) => {
    c.rollout.groupSize = 1;
    c.rollout.dynamicSampling.enabled = true;
  }));
  assert.deepEqual(paths(ds), ["rollout.dynamicSampling.enabled"]);
});

Deno.test("crossFieldProblems: PPO (gae) needs a value head, gae and value settings; nothing else uses them", () => {
  const ppo = crossFieldProblems(config((c) => c.algorithm.estimator = "gae"));
  assert.deepEqual(paths(ppo), ["model.valueHead", "algorithm.gae", "algorithm.value"]);
  assert.match(ppo[0]!.message, /set model\.valueHead: true/);
  const stray = crossFieldProblems(config((c) => {
    c.model.valueHead = true;
    c.algorithm.gae = { gamma: 1, lambda: 1 };
  }));
  assert.deepEqual(paths(stray), ["algorithm.gae", "model.valueHead"]);
});

Deno.test("crossFieldProblems: overlong buffer, eval k, samples count", () => {
  const o = crossFieldProblems(config((c) => {
    c.algorithm.overlong = { enabled: true, buffer: 40, penalty: 1 };
  }));
  assert.deepEqual(paths(o), ["algorithm.overlong.buffer"]);
  assert.match(o[0]!.message, /use a buffer in \[0, 8\]/);
  assert.deepEqual(paths(crossFieldProblems(config((c) => c.trainer.evalK = 9))), [
    "trainer.evalK",
  ]);
  assert.deepEqual(
    paths(crossFieldProblems(config((c) => c.trainer.samplesCount = 65))),
    ["trainer.samplesCount"],
  );
});

Deno.test("registryProblems: the defaults pass the trial calls", async () => {
  assert.deepEqual(await registryProblems(defaultConfig()), []);
});

Deno.test("registryProblems: task options are checked by name, then by the generator", async () => {
  const unknown = await registryProblems(config((c) => c.task.options = { digitz: 2 }));
  assert.deepEqual(paths(unknown), ["task.options.digitz"]);
  assert.match(unknown[0]!.message, /did you mean task\.options\.digits\?/);
  const range = await registryProblems(config((c) => c.task.options = { chainLength: 50 }));
  assert.deepEqual(paths(range), ["task.options.chainLength"]);
  assert.match(
    range[0]!.message,
    /rejected by the arithmetic task: .*chainLength must be an integer in \[1, 20\], got 50/,
  );
});

Deno.test("registryProblems: estimator settings (data fields, gae keys, registry checks)", async () => {
  const data = await registryProblems(
    config((c) => c.algorithm.estimatorOptions = { groupSize: 4 }),
  );
  assert.deepEqual(paths(data), ["algorithm.estimatorOptions.groupSize"]);
  assert.match(data[0]!.message, /filled by the trainer .* \(set rollout\.groupSize\)/);
  const gae = await registryProblems(config((c) => {
    c.model.valueHead = true;
    c.algorithm.estimator = "gae";
    c.algorithm.gae = { gamma: 1, lambda: 1 };
    c.algorithm.value = { coef: 0.5, clipRange: 0.2 };
    c.algorithm.estimatorOptions = { lam: 0.9 };
  }));
  assert.deepEqual(paths(gae), ["algorithm.estimatorOptions.lam"]);
  assert.match(gae[0]!.message, /set algorithm\.gae\.lambda instead/);
  const typo = await registryProblems(
    config((c) => c.algorithm.estimatorOptions = { epsilonn: 0 }),
  );
  assert.deepEqual(paths(typo), ["algorithm.estimatorOptions.epsilonn"]);
  assert.match(typo[0]!.message, /rejected by estimator grpo: grpo: unknown field "epsilonn"/);
  const k = await registryProblems(config((c) => c.algorithm.estimator = "passk_analytic"));
  assert.deepEqual(paths(k), ["algorithm.estimatorOptions"]);
  assert.match(k[0]!.message, /k is required.*; set it in algorithm\.estimatorOptions/);
  const klr = await registryProblems(config((c) => {
    c.algorithm.kl = { beta: 0.1, estimator: "k3+", placement: "reward" };
  }));
  // veRL's straight-through keys carry the base estimator's value, which a reward penalty takes.
  assert.deepEqual(paths(klr), []);
});

Deno.test("registryProblems: policy-loss options (first-class fields, unknown names, values)", async () => {
  const first = await registryProblems(config((c) => c.algorithm.lossOptions = { klCoef: 0.1 }));
  assert.deepEqual(paths(first), ["algorithm.lossOptions.klCoef"]);
  assert.match(first[0]!.message, /set algorithm\.kl\.beta instead/);
  const unknown = await registryProblems(config((c) => c.algorithm.lossOptions = { tauPoz: 1 }));
  assert.deepEqual(paths(unknown), ["algorithm.lossOptions.tauPoz"]);
  assert.match(
    unknown[0]!.message,
    /rejected by policy loss vanilla: vanilla: unknown option "tauPoz"/,
  );
  const value = await registryProblems(config((c) => {
    c.algorithm.loss = "sapo";
    c.algorithm.lossOptions = { tauPos: -1 };
  }));
  assert.deepEqual(paths(value), ["algorithm.lossOptions.tauPos"]);
});

Deno.test("registryProblems: off-policy weights are refused when π_old is the sampler's", async () => {
  const offPolicy = { tis: { level: "token", cap: 2 } };
  const both = await registryProblems(config((c) => {
    c.algorithm.oldLogProbs = "rollout";
    c.algorithm.lossOptions = { offPolicy };
  }));
  assert.deepEqual(paths(both), ["algorithm.lossOptions.offPolicy"]);
  assert.match(both[0]!.message, /weights π_old\/π_rollout are all 1/);
  assert.deepEqual(
    await registryProblems(config((c) => c.algorithm.lossOptions = { offPolicy })),
    [],
  );
  assert.deepEqual(await registryProblems(config((c) => c.algorithm.oldLogProbs = "rollout")), []);
});

Deno.test("crossFieldProblems: a dataset without answers needs rewards that do not read answers", () => {
  const data = {
    path: "code.jsonl",
    format: "jsonl" as const,
    promptField: "prompt",
    answerField: null,
    testFraction: 0.1,
  };
  const bare = crossFieldProblems(config((c) => {
    delete c.task.name;
    delete c.task.options;
    c.task.data = data;
  }));
  assert.deepEqual(paths(bare), ["task.data.answerField"]);
  assert.match(bare[0]!.message, /add rewards \(e\.g\. \[\{type: code\}\]/);
  const withTask = crossFieldProblems(config((c) => {
    delete c.task.name;
    delete c.task.options;
    c.task.data = data;
    c.rewards = [
      { type: "code", weight: 1, options: {} },
      { type: "task", weight: 1, options: {} },
      { type: "math", weight: 1, options: {} },
      { type: "math", weight: 1, options: { goldField: "expected" } },
    ];
  }));
  assert.deepEqual(paths(withTask), ["rewards[1].type", "rewards[2].type"]);
  assert.match(withTask[0]!.message, /task\.data\.answerField is null/);
});

Deno.test("crossFieldProblems: rollout.decodeLoop=device refuses a CPU trainer by name; sampler filters, LoRA and visual runs pass", () => {
  const device = (edit: (c: Config) => void) =>
    crossFieldProblems(config((c) => {
      c.rollout.decodeLoop = "device";
      c.trainer.device = "webgpu";
      edit(c);
    }));
  assert.deepEqual(device(() => {}), []);
  const cpu = device((c) => c.trainer.device = "cpu");
  assert.deepEqual(paths(cpu), ["rollout.decodeLoop"]);
  assert.match(
    cpu[0]!.message,
    /^device, but trainer\.device is cpu, .*set trainer\.device to webgpu, or set rollout\.decodeLoop to host$/,
  );
  // Sampler filters and LoRA run on the device too.
  assert.deepEqual(device((c) => c.rollout.sampler.topP = 0.9), []);
  const lora = device((c) => c.model.lora = { rank: 4, alpha: 8, targetModules: ["q_proj"] });
  assert.deepEqual(lora, []); // the device loop folds the adapters into copies of the weights
  const visual = device((c) => {
    c.task.name = "count_shapes";
    c.task.options = {};
  });
  assert.deepEqual(visual, []); // images go through the prefill's hook; decode steps on the GPU
  assert.deepEqual(crossFieldProblems(config((c) => c.rollout.decodeLoop = "host")), []);
});
