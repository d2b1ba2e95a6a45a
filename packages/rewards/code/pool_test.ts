import assert from "node:assert/strict";
import { type PoolSlot, SandboxPool, type SlotResource } from "./mod.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("SandboxPool: never runs more than `concurrency` tasks, and uses them all", async () => {
  for (const concurrency of [1, 2, 3]) {
    const pool = new SandboxPool({ concurrency });
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(Array.from({ length: 10 }, (_, i) =>
      pool.run(async () => {
        peak = Math.max(peak, ++running);
        order.push(i);
        await sleep(5);
        running--;
      })));
    assert.equal(peak, concurrency);
    assert.equal(pool.maxActive, concurrency);
    assert.deepEqual(order, [...order].sort((a, b) => a - b), "FIFO");
    assert.equal(pool.active, 0);
    await pool.close();
  }
});

Deno.test("SandboxPool: a task's rejection reaches its caller only", async () => {
  const pool = new SandboxPool({ concurrency: 1 });
  const results = await Promise.allSettled([
    pool.run(() => Promise.reject(new Error("boom"))),
    pool.run(() => Promise.resolve(7)),
  ]);
  assert.equal(results[0]!.status, "rejected");
  assert.deepEqual(results[1], { status: "fulfilled", value: 7 });
});

Deno.test("SandboxPool: aborting a queued task removes it", async () => {
  const pool = new SandboxPool({ concurrency: 1 });
  const ctl = new AbortController();
  let ran = false;
  const first = pool.run(() => sleep(20));
  const second = pool.run(() => {
    ran = true;
    return Promise.resolve();
  }, { signal: ctl.signal });
  await Promise.resolve(); // tasks are handed out on the next microtask
  assert.equal(pool.queued, 1);
  ctl.abort(new Error("stop"));
  await assert.rejects(second, /stop/);
  await first;
  assert.equal(ran, false);
  assert.equal(pool.queued, 0);
});

class Fake implements SlotResource {
  closed = false;
  constructor(readonly key: string, readonly log: string[]) {}
  close(): Promise<void> {
    this.closed = true;
    this.log.push(`close ${this.key}`);
    return Promise.resolve();
  }
}

Deno.test("SandboxPool: a slot's resource is reused by the same key and closed when done", async () => {
  const pool = new SandboxPool({ concurrency: 1 });
  const log: string[] = [];
  const task = (key: string) => (slot: PoolSlot) => {
    if (slot.resource?.key === key) log.push(`reuse ${key}`);
    else {
      slot.resource = new Fake(key, log);
      log.push(`open ${key}`);
    }
    return Promise.resolve();
  };
  await Promise.all([
    pool.run(task("a"), { key: "a" }),
    pool.run(task("b"), { key: "b" }),
    pool.run(task("a"), { key: "a" }), // runs before the queued "b": the slot holds "a"
    pool.run(task("b"), { key: "b" }),
  ]);
  // The freed slot prefers a queued task of its resource's key; the resource is closed as
  // soon as no queued task needs it, before the task that used it last settles.
  assert.deepEqual(log, ["open a", "reuse a", "close a", "open b", "reuse b", "close b"]);
  await pool.close();
});

Deno.test("SandboxPool: a batch warms one resource per key, not one per slot", async () => {
  const pool = new SandboxPool({ concurrency: 2 });
  const log: string[] = [];
  const task = (key: string) => async (slot: PoolSlot) => {
    if (slot.resource?.key !== key) {
      slot.resource = new Fake(key, log);
      log.push(`open ${key}`);
    }
    await sleep(2);
  };
  await Promise.all(
    ["a", "a", "a", "a", "b", "b", "b", "b"].map((k) => pool.run(task(k), { key: k })),
  );
  assert.deepEqual(log.filter((l) => l.startsWith("open")).sort(), ["open a", "open b"]);
  assert.equal(log.filter((l) => l.startsWith("close")).length, 2);
  await pool.close();
});

Deno.test("SandboxPool: a second resource for one key only when enough of its tasks wait", async () => {
  for (const [tasks, opens] of [[3, 1], [8, 2]] as const) {
    const pool = new SandboxPool({ concurrency: 2 });
    const log: string[] = [];
    const task = async (slot: PoolSlot) => {
      if (slot.resource === null) {
        slot.resource = new Fake("k", log);
        log.push("open");
      }
      await sleep(2);
    };
    await Promise.all(Array.from({ length: tasks }, () => pool.run(task, { key: "k" })));
    assert.equal(log.filter((l) => l === "open").length, opens, `${tasks} tasks`);
    await pool.close();
  }
});

Deno.test("SandboxPool: rejects a bad concurrency", () => {
  assert.throws(() => new SandboxPool({ concurrency: 0 }), RangeError);
  assert.throws(() => new SandboxPool({ concurrency: 1.5 }), RangeError);
});
