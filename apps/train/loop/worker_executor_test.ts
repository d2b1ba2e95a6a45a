import assert from "node:assert/strict";
import { snapshot, WeightChecksumError } from "@rlvr/infra";
import { LoraAdapters, scoreCompletions } from "@rlvr/policy";
import { noGrad } from "@rlvr/tensor";
import { loadConfig } from "../config/load.ts";
import { collectEpisodes } from "./episode.ts";
import { jobTask } from "./job_runner.ts";
import { attachRunLora, withoutAdapters } from "./lora.ts";
import { policySnapshot } from "./scheduled_rollouts.ts";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { episodeIo } from "./prompt.ts";
import { collectRollout } from "./rollout.ts";
import { episodeOptionsOf, jobRowCount, listStream, rolloutOptionsOf } from "./rollout_job.ts";
import { trainingTask } from "./task.ts";
import { WorkerExecutor } from "./worker_executor.ts";
import { SMALL_SET } from "./_run_test_util.ts";

const SMALL = SMALL_SET;

Deno.test("WorkerExecutor: a Web Worker's rollout equals the trainer thread's, token for token and bit for bit, under the same weights", async () => {
  const { config } = await loadConfig({ set: [...SMALL, "rollout.dynamicSampling.enabled=true"] });
  const task = await trainingTask(config);
  const stream = new TrainStream(task, config.trainer.seed, heldOutProblems(task, 4));
  const rows = stream.take(jobRowCount(config));
  assert.equal(rows.length, 2 * 5); // 2 prompts x (1 + 4 dynamic-sampling retries)
  const { model, tokenizer, eosTokenIds } = await loadPolicy(config.model.checkpoint);
  // Weights the worker cannot have loaded from the checkpoint: version 3 of a changed model.
  for (const t of model.params.values()) {
    const v = await t.data() as Float32Array;
    t.backend.write(t.buffer, Float32Array.from(v, (x, i) => x * (1 + ((i % 7) - 3) * 0.01)));
  }
  const w = await WorkerExecutor.start("w0", config);
  try {
    assert.equal(w.version, -1);
    await w.sync(await snapshot(model.params, 3));
    assert.equal(w.version, 3);
    const job = { id: 9, key: 9, rows };
    const remote = await w.run(job);
    const local = await collectRollout(
      model,
      tokenizer,
      task,
      listStream(rows),
      rolloutOptionsOf(config, 9, eosTokenIds),
    );
    assert.equal(remote.policyVersion, 3);
    const strip = (r: typeof local) => ({ ...r, seconds: 0 });
    assert.deepEqual(strip(remote.rollout), strip(local));
    assert.ok(local.items.length > 0);
  } finally {
    await w.close();
    model.dispose();
  }
});

Deno.test("WorkerExecutor: a corrupted snapshot is refused with WeightChecksumError and the worker keeps its weights", async () => {
  const { config } = await loadConfig({ set: SMALL });
  const { model } = await loadPolicy(config.model.checkpoint);
  const w = await WorkerExecutor.start("w1", config);
  try {
    const good = await snapshot(model.params, 1);
    await w.sync(good);
    const bytes = good.bytes.slice();
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0x10;
    const err = await w.sync({ ...good, version: 2, bytes }).then(() => null, (e) => e);
    assert.ok(err instanceof WeightChecksumError, String(err));
    assert.equal(err.version, 2);
    assert.equal(err.expected, good.checksum);
    assert.notEqual(err.actual, good.checksum);
    assert.match(err.message, /rollout worker w1/);
    assert.equal(w.version, 1);
    // still serves jobs under version 1
    const task = await trainingTask(config);
    const rows = new TrainStream(task, 0, []).take(jobRowCount(config));
    const r = await w.run({ id: 1, key: 1, rows });
    assert.equal(r.policyVersion, 1);
    assert.equal(r.rollout.items.length, 8);
    // going back in version is refused too
    await assert.rejects(w.sync(await snapshot(model.params, 0)), /older than the version/);
  } finally {
    await w.close();
    model.dispose();
  }
});

Deno.test("WorkerExecutor: requests after close reject; a job with too few rows is a clear error", async () => {
  const { config } = await loadConfig({ set: SMALL });
  const { model } = await loadPolicy(config.model.checkpoint);
  const w = await WorkerExecutor.start("w2", config);
  try {
    await w.sync(await snapshot(model.params, 0));
    await assert.rejects(w.run({ id: 1, key: 1, rows: [] }), /rollout worker w2: .*holds 0 rows/);
  } finally {
    await w.close();
  }
  await assert.rejects(w.sync(await snapshot(model.params, 1)), /w2 was closed/);
  model.dispose();
});

Deno.test("WorkerExecutor with model.lora: a worker sent the merged snapshot samples from the adapted policy (log-probs equal the learner's within 1e-5)", async () => {
  const lora = "model.lora={rank: 4, alpha: 8, targetModules: [q_proj, v_proj, up_proj]}";
  const { config } = await loadConfig({ set: [...SMALL, lora, "rollout.mode=one_step_off"] });
  const { model } = await loadPolicy(config.model.checkpoint);
  const attached = attachRunLora(model, config.model.lora!, { seed: 1 });
  // B is zero in fresh adapters: give them a real update, so the adapted policy differs.
  for (const [name, t] of attached.params) {
    if (!name.endsWith("lora_B.weight")) continue;
    const n = t.shape.reduce((a, b) => a * b, 1);
    t.backend.write(t.buffer, Float32Array.from({ length: n }, (_, i) => ((i % 11) - 5) * 0.02));
  }
  assert.ok(model.extension("lora") instanceof LoraAdapters);
  const w = await WorkerExecutor.start("w3", config);
  try {
    await w.sync(await policySnapshot(model, 2));
    const task = await trainingTask(config);
    const rows = new TrainStream(task, 0, []).take(jobRowCount(config));
    const { rollout, policyVersion } = await w.run({ id: 1, key: 1, rows });
    assert.equal(policyVersion, 2);
    const items = rollout.items;
    const T = config.rollout.sampler.temperature;
    const scored = () => noGrad(() => scoreCompletions(model, items, { temperature: T }));
    const read = async (s: ReturnType<typeof scored>) => {
      const lp = await s.logprobs.data() as Float32Array;
      const width = s.logprobs.shape[1]!;
      for (const t of [s.logprobs, s.mask, ...(s.entropies ? [s.entropies] : [])]) t.dispose();
      return items.map((it, b) =>
        Array.from(lp.subarray(b * width, b * width + it.completionIds.length))
      );
    };
    const adapted = await read(scored());
    // the base alone: what the worker would sample without the adapters
    const base = await read(withoutAdapters(model, scored));
    let worst = 0;
    let apart = 0;
    items.forEach((it, b) => {
      it.samplerLogprobs.forEach((lp, t) => {
        worst = Math.max(worst, Math.abs(lp - adapted[b]![t]!));
        apart = Math.max(apart, Math.abs(lp - base[b]![t]!));
      });
    });
    assert.ok(worst <= 1e-5, `worker vs adapted learner: ${worst}`);
    assert.ok(apart > 1e-3, `the adapters change nothing (${apart}): the check is empty`);
  } finally {
    await w.close();
    model.dispose();
  }
});

Deno.test("WorkerExecutor with task.env: a worker's episodes equal the trainer thread's, loss masks and turn spans included", async () => {
  const { config } = await loadConfig({
    config: "agent_calc",
    set: [
      "rollout.batchSize=8",
      "rollout.groupSize=4",
      "algorithm.microBatchSize=8",
      "trainer.device=cpu",
      "rollout.mode=one_step_off",
    ],
  });
  const { task, env } = await jobTask(config);
  const rows = new TrainStream(task, 0, heldOutProblems(task, 4)).take(jobRowCount(config));
  const { model, tokenizer, eosTokenIds } = await loadPolicy(config.model.checkpoint);
  const w = await WorkerExecutor.start("w4", config);
  try {
    await w.sync(await snapshot(model.params, 0));
    const remote = (await w.run({ id: 5, key: 5, rows })).rollout;
    const local = await collectEpisodes(model, tokenizer, env!, rows, {
      ...episodeOptionsOf(config, 5, eosTokenIds),
      ...episodeIo(tokenizer),
    });
    assert.deepEqual({ ...remote, seconds: 0 }, { ...local, rounds: 1, seconds: 0 });
    assert.equal(remote.items.length, 8);
    for (const it of remote.items) {
      assert.equal(it.lossMask?.length, it.completionIds.length);
      assert.ok(it.turnSpans!.length >= 1);
    }
    // the tool's answers are in the completions, masked out of the loss
    assert.ok(remote.items.some((it) => it.lossMask!.includes(0)));
  } finally {
    await w.close();
    model.dispose();
  }
});
