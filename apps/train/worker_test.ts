// `deno task worker`'s command line: credentials, allowed directories, and messages that never
// show a secret (the NATS behaviour is tested in loop/nats_security_test.ts).
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { parseWorkerArgs, WORKER_USAGE, WorkerArgsError, workerMain } from "./worker.ts";

Deno.test("parseWorkerArgs: credential flags, TLS and allowed directories", () => {
  const a = parseWorkerArgs([
    "--nats",
    "tls://10.0.0.5:4222",
    "--id",
    "gpu0",
    "--user",
    "worker",
    "--password-file",
    "/run/secrets/nats",
    "--tls-ca",
    "ca.pem",
    "--tls-cert",
    "c.pem",
    "--tls-key",
    "k.pem",
    "--allow-dir",
    "data",
    "--allow-dir",
    "/models",
    "--allow-remote",
  ]);
  assert.deepEqual(a, {
    kind: "run",
    url: "tls://10.0.0.5:4222",
    id: "gpu0",
    verbose: false,
    auth: {
      user: "worker",
      passwordFile: "/run/secrets/nats",
      tls: { caFile: "ca.pem", certFile: "c.pem", keyFile: "k.pem" },
    },
    allowDirs: [resolve("data"), "/models"],
    allowRemote: true,
  });
  const t = parseWorkerArgs(["--nats", "h", "--token-file", "t", "--creds", "c", "--tls-required"]);
  assert.deepEqual(t.kind === "run" && t.auth, {
    tokenFile: "t",
    credsFile: "c",
    tls: { required: true },
  });
  const n = parseWorkerArgs(["--nats", "h", "--nkey", "seed.nk"]);
  assert.deepEqual(n.kind === "run" && [n.auth, n.allowDirs, n.allowRemote], [
    { nkeyFile: "seed.nk" },
    [Deno.cwd()], // the default
    false,
  ]);
});

Deno.test("parseWorkerArgs: credentials in the URL are used and never shown; given twice is an error", () => {
  const a = parseWorkerArgs(["--nats", "nats://w%3Ax:p%40ss@h:4222"]);
  assert.deepEqual(a.kind === "run" && [a.url, a.auth], [
    "nats://h:4222",
    { fromUrl: { user: "w:x", password: "p@ss" } },
  ]);
  const t = parseWorkerArgs(["--nats", "nats://s3cr3t-token@h:4222"]);
  assert.deepEqual(t.kind === "run" && t.auth, { fromUrl: { token: "s3cr3t-token" } });
  assert.throws(
    () => parseWorkerArgs(["--nats", "nats://a:b@h", "--user", "c"]),
    (e: unknown) =>
      e instanceof WorkerArgsError && e.exitCode === 2 &&
      /--user and the --nats URL's user:password@ part both give credentials/.test(e.message),
  );
  // a bad URL's message masks its credentials
  assert.throws(
    () => parseWorkerArgs(["--nats", "http://bob:hunter2@h"]),
    (e: unknown) => {
      assert.ok(e instanceof WorkerArgsError);
      assert.match(e.message, /--nats "http:\/\/\*\*\*@h" is not a NATS URL/);
      assert.ok(!e.message.includes("hunter2"));
      return true;
    },
  );
  assert.throws(
    () => parseWorkerArgs(["--nats", "h", "--allow-dir", ""]),
    /--allow-dir needs a value/,
  );
  assert.throws(
    () => parseWorkerArgs(["--nats", "h", "--password", "x"]),
    /Unknown option '--password'/,
  );
});

Deno.test("WORKER_USAGE: documents the credential and allow flags, and no --password flag", () => {
  for (
    const flag of ["--user", "--password-file", "--token-file", "--creds", "--nkey", "--tls-ca"]
  ) {
    assert.ok(WORKER_USAGE.includes(flag), flag);
  }
  assert.match(WORKER_USAGE, /--allow-dir <dir> .*\n.*\(default: the working directory\)/);
  assert.match(WORKER_USAGE, /--allow-remote/);
  assert.ok(!/--password </.test(WORKER_USAGE));
});

Deno.test("workerMain: unreadable or incomplete credentials are bad arguments (exit 2), before connecting", async () => {
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  // port 1: nothing listens; these fail before any connection attempt
  const cases: [string[], Record<string, string>, RegExp][] = [
    [
      ["--password-file", "/nonexistent"],
      { NATS_USER: "w" },
      /--password-file: cannot read "\/nonexistent" \(no such file\)/,
    ],
    [
      ["--user", "w"],
      {},
      /user "w" \(--user\) has no password; set --password-file or NATS_PASSWORD/,
    ],
    [
      [],
      { NATS_PASSWORD: "hunter2" },
      /a password is given \(NATS_PASSWORD\) but no user; set --user or NATS_USER/,
    ],
    [["--tls-ca", "/nonexistent.pem"], {}, /--tls-ca: "\/nonexistent.pem" is not a file/],
    [["--tls-cert", "/etc/hostname"], {}, /--tls-cert is set without --tls-key/],
  ];
  for (const [args, vars, re] of cases) {
    const code = await workerMain(["--nats", "nats://127.0.0.1:1", ...args], {
      log,
      error: log,
      env: env(vars),
    });
    assert.equal(code, 2, lines.join("\n"));
    assert.match(lines.at(-1)!, re);
    assert.ok(!lines.at(-1)!.includes("hunter2"));
  }
  // unreachable: exit 1, the URL printed without its credentials
  const code = await workerMain(["--nats", "nats://w:hunter2@127.0.0.1:1"], {
    log,
    error: log,
    env: env({}),
  });
  assert.equal(code, 1);
  assert.match(lines.at(-1)!, /^worker: cannot connect to nats:\/\/127\.0\.0\.1:1 /);
  assert.ok(!lines.some((l) => l.includes("hunter2")));
});
