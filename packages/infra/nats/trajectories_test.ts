import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import { connectNats } from "./_connect.ts";
import { natsTest } from "./server.ts";
import {
  type LatestVersionSource,
  StaleWeightsError,
  type Trajectory,
  TrajectoryConsumer,
  TrajectoryPublisher,
} from "./trajectories.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function traj(jobId: string, policyVersion: number, i = 0): Trajectory<{ text: string }> {
  return { id: `${jobId}/${i}`, jobId, policyVersion, workerId: "w1", payload: { text: jobId } };
}

class Versions implements LatestVersionSource {
  constructor(public latest: number | null) {}
  latestVersion(): Promise<number | null> {
    return Promise.resolve(this.latest);
  }
}

natsTest("trajectories: round trip keeps id, job, version, worker and payload", async (server) => {
  await using nc = await connectNats(server.url);
  const pub = await TrajectoryPublisher.open<{ text: string }>(nc, {
    maxStaleness: 1,
    versions: new Versions(3),
  });
  const sub = await TrajectoryConsumer.open<{ text: string }>(nc);
  const sent = [traj("a", 3), traj("b", 2), traj("a", 3, 1)];
  for (const t of sent) await pub.publish(t);
  const got: Trajectory<{ text: string }>[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await sub.next({ expiresMs: 1000 });
    assert.ok(r !== null);
    got.push(r.trajectory);
    await r.ack();
  }
  assert.deepEqual(got, sent);
  assert.equal(await sub.next({ expiresMs: 1000 }), null);
  assert.deepEqual(sub.seenIds(), ["a/0", "b/0", "a/1"]);
});

natsTest("trajectories: a repeat inside the window is dropped by JetStream", async (server) => {
  await using nc = await connectNats(server.url);
  const pub = await TrajectoryPublisher.open(nc, { maxStaleness: 0, versions: new Versions(0) });
  assert.equal((await pub.publish(traj("j", 0))).duplicate, false);
  assert.equal((await pub.publish(traj("j", 0))).duplicate, true);
  const info = await (await jetstreamManager(nc)).streams.info(pub.stream);
  assert.equal(info.state.messages, 1);
});

natsTest(
  "trajectories: a repeat after the window is dropped by the consumer, by id",
  async (server) => {
    await using nc = await connectNats(server.url);
    const opts = { duplicateWindowMs: 100 };
    const pub = await TrajectoryPublisher.open(nc, {
      ...opts,
      maxStaleness: 0,
      versions: new Versions(0),
    });
    const sub = await TrajectoryConsumer.open(nc, opts);
    await pub.publish(traj("j", 0));
    await sleep(250); // past the broker's duplicate window (its entries are purged within 2 windows)
    assert.equal((await pub.publish(traj("j", 0))).duplicate, false); // stored twice
    await pub.publish(traj("k", 0));
    const first = await sub.next({ expiresMs: 1000 });
    assert.equal(first?.trajectory.id, "j/0");
    await first!.ack();
    const second = await sub.next({ expiresMs: 1000 }); // skips the second j/0
    assert.equal(second?.trajectory.id, "k/0");
    await second!.ack();
    assert.equal(sub.duplicates, 1);
    assert.equal(await sub.next({ expiresMs: 1000 }), null); // the duplicate was acked, not pending
  },
);

natsTest(
  "trajectories: nak hands a trajectory back without counting it as a duplicate",
  async (server) => {
    await using nc = await connectNats(server.url);
    const pub = await TrajectoryPublisher.open(nc, {
      maxStaleness: 0,
      versions: new Versions(null),
    });
    const sub = await TrajectoryConsumer.open(nc);
    await pub.publish(traj("n", 0)); // no weights published yet: nothing to be stale against
    (await sub.next({ expiresMs: 1000 }))!.nak();
    const again = await sub.next({ expiresMs: 1000 });
    assert.equal(again?.trajectory.id, "n/0");
    await again!.ack();
    assert.equal(sub.duplicates, 0);
  },
);

natsTest(
  "trajectories: seen ids from a checkpoint are skipped by a restarted trainer",
  async (server) => {
    await using nc = await connectNats(server.url);
    const pub = await TrajectoryPublisher.open(nc, { maxStaleness: 0, versions: new Versions(0) });
    const before = await TrajectoryConsumer.open(nc, { consumer: "trainer" });
    await pub.publish(traj("x", 0));
    const x = await before.next({ expiresMs: 1000 });
    // the trainer checkpoints its seen ids, then dies before acking: x is redelivered to the
    // restarted trainer, which recognises it
    const saved = before.seenIds();
    assert.deepEqual(saved, ["x/0"]);
    assert.ok(x !== null);
    const after = await TrajectoryConsumer.open(nc, {
      consumer: "trainer-restarted",
      seenIds: saved,
    });
    await pub.publish(traj("y", 0));
    const y = await after.next({ expiresMs: 1000 });
    assert.equal(y?.trajectory.id, "y/0");
    assert.equal(after.duplicates, 1);
  },
);

natsTest(
  "trajectories: a stale worker is refused with the versions, and nothing is stored",
  async (server) => {
    await using nc = await connectNats(server.url);
    const versions = new Versions(5);
    const pub = await TrajectoryPublisher.open(nc, { maxStaleness: 2, versions });
    const err = await pub.publish(traj("s", 2)).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof StaleWeightsError);
    assert.deepEqual(
      [err.workerId, err.trajectoryId, err.workerVersion, err.latestVersion, err.maxStaleness],
      ["w1", "s/0", 2, 5, 2],
    );
    const info = await (await jetstreamManager(nc)).streams.info(pub.stream);
    assert.equal(info.state.messages, 0);
    // exactly η behind is allowed
    await pub.publish(traj("s", 3));
    assert.equal((await (await jetstreamManager(nc)).streams.info(pub.stream)).state.messages, 1);
  },
);

natsTest("trajectories: invalid trajectories and options are refused", async (server) => {
  await using nc = await connectNats(server.url);
  const pub = await TrajectoryPublisher.open(nc, { maxStaleness: 0, versions: new Versions(0) });
  await assert.rejects(
    pub.publish({ ...traj("a", 0), id: "" }),
    /trajectory.id must be a non-empty/,
  );
  await assert.rejects(
    pub.publish({ ...traj("a", 0), policyVersion: -1 }),
    /trajectory.policyVersion must be a non-negative integer/,
  );
  await assert.rejects(
    TrajectoryPublisher.open(nc, { maxStaleness: -1, versions: new Versions(0) }),
    /maxStaleness must be an integer >= 0/,
  );
  await assert.rejects(
    TrajectoryPublisher.open(nc, { maxStaleness: 0, versions: {} as LatestVersionSource }),
    /pass the WeightsStore/,
  );
  const sub = await TrajectoryConsumer.open(nc);
  await assert.rejects(sub.next({ expiresMs: 5 }), /expiresMs must be >= 1000/);
});
