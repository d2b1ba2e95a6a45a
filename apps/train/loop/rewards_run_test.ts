import assert from "node:assert/strict";
import { join } from "node:path";
import { defineReward } from "@rlvr/rewards";
import { ConfigError } from "../config/errors.ts";
import { loadConfig } from "../config/load.ts";
import { train } from "../train.ts";
import { BATCH16_SET, quiet, records } from "./_run_test_util.ts";
import { runTraining } from "./run.ts";

const EXAMPLE = join(
  import.meta.dirname!,
  "..",
  "..",
  "..",
  "examples",
  "rewards",
  "close_enough.ts",
);
const SMALL = [...BATCH16_SET, "trainer.device=cpu"];

Deno.test("rewards: a module reward and a built-in one are summed by weight and logged per component", async () => {
  const out = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      out,
      steps: "3",
      set: [...SMALL, `rewards=[{path: "${EXAMPLE}"}, {type: format, weight: 0.5}, {type: task}]`],
    });
    assert.deepEqual(loaded.config.rewards!.map((r) => r.weight), [1, 0.5, 1]);
    const r = await runTraining(loaded, quiet);
    const metrics = await records(r.dir, "metrics.jsonl");
    for (const m of metrics) {
      for (const name of ["close_enough", "format", "task"]) {
        assert.ok(`reward/${name}/mean` in m, `${name} mean logged`);
        assert.equal(m[`reward/${name}/errors`], 0);
      }
      assert.equal(m["reward/unscored"], 0);
      // The tiny model never writes <think>/<answer>: format adds 0, the total is close + task.
      assert.equal(m["reward/format/mean"], 0);
      const total = (m["reward/close_enough/mean"] as number) + (m["reward/task/mean"] as number);
      assert.ok(Math.abs((m["reward/mean"] as number) - total) < 1e-12, JSON.stringify(m));
    }
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("rewards: a reward that throws on about 10% of samples: the run completes, the samples are left out and counted", async () => {
  let thrown = 0;
  let calls = 0;
  // Deterministic: every 10th call throws (the runner calls per sample in input order).
  const flaky = defineReward("flaky", (input) => {
    if (calls++ % 10 === 9) {
      thrown++;
      throw new Error(`flaky on ${input.completion.length} chars`);
    }
    return input.completion.trim() === String(input.row.answer) ? 1 : 0;
  });
  const out = await Deno.makeTempDir();
  const lines: string[] = [];
  try {
    const loaded = await loadConfig({
      out,
      steps: "5",
      set: [...SMALL, "rewards=[{inline: flaky}]"],
    });
    const r = await runTraining(loaded, {
      ...quiet,
      log: (l) => lines.push(l),
      rewards: new Map([["flaky", flaky]]),
    });
    assert.equal(r.step, 5);
    const metrics = await records(r.dir, "metrics.jsonl");
    const errors = metrics.reduce((n, m) => n + (m["reward/flaky/errors"] as number), 0);
    assert.equal(errors, thrown);
    assert.equal(thrown, 8); // 80 calls, every 10th
    for (const m of metrics) {
      assert.equal(m["batch/responses"], 16 - (m["reward/flaky/errors"] as number));
    }
    assert.ok(lines.some((l) => /reward: step \d+, sample .+\/\d: flaky error: flaky on/.test(l)));
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("train({ data, rewards }): a TRL-style reward function in code trains the tiny policy and its reward rises", async () => {
  const out = await Deno.makeTempDir();
  try {
    const { default: closeEnough } = await import(EXAMPLE);
    const rows = Array.from({ length: 200 }, (_, i) => {
      const a = 10 + (i * 37) % 90;
      const b = 10 + (i * 53) % 90;
      return { prompt: `${a}+${b}=`, answer: String(a + b) };
    });
    const rewards: number[] = [];
    const r = await train({
      out,
      data: rows,
      rewards: [closeEnough],
      config: {
        trainer: {
          steps: 60,
          evalEvery: 0,
          evalProblems: 4,
          evalSamples: 2,
          evalK: 2,
          device: "cpu",
        },
      },
      callbacks: { onStep: (m) => void rewards.push(m["reward/mean"] as number) },
      log: () => {},
      progress: () => {},
      report: false,
    });
    assert.equal(r.step, 60);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const first = mean(rewards.slice(0, 10));
    const last = mean(rewards.slice(-10));
    assert.ok(last > first + 0.05, `reward/mean ${first.toFixed(3)} -> ${last.toFixed(3)}`);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("rewards: config problems name the entry and the fix", async () => {
  const cases: [string[], RegExp][] = [
    [["rewards=[{type: nope}]"], /rewards\[0\]\.type: "nope" is not a known reward type/],
    [["rewards=[{type: math, path: ./x.ts}]"], /give exactly one of type .* got type and path/],
    [
      ["rewards=[{path: ./missing_reward.ts}]"],
      /rewards\[0\]\.path: "\.\/missing_reward\.ts" does not exist/,
    ],
    [
      ["rewards=[{type: length, options: {kind: nope}}]"],
      /rewards\[0\]\.options: rejected by reward length: length: options\.kind/,
    ],
    [
      ["rewards=[{type: math}, {type: math}]"],
      /rewards\[1\]\.name: "math" is used by an earlier reward/,
    ],
    [
      ["rewards=[{type: math}]", "task.formatWeight=0.5"],
      /task\.formatWeight: set together with rewards: add \{type: format/,
    ],
    [
      ["rewards=[{inline: mine}]", "rollout.mode=async"],
      /rewards\[0\]\.inline: "mine" is a reward passed in code/,
    ],
  ];
  for (const [set, re] of cases) {
    await assert.rejects(
      loadConfig({ set }),
      (e: unknown) => e instanceof ConfigError && re.test(e.message),
      set.join(" "),
    );
  }
  // An inline reward the run was not given fails before any step, naming it.
  const out = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      out,
      steps: "1",
      set: [...SMALL, "rewards=[{inline: mine}]"],
    });
    await assert.rejects(
      runTraining(loaded, quiet),
      /rewards\[0\]\.inline: no reward "mine" was passed in code/,
    );
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("rewards: majority vote (TTRL) scores bare answers by their group's most frequent one, without the gold answer", async () => {
  const { RewardSet } = await import("./reward_set.ts");
  const set = await RewardSet.fromSpecs([{ type: "majority_vote", weight: 1, options: {} }], {
    task: null,
  });
  const row = {};
  const inputs = ["42", "42", " 41", "42", "7", "7"].map((completion, i) => ({
    prompt: i < 4 ? "40+2=" : "3+4=",
    completion,
    row,
  }));
  assert.deepEqual((await set.score(inputs)).totals, [1, 1, 0, 1, 1, 1]);
});

Deno.test("rewards: vl_rows credits each patch row whose count is the image's, not the trace's own codes", async () => {
  const { RewardSet } = await import("./reward_set.ts");
  const { countShapesTask } = await import("@rlvr/rewards/vision");
  const { seededRng } = await import("@rlvr/rewards");
  const { cellShapes, shapeCode, vlCompletion } = await import("../demo/vl_format.ts");
  const set = await RewardSet.fromSpecs([{ type: "vl_rows", weight: 1, options: {} }], {
    task: null,
  });
  // With described: a row whose count is right but whose description is not earns nothing.
  const described = await RewardSet.fromSpecs([
    { type: "vl_rows", weight: 1, options: { described: true } },
  ], { task: null });
  const task = countShapesTask({
    size: 56,
    shapeSize: [8, 10],
    count: [3, 6],
    distractors: [6, 8],
  });
  for (let i = 0; i < 40; i++) {
    const row = task.row(3, i);
    const right = vlCompletion(row, [1, 4, 4], seededRng(i), { slipRate: 0 })!;
    const steps = /<think>([^<]*)<\/think>/.exec(right)![1]!.split(" ");
    // One row's count off by one: 3 of 4 rows right, the total wrong.
    const r = i % 4;
    const slipped = steps.map((s, j) =>
      j === r ? s.replace(/:(\d+)=/, (_, c) => `:${Number(c) + 1}=`) : s
    );
    // Row r's codes rewritten to list no target, its count following them (0): consistent with
    // its own codes, wrong about the image unless the row had no target.
    const target = shapeCode({ color: row.targetColor as string, kind: row.targetKind as string });
    const inRow = cellShapes(row, [1, 4, 4]).slice(r * 4, r * 4 + 4).flat()
      .filter((s) => shapeCode(s) === target).length;
    const blind = steps.map((s, j) => j === r ? "....:0=0" : s);
    const wrap = (xs: string[]) => `<think>${xs.join(" ")}</think><answer>0</answer>`;
    const inputs = [right, wrap(slipped), wrap(blind), "<answer>3</answer>", right.repeat(3)]
      .map((completion) => ({ prompt: "", completion, row }));
    assert.deepEqual((await set.score(inputs)).totals, [
      1,
      0.75,
      inRow === 0 ? 1 : 0.75,
      0,
      1, // only the first <think> block's first four steps are read
    ], `row ${i}`);
    // Row r's description altered (a code swapped for an empty patch or the reverse), its count
    // kept: right under the count alone, wrong when described.
    const altered = steps.map((s, j) =>
      j === r
        ? s.replace(/^([^:]*)/, (d) => (d.startsWith(".") ? "xx" + d.slice(1) : "." + d.slice(2)))
        : s
    );
    const pair = [right, wrap(altered)].map((completion) => ({ prompt: "", completion, row }));
    assert.deepEqual((await described.score(pair)).totals, [1, 0.75], `described row ${i}`);
    assert.deepEqual((await set.score(pair)).totals, [1, 1], `count only row ${i}`);
  }
  await assert.rejects(
    RewardSet.fromSpecs([{ type: "vl_rows", weight: 1, options: { described: "yes" } }], {
      task: null,
    }),
    /vl_rows: options\.described must be true or false .* got "yes"/,
  );
  const other = await set.score([{ prompt: "2+2", completion: "4", row: { answer: "4" } }]);
  assert.deepEqual(other.totals, [null]); // not a counting row: not scored
  await assert.rejects(
    RewardSet.fromSpecs([{ type: "vl_rows", weight: 1, options: { rows: 4 } }], { task: null }),
    /rewards\[0\]\.options: rejected by reward vl_rows: vl_rows: takes no other options, got rows/,
  );
});

Deno.test("rewards: DAPO's overlong penalty is added to the rewards' total", async () => {
  const { RewardSet } = await import("./reward_set.ts");
  const { collectRollout } = await import("./rollout.ts");
  const { loadPolicy } = await import("./policy.ts");
  const { heldOutProblems, TrainStream } = await import("./problems.ts");
  const { arithmeticTask, dapoOverlongPenalty } = await import("@rlvr/rewards");
  const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });
  const rewards = await RewardSet.fromSpecs([{ type: "task", weight: 1, options: {} }], { task });
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const opts = {
      step: 1,
      seed: 0,
      batchSize: 8,
      groupSize: 4,
      maxNewTokens: 4,
      sampling: { temperature: 1 },
      dynamicRetries: null,
      rewards,
    };
    const stream = () => new TrainStream(task, 0, heldOutProblems(task, 4));
    const plain = await collectRollout(model, tokenizer, task, stream(), {
      ...opts,
      overlong: null,
    });
    const shaped = await collectRollout(model, tokenizer, task, stream(), {
      ...opts,
      overlong: { buffer: 4, penalty: 1 },
    });
    for (const [i, it] of shaped.items.entries()) {
      const penalty = dapoOverlongPenalty(it.completionIds.length, {
        maxLength: 4,
        cacheLength: 4,
      });
      assert.equal(it.reward, plain.items[i]!.reward + penalty);
    }
    assert.ok(shaped.items.some((it) => it.reward < plain.items[shaped.items.indexOf(it)]!.reward));
  } finally {
    model.dispose();
  }
});

Deno.test("rewards: a module reward is built and scored in the rollout worker (one-step-off)", async () => {
  const out = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      out,
      steps: "3",
      set: [...SMALL, "rollout.mode=one_step_off", `rewards=[{path: "${EXAMPLE}"}]`],
    });
    const r = await runTraining(loaded, quiet);
    const metrics = await records(r.dir, "metrics.jsonl");
    assert.deepEqual(metrics.map((m) => m["reward/close_enough/errors"]), [0, 0, 0]);
    for (const m of metrics) {
      assert.equal(m["reward/mean"], m["reward/close_enough/mean"]);
      assert.ok("rollout/policy_version" in m, "sampled by a rollout worker");
    }
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("train({ resolved }): runs a config loadConfig resolved (the CLI's path); other config options are refused with it", async () => {
  const out = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({ out, steps: "1", set: SMALL });
    await assert.rejects(
      train({ resolved: loaded, recipe: "dapo", log: () => {} }),
      /resolved is a whole config; recipe would be ignored/,
    );
    const r = await train({ resolved: loaded, log: () => {}, progress: () => {}, report: false });
    assert.equal(r.step, 1);
    assert.equal(r.config, loaded.config);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
