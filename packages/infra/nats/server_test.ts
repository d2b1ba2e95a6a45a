import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import { connectNats } from "./_connect.ts";
import { NatsServerMissingError, natsTest, startNatsServer } from "./server.ts";
import { WorkQueue } from "./work_queue.ts";

natsTest(
  "server: accepts JetStream clients on loopback; stop removes its store",
  async (server) => {
    assert.match(server.url, /^nats:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(server.running);
    assert.match(server.log, /Server is ready/);
    const nc = await connectNats(server.url);
    const info = await (await jetstreamManager(nc)).getAccountInfo();
    assert.equal(info.streams, 0);
    await nc.close();
    // a second server at the same time gets its own port and store
    const other = await startNatsServer();
    try {
      assert.notEqual(other.port, server.port);
      assert.notEqual(other.storeDir, server.storeDir);
    } finally {
      await other.stop();
    }
    await other.stop(); // idempotent
    assert.equal(other.running, false);
    await assert.rejects(Deno.stat(other.storeDir), Deno.errors.NotFound);
  },
);

natsTest(
  "server: a crash and restart keeps unacknowledged work (JetStream is on disk)",
  async (first) => {
    let nc = await connectNats(first.url, { reconnect: false });
    let queue = await WorkQueue.open<string>(nc);
    await queue.enqueue({ id: "j1", prompt: "survives" });
    await nc.close();
    const second = await first.restart("SIGKILL");
    try {
      assert.equal(first.running, false);
      assert.equal(second.port, first.port);
      nc = await connectNats(second.url);
      queue = await WorkQueue.open<string>(nc);
      const job = await queue.next({ expiresMs: 2000 });
      assert.equal(job?.prompt, "survives");
      await job!.ack();
      await nc.close();
    } finally {
      await second.stop();
    }
    await assert.rejects(Deno.stat(second.storeDir), Deno.errors.NotFound);
  },
);

natsTest("server: a store directory passed in is kept after stop", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const s = await startNatsServer({ storeDir: dir });
    await s.stop();
    assert.ok((await Deno.stat(`${dir}/jetstream`)).isDirectory);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("server: a missing binary is a NatsServerMissingError that says how to install it", async () => {
  const err = await startNatsServer({ binary: "/nonexistent/nats-server" }).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(err instanceof NatsServerMissingError);
  assert.match(err.message, /\/nonexistent\/nats-server does not exist/);
  assert.match(err.message, /apt-get install -y nats-server/);
});

Deno.test("findNatsServer: NATS_SERVER_BIN wins, and a wrong one gives null", async () => {
  // In a child process: under --parallel the test files share this process's environment, and
  // a wrong NATS_SERVER_BIN here would stop other files' servers from starting.
  const code = `import assert from "node:assert/strict";
import { findNatsServer } from "${new URL("./server.ts", import.meta.url).href}";
assert.equal(findNatsServer(), null);`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", code],
    env: { NATS_SERVER_BIN: "/nonexistent/nats-server" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
});

Deno.test("connectNats: a refused connection says what to check", async () => {
  await assert.rejects(
    connectNats("nats://127.0.0.1:1", { timeoutMs: 1000, reconnect: false }),
    /cannot connect to nats:\/\/127.0.0.1:1 .*is nats-server running there with JetStream/,
  );
  await assert.rejects(connectNats(""), /url must be a NATS URL/);
});

Deno.test("natsTest: without nats-server, a file's NATS tests are skipped and one line gives their count", async () => {
  const fixture = new URL("./testdata/skip_fixture.ts", import.meta.url).pathname;
  const env = { NATS_SERVER_BIN: "/nonexistent/nats-server", NO_COLOR: "1" };
  const run = async (extra: Record<string, string>) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["test", "-A", "--no-check", fixture],
      env: { ...env, ...extra },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    return { code: out.code, text };
  };
  const skipped = await run({ CI: "" });
  assert.equal(skipped.code, 0, skipped.text);
  const lines = skipped.text.split("\n").filter((l) => l.startsWith("NATS TESTS SKIPPED"));
  assert.equal(lines.length, 1, skipped.text);
  assert.match(
    lines[0]!,
    /^NATS TESTS SKIPPED: 3 tests of .*skip_fixture\.ts did not run \(nats-server not found; apt-get install -y nats-server, or set NATS_SERVER_BIN; under CI=true they fail instead\)$/,
  );
  assert.match(skipped.text, /1 passed \| 0 failed \| 3 ignored/);
  // under CI=true they fail instead, and no skip line is printed
  const ci = await run({ CI: "true" });
  assert.notEqual(ci.code, 0);
  assert.match(ci.text, /1 passed \| 3 failed/);
  assert.ok(!ci.text.includes("NATS TESTS SKIPPED"), ci.text);
});
