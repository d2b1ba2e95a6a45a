import assert from "node:assert/strict";
import { snapshot, WeightChecksumError } from "@rlvr/infra";
import { type CausalLM, scoreCompletions } from "@rlvr/policy";
import { noGrad, SGD } from "@rlvr/tensor";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { collectRollout, type RolloutItem } from "./rollout.ts";
import { jobRowCount, listStream, rolloutOptionsOf } from "./rollout_job.ts";
import { trainingTask } from "./task.ts";
import { trainStep } from "./trainer.ts";
import { VisionInputs } from "./vision.ts";
import { WorkerExecutor } from "./worker_executor.ts";
import { SMALL_SET } from "./_run_test_util.ts";

const SMALL = [...SMALL_SET, "rollout.mode=async", "rollout.partial=true"];

/** Scales every weight by 1 ± up to 3%: a "later version" whose log-probs differ from the first. */
async function perturb(model: CausalLM): Promise<void> {
  for (const t of model.params.values()) {
    const v = await t.data() as Float32Array;
    t.backend.write(t.buffer, Float32Array.from(v, (x, i) => x * (1 + ((i % 7) - 3) * 0.01)));
  }
}

/** Per item, the log-prob of every completion token under `model` at the sampling temperature. */
async function logprobsUnder(
  model: CausalLM,
  items: readonly RolloutItem[],
  temperature: number,
): Promise<number[][]> {
  const s = noGrad(() => scoreCompletions(model, items, { temperature }));
  const lp = await s.logprobs.data() as Float32Array;
  const T = s.logprobs.shape[1]!;
  for (const t of [s.logprobs, s.mask, ...(s.entropies ? [s.entropies] : [])]) t.dispose();
  return items.map((it, b) => Array.from(lp.subarray(b * T, b * T + it.completionIds.length)));
}

async function jobRows(config: Config) {
  const task = await trainingTask(config);
  const stream = new TrainStream(task, config.trainer.seed, heldOutProblems(task, 4));
  return { task, rows: stream.take(jobRowCount(config)) };
}

/**
 * A partial job in a real Web Worker under version 0, held after token `at` until version 1 is
 * offered (the worker's test hook), so the interruption happens at that token on any machine.
 */
async function interruptedJob(
  config: Config,
  v0: CausalLM,
  v1: CausalLM,
  at: number,
) {
  const { rows } = await jobRows(config);
  const w = await WorkerExecutor.start("p0", config);
  try {
    await w.sync(await snapshot(v0.params, 0));
    const running = w.run({ id: 1, key: 1, rows }, { hold: { at } });
    w.offer(await snapshot(v1.params, 1));
    const done = await running;
    return { ...done, workerVersion: w.version, rows };
  } finally {
    await w.close();
  }
}

Deno.test("partial rollouts: a job interrupted by new weights tags every token with its version, and each token's sampler log-prob is its own version's", async () => {
  const { config } = await loadConfig({ set: SMALL });
  const temperature = config.rollout.sampler.temperature;
  const v0 = (await loadPolicy(config.model.checkpoint)).model;
  const v1 = (await loadPolicy(config.model.checkpoint)).model;
  await perturb(v1);
  try {
    const r = await interruptedJob(config, v0, v1, 0);
    assert.equal(r.policyVersion, 0, "the batch's version is its oldest token's");
    assert.equal(r.newestVersion, 1);
    assert.equal(r.workerVersion, 1, "the worker went on with version 1");
    const items = r.rollout.items;
    assert.equal(items.length, 8);
    const under = [
      await logprobsUnder(v0, items, temperature),
      await logprobsUnder(v1, items, temperature),
    ];
    let mixed = 0;
    let separated = 0;
    items.forEach((it, b) => {
      const versions = it.tokenVersions!;
      assert.equal(versions.length, it.completionIds.length);
      // interrupted after token 0: that token by version 0, the rest by version 1
      assert.deepEqual(versions, it.completionIds.map((_, t) => t === 0 ? 0 : 1));
      if (new Set(versions).size === 2) mixed++;
      versions.forEach((v, t) => {
        const own = under[v]![b]![t]!;
        const other = under[1 - v]![b]![t]!;
        const got = it.samplerLogprobs[t]!;
        assert.ok(Math.abs(got - own) <= 1e-5, `item ${b} token ${t} (v${v}): ${got} vs ${own}`);
        if (Math.abs(got - other) > 1e-4) separated++;
      });
    });
    assert.ok(mixed > 0, "no sequence was interrupted mid-generation");
    assert.ok(separated > 0, "the two versions give the same log-probs: the check is empty");
  } finally {
    v0.dispose();
    v1.dispose();
  }
});

Deno.test("partial rollouts: interrupted and continued under the same weights, a worker's batch is the uninterrupted one", async () => {
  const { config } = await loadConfig({ set: SMALL });
  const { model, tokenizer, eosTokenIds } = await loadPolicy(config.model.checkpoint);
  try {
    for (const at of [0, 1]) {
      // "version 1" is the same weights: only the interruption differs
      const r = await interruptedJob(config, model, model, at);
      const { task, rows } = await jobRows(config);
      const local = await collectRollout(
        model,
        tokenizer,
        task,
        listStream(rows),
        rolloutOptionsOf(config, 1, eosTokenIds),
      );
      const plain = r.rollout.items.map(({ tokenVersions: _, ...it }) => it);
      assert.deepEqual(plain, local.items, `interrupted after token ${at}`);
      assert.ok(r.rollout.items.some((it) => new Set(it.tokenVersions).size === 2));
    }
  } finally {
    model.dispose();
  }
});

Deno.test("partial rollouts of a vision-language policy: continued after some rows ended, each row keeps its own image (the batch is the uninterrupted one)", async () => {
  const { config } = await loadConfig({
    set: [
      ...SMALL,
      "model.checkpoint=builtin:tiny-vl",
      "task.name=count_shapes",
      "task.options={size: 56, shapeSize: [8, 10], count: [3, 6], distractors: [6, 8]}",
      "rollout.batchSize=16",
      "rollout.maxNewTokens=64",
    ],
  });
  const p = await loadPolicy(config.model.checkpoint);
  try {
    const vision = new VisionInputs(p.vision!.model, { processor: p.vision!.processor });
    const { task, rows } = await jobRows(config);
    const local = await collectRollout(p.model, p.tokenizer, task, listStream(rows), {
      ...rolloutOptionsOf(config, 1, p.eosTokenIds),
      vision,
    });
    // Interrupt where the rows still running are neither all nor the first ones: the
    // continuation's i-th row is then not the job's i-th.
    const lengths = local.items.map((it) => it.completionIds.length);
    const at = [...lengths.keys()].map((i) => Math.min(...lengths) - 2 + i).find((l) => {
      const open = lengths.flatMap((m, i) => (m > l + 1 ? [i] : []));
      return open.length > 0 && open.some((i, j) => i !== j);
    });
    assert.ok(at !== undefined, `no interruption point in lengths ${lengths}`);
    // The worker's snapshots carry the tower too (here the checkpoint's own weights).
    const weights = { params: new Map([...p.model.params, ...p.vision!.model.tower.params]) };
    const r = await interruptedJob(config, weights as CausalLM, weights as CausalLM, at);
    const versions = r.rollout.items.map((it) => new Set(it.tokenVersions).size);
    assert.ok(versions.includes(1) && versions.includes(2), `versions per row ${versions}`);
    const plain = r.rollout.items.map(({ tokenVersions: _, ...it }) => it);
    assert.deepEqual(plain, local.items);
  } finally {
    p.model.dispose();
  }
});

Deno.test("partial rollouts: the off-policy loss (TIS, decoupled) weights each token by its own version's behaviour log-prob", async () => {
  const { config } = await loadConfig({ set: SMALL });
  const temperature = config.rollout.sampler.temperature;
  const v0 = (await loadPolicy(config.model.checkpoint)).model;
  const v1 = (await loadPolicy(config.model.checkpoint)).model;
  await perturb(v1);
  let items: RolloutItem[];
  try {
    // rewards with variance in every group, so every token has an advantage and counts
    items = (await interruptedJob(config, v0, v1, 0)).rollout.items.map((it, b) => ({
      ...it,
      reward: b % 2,
      correct: b % 2,
    }));
    const under = [
      await logprobsUnder(v0, items, temperature),
      await logprobsUnder(v1, items, temperature),
    ];
    // the same batch with one version's log-probs as every token's behaviour log-prob
    const single = (v: number) => items.map((it, b) => ({ ...it, samplerLogprobs: under[v]![b]! }));
    // and with each token's own version's, recomputed by the learner
    const own = items.map((it, b) => ({
      ...it,
      samplerLogprobs: it.tokenVersions!.map((v, t) => under[v]![b]![t]!),
    }));
    for (
      const offPolicy of [
        "algorithm.lossOptions.offPolicy={tis: {level: token, cap: 2}}",
        "algorithm.lossOptions.offPolicy={decoupled: {cap: 2}}",
      ]
    ) {
      const { config: c } = await loadConfig({
        set: [...SMALL, offPolicy, "algorithm.kl.beta=0", "optimizer.gradClip=null"],
      });
      // the learner is a third version: the behaviour log-probs matter to the loss
      const loss = async (batch: RolloutItem[]) => {
        const { model } = await loadPolicy(c.model.checkpoint);
        for (const t of model.params.values()) {
          const v = await t.data() as Float32Array;
          t.backend.write(t.buffer, Float32Array.from(v, (x, i) => x * (1 - ((i % 5) - 2) * 0.01)));
        }
        const optimizer = new SGD(model.parameters(), { lr: 1 });
        const u = await trainStep({ config: c, model, ref: null, optimizer }, batch);
        optimizer.dispose();
        model.dispose();
        return u.pgLoss!;
      };
      const tagged = await loss(items);
      const recomputed = await loss(own);
      assert.ok(
        Math.abs(tagged - recomputed) <= 1e-5 * Math.max(1, Math.abs(tagged)),
        `${offPolicy}: ${tagged} vs ${recomputed}`,
      );
      for (const v of [0, 1]) {
        const one = await loss(single(v));
        assert.ok(
          Math.abs(tagged - one) > 1e-6,
          `${offPolicy}: the loss with version ${v}'s log-probs for every token equals the per-token one (${one})`,
        );
      }
    }
  } finally {
    v0.dispose();
    v1.dispose();
  }
});

Deno.test("partial rollouts: offered weights that fail their checksum fail the job with WeightChecksumError, never sampled from", async () => {
  const { config } = await loadConfig({ set: SMALL });
  const { model } = await loadPolicy(config.model.checkpoint);
  const { rows } = await jobRows(config);
  const w = await WorkerExecutor.start("p1", config);
  try {
    await w.sync(await snapshot(model.params, 0));
    const running = w.run({ id: 1, key: 1, rows }, { hold: { at: 0 } });
    const good = await snapshot(model.params, 1);
    const bytes = good.bytes.slice();
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x08;
    w.offer({ ...good, bytes });
    const err = await running.then(() => null, (e) => e);
    assert.ok(err instanceof WeightChecksumError, String(err));
    assert.equal(err.version, 1);
    assert.match(err.message, /rollout worker p1/);
  } finally {
    await w.close();
    model.dispose();
  }
});
