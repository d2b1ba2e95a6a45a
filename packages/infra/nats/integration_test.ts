// End-to-end tests over a real nats-server: rollout workers as real Deno subprocesses
// (`_worker_fixture.ts`), the trainer side in this process.
import assert from "node:assert/strict";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { type Tensor, tensor } from "@rlvr/tensor";
import { StalenessGate } from "../staleness.ts";
import { applySnapshot, snapshot, WeightChecksumError } from "../weights.ts";
import { connectNats } from "./_connect.ts";
import { natsTest } from "./server.ts";
import {
  StaleWeightsError,
  type Trajectory,
  TrajectoryConsumer,
  TrajectoryPublisher,
} from "./trajectories.ts";
import { WeightsStore } from "./weights_store.ts";
import { WorkQueue } from "./work_queue.ts";
import type { Answer, Prompt, WorkerConfig } from "./_worker_fixture.ts";

const FIXTURE = new URL("./_worker_fixture.ts", import.meta.url).pathname;
const ROOT = new URL("../../../", import.meta.url).pathname;

/** A worker subprocess whose stdout lines the test can wait for. */
class WorkerProcess {
  readonly lines: string[] = [];
  readonly child: Deno.ChildProcess;
  #stderr = "";
  #waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  #pumps: Promise<void>[];
  #status: Promise<Deno.CommandStatus>;
  #done = false;

  constructor(readonly name: string, config: WorkerConfig) {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--quiet",
        "--config",
        `${ROOT}deno.json`,
        FIXTURE,
        JSON.stringify(config),
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.child = child;
    this.#status = child.status.then((s) => {
      this.#done = true;
      return s;
    });
    this.#pumps = [
      (async () => {
        let buf = "";
        for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
          buf += chunk;
          let nl;
          while ((nl = buf.indexOf("\n")) >= 0) {
            this.#line(buf.slice(0, nl));
            buf = buf.slice(nl + 1);
          }
        }
      })(),
      (async () => {
        for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
          this.#stderr = (this.#stderr + chunk).slice(-4000);
        }
      })(),
    ];
  }

  #line(line: string): void {
    this.lines.push(line);
    this.#waiters = this.#waiters.filter((w) => {
      const m = line.match(w.re);
      if (m !== null) w.resolve(m);
      return m === null;
    });
  }

  /** Resolves with the first line (past or future) matching `re`. */
  async waitFor(re: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> {
    for (const l of this.lines) {
      const m = l.match(re);
      if (m !== null) return m;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        new Promise<RegExpMatchArray>((resolve) => this.#waiters.push({ re, resolve })),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() =>
            reject(
              new Error(
                `worker ${this.name}: no line matching ${re} within ${timeoutMs} ms; ` +
                  `stdout: ${JSON.stringify(this.lines)}; stderr: ${this.#stderr}`,
              ),
            ), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills the process (if still running) and waits for it and its pipes. */
  async kill(signal: Deno.Signal = "SIGKILL"): Promise<Deno.CommandStatus> {
    if (!this.#done) {
      try {
        this.child.kill(signal);
      } catch { /* already exited */ }
    }
    const status = await this.#status;
    await Promise.all(this.#pumps);
    return status;
  }
}

function workerConfig(
  url: string,
  workerId: string,
  mode: WorkerConfig["mode"],
  options: Pick<WorkerConfig, "queue" | "trajectories" | "maxStaleness">,
): WorkerConfig {
  return { url, workerId, mode, ...options };
}

natsTest(
  "integration (a): a worker SIGKILLed mid-job loses nothing; the trainer sees every job once",
  async (server) => {
    // The duplicate window (500 ms) is shorter than the ack deadline (1.5 s) on purpose: a job
    // whose worker died after publishing is re-published after the broker's window, so the
    // duplicate reaches the stream and the trainer's id-based dedup must catch it.
    const shared = {
      queue: { ackWaitMs: 1500 },
      trajectories: { duplicateWindowMs: 500 },
      maxStaleness: 0,
    };
    await using nc = await connectNats(server.url);
    const queue = await WorkQueue.open<Prompt>(nc, shared.queue);
    const store = await WeightsStore.open(nc);
    const trainerParams = { w: tensor([2, 3]) };
    await store.put(await snapshot(trainerParams, 0));
    const consumer = await TrajectoryConsumer.open<Answer>(nc, shared.trajectories);
    const jobs = Array.from({ length: 8 }, (_, i) => ({ id: `p${i}`, prompt: { a: i, b: 1 } }));
    for (const j of jobs) await queue.enqueue(j);

    const workers: WorkerProcess[] = [];
    try {
      // Two workers take one job each and are killed while holding it: one after publishing
      // the trajectory (died before the ack), one mid-rollout (nothing published).
      const afterPublish = new WorkerProcess(
        "A",
        workerConfig(server.url, "A", "hang-after-publish", shared),
      );
      workers.push(afterPublish);
      const held1 = (await afterPublish.waitFor(/^holding (\S+)$/))[1]!;
      const midRollout = new WorkerProcess(
        "C",
        workerConfig(server.url, "C", "hang-after-fetch", shared),
      );
      workers.push(midRollout);
      const held2 = (await midRollout.waitFor(/^holding (\S+)$/))[1]!;
      assert.notEqual(held1, held2);
      assert.equal((await afterPublish.kill("SIGKILL")).signal, "SIGKILL");
      assert.equal((await midRollout.kill("SIGKILL")).signal, "SIGKILL");

      // A healthy worker takes over; the two orphaned jobs come back after the ack deadline.
      const healthy = new WorkerProcess("B", workerConfig(server.url, "B", "normal", shared));
      workers.push(healthy);

      const gate = StalenessGate.forMode("sync");
      const received = new Map<string, Trajectory<Answer>>();
      const deadline = Date.now() + 15_000;
      while ((received.size < jobs.length || consumer.duplicates < 1) && Date.now() < deadline) {
        const r = await consumer.next({ expiresMs: 1000 });
        if (r === null) continue;
        assert.ok(!received.has(r.trajectory.jobId), `job ${r.trajectory.jobId} delivered twice`);
        assert.equal(gate.decide(r.trajectory, 0), "use");
        received.set(r.trajectory.jobId, r.trajectory);
        await r.ack();
      }
      // nothing more is coming: no loss, and the one duplicate was dropped by id
      assert.equal(await consumer.next({ expiresMs: 1000 }), null);
      assert.deepEqual([...received.keys()].sort(), jobs.map((j) => j.id).sort());
      assert.equal(consumer.duplicates, 1);
      for (const j of jobs) {
        // every answer was computed with the verified weights w = [2, 3]
        assert.equal(received.get(j.id)!.payload.answer, 2 * j.prompt.a + 3);
      }
      // both orphaned jobs were redelivered to B as second deliveries
      await healthy.waitFor(new RegExp(`^took ${held1} 2$`));
      await healthy.waitFor(new RegExp(`^took ${held2} 2$`));
      assert.equal(received.get(held2)!.workerId, "B");
      await healthy.waitFor(new RegExp(`^acked ${held1}$`));
      await healthy.waitFor(new RegExp(`^acked ${held2}$`));
      assert.deepEqual(await queue.depth(), { pending: 0, inFlight: 0, redelivered: 0 });
      assert.deepEqual(gate.counts, { used: 8, dropped: 0, regenerated: 0 });
    } finally {
      await Promise.all(workers.map((w) => w.kill("SIGKILL")));
      trainerParams.w.dispose();
    }
  },
  { timeoutMs: 30_000 },
);

natsTest(
  "integration (b): a worker with stale weights is refused until it syncs, then regenerates",
  async (server) => {
    await using nc = await connectNats(server.url);
    const store = await WeightsStore.open(nc);
    const eta = 1;
    const trainer = new Map<string, Tensor>([["w", tensor([1, 1])]]);
    const setWeights = (w: number[]) =>
      trainer.get("w")!.backend.write(trainer.get("w")!.buffer, w);
    await store.put(await snapshot(trainer, 0));

    // In-process worker: synced to version 0.
    const worker = new Map<string, Tensor>([["w", tensor([0, 0])]]);
    let workerVersion = await applySnapshot(worker, (await store.getLatest())!);
    assert.equal(workerVersion, 0);
    const publisher = await TrajectoryPublisher.open<Answer>(nc, {
      maxStaleness: eta,
      versions: store,
    });
    const consumer = await TrajectoryConsumer.open<Answer>(nc);
    const rollout = async (jobId: string): Promise<Trajectory<Answer>> => {
      const [w0, w1] = await worker.get("w")!.data();
      return {
        id: `${jobId}/0`,
        jobId,
        policyVersion: workerVersion,
        workerId: "w",
        payload: { answer: w0! * 10 + w1! },
      };
    };

    // The trainer moves on twice: the worker is now 2 > η versions behind.
    setWeights([2, 5]);
    await store.put(await snapshot(trainer, 1));
    // one step behind (η = 1) is still accepted
    await publisher.publish(await rollout("early"));
    setWeights([3, 7]);
    await store.put(await snapshot(trainer, 2));
    const stale = await rollout("q");
    const err = await publisher.publish(stale).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof StaleWeightsError);
    assert.equal(err.workerVersion, 0);
    assert.equal(err.latestVersion, 2);
    // refusing again without syncing changes nothing
    await assert.rejects(publisher.publish(await rollout("q")), StaleWeightsError);

    // Sync: download the latest (checksum verified), apply, regenerate, publish.
    workerVersion = await applySnapshot(worker, (await store.getLatest())!, {
      currentVersion: workerVersion,
    });
    assert.equal(workerVersion, 2);
    assert.equal((await publisher.publish(await rollout("q"))).duplicate, false);

    const got: Trajectory<Answer>[] = [];
    for (let r = await consumer.next({ expiresMs: 1000 }); r !== null;) {
      got.push(r.trajectory);
      await r.ack();
      r = await consumer.next({ expiresMs: 1000 });
    }
    // Only the accepted ones reached the trainer: "early" at v0 (1 behind v1) and "q" at v2,
    // generated with the synced weights [3, 7]. The stale "q" never did.
    assert.deepEqual(got.map((t) => [t.id, t.policyVersion, t.payload.answer]), [
      ["early/0", 0, 11],
      ["q/0", 2, 37],
    ]);
    for (const t of [...trainer.values(), ...worker.values()]) t.dispose();
  },
);

natsTest(
  "integration (b, subprocess): the worker process refuses, syncs and regenerates by itself",
  async (server) => {
    const shared = { queue: { ackWaitMs: 5000 }, trajectories: {}, maxStaleness: 1 };
    await using nc = await connectNats(server.url);
    const queue = await WorkQueue.open<Prompt>(nc, shared.queue);
    const store = await WeightsStore.open(nc);
    const consumer = await TrajectoryConsumer.open<Answer>(nc);
    const trainer = { w: tensor([1, 1]) };
    await store.put(await snapshot(trainer, 0));
    const worker = new WorkerProcess("S", workerConfig(server.url, "S", "normal", shared));
    try {
      await worker.waitFor(/^ready 0$/);
      // the trainer takes two steps while the worker idles with version 0
      trainer.w.backend.write(trainer.w.buffer, [4, 1]);
      await store.put(await snapshot(trainer, 1));
      await store.put(await snapshot(trainer, 2));
      await queue.enqueue({ id: "z", prompt: { a: 10, b: 2 } });
      await worker.waitFor(/^refused z 0 2$/);
      await worker.waitFor(/^synced 2$/);
      const r = await consumer.next({ expiresMs: 5000 });
      assert.deepEqual(
        [r?.trajectory.id, r?.trajectory.policyVersion, r?.trajectory.payload.answer],
        ["z/0", 2, 42],
      );
      await r!.ack();
      assert.equal(await consumer.next({ expiresMs: 1000 }), null); // the stale one never came
    } finally {
      await worker.kill("SIGKILL");
      trainer.w.dispose();
    }
  },
);

natsTest(
  "integration (c): a corrupted weights object is detected by checksum, not loaded",
  async (server) => {
    await using nc = await connectNats(server.url);
    const store = await WeightsStore.open(nc);
    const trainer = { w: tensor([0.25, -1, 3]) };
    const good = await snapshot(trainer, 0);
    await store.put(good);
    const next = await snapshot({ w: tensor([9, 9, 9]) }, 1);
    await store.put(next);

    // Corrupt version 1 in storage: flip one byte of its chunk.
    const info = (await (await new Objm(nc).open(store.bucket)).info("v1"))!;
    const jsm = await jetstreamManager(nc);
    const subject = `$O.${store.bucket}.C.${info.nuid}`;
    const chunk = (await jsm.streams.getMessage(`OBJ_${store.bucket}`, { last_by_subj: subject }))!;
    const bad = chunk.data.slice();
    bad[20] = bad[20]! ^ 0xff;
    await jsm.streams.deleteMessage(`OBJ_${store.bucket}`, chunk.seq);
    await jetstream(nc).publish(subject, bad);

    // A worker holding version 0 tries to sync to the latest: refused with both digests, and
    // its weights stay those of version 0.
    const worker = { w: tensor([0, 0, 0]) };
    await applySnapshot(worker, await store.get(0));
    const err = await store.getLatest().then(() => null, (e: unknown) => e);
    assert.ok(err instanceof WeightChecksumError);
    assert.equal(err.version, 1);
    assert.equal(err.expected, next.checksum);
    assert.notEqual(err.actual, next.checksum);
    assert.match(err.message, /version 1 .* failed its checksum/);
    assert.deepEqual(await worker.w.toArray(), [0.25, -1, 3]);
    // the intact version is still served
    assert.equal((await store.get(0)).checksum, good.checksum);
    trainer.w.dispose();
    worker.w.dispose();
  },
);
