// The NATS protocol's checks and credential resolution (no server needed, except for the size
// limit of run records), and the config rules of rollout.nats / rollout.natsAuth.
import assert from "node:assert/strict";
import { join } from "node:path";
import { Objm } from "@nats-io/obj";
import { connect } from "@nats-io/transport-node";
import { natsTest } from "@rlvr/infra";
import { defaultConfig } from "../config/defaults.ts";
import { ConfigError } from "../config/errors.ts";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import {
  ACTIVE_RUN,
  checkNatsJob,
  checkRunRecord,
  type NatsRun,
  readRunRecord,
  redactNatsUrl,
  resolveNatsSecurity,
  RUN_BUCKET,
  RunRecordError,
  splitNatsUrl,
  TRAINER_AUTH_NAMES,
} from "./nats_protocol.ts";
import { tempFile } from "./_nats_test_util.ts";

const envOf = (vars: Record<string, string>) => (name: string): string | undefined => vars[name];

function natsConfig(edit: (c: Config) => void = () => {}): Config {
  const c = defaultConfig();
  c.rollout.mode = "async";
  c.rollout.nats = "nats://127.0.0.1:4222";
  edit(c);
  return c;
}

function record(config: Config, over: Partial<Record<keyof NatsRun, unknown>> = {}): unknown {
  return JSON.parse(JSON.stringify({
    runId: "grpo-1",
    incarnation: "abc123",
    config,
    maxStaleness: 2,
    weightsBucket: "rlvr-weights-abc123",
    rolloutsBucket: "rlvr-rollouts-abc123",
    queue: { ackWaitMs: 10_000, maxDeliver: 5 },
    inlineMaxBytes: 1000,
    startedAt: "2025-01-02T03:04:05.678Z",
    ...over,
  }));
}

const HERE = { allowDirs: [Deno.cwd()], allowRemote: false };

Deno.test("checkRunRecord: a trainer's record passes; its config comes back validated", async () => {
  const run = await checkRunRecord(record(natsConfig()), HERE);
  assert.equal(run.incarnation, "abc123");
  assert.equal(run.config.rollout.nats, "nats://127.0.0.1:4222");
  assert.equal(run.queue.maxDeliver, 5);
});

Deno.test("checkRunRecord: local paths outside the allowed directories are refused, before anything is opened", async () => {
  const outside = await Deno.makeTempDir();
  const inside = await Deno.makeTempDir({ dir: Deno.cwd(), prefix: ".rlvr-allow-" });
  try {
    const cases: [Config, RegExp][] = [
      [natsConfig((c) => c.model.checkpoint = "/etc"), /^model\.checkpoint "\/etc" is outside/],
      [
        natsConfig((c) => c.model.checkpoint = "../../../etc"),
        /^model\.checkpoint "\.\.\/\.\.\/\.\.\/etc" is outside the worker's allowed directories \(.*\); start the worker with --allow-dir <dir>/,
      ],
      [
        natsConfig((c) => {
          c.task.name = null;
          c.task.data = {
            path: join(outside, "d.jsonl"),
            format: "jsonl",
            promptField: "prompt",
            answerField: "answer",
            testFraction: 0.1,
          };
        }),
        /^task\.data\.path ".*d\.jsonl" is outside/,
      ],
      [
        natsConfig((c) => c.rewards = [{ path: `${outside}/r.ts#f`, weight: 1, options: {} }]),
        /^rewards\[0\]\.path ".*r\.ts" is outside/,
      ],
      [
        natsConfig((c) => c.model.checkpoint = "file:///etc"),
        /^model\.checkpoint "file:\/\/\/etc" is outside/,
      ],
    ];
    for (const [config, re] of cases) {
      await assert.rejects(checkRunRecord(record(config), HERE), (e: Error) => {
        assert.ok(e instanceof RunRecordError, e.message);
        assert.match(e.message, re);
        return true;
      });
    }
    // a symlink inside an allowed directory that points outside is outside
    await Deno.symlink(outside, join(inside, "link"));
    await assert.rejects(
      checkRunRecord(record(natsConfig((c) => c.model.checkpoint = join(inside, "link"))), {
        allowDirs: [inside],
        allowRemote: false,
      }),
      /model\.checkpoint .* is outside/,
    );
    // --allow-dir: the same path is fine once its directory is allowed (the schema then runs)
    const allowed = natsConfig((c) => c.model.checkpoint = join(outside, "ckpt"));
    assert.equal(
      (await checkRunRecord(record(allowed), { allowDirs: [outside], allowRemote: false })).config
        .model.checkpoint,
      join(outside, "ckpt"),
    );
  } finally {
    await Deno.remove(outside, { recursive: true });
    await Deno.remove(inside, { recursive: true });
  }
});

Deno.test("checkRunRecord: URLs need --allow-remote; a reward module never comes from a URL", async () => {
  const remote = natsConfig((c) => c.model.checkpoint = "https://example.com/ckpt/");
  await assert.rejects(
    checkRunRecord(record(remote), HERE),
    /model\.checkpoint "https:\/\/example\.com\/ckpt\/" is a URL; start the worker with --allow-remote/,
  );
  const ok = await checkRunRecord(record(remote), { ...HERE, allowRemote: true });
  assert.equal(ok.config.model.checkpoint, "https://example.com/ckpt/");
  const judge = natsConfig((c) =>
    c.rewards = [{
      type: "judge",
      weight: 1,
      options: { baseUrl: "http://10.0.0.9:8000/v1", model: "m" },
    }]
  );
  await assert.rejects(
    checkRunRecord(record(judge), HERE),
    /rewards\[0\]\.options\.baseUrl "http:\/\/10\.0\.0\.9:8000\/v1" is a URL/,
  );
  const moduleByUrl = natsConfig((c) =>
    c.rewards = [{ path: "https://evil.example/r.ts#f", weight: 1, options: {} }]
  );
  for (const allowRemote of [false, true]) {
    await assert.rejects(
      checkRunRecord(record(moduleByUrl), { ...HERE, allowRemote }),
      /rewards\[0\]\.path "https:\/\/evil\.example\/r\.ts" is a URL; a worker imports reward modules only from its own files/,
    );
  }
  await assert.rejects(
    checkRunRecord(record(natsConfig((c) => c.model.checkpoint = "data:,x")), HERE),
    /only http\(s\) URLs and local paths are read/,
  );
});

Deno.test("checkRunRecord: every field is type-checked, bucket names are the incarnation's", async () => {
  const config = natsConfig();
  const cases: [unknown, RegExp][] = [
    ["not an object", /not a JSON object/],
    [record(config, { incarnation: "../x" }), /^incarnation is "\.\.\/x"/],
    [
      record(config, { weightsBucket: "KV_secrets" }),
      /weightsBucket is "KV_secrets", not rlvr-weights-abc123/,
    ],
    [record(config, { rolloutsBucket: "x" }), /rolloutsBucket/],
    [
      record(config, { maxStaleness: "2" }),
      /^maxStaleness is "2"; expected an integer in \[0, 1000000\]/,
    ],
    [record(config, { queue: { ackWaitMs: 5, maxDeliver: 5 } }), /queue\.ackWaitMs is 5/],
    [record(config, { queue: { ackWaitMs: 1000, maxDeliver: 5, x: 1 } }), /queue is not/],
    [record(config, { inlineMaxBytes: -1 }), /inlineMaxBytes/],
    [record(config, { startedAt: 5 }), /startedAt/],
    [{ ...(record(config) as object), extra: 1 }, /unknown fields extra/],
    [record(config, { config: "x" }), /config is not an object/],
    [
      record(natsConfig((c) => c.optimizer.lr = -1)),
      /its config is not valid: optimizer\.lr: -1 is not allowed/,
    ],
    [
      record(natsConfig((c) => c.rollout.mode = "sync")),
      /its config is not valid: rollout\.nats|no rollout\.nats with an asynchronous/,
    ],
  ];
  for (const [value, re] of cases) {
    await assert.rejects(checkRunRecord(value, HERE), (e: Error) => {
      assert.ok(e instanceof RunRecordError, e.message);
      assert.match(e.message, re);
      return true;
    });
  }
});

Deno.test("checkNatsJob: a job's shape, digest and weights are checked", () => {
  const job = { id: 1, key: 2, rows: [] };
  const pin = { version: 3, checksum: "a".repeat(64), bytes: 10 };
  assert.deepEqual(
    checkNatsJob({ incarnation: "abc", job, run: "b".repeat(64), weights: pin }),
    { incarnation: "abc", job, run: "b".repeat(64), weights: pin },
  );
  const cases: [unknown, RegExp][] = [
    [null, /not a JSON object/],
    [{ incarnation: "ABC", job }, /incarnation/],
    [{ incarnation: "abc", job: 1 }, /job is not an object/],
    [{ incarnation: "abc", job: { ...job, id: -1 } }, /job\.id/],
    [{ incarnation: "abc", job: { ...job, key: "1" } }, /job\.key/],
    [{ incarnation: "abc", job: { ...job, rows: {} } }, /job\.rows/],
    [{ incarnation: "abc", job, run: "xyz" }, /run is "xyz"; expected a SHA-256/],
    [{ incarnation: "abc", job, weights: { ...pin, checksum: "no" } }, /weights\.checksum/],
    [{ incarnation: "abc", job, weights: { ...pin, bytes: 0 } }, /weights\.bytes/],
  ];
  for (const [value, re] of cases) assert.throws(() => checkNatsJob(value), re);
});

Deno.test("resolveNatsSecurity: one way to log in; the environment fills in; never a secret in the description", async () => {
  const N = TRAINER_AUTH_NAMES;
  const pw = await tempFile("file-pw\n");
  const tok = await tempFile("file-token\n");
  const creds = await tempFile(
    "-----BEGIN NATS USER JWT-----\neyJ0\n------END NATS USER JWT------\n",
  );
  const seed = await tempFile(`SU${"A".repeat(56)}\n`);
  try {
    const cases: [Parameters<typeof resolveNatsSecurity>[0], Record<string, string>, unknown][] = [
      [{}, {}, { kind: "none" }],
      [{ user: "u", passwordFile: pw }, {}, { kind: "user", user: "u", password: "file-pw" }],
      [{ passwordFile: pw }, { NATS_USER: "e" }, { kind: "user", user: "e", password: "file-pw" }],
      [{ user: "u" }, { NATS_PASSWORD: "env-pw" }, { kind: "user", user: "u", password: "env-pw" }],
      [{}, { NATS_USER: "e", NATS_PASSWORD: "env-pw" }, {
        kind: "user",
        user: "e",
        password: "env-pw",
      }],
      [{ tokenFile: tok }, { NATS_USER: "ignored" }, { kind: "token", token: "file-token" }],
      [{}, { NATS_TOKEN: "t" }, { kind: "token", token: "t" }],
      [{ fromUrl: { user: "a", password: "b" } }, {}, { kind: "user", user: "a", password: "b" }],
      [{ fromUrl: { token: "t0k" } }, {}, { kind: "token", token: "t0k" }],
    ];
    for (const [options, env, auth] of cases) {
      const sec = await resolveNatsSecurity(options, N, envOf(env));
      assert.deepEqual(sec.auth, auth, JSON.stringify(options));
      for (const secret of ["file-pw", "env-pw", "file-token", "t0k"]) {
        assert.ok(!sec.description.includes(secret), sec.description);
      }
    }
    const c = await resolveNatsSecurity({ credsFile: creds }, N, envOf({}));
    assert.equal(c.auth.kind, "creds");
    assert.match(c.description, /^creds file .* \(from rollout\.natsAuth\.credsFile\)$/);
    const k = await resolveNatsSecurity({}, N, envOf({ NATS_NKEY: seed }));
    assert.equal(k.auth.kind, "nkey");
    assert.match(k.description, /^nkey seed .* \(from NATS_NKEY\)$/);

    const errors: [Parameters<typeof resolveNatsSecurity>[0], Record<string, string>, RegExp][] = [
      [
        { user: "u", tokenFile: tok },
        {},
        /rollout\.natsAuth\.user and rollout\.natsAuth\.tokenFile each give credentials/,
      ],
      [
        {},
        { NATS_TOKEN: "t", NATS_CREDS: creds },
        /the environment sets NATS_TOKEN and NATS_CREDS; keep one/,
      ],
      [
        {},
        { NATS_PASSWORD: "p" },
        /a password is given \(NATS_PASSWORD\) but no user; set rollout\.natsAuth\.user or NATS_USER/,
      ],
      [
        { passwordFile: pw },
        { NATS_TOKEN: "t" },
        /a password is given \(rollout\.natsAuth\.passwordFile .*\) but no user/,
      ],
      [
        { credsFile: "/nonexistent.creds" },
        {},
        /rollout\.natsAuth\.credsFile: cannot read "\/nonexistent\.creds" \(no such file\)/,
      ],
      [{ credsFile: pw }, {}, /is not a NATS creds file/],
      [{ nkeyFile: pw }, {}, /does not hold a user nkey seed/],
      [
        { tokenFile: await tempFile("\n") },
        {},
        /the token \(rollout\.natsAuth\.tokenFile .*\) is empty/,
      ],
      [
        { tls: { caFile: "/nonexistent.pem" } },
        {},
        /rollout\.natsAuth\.tls\.caFile: "\/nonexistent\.pem" is not a file/,
      ],
      [
        { tls: { certFile: pw } },
        {},
        /rollout\.natsAuth\.tls\.certFile is set without rollout\.natsAuth\.tls\.keyFile/,
      ],
      [
        { tls: { caFile: pw, required: false } },
        {},
        /rollout\.natsAuth\.tls\.required is false but TLS files are set/,
      ],
    ];
    for (const [options, env, re] of errors) {
      await assert.rejects(resolveNatsSecurity(options, N, envOf(env)), re);
    }
    // TLS: a CA (from the config or NATS_CA), or a tls:// URL, requires it
    assert.deepEqual((await resolveNatsSecurity({ tls: { caFile: pw } }, N, envOf({}))).tls, {
      caFile: pw,
    });
    assert.deepEqual((await resolveNatsSecurity({}, N, envOf({ NATS_CA: pw }))).tls, {
      caFile: pw,
    });
    assert.deepEqual((await resolveNatsSecurity({}, N, envOf({}), "tls://h:4222")).tls, {});
    assert.equal((await resolveNatsSecurity({}, N, envOf({}), "nats://h:4222")).tls, null);
  } finally {
    for (const f of [pw, tok, creds, seed]) await Deno.remove(f);
  }
});

Deno.test("redactNatsUrl / splitNatsUrl: credentials in a URL are used, never shown", () => {
  assert.equal(redactNatsUrl("tls://a:b:c@h:1"), "tls://***@h:1");
  assert.equal(redactNatsUrl("nats://h:1"), "nats://h:1");
  assert.deepEqual(splitNatsUrl("nats://u:p:q@h:1"), {
    url: "nats://h:1",
    fromUrl: { user: "u", password: "p:q" },
  });
  assert.throws(() => splitNatsUrl("nats://u:%zz@h:1"), (e: Error) => {
    assert.match(e.message, /nats:\/\/\*\*\*@h:1: its user:password@ part is not valid/);
    return true;
  });
});

Deno.test("config: rollout.natsAuth holds no secret; a user:pass@ URL is refused; errors do not print them", async () => {
  const fail = async (set: string[], re: RegExp) => {
    await assert.rejects(loadConfig({ set: ["rollout.mode=async", ...set] }), (e: Error) => {
      assert.ok(e instanceof ConfigError, e.message);
      assert.match(e.message, re);
      assert.ok(!e.message.includes("hunter2"), e.message);
      return true;
    });
  };
  await fail(
    ["rollout.nats=nats://bob:hunter2@10.0.0.5:4222"],
    /rollout\.nats: nats:\/\/\*\*\*@10\.0\.0\.5:4222 carries credentials, which would be saved in the run's config\.yaml.*set rollout\.natsAuth\.user with rollout\.natsAuth\.passwordFile or NATS_PASSWORD/,
  );
  await fail(
    ["rollout.nats=nats://h:4222", "rollout.natsAuth.password=hunter2"],
    /rollout\.natsAuth\.password: a password in the config would be saved .* rollout\.natsAuth\.passwordFile, or in the trainer's environment as NATS_PASSWORD \(from --set rollout\.natsAuth\.password=\*\*\*\)/,
  );
  await fail(
    ["rollout.nats=nats://h:4222", "rollout.natsAuth.token=hunter2"],
    /rollout\.natsAuth\.token: a token in the config .* NATS_TOKEN/,
  );
  await fail(
    ["rollout.nats=nats://h:4222", "rollout.natsAuth={user: u, credsFile: c.creds}"],
    /rollout\.natsAuth: sets user\/passwordFile and credsFile; keep one way to log in/,
  );
  await fail(
    ["rollout.natsAuth={user: u}"],
    /rollout\.natsAuth: is set but rollout\.nats is null/,
  );
  await fail(
    ["rollout.nats=nats://h:4222", "rollout.natsAuth={tls: {certFile: a.pem}}"],
    /rollout\.natsAuth\.tls\.certFile: a client certificate needs both/,
  );
  await fail(
    ["rollout.mode=sync", "rollout.nats=nats://bob:hunter2@h:4222"],
    /nats:\/\/\*\*\*@h:4222 is set but rollout\.mode is sync/,
  );
  const { config } = await loadConfig({
    set: [
      "rollout.mode=async",
      "rollout.nats=nats://h:4222",
      "rollout.natsAuth={user: trainer, passwordFile: secrets/nats.pw, tls: {caFile: ca.pem}}",
    ],
  });
  assert.deepEqual(config.rollout.natsAuth, {
    user: "trainer",
    passwordFile: "secrets/nats.pw",
    tls: { caFile: "ca.pem", required: true },
  });
});

natsTest(
  "readRunRecord: a record above 1 MiB or not JSON is refused; an absent one is null",
  async (server) => {
    await using nc = await connect({ servers: server.url });
    assert.equal(await readRunRecord(nc, ACTIVE_RUN), null); // no bucket yet
    const os = await new Objm(nc).create(RUN_BUCKET);
    assert.equal(await readRunRecord(nc, ACTIVE_RUN), null);
    await os.putBlob({ name: ACTIVE_RUN }, new Uint8Array(1024 * 1024 + 1));
    await assert.rejects(
      readRunRecord(nc, ACTIVE_RUN),
      (e: Error) =>
        e instanceof RunRecordError && /is 1048577 bytes, above the 1048576/.test(e.message),
    );
    await os.putBlob({ name: ACTIVE_RUN }, new TextEncoder().encode("{nope"));
    await assert.rejects(readRunRecord(nc, ACTIVE_RUN), /run record active is not JSON/);
    await os.putBlob({ name: ACTIVE_RUN }, new TextEncoder().encode('{"a":1}'));
    const r = await readRunRecord(nc, ACTIVE_RUN);
    assert.deepEqual(r?.value, { a: 1 });
    assert.match(r!.digest, /^[0-9a-f]{64}$/);
  },
);
