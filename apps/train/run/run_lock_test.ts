import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RUN_FILES, RunDir } from "./run_dir.ts";
import { checkRunLock, LOCK_FILE, RunLock, RunLockedError } from "./run_lock.ts";

const HOLDER = fileURLToPath(new URL("./testdata/hold_lock.ts", import.meta.url));
const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** A second process holding the lock of `dir` (through `RunDir.open`), once it says so. */
async function holder(dir: string): Promise<{ child: Deno.ChildProcess; stderr: string[] }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", HOLDER, "hold", dir],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr: string[] = [];
  // Collected in the background, so the child never blocks on a full pipe.
  (async () => {
    for await (const chunk of child.stderr) stderr.push(decode(chunk));
  })();
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) {
      const status = await child.status;
      throw new Error(`the holder exited (${status.code}) before locking: ${stderr.join("")}`);
    }
    text += decode(value);
  }
  reader.releaseLock();
  await child.stdout.cancel();
  assert.equal(text.trim(), `locked ${child.pid}`);
  return { child, stderr };
}

/** A run directory with a config and three step records, as `deno task train` leaves one. */
async function runWithSteps(root: string): Promise<string> {
  const run = await RunDir.create(root, "x");
  await run.writeConfig("trainer:\n  steps: 3\n");
  await run.close();
  const lines = [1, 2, 3].map((step) => JSON.stringify({ step })).join("\n") + "\n";
  await Deno.writeTextFile(run.file("metrics"), lines);
  return run.path;
}

Deno.test("RunLock: another process is refused at once, naming the holder's PID; the lock is free once the holder ends", async () => {
  const root = await Deno.makeTempDir();
  try {
    const dir = await runWithSteps(root);
    const { child } = await holder(dir);
    try {
      // This process: refused, with the holder's PID.
      await assert.rejects(
        RunLock.acquire(dir),
        (e: unknown) => e instanceof RunLockedError && e.holder?.pid === child.pid,
      );
      await assert.rejects(checkRunLock(dir), new RegExp(`in use by PID ${child.pid} `));
      // A third process: exits 2 with the same message.
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", HOLDER, "try", dir],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 2, decode(out.stderr));
      assert.match(decode(out.stderr), new RegExp(`in use by PID ${child.pid} on `));
      assert.match(decode(out.stderr), new RegExp(`kill ${child.pid}\\)`));
    } finally {
      await child.stdin.close();
      assert.equal((await child.status).code, 0);
    }
    // Released: taken without a warning, and the file names this process while held.
    const warnings: string[] = [];
    const lock = await RunLock.acquire(dir, { warn: (l) => warnings.push(l) });
    assert.deepEqual(warnings, []);
    assert.equal(JSON.parse(await Deno.readTextFile(join(dir, LOCK_FILE))).pid, Deno.pid);
    await lock.release();
    assert.equal(await Deno.readTextFile(join(dir, LOCK_FILE)), "", "emptied on release");
    await lock.release(); // idempotent
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("RunLock: the lock of a process killed while holding it is taken over with a warning naming its PID", async () => {
  const root = await Deno.makeTempDir();
  try {
    const dir = await runWithSteps(root);
    const { child } = await holder(dir);
    child.kill("SIGKILL");
    assert.equal((await child.status).signal, "SIGKILL");
    await child.stdin.close().catch(() => {});
    // Its PID is still in the file, but the OS released the lock with the process.
    assert.equal(JSON.parse(await Deno.readTextFile(join(dir, LOCK_FILE))).pid, child.pid);
    await checkRunLock(dir);
    const warnings: string[] = [];
    const run = await RunDir.open(dir, { lock: true, warn: (l) => warnings.push(l) });
    assert.equal(run.locked, true);
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      new RegExp(
        `was locked by PID ${child.pid} .*which is no longer running.*taking the lock over`,
      ),
    );
    await run.unlock();
    assert.equal(run.locked, false);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("deno task train --resume of a run another process holds exits 2 naming its PID; the run's files are untouched", async () => {
  const root = await Deno.makeTempDir();
  try {
    const dir = await runWithSteps(root);
    const before = await Deno.readTextFile(join(dir, RUN_FILES.metrics));
    const { child } = await holder(dir);
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", MAIN, "--resume", dir],
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      const stderr = decode(out.stderr);
      assert.equal(out.code, 2, stderr);
      assert.match(stderr, new RegExp(`--resume .*: .* is in use by PID ${child.pid} on `));
      assert.equal(await Deno.readTextFile(join(dir, RUN_FILES.metrics)), before);
    } finally {
      await child.stdin.close();
      await child.status;
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("RunDir.create: runs created at once with one name each get their own folder", async () => {
  const root = await Deno.makeTempDir();
  try {
    // In one process: every create checks before any mkdir has finished.
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => RunDir.create(root, "same", { lock: true })),
    );
    const paths = runs.map((r) => r.path);
    assert.equal(new Set(paths).size, 8, paths.join(", "));
    assert.ok(runs.every((r) => r.locked));
    await Promise.all(runs.map((r) => r.unlock()));
    // In two processes at once (whether they race or not, no folder is shared).
    const outs = await Promise.all([0, 1].map(() =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", HOLDER, "create", root, "twice", "4"],
        stdout: "piped",
        stderr: "piped",
      }).output()
    ));
    const created = outs.flatMap((o) => {
      assert.equal(o.code, 0, decode(o.stderr));
      return decode(o.stdout).trim().split("\n");
    });
    assert.equal(created.length, 8);
    assert.equal(new Set(created).size, 8, created.join(", "));
    // An empty folder made by hand is still reused; one with anything in it is not.
    await Deno.mkdir(join(root, "empty"));
    assert.equal((await RunDir.create(root, "empty")).path, join(root, "empty"));
    await Deno.mkdir(join(root, "used"));
    await Deno.writeTextFile(join(root, "used", "notes.txt"), "mine");
    assert.equal((await RunDir.create(root, "used")).path, join(root, "used-2"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
