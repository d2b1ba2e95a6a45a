import assert from "node:assert/strict";
import { jetstreamManager, RetentionPolicy } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { connectNats } from "./_connect.ts";
import { ensureStream } from "./_streams.ts";
import { natsTest } from "./server.ts";
import { WorkQueue } from "./work_queue.ts";

natsTest(
  "ensureStream: idempotent, updates what can change, explains what cannot",
  async (server) => {
    await using nc = await connectNats(server.url);
    const jsm = await jetstreamManager(nc);
    const base = { name: "S", subjects: ["s.>"], retention: RetentionPolicy.Workqueue };
    await ensureStream(jsm, { ...base, duplicate_window: nanos(1000) });
    await ensureStream(jsm, { ...base, duplicate_window: nanos(1000) }); // same: no-op
    await ensureStream(jsm, { ...base, duplicate_window: nanos(2000) }); // updated in place
    assert.equal((await jsm.streams.info("S")).config.duplicate_window, nanos(2000));
    await assert.rejects(
      ensureStream(jsm, { ...base, retention: RetentionPolicy.Limits }),
      /stream S exists with a configuration that cannot be changed .* delete the stream or use another name/,
    );
  },
);

natsTest(
  "ensureConsumer: a later open with other options updates the shared consumer",
  async (server) => {
    await using nc = await connectNats(server.url);
    const jsm = await jetstreamManager(nc);
    await WorkQueue.open(nc, { ackWaitMs: 1000 });
    await WorkQueue.open(nc, { ackWaitMs: 2000 }); // the last open wins
    assert.equal(
      (await jsm.consumers.info("RLVR_PROMPTS", "rollout-workers")).config.ack_wait,
      nanos(2000),
    );
  },
);
