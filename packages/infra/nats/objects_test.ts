import assert from "node:assert/strict";
import { type ObjectStore, Objm } from "@nats-io/obj";
import { connectNats } from "./_connect.ts";
import { ObjectChangedError, type ObjectSource, readObject } from "./objects.ts";
import { natsTest } from "./server.ts";

/** `os`, whose `get` answers with the object's metadata and chunks that never come. */
function chunksNeverCome(os: ObjectStore): ObjectSource {
  return {
    info: (name) => os.info(name),
    get: async (name) => {
      const info = await os.info(name);
      if (info === null) return null;
      return { info, data: new ReadableStream<Uint8Array>(), error: new Promise(() => {}) };
    },
  };
}

natsTest(
  "readObject: reads objects of any size; a missing or deleted one is null",
  async (server) => {
    await using nc = await connectNats(server.url);
    const os = await new Objm(nc).create("objects-a");
    const big = new Uint8Array(300_000).map((_, i) => i % 251);
    await os.putBlob({ name: "big" }, big);
    await os.putBlob({ name: "empty" }, new Uint8Array(0));
    const got = await readObject(os, "big");
    assert.deepEqual(got?.bytes, big);
    assert.ok(got!.info.chunks > 1);
    assert.deepEqual((await readObject(os, "empty"))?.bytes, new Uint8Array(0));
    assert.equal(await readObject(os, "missing"), null);
    await os.delete("big");
    assert.equal(await readObject(os, "big"), null);
  },
);

natsTest(
  "readObject: chunks that never come fail the read: deleted or replaced at once, else after stallMs",
  async (server) => {
    await using nc = await connectNats(server.url);
    const os = await new Objm(nc).create("objects-b");
    const stalled = chunksNeverCome(os);
    const bytes = new Uint8Array([1, 2, 3]);
    for (const change of ["deleted", "replaced"] as const) {
      await os.putBlob({ name: "x" }, bytes);
      const read = readObject(stalled, "x", { checkMs: 100 });
      if (change === "deleted") await os.delete("x");
      else await os.putBlob({ name: "x" }, bytes);
      await assert.rejects(read, (e: Error) => {
        assert.ok(e instanceof ObjectChangedError);
        assert.equal(e.change, change);
        assert.match(e.message, new RegExp(`objects-b/x was ${change} while it was read`));
        return true;
      });
    }
    // the same object, no chunk: an error naming it after stallMs
    const t0 = Date.now();
    await assert.rejects(
      readObject(stalled, "x", { checkMs: 100, stallMs: 400 }),
      /object store objects-b: reading x \(3 bytes\) received nothing for 400 ms/,
    );
    assert.ok(Date.now() - t0 < 5000);
  },
);

natsTest(
  "readObject: an object deleted or replaced by another client while it is read never hangs the read",
  async (server) => {
    // ObjectStore.getBlob waits forever in this race (its chunks are purged under it)
    await using a = await connectNats(server.url);
    await using b = await connectNats(server.url);
    const writer = await new Objm(a).create("objects-c");
    const reader = await new Objm(b).open("objects-c");
    const bytes = new Uint8Array(500_000).map((_, i) => i % 253);
    for (let i = 0; i < 10; i++) {
      await writer.putBlob({ name: "w" }, bytes);
      const read = readObject(reader, "w", { checkMs: 200, stallMs: 5000 }).then(
        (r) => r === null ? "gone" : (assert.deepEqual(r.bytes, bytes), "read"),
        (e) => {
          assert.ok(e instanceof ObjectChangedError, String(e));
          return e.change;
        },
      );
      if (i % 5 > 0) await new Promise((r) => setTimeout(r, i % 5));
      if (i % 2 === 0) await writer.delete("w");
      else await writer.putBlob({ name: "w" }, bytes);
      const outcome = await read;
      assert.ok(["gone", "read", "deleted", "replaced"].includes(outcome), outcome);
    }
  },
  { timeoutMs: 60_000 },
);
