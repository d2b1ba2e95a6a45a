// The trainer's NATS executors against a real nats-server and real `deno task worker`
// subprocesses (apps/train/worker.ts).
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { natsTest, snapshot, TrajectoryPublisher, WorkQueue } from "@rlvr/infra";
import { setBackend, tensor } from "@rlvr/tensor";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import { selectTrainDevice } from "./device.ts";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { collectRollout } from "./rollout.ts";
import { jobRowCount, listStream, type RolloutJob, rolloutOptionsOf } from "./rollout_job.ts";
import { trainingTask } from "./task.ts";
import { startNatsExecutors } from "./nats_executor.ts";
import { encodeJson, type NatsJob, type NatsResult } from "./nats_protocol.ts";
import type { Rollout } from "./rollout.ts";
import { ProcessLines, TINY, WORKER } from "./_nats_test_util.ts";

async function tinyConfig(url: string, set: string[] = []): Promise<Config> {
  const out = await Deno.makeTempDir();
  try {
    const { config } = await loadConfig({
      out,
      steps: "4",
      device: "cpu",
      set: [...TINY, "rollout.mode=async", `rollout.nats=${url}`, ...set],
    });
    return config;
  } finally {
    await Deno.remove(out, { recursive: true });
  }
}

/** `count` jobs of fresh rows, keys 1, 2, ... */
async function jobs(config: Config, count: number): Promise<RolloutJob[]> {
  const task = await trainingTask(config);
  const stream = new TrainStream(
    task,
    config.trainer.seed,
    heldOutProblems(task, config.trainer.evalProblems),
  );
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    key: i + 1,
    rows: stream.take(jobRowCount(config)),
  }));
}

function worker(url: string, id: string, env: Record<string, string> = {}): ProcessLines {
  return new ProcessLines(id, [WORKER, "--nats", url, "--id", id, "--verbose"], env);
}

natsTest(
  "startNatsExecutors: a remote worker computes a job exactly as collectRollout does in process",
  async (server) => {
    const config = await tinyConfig(server.url);
    const logs: string[] = [];
    const executors = await startNatsExecutors(config, 1, {
      runId: "exec-a",
      log: (l) => logs.push(l),
    });
    const ex = executors[0]!;
    assert.equal(ex.name, "nats0");
    assert.equal(ex.version, -1);
    const w = worker(server.url, "wa");
    const device = await selectTrainDevice(config.trainer.device);
    setBackend(device.backend);
    const { model, tokenizer, eosTokenIds } = await loadPolicy(config.model.checkpoint);
    try {
      await ex.sync(await snapshot(model.params, 0));
      assert.equal(ex.version, 0);
      const [job] = await jobs(config, 1);
      const remote = await ex.run({ ...job!, key: 7 });
      assert.equal(remote.policyVersion, 0);
      const task = await trainingTask(config);
      const local = await collectRollout(
        model,
        tokenizer,
        task,
        listStream(job!.rows),
        rolloutOptionsOf(config, 7, eosTokenIds),
      );
      assert.equal(remote.rollout.items.length, config.rollout.batchSize);
      assert.deepEqual(remote.rollout.items, local.items);
      assert.equal(remote.rollout.generatedTokens, local.generatedTokens);
      assert.equal(remote.rollout.fracZeroStdGroups, local.fracZeroStdGroups);
      await w.waitFor(
        new RegExp(`^job 1 v0 ${local.generatedTokens} tokens \\d+\\.\\d+ s$`),
      );
      assert.ok(logs.some((l) => l.includes("deno task worker --nats")), logs.join("\n"));

      // A new trainer (another incarnation) takes over the server; the worker follows it, and
      // a result above the inline limit travels through the object store.
      await Promise.all(executors.map((e) => e.close()));
      const next = await startNatsExecutors(config, 1, { runId: "exec-a2", inlineMaxBytes: 2048 });
      executors.splice(0, 1, ...next);
      await next[0]!.sync(await snapshot(model.params, 0));
      const again = await next[0]!.run({ ...job!, key: 7 });
      assert.deepEqual(again.rollout.items, local.items);
      await w.waitFor(/serving run exec-a2/);
      await w.waitFor(/^job 1: \d+ bytes > 2048: sent as object /);
      // Ctrl-C: the idle worker stops cleanly
      w.signal("SIGINT");
      assert.equal((await w.status()).code, 0, w.lines.join("\n"));
      await w.waitFor(/^worker wa: stopped$/);
    } finally {
      await Promise.all(executors.map((e) => e.close()));
      await w.kill();
      model.dispose();
      device.release();
    }
  },
  { timeoutMs: 120_000 },
);

natsTest(
  "startNatsExecutors: a worker SIGKILLed mid-rollout: its job is redelivered, one result per job",
  async (server) => {
    // big enough that the worker is still sampling when it is killed
    const config = await tinyConfig(server.url, [
      "rollout.maxNewTokens=128",
      "rollout.batchSize=64",
      "rollout.sampler.temperature=8",
    ]);
    const executors = await startNatsExecutors(config, 2, { runId: "exec-b", ackWaitMs: 2000 });
    // a freezes once it has taken a job (the worker's test hook), so the kill lands mid-job
    // however fast the rollout would have been
    const a = worker(server.url, "wa", { RLVR_WORKER_TEST_HANG_AFTER_TAKE: "1" });
    let b: ProcessLines | null = null;
    const device = await selectTrainDevice(config.trainer.device);
    setBackend(device.backend);
    const { model, tokenizer, eosTokenIds } = await loadPolicy(config.model.checkpoint);
    try {
      const snap = await snapshot(model.params, 0);
      await Promise.all(executors.map((e) => e.sync(snap)));
      const todo = await jobs(config, 2);
      const results = todo.map((j, i) => executors[i]!.run(j));
      // a takes one job and is killed before it finishes it
      const killed = Number((await a.waitFor(/^take job (\d+) \(\S+, delivery 1\)$/))[1]);
      assert.equal((await a.kill("SIGKILL")).signal, "SIGKILL");
      assert.ok(!a.lines.some((l) => /^job \d+ v/.test(l)), a.lines.join("\n"));
      b = worker(server.url, "wb");
      const got = await Promise.all(results);
      // b ran the killed job again after the ack wait, and the other one
      await b.waitFor(new RegExp(`^take job ${killed} \\(\\S+, delivery 2\\)$`));
      for (const j of todo) await b.waitFor(new RegExp(`^job ${j.id} v0 `));
      const task = await trainingTask(config);
      for (const [i, j] of todo.entries()) {
        assert.equal(got[i]!.policyVersion, 0);
        const local = await collectRollout(
          model,
          tokenizer,
          task,
          listStream(j.rows),
          rolloutOptionsOf(config, j.key, eosTokenIds),
        );
        assert.deepEqual(got[i]!.rollout.items, local.items, `job ${j.id}`);
      }
      // nothing left: every job was acknowledged once
      await using nc = await connect({ servers: server.url });
      const queue = await WorkQueue.open(nc, { ackWaitMs: 2000, maxDeliver: 5 });
      assert.deepEqual(await queue.depth(), { pending: 0, inFlight: 0, redelivered: 0 });
    } finally {
      await Promise.all(executors.map((e) => e.close()));
      await a.kill();
      await b?.kill();
      model.dispose();
      device.release();
    }
  },
  { timeoutMs: 120_000 },
);

natsTest(
  "startNatsExecutors: a worker whose weights went stale refuses to publish, syncs and regenerates",
  async (server) => {
    const config = await tinyConfig(server.url, [
      "rollout.maxNewTokens=128",
      "rollout.batchSize=64",
      "rollout.sampler.temperature=8",
      "rollout.maxStaleness=1",
    ]);
    const [ex] = await startNatsExecutors(config, 1, { runId: "exec-c", ackWaitMs: 10_000 });
    const w = worker(server.url, "ws");
    const { model } = await loadPolicy(config.model.checkpoint);
    try {
      await ex!.sync(await snapshot(model.params, 0));
      const [job] = await jobs(config, 1);
      const result = ex!.run(job!);
      // the worker loaded v0 and samples; freeze it while the trainer moves on two versions
      await w.waitFor(/^weights v0$/);
      w.signal("SIGSTOP");
      await ex!.sync(await snapshot(model.params, 1));
      await ex!.sync(await snapshot(model.params, 2));
      assert.equal(ex!.version, 2);
      w.signal("SIGCONT");
      const { policyVersion } = await result;
      assert.equal(policyVersion, 2); // the v0 rollout never reached the trainer
      await w.waitFor(/^job 1: weights v0 are stale \(latest v2, max staleness 1\)/);
      await w.waitFor(/^weights v2$/);
      await w.waitFor(/^job 1 v2 \d+ tokens/);
    } finally {
      await ex!.close();
      await w.kill();
      model.dispose();
    }
  },
  { timeoutMs: 120_000 },
);

natsTest(
  "startNatsExecutors: stray results are ignored, a worker's error and a job nobody finishes reject",
  async (server) => {
    const config = await tinyConfig(server.url);
    const ackWaitMs = 1000;
    const logs: string[] = [];
    const [ex] = await startNatsExecutors(config, 1, {
      runId: "exec-d",
      ackWaitMs,
      maxDeliver: 2,
      log: (l) => logs.push(l),
    });
    // an in-process stand-in for a worker
    await using nc = await connect({ servers: server.url });
    const queue = await WorkQueue.open<NatsJob>(nc, { ackWaitMs, maxDeliver: 2 });
    const pub = await TrajectoryPublisher.open<NatsResult>(nc, {
      maxStaleness: 2,
      versions: { latestVersion: () => Promise.resolve(0) },
    });
    const empty: Rollout = {
      items: [],
      fracZeroStdGroups: 0.5,
      rounds: 1,
      generatedTokens: 3,
      seconds: NaN,
    };
    const inline: NatsResult = { kind: "inline", json: encodeJson(empty) };
    const answer = (
      jobId: string,
      payload: NatsResult,
      policyVersion = 0,
      tag = "0",
      checksum?: string,
    ) =>
      pub.publish({
        id: `${jobId}/${tag}`,
        jobId,
        policyVersion,
        workerId: "fake",
        payload: checksum === undefined ? payload : { ...payload, checksum } as NatsResult,
      });
    const w = { w: tensor([1, 2]) };
    try {
      // a dead trainer's result, before anything is awaited
      await answer("exec-d/deadbeef/1/0", inline);
      await ex!.sync(await snapshot(w, 0));
      const job = (id: number): RolloutJob => ({ id, key: id, rows: [] });

      // a result: decoded exactly (NaN kept); then a late duplicate of it is ignored
      const r1 = ex!.run(job(1));
      const j1 = (await queue.next())!;
      assert.equal(j1.prompt.job.id, 1);
      assert.match(j1.id, /^exec-d\/[a-z0-9]+\/1\/0$/);
      await answer(j1.id, inline);
      await j1.ack();
      assert.deepEqual(await r1, { rollout: empty, policyVersion: 0 });
      await answer(j1.id, inline, 0, "late");

      // the same job id again (a regenerated job) is a new message; the expected rejections are
      // handled from the start (they may come before the ack below returns)
      const r1b = assert.rejects(ex!.run(job(1)), {
        name: "RangeError",
        message: /worker fake \(nats0, job 1\): boom/,
      });
      const j1b = (await queue.next())!;
      assert.match(j1b.id, /^exec-d\/[a-z0-9]+\/1\/1$/);
      await answer(j1b.id, { kind: "error", name: "RangeError", message: "boom" });
      await j1b.ack();
      await r1b;

      // weights the trainer never uploaded (another client's): not the job's result; the job is
      // queued again, maxDeliver (2) times, then it fails
      const r2 = ex!.run(job(2));
      const j2 = (await queue.next())!;
      assert.equal(j2.prompt.weights?.version, 0); // jobs name the trainer's upload
      await answer(j2.id, inline, 5);
      await j2.ack();
      const j2b = (await queue.next())!; // queued again under a new message id
      assert.match(j2b.id, /^exec-d\/[a-z0-9]+\/2\/3$/);
      assert.equal(j2b.prompt.job.id, 2);
      await answer(j2b.id, inline, 0, "0", "ab".repeat(32)); // version 0, another checksum
      await j2b.ack();
      const j2c = (await queue.next())!;
      await answer(j2c.id, inline, 0, "0", j2.prompt.weights!.checksum); // the trainer's v0
      await j2c.ack();
      assert.deepEqual(await r2, { rollout: empty, policyVersion: 0 });
      assert.ok(
        logs.some((l) => /ignored a result: .*version 5, newer than the latest upload 0/.test(l)),
        logs.join("\n"),
      );
      assert.ok(logs.some((l) => /version 0 with SHA-256 abababababab…/.test(l)), logs.join("\n"));
      const r2b = assert.rejects(
        ex!.run(job(2)),
        /ran under weights version 7, newer than the latest upload 0; 3 such results/,
      );
      for (let i = 0; i < 3; i++) {
        const j = (await queue.next())!;
        await answer(j.id, inline, 7);
        await j.ack();
      }
      await r2b;

      // taken twice, never answered: JetStream gives up and the job fails
      const r3 = assert.rejects(ex!.run(job(3)), /job 3 was delivered 2 times without a result/);
      assert.equal((await queue.next())!.deliveryCount, 1);
      assert.equal((await queue.next({ expiresMs: 5000 }))!.deliveryCount, 2);
      // the server gives up when a worker asks again after the ack wait
      assert.equal(await queue.next({ expiresMs: 3000 }), null);
      await r3;

      // every stray result was acknowledged
      const jsm = await jetstreamManager(nc);
      for (let i = 0;; i++) {
        const info = await jsm.consumers.info("RLVR_TRAJECTORIES", "trainer");
        if (info.num_pending === 0 && info.num_ack_pending === 0) break;
        assert.ok(i < 30, `trainer consumer not drained: ${JSON.stringify(info)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await ex!.close();
      w.w.dispose();
    }
  },
  { timeoutMs: 60_000 },
);

natsTest(
  "startNatsExecutors: a job that leaves the queue without a result is queued again, then rejects",
  async (server) => {
    const config = await tinyConfig(server.url);
    const logs: string[] = [];
    const [ex] = await startNatsExecutors(config, 1, {
      runId: "exec-lost",
      ackWaitMs: 1000,
      maxDeliver: 1,
      log: (l) => logs.push(l),
    });
    // an in-process stand-in for a worker that drops jobs (as one does whose run record is gone)
    await using nc = await connect({ servers: server.url });
    const queue = await WorkQueue.open<NatsJob>(nc, { ackWaitMs: 1000, maxDeliver: 1 });
    const pub = await TrajectoryPublisher.open<NatsResult>(nc, {
      maxStaleness: 2,
      versions: { latestVersion: () => Promise.resolve(0) },
    });
    const empty: Rollout = {
      items: [],
      fracZeroStdGroups: 0,
      rounds: 1,
      generatedTokens: 0,
      seconds: 0,
    };
    const w = { w: tensor([1, 2]) };
    try {
      await ex!.sync(await snapshot(w, 0));
      const job = (id: number): RolloutJob => ({ id, key: id, rows: [] });
      // dropped once: queued again under a new message id, and its result is the job's
      const r1 = ex!.run(job(1));
      const j1 = (await queue.next())!;
      j1.term();
      const j1b = (await queue.next({ expiresMs: 20_000 }))!;
      assert.ok(j1b !== null, logs.join("\n"));
      assert.equal(j1b.prompt.job.id, 1);
      assert.notEqual(j1b.id, j1.id);
      await pub.publish({
        id: `${j1b.id}/0`,
        jobId: j1b.id,
        policyVersion: 0,
        workerId: "fake",
        payload: {
          kind: "inline",
          json: encodeJson(empty),
          checksum: j1b.prompt.weights!.checksum,
        },
      });
      await j1b.ack();
      assert.deepEqual(await r1, { rollout: empty, policyVersion: 0 });
      assert.ok(
        logs.some((l) =>
          /job 1 \(.*\) left the work queue without a result .*queued again \(1\/1\)/.test(l)
        ),
        logs.join("\n"),
      );
      // taken and acknowledged without a result (another client), twice: the job fails, named
      const r2 = assert.rejects(
        ex!.run(job(2)),
        /job 2 \(.*\) left the work queue without a result, 2 times: a worker dropped it/,
      );
      await (await queue.next())!.ack();
      await (await queue.next({ expiresMs: 20_000 }))!.ack();
      await r2;
    } finally {
      await ex!.close();
      w.w.dispose();
    }
  },
  { timeoutMs: 60_000 },
);
