import assert from "node:assert/strict";
import { getBackend, setBackend } from "@rlvr/tensor";
import { loadConfig, type LoadedConfig } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import { selectTrainDevice } from "./device.ts";
import { jobTask } from "./job_runner.ts";
import { loadLearner } from "./learner.ts";
import { type MemoryCheckpoint, resumeLearner } from "./memory_checkpoint.ts";
import { runTraining } from "./run.ts";
import { MemorySink } from "./run_sink.ts";
import { TrainingSession } from "./session.ts";
import { quiet, records, withoutTiming } from "./_run_test_util.ts";

// The default recipe (the shipped tiny text policy, builtin:tiny), made small: 4 steps,
// evaluations at 0, 2 and 4, samples at every step.
const STEPS = 4;
const SET = [
  "trainer.evalEvery=2",
  "trainer.evalProblems=8",
  "trainer.samplesEvery=1",
  "trainer.saveEvery=0",
  "trainer.device=cpu",
];

function options(out: string, set: readonly string[]) {
  return { out, steps: String(STEPS), seed: "3", set: [...SET, ...set, "output.name=run"] };
}

/** Runs `fn` on the CPU backend `runTraining` picks for `config` (same matmul kernels). */
async function onRunDevice<T>(config: Config, fn: () => Promise<T>): Promise<T> {
  const device = await selectTrainDevice(config.trainer.device, config.trainer.blas);
  const previous = getBackend();
  setBackend(device.backend);
  try {
    return await fn();
  } finally {
    setBackend(previous);
    device.release();
  }
}

/**
 * Drives a session as `deno task train` does: the evaluation before training (a new run), the
 * steps up to `until` (evaluating when due), a checkpoint there. Returns its sink.
 */
async function drive(
  config: Config,
  until: number,
  from: MemoryCheckpoint | null = null,
): Promise<MemorySink> {
  const sink = new MemorySink();
  const loaded = await loadLearner(config, null);
  const learner = from === null ? loaded : resumeLearner(loaded, from);
  const session = await TrainingSession.create(config, await jobTask(config), learner, {
    sink,
    sampling: from?.sampling ?? null,
    log: () => {},
  });
  try {
    if (session.start === 0) await session.evaluate();
    while (session.completed < until) await session.step();
    await session.checkpoint();
  } finally {
    await session.close();
    learner.dispose();
  }
  return sink;
}

/** The records as their JSON lines hold them (undefined fields dropped), without timings. */
function lines(rs: readonly object[]): Record<string, unknown>[] {
  return withoutTiming(JSON.parse(JSON.stringify(rs)));
}

async function loaded(out: string, set: readonly string[] = []): Promise<LoadedConfig> {
  return await loadConfig(options(out, set));
}

function assertSameCheckpoint(a: MemoryCheckpoint, b: MemoryCheckpoint): void {
  assert.equal(a.step, b.step);
  assert.equal(a.dataPosition, b.dataPosition);
  assert.deepEqual(a.sampling, b.sampling);
  assert.deepEqual([...a.weights.keys()], [...b.weights.keys()]);
  for (const [name, w] of a.weights) assert.deepEqual(b.weights.get(name), w, name);
  assert.deepEqual(a.optimizer, b.optimizer);
}

Deno.test("TrainingSession: the records of runTraining for the default recipe, from a memory sink", async () => {
  const root = await Deno.makeTempDir();
  try {
    const l = await loaded(root);
    const run = await runTraining(l, quiet);
    assert.equal(run.step, STEPS);
    const sink = await onRunDevice(l.config, () => drive(l.config, STEPS));
    const files = {
      "metrics.jsonl": sink.metrics,
      "eval.jsonl": sink.evals,
      "samples.jsonl": sink.samples,
      "eval_samples.jsonl": sink.evalSamples,
    };
    for (const [file, got] of Object.entries(files)) {
      const want = withoutTiming(await records(run.dir, file));
      assert.ok(want.length > 0, file);
      assert.deepEqual(lines(got), want, file);
    }
    assert.deepEqual(sink.evals.map((r) => r.step), [0, 2, 4]);
    assert.deepEqual(sink.checkpointSteps, [STEPS]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("TrainingSession: stopped after 2 steps and continued from its memory checkpoint in a new session, it ends as an uninterrupted one", async () => {
  // Adaptive KL (a reference policy, β in the sampling state) so the checkpoint's sampling
  // state matters too.
  const { config } = await loaded("/unused", [
    "algorithm.kl.beta=0.04",
    "algorithm.kl.target=0.01",
  ]);
  await onRunDevice(config, async () => {
    const full = await drive(config, STEPS);
    const first = await drive(config, 2);
    const cut = first.latest!;
    assert.equal(cut.step, 2);
    assert.notEqual(cut.sampling?.klCoef ?? null, null);
    const second = await drive(config, STEPS, cut);
    assert.deepEqual(lines([...first.metrics, ...second.metrics]), lines(full.metrics));
    assert.deepEqual(lines([...first.evals, ...second.evals]), lines(full.evals));
    assert.deepEqual(lines([...first.samples, ...second.samples]), lines(full.samples));
    assertSameCheckpoint(second.latest!, full.latest!);
  });
});

Deno.test("TrainingSession: an asynchronous rollout.mode needs the rollouts option", async () => {
  const { config } = await loaded("/unused", ["rollout.mode=async", "rollout.workers=1"]);
  const learner = await loadLearner(config, null);
  try {
    await assert.rejects(
      TrainingSession.create(config, await jobTask(config), learner, { log: () => {} }),
      /rollout\.mode: async needs rollout workers.*use rollout\.mode: sync/,
    );
  } finally {
    learner.dispose();
  }
});

Deno.test("TrainingSession: step() after the last step names trainer.steps", async () => {
  const { config } = await loaded("/unused", [
    "trainer.evalProblems=0",
    "rollout.batchSize=4",
    "rollout.groupSize=4",
    "algorithm.microBatchSize=4",
    "rollout.maxNewTokens=4",
  ]);
  config.trainer.steps = 1;
  const learner = await loadLearner(config, null);
  const sink = new MemorySink();
  const session = await TrainingSession.create(config, await jobTask(config), learner, {
    sink,
    log: () => {},
  });
  try {
    assert.equal(await session.evaluate(), null); // no held-out problems: nothing recorded
    const { step, evaluation } = await session.step();
    assert.equal(step, 1);
    assert.equal(evaluation, null);
    assert.ok(session.done && session.checkpointDue());
    await assert.rejects(session.step(), /all 1 steps of trainer\.steps are done/);
    assert.deepEqual(sink.evals, []);
  } finally {
    await session.close();
    learner.dispose();
  }
});

Deno.test("MemorySink: steps must increase, as in metrics.jsonl", async () => {
  const sink = new MemorySink();
  const record = (step: number) => ({
    step,
    "reward/mean": 0,
    "reward/std": 0,
    frac_zero_std_groups: 0,
    "response_length/mean": 0,
    entropy: 0,
    kl: null,
    "clip_frac/low": 0,
    "clip_frac/high": 0,
    grad_norm: 0,
    lr: 0,
    tokens_per_s: 0,
    "time/rollout_s": 0,
    "time/train_s": 0,
  });
  await sink.appendMetrics(record(1));
  await assert.rejects(sink.appendMetrics(record(1)), /step 1 after step 1; steps must increase/);
  await assert.rejects(sink.appendMetrics({ step: 2 }), /missing "reward\/mean"/);
  assert.equal(sink.metrics.length, 1);
});
