import assert from "node:assert/strict";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { tensor } from "@rlvr/tensor";
import { applySnapshot, sha256Hex, snapshot, WeightChecksumError } from "../weights.ts";
import { connectNats } from "./_connect.ts";
import { natsTest } from "./server.ts";
import { WeightsStore } from "./weights_store.ts";

natsTest(
  "weights store: put, latest, get by version, values applied to a model",
  async (server) => {
    await using nc = await connectNats(server.url);
    const store = await WeightsStore.open(nc);
    assert.equal(await store.latestVersion(), null);
    assert.equal(await store.getLatest(), null);
    const trainer = new Map([["w", tensor([[1, 2], [3, 4]])], ["b", tensor([0.5])]]);
    const s0 = await snapshot(trainer, 0);
    await store.put(s0);
    trainer.get("b")!.backend.write(trainer.get("b")!.buffer, [9]);
    const s1 = await snapshot(trainer, 1);
    await store.put(s1);
    assert.deepEqual(await store.versions(), [0, 1]);
    assert.equal(await store.latestVersion(), 1);
    assert.equal(await store.checksum(1), s1.checksum);
    const got0 = await store.get(0);
    assert.deepEqual(got0.bytes, s0.bytes);
    const worker = new Map([["w", tensor([[0, 0], [0, 0]])], ["b", tensor([0])]]);
    assert.equal(await applySnapshot(worker, (await store.getLatest())!), 1);
    assert.deepEqual(await worker.get("b")!.toArray(), [9]);
    assert.deepEqual(await worker.get("w")!.toArray(), [[1, 2], [3, 4]]);
    for (const t of [...trainer.values(), ...worker.values()]) t.dispose();
  },
);

natsTest("weights store: versions strictly increase; old versions are pruned", async (server) => {
  await using nc = await connectNats(server.url);
  const store = await WeightsStore.open(nc, { keep: 2 });
  const w = { w: tensor([1]) };
  await store.put(await snapshot(w, 3));
  await assert.rejects(store.put(await snapshot(w, 3)), /version 3 is not above .* 3/);
  await assert.rejects(store.put(await snapshot(w, 1)), /strictly increasing/);
  await store.put(await snapshot(w, 4));
  await store.put(await snapshot(w, 7));
  assert.deepEqual(await store.versions(), [4, 7]);
  await assert.rejects(store.get(3), /version 3 is not in .* \(present: 4, 7\)/);
  assert.equal(await store.checksum(3), null);
  // a second handle on the same bucket sees the same versions
  assert.equal(await (await WeightsStore.open(nc, { keep: 2 })).latestVersion(), 7);
  w.w.dispose();
});

natsTest("weights store: large snapshots span several chunks and round-trip", async (server) => {
  await using nc = await connectNats(server.url);
  const store = await WeightsStore.open(nc);
  const big = tensor(Array.from({ length: 100_000 }, (_, i) => Math.sin(i)));
  const snap = await snapshot({ big }, 0);
  await store.put(snap);
  const info = await (await new Objm(nc).open("rlvr-weights")).info("v0");
  assert.ok(info!.chunks > 1, `expected several chunks, got ${info!.chunks}`);
  assert.deepEqual((await store.get(0)).bytes, snap.bytes);
  big.dispose();
});

natsTest(
  "weights store: a damaged chunk is a WeightChecksumError, never returned",
  async (server) => {
    await using nc = await connectNats(server.url);
    const store = await WeightsStore.open(nc);
    const snap = await snapshot({ w: tensor([1, 2, 3, 4]) }, 2);
    await store.put(snap);
    // Damage the stored object: replace its (only) chunk in the object store's stream with a
    // copy that has one flipped bit, as disk or replication corruption would.
    const os = await new Objm(nc).open("rlvr-weights");
    const info = (await os.info("v2"))!;
    assert.equal(info.chunks, 1);
    const jsm = await jetstreamManager(nc);
    const stream = "OBJ_rlvr-weights";
    const chunkSubject = `$O.rlvr-weights.C.${info.nuid}`;
    const chunk = (await jsm.streams.getMessage(stream, { last_by_subj: chunkSubject }))!;
    const bad = chunk.data.slice();
    bad[bad.length - 1] = bad[bad.length - 1]! ^ 0x10;
    await jsm.streams.deleteMessage(stream, chunk.seq);
    await jetstream(nc).publish(chunkSubject, bad);

    const err = await store.get(2).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof WeightChecksumError, `got ${err}`);
    assert.equal(err.version, 2);
    assert.equal(err.expected, snap.checksum);
    assert.equal(err.actual, await sha256Hex(bad)); // the digest of what actually arrived
    await assert.rejects(store.getLatest(), WeightChecksumError);
  },
);

natsTest(
  "weights store: bytes that do not match the trainer's checksum are refused",
  async (server) => {
    await using nc = await connectNats(server.url);
    const store = await WeightsStore.open(nc);
    const good = await snapshot({ w: tensor([1, 2]) }, 0);
    const other = await snapshot({ w: tensor([1, 3]) }, 0);
    // A consistent object (the object store's own digest matches) whose bytes are not the ones
    // the trainer hashed: only the rlvr checksum can catch this.
    const os = await new Objm(nc).open("rlvr-weights");
    await os.putBlob({
      name: "v0",
      metadata: { "rlvr-version": "0", "rlvr-sha256": good.checksum },
    }, other.bytes);
    const err = await store.get(0).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof WeightChecksumError);
    assert.equal(err.expected, good.checksum);
    assert.equal(err.actual, other.checksum);
    // an object not written by WeightsStore has no checksum and is not loaded
    await os.putBlob({ name: "v1" }, other.bytes);
    await assert.rejects(store.get(1), /no rlvr-sha256\/rlvr-version metadata/);
  },
);

natsTest("weights store: put refuses a snapshot whose own checksum is wrong", async (server) => {
  await using nc = await connectNats(server.url);
  const store = await WeightsStore.open(nc);
  const snap = await snapshot({ w: tensor([1]) }, 0);
  await assert.rejects(
    store.put({ ...snap, checksum: "0".repeat(64) }),
    WeightChecksumError,
  );
  assert.equal(await store.latestVersion(), null);
  await assert.rejects(WeightsStore.open(nc, { keep: 0 }), /keep must be an integer >= 1/);
});
