import assert from "node:assert/strict";
import { jetstream } from "@nats-io/jetstream";
import { connectNats } from "./_connect.ts";
import { natsTest } from "./server.ts";
import { WorkQueue } from "./work_queue.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

natsTest(
  "work queue: FIFO delivery, ack deletes, depth counts, enqueue dedup by id",
  async (server) => {
    await using nc = await connectNats(server.url);
    const queue = await WorkQueue.open<{ q: string }>(nc);
    for (let i = 0; i < 5; i++) await queue.enqueue({ id: `p${i}`, prompt: { q: `${i}+1` } });
    assert.equal((await queue.enqueue({ id: "p2", prompt: { q: "again" } })).duplicate, true);
    assert.deepEqual(await queue.depth(), { pending: 5, inFlight: 0, redelivered: 0 });
    const got: string[] = [];
    for (let i = 0; i < 5; i++) {
      const job = await queue.next({ expiresMs: 1000 });
      assert.ok(job !== null);
      assert.equal(job.deliveryCount, 1);
      assert.equal(job.prompt.q, `${i}+1`);
      got.push(job.id);
      if (i === 0) {
        assert.deepEqual(await queue.depth(), {
          pending: 4,
          inFlight: 1,
          redelivered: 0,
        });
      }
      await job.ack();
    }
    assert.deepEqual(got, ["p0", "p1", "p2", "p3", "p4"]);
    assert.deepEqual(await queue.depth(), { pending: 0, inFlight: 0, redelivered: 0 });
    assert.equal(await queue.next({ expiresMs: 1000 }), null);
  },
);

natsTest(
  "work queue: an unacked job is redelivered after ackWait; nak redelivers at once",
  async (server) => {
    await using nc = await connectNats(server.url);
    const queue = await WorkQueue.open<number>(nc, { ackWaitMs: 1000 });
    await queue.enqueue({ id: "a", prompt: 1 });
    const first = await queue.next({ expiresMs: 1000 });
    assert.equal(first?.id, "a");
    // not acknowledged: after the ack deadline the same job comes back, marked as a redelivery
    const t0 = Date.now();
    const again = await queue.next({ expiresMs: 3000 });
    assert.equal(again?.id, "a");
    assert.equal(again?.deliveryCount, 2);
    assert.ok(Date.now() - t0 >= 500, "redelivered before the ack deadline");
    assert.deepEqual(await queue.depth(), { pending: 0, inFlight: 1, redelivered: 1 });
    again!.nak();
    const third = await queue.next({ expiresMs: 1000 });
    assert.equal(third?.deliveryCount, 3);
    await third!.ack();
    assert.deepEqual(await queue.depth(), { pending: 0, inFlight: 0, redelivered: 0 });
  },
);

natsTest("work queue: inProgress() keeps a long job from being redelivered", async (server) => {
  await using nc = await connectNats(server.url);
  const queue = await WorkQueue.open<number>(nc, { ackWaitMs: 1000 });
  await queue.enqueue({ id: "long", prompt: 0 });
  const job = await queue.next({ expiresMs: 1000 });
  assert.ok(job !== null);
  const heartbeat = setInterval(() => job.inProgress(), 200);
  try {
    // another worker asks for work for longer than the ack deadline and gets none
    await using nc2 = await connectNats(server.url);
    const other = await WorkQueue.open<number>(nc2, { ackWaitMs: 1000 });
    assert.equal(await other.next({ expiresMs: 1800 }), null);
  } finally {
    clearInterval(heartbeat);
  }
  await job.ack();
});

natsTest("work queue: two workers never get the same job", async (server) => {
  await using nc1 = await connectNats(server.url);
  await using nc2 = await connectNats(server.url);
  const trainer = await WorkQueue.open<number>(nc1);
  const workers = [trainer, await WorkQueue.open<number>(nc2)];
  for (let i = 0; i < 20; i++) await trainer.enqueue({ id: `j${i}`, prompt: i });
  const seen: string[][] = [[], []];
  await Promise.all(workers.map(async (w, k) => {
    for (;;) {
      const job = await w.next({ expiresMs: 1000 });
      if (job === null) return;
      seen[k]!.push(job.id);
      await sleep(k === 0 ? 1 : 3);
      await job.ack();
    }
  }));
  const all = [...seen[0]!, ...seen[1]!].sort();
  assert.deepEqual(all, Array.from({ length: 20 }, (_, i) => `j${i}`).sort());
});

natsTest("work queue: maxDeliver stops a job that keeps failing", async (server) => {
  await using nc = await connectNats(server.url);
  const queue = await WorkQueue.open<number>(nc, { maxDeliver: 2 });
  await queue.enqueue({ id: "poison", prompt: 0 });
  (await queue.next({ expiresMs: 1000 }))!.nak();
  const second = await queue.next({ expiresMs: 1000 });
  assert.equal(second?.deliveryCount, 2);
  second!.nak();
  assert.equal(await queue.next({ expiresMs: 1000 }), null);
});

natsTest("work queue: malformed messages and bad arguments are refused clearly", async (server) => {
  await using nc = await connectNats(server.url);
  const queue = await WorkQueue.open<number>(nc);
  await jetstream(nc).publish(queue.subject, "not json");
  await assert.rejects(queue.next({ expiresMs: 1000 }), /is not JSON .* it was terminated/);
  await jetstream(nc).publish(queue.subject, JSON.stringify({ prompt: 1 }));
  await assert.rejects(queue.next({ expiresMs: 1000 }), /is not a job/);
  await assert.rejects(queue.enqueue({ id: "", prompt: 1 }), /job.id must be a non-empty string/);
  await assert.rejects(queue.next({ expiresMs: 10 }), /expiresMs must be >= 1000/);
  await assert.rejects(
    WorkQueue.open(nc, { ackWaitMs: 0 }),
    /ackWaitMs must be a finite number > 0/,
  );
  await assert.rejects(WorkQueue.open(nc, { maxDeliver: 0 }), /maxDeliver must be an integer >= 1/);
  // term() is fire-and-forget: the server drops the two bad messages shortly after
  const deadline = Date.now() + 3000;
  let depth = await queue.depth();
  while (depth.inFlight > 0 && Date.now() < deadline) {
    await sleep(20);
    depth = await queue.depth();
  }
  assert.deepEqual(depth, { pending: 0, inFlight: 0, redelivered: 0 });
});
