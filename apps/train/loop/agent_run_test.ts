import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../config/load.ts";
import type { EpisodeItem } from "./episode.ts";
import { runTraining } from "./run.ts";
import { loadSchedulerState } from "./state.ts";
import { quiet, records, withoutTiming } from "./_run_test_util.ts";

Deno.test("agent_calc: episodes train and evaluate; samples show the tool call and its result", async () => {
  const root = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      config: "agent_calc",
      out: root,
      steps: "2",
      set: [
        "rollout.batchSize=16",
        "rollout.groupSize=4",
        "algorithm.microBatchSize=8",
        "trainer.evalProblems=8",
        "trainer.evalSamples=2",
        "trainer.evalK=2",
        "trainer.samplesEvery=1",
      ],
    });
    const r = await runTraining(loaded, quiet);
    assert.equal(r.step, 2);
    const m = await records(r.dir, "metrics.jsonl");
    for (const x of m) {
      const turns = x["episode/turns"] as number;
      const success = x["episode/success"] as number;
      assert.ok(turns >= 1 && turns <= 3, `turns ${turns}`);
      assert.ok(success >= 0 && success <= 1);
      // rewards are the verifier's 0/1, so accuracy and success agree
      assert.equal(x["accuracy/mean"], success);
    }
    const evals = await records(r.dir, "eval.jsonl");
    assert.deepEqual(evals.map((e) => e.step), [0, 2]);
    // the warm-started policy calls the calculator: `{a+b}` then the environment's `sum|`
    const samples = await records(r.dir, "samples.jsonl");
    assert.ok(
      samples.some((s) => /^\{\d{3}\+\d{3}\}\d+\|/.test(s.completion as string)),
      JSON.stringify(samples.slice(0, 4)),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("task.env: config errors name the key and the fix", async () => {
  const env = "task.env={name: calc, options: {digits: 3}, maxTurns: 2, syntax: compact}";
  await assert.rejects(
    loadConfig({ set: [env] }),
    /task\.name: set together with task\.env .*set task\.name to null/s,
  );
  const clean = [env, "task.name=null", "task.options=null"];
  await assert.rejects(
    loadConfig({ set: [...clean, "rollout.mode=async", "rollout.partial=true"] }),
    /rollout\.partial: true, but task\.env is set.*set rollout\.partial to false/s,
  );
  // episodes run in rollout workers too
  await loadConfig({ set: [...clean, "rollout.mode=async"] });
  await assert.rejects(
    loadConfig({ set: [...clean, "rollout.dynamicSampling.enabled=true"] }),
    /rollout\.dynamicSampling\.enabled: true, but it is not applied to episodes/,
  );
  await assert.rejects(
    loadConfig({ set: ["task.env={name: chess}", "task.name=null", "task.options=null"] }),
    /task\.env\.name.*not a known built-in environment; use one of calc, qa/s,
  );
  await assert.rejects(
    loadConfig({
      set: ["task.env={name: calc, options: {digits: 0}}", "task.name=null", "task.options=null"],
    }),
    /task\.env\.options: rejected by environment calc: .*digits/s,
  );
  const ok = await loadConfig({ set: clean });
  assert.equal(ok.config.task.env?.maxTurns, 2);
});

Deno.test("agent_calc with estimator gigpo: turn-level advantages from the episodes' anchor states train", async () => {
  const root = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      config: "agent_calc",
      out: root,
      steps: "2",
      set: [
        "algorithm.estimator=gigpo",
        "algorithm.estimatorOptions={omega: 1, gamma: 0.95}",
        "rollout.batchSize=16",
        "rollout.groupSize=4",
        "algorithm.microBatchSize=16",
        "trainer.evalProblems=4",
        "trainer.evalSamples=2",
        "trainer.evalK=2",
      ],
    });
    const r = await runTraining(loaded, quiet);
    assert.equal(r.step, 2);
    for (const m of await records(r.dir, "metrics.jsonl")) {
      assert.ok(Number.isFinite(m.pg_loss as number), `pg_loss ${m.pg_loss}`);
      assert.ok(Number.isFinite(m.grad_norm as number), `grad_norm ${m.grad_norm}`);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

const SMALL_AGENT = [
  "rollout.batchSize=16",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=8",
  "trainer.evalProblems=4",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.evalEvery=0",
  "trainer.saveEvery=0",
  "trainer.device=cpu",
  "rollout.mode=one_step_off",
];

Deno.test("agent_calc one_step_off: episodes run in a rollout worker with their loss masks and turn spans; stop and resume equals the uninterrupted run", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = (name: string) => ({
      config: "agent_calc",
      out: root,
      steps: "3",
      set: [...SMALL_AGENT, `output.name=${name}`],
    });
    const full = await runTraining(await loadConfig(opts("full")), quiet);
    assert.equal(full.step, 3);
    const m = await records(full.dir, "metrics.jsonl");
    assert.deepEqual(m.map((x) => x["rollout/policy_version"]), [0, 0, 1]);
    for (const x of m) {
      const turns = x["episode/turns"] as number;
      assert.ok(turns >= 1 && turns <= 3, `turns ${turns}`);
      assert.equal(x["accuracy/mean"], x["episode/success"]);
    }
    const first = await runTraining(await loadConfig(opts("split")), { ...quiet, stopAfter: 2 });
    // the checkpoint holds the episodes generated for step 3, as the worker returned them
    const saved = await loadSchedulerState(join(first.dir, "checkpoints/step-2"));
    const items = saved!.ready[0]!.rollout.items as EpisodeItem[];
    assert.equal(items.length, 16);
    for (const it of items) {
      assert.equal(it.lossMask.length, it.completionIds.length);
      assert.equal(it.turnSpans.length, it.turns);
      assert.ok(it.turnSpans.every((s) => it.lossMask.slice(s.start, s.end).every((v) => v === 1)));
    }
    assert.ok(items.some((it) => it.lossMask.includes(0)), "no tool output was masked");
    const second = await runTraining(await loadConfig({ resume: first.dir }), quiet);
    assert.equal(second.step, 3);
    assert.deepEqual(withoutTiming(await records(second.dir, "metrics.jsonl")), withoutTiming(m));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("agent_calc one_step_off with estimator gigpo: turn-level advantages from a worker's episodes train", async () => {
  const root = await Deno.makeTempDir();
  try {
    const r = await runTraining(
      await loadConfig({
        config: "agent_calc",
        out: root,
        steps: "2",
        set: [
          ...SMALL_AGENT,
          "algorithm.estimator=gigpo",
          "algorithm.estimatorOptions={omega: 1, gamma: 0.95}",
        ],
      }),
      quiet,
    );
    assert.equal(r.step, 2);
    for (const m of await records(r.dir, "metrics.jsonl")) {
      assert.ok(Number.isFinite(m.pg_loss as number), `pg_loss ${m.pg_loss}`);
      assert.ok(Number.isFinite(m.grad_norm as number), `grad_norm ${m.grad_norm}`);
      assert.ok((m["episode/turns"] as number) >= 1);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
