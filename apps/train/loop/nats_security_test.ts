// NATS credentials, TLS and the checks that keep another client of the server from stopping or
// taking over a run, against real nats-servers (users, a token, TLS) and real
// `deno task worker` subprocesses.
import assert from "node:assert/strict";
import { join } from "node:path";
import { Objm } from "@nats-io/obj";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  natsTest,
  sha256Hex,
  snapshot,
  TrajectoryConsumer,
  type WeightSnapshot,
  WeightsStore,
  WorkQueue,
} from "@rlvr/infra";
import { setBackend } from "@rlvr/tensor";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import { readJsonl } from "../run/jsonl.ts";
import { workerMain } from "../worker.ts";
import { selectTrainDevice } from "./device.ts";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { jobRowCount, type RolloutJob } from "./rollout_job.ts";
import { runTraining } from "./run.ts";
import { trainingTask } from "./task.ts";
import { startNatsExecutors } from "./nats_executor.ts";
import {
  ACTIVE_RUN,
  type NatsJob,
  type NatsResult,
  type NatsRun,
  newIncarnation,
  readRunRecord,
  RUN_BUCKET,
  runObjectName,
  writeActiveRun,
} from "./nats_protocol.ts";
import {
  AUTH_CONFIG,
  AUTH_USERS,
  makeTestCerts,
  ProcessLines,
  tempFile,
  TINY,
  TOKEN,
  TOKEN_CONFIG,
  WORKER,
} from "./_nats_test_util.ts";

async function tinyConfig(url: string, set: string[] = []): Promise<Config> {
  const out = await Deno.makeTempDir();
  try {
    const { config } = await loadConfig({
      out,
      steps: "4",
      device: "cpu",
      set: [...TINY, "rollout.mode=async", `rollout.nats=${url}`, ...set],
    });
    return config;
  } finally {
    await Deno.remove(out, { recursive: true });
  }
}

/** An environment with exactly these variables (the test process's own are not read). */
const envOf = (vars: Record<string, string>) => (name: string): string | undefined => vars[name];

/** One job of fresh rows. */
async function oneJob(config: Config, id = 1): Promise<RolloutJob> {
  const task = await trainingTask(config);
  const stream = new TrainStream(
    task,
    config.trainer.seed,
    heldOutProblems(task, config.trainer.evalProblems),
  );
  return { id, key: id, rows: stream.take(jobRowCount(config)) };
}

function worker(url: string, id: string, args: string[], env: Record<string, string> = {}) {
  return new ProcessLines(id, [WORKER, "--nats", url, "--id", id, "--verbose", ...args], env);
}

/** Runs `workerMain` in process until it prints a line matching `until` (or exits). */
async function workerUntil(
  args: string[],
  env: Record<string, string>,
  until: RegExp,
): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const stop = new AbortController();
  const log = (l: string) => {
    lines.push(l);
    if (until.test(l)) stop.abort();
  };
  const code = await workerMain(args, { log, error: log, signal: stop.signal, env: envOf(env) });
  return { code, lines };
}

/** Asserts that no line holds any of `secrets`. */
function assertNoSecret(lines: readonly string[], secrets: readonly string[]): void {
  for (const l of lines) {
    for (const s of secrets) assert.ok(!l.includes(s), `a secret was printed: ${l}`);
  }
}

/** Trains, uploads v0 and runs one job on a worker subprocess with `args` and `env`. */
async function runOneJob(
  config: Config,
  env: (name: string) => string | undefined,
  worker: ProcessLines,
): Promise<{ logs: string[]; runId: string }> {
  const logs: string[] = [];
  const runId = `auth-${newIncarnation()}`;
  const [ex] = await startNatsExecutors(config, 1, { runId, env, log: (l) => logs.push(l) });
  const device = await selectTrainDevice(config.trainer.device);
  setBackend(device.backend);
  const { model } = await loadPolicy(config.model.checkpoint);
  try {
    await ex!.sync(await snapshot(model.params, 0));
    const result = await ex!.run(await oneJob(config));
    assert.equal(result.policyVersion, 0);
    assert.equal(result.rollout.items.length, config.rollout.batchSize);
    await worker.waitFor(/^job 1 v0 \d+ tokens/);
    return { logs, runId };
  } finally {
    await ex!.close();
    model.dispose();
    device.release();
  }
}

natsTest(
  "credentials: users — trainer and worker log in; a wrong or missing password fails at once, naming the settings, never printed",
  async (server) => {
    const pwFile = await tempFile(`${AUTH_USERS.worker}\n`);
    const wrongFile = await tempFile("not-the-password\n");
    const config = await tinyConfig(server.url, ["rollout.natsAuth={user: trainer}"]);
    const secrets = [...Object.values(AUTH_USERS), "not-the-password"];
    const w = worker(server.url, "wa", ["--user", "worker", "--password-file", pwFile]);
    try {
      // right credentials: a job goes through (the worker's password from a file)
      const { logs } = await runOneJob(
        config,
        envOf({ NATS_PASSWORD: AUTH_USERS.trainer }),
        w,
      );
      await w.waitFor(
        /^worker wa: connected to nats:\/\/127\.0\.0\.1:\d+ \(user "worker" \(from --user\), password from --password-file /,
      );
      assertNoSecret([...logs, ...w.lines], secrets);

      // the trainer: a wrong password, then none
      let t0 = performance.now();
      await assert.rejects(
        startNatsExecutors(config, 1, {
          runId: "auth-bad",
          env: envOf({ NATS_PASSWORD: "not-the-password" }),
        }),
        (e: Error) => {
          assert.match(
            e.message,
            /^rollout\.nats: nats:\/\/127\.0\.0\.1:\d+ refused the credentials \(user "trainer" \(from rollout\.natsAuth\.user\), password from NATS_PASSWORD\): Authorization Violation; check them \(rollout\.natsAuth\.user or NATS_USER with rollout\.natsAuth\.passwordFile or NATS_PASSWORD/,
          );
          assertNoSecret([e.message], secrets);
          return true;
        },
      );
      assert.ok(performance.now() - t0 < 4000, "a refused login fails at once");
      const anonymous = await tinyConfig(server.url);
      t0 = performance.now();
      await assert.rejects(
        startNatsExecutors(anonymous, 1, { runId: "auth-none", env: envOf({}) }),
        /^Error: rollout\.nats: nats:\/\/127\.0\.0\.1:\d+ requires credentials and none were given \(Authorization Violation\); give them with rollout\.natsAuth\.user or NATS_USER/,
      );
      assert.ok(performance.now() - t0 < 4000, "a missing login fails at once");
      // the trainer's config says user but no password anywhere: before connecting
      await assert.rejects(
        startNatsExecutors(config, 1, { runId: "auth-nopw", env: envOf({}) }),
        /rollout\.natsAuth: NATS credentials: user "trainer" \(rollout\.natsAuth\.user\) has no password; set rollout\.natsAuth\.passwordFile or NATS_PASSWORD/,
      );

      // the worker: wrong password file, none, and a wrong password in the URL
      const bad = await workerUntil(
        ["--nats", server.url, "--user", "worker", "--password-file", wrongFile],
        {},
        /never/,
      );
      assert.equal(bad.code, 1);
      assert.match(
        bad.lines.at(-1)!,
        /^worker: nats:\/\/127\.0\.0\.1:\d+ refused the credentials \(user "worker" \(from --user\), password from --password-file .*\): Authorization Violation; check them \(--user or NATS_USER with --password-file or NATS_PASSWORD/,
      );
      const none = await workerUntil(["--nats", server.url], {}, /never/);
      assert.equal(none.code, 1);
      assert.match(none.lines.at(-1)!, /requires credentials and none were given/);
      const port = new URL(server.url).port;
      const inUrl = await workerUntil(
        ["--nats", `nats://worker:not-the-password@127.0.0.1:${port}`],
        {},
        /never/,
      );
      assert.equal(inUrl.code, 1);
      assert.match(inUrl.lines.at(-1)!, /the user:password@ part of --nats/);
      // the environment's credentials are used when no flag gives any
      const fromEnv = await workerUntil(
        ["--nats", `127.0.0.1:${port}`, "--verbose"],
        { NATS_USER: "worker", NATS_PASSWORD: AUTH_USERS.worker },
        /waiting for a trainer|connected to/,
      );
      assert.equal(fromEnv.code, 0, fromEnv.lines.join("\n"));
      assert.match(
        fromEnv.lines.join("\n"),
        /\(user "worker" \(from NATS_USER\), password from NATS_PASSWORD\)/,
      );
      assertNoSecret([...bad.lines, ...none.lines, ...inUrl.lines, ...fromEnv.lines], secrets);
    } finally {
      await w.kill();
      await Deno.remove(pwFile);
      await Deno.remove(wrongFile);
    }
  },
  { timeoutMs: 120_000, server: { config: AUTH_CONFIG } },
);

natsTest(
  "credentials: a token — from NATS_TOKEN and --token-file; a wrong one is refused",
  async (server) => {
    const tokenFile = await tempFile(`${TOKEN}\n`);
    const config = await tinyConfig(server.url);
    const w = worker(server.url, "wt", ["--token-file", tokenFile]);
    try {
      const { logs } = await runOneJob(config, envOf({ NATS_TOKEN: TOKEN }), w);
      await w.waitFor(/^worker wt: connected to .* \(token from --token-file /);
      assertNoSecret([...logs, ...w.lines], [TOKEN]);
      await assert.rejects(
        startNatsExecutors(config, 1, { runId: "tok-bad", env: envOf({ NATS_TOKEN: "wrong" }) }),
        /refused the credentials \(token from NATS_TOKEN\): Authorization Violation/,
      );
      const bad = await workerUntil(["--nats", server.url], { NATS_TOKEN: "wrong" }, /never/);
      assert.equal(bad.code, 1);
      assert.match(bad.lines.at(-1)!, /refused the credentials \(token from NATS_TOKEN\)/);
      // two ways at once are refused before connecting
      const both = await workerUntil(
        ["--nats", server.url, "--token-file", tokenFile, "--user", "x"],
        {},
        /never/,
      );
      assert.equal(both.code, 2);
      assert.match(both.lines.at(-1)!, /--user and --token-file .*each give credentials/);
    } finally {
      await w.kill();
      await Deno.remove(tokenFile);
    }
  },
  { timeoutMs: 120_000, server: { config: TOKEN_CONFIG } },
);

const certs = await makeTestCerts();

natsTest(
  "credentials: TLS — with the CA the trainer and a worker connect; without it, or against a plain server, a clear error",
  async (server) => {
    assert.ok(certs !== null, "the TLS test needs openssl (apt-get install -y openssl)");
    const config = await tinyConfig(server.url, [
      `rollout.natsAuth={tls: {caFile: ${certs.ca}}}`,
    ]);
    const env = envOf({ NATS_TOKEN: TOKEN });
    const [ex] = await startNatsExecutors(config, 1, { runId: "tls-a", env });
    await ex!.close();
    // the server's certificate is not signed by a CA the client knows
    await assert.rejects(
      startNatsExecutors(await tinyConfig(server.url), 1, { runId: "tls-b", env }),
      /rollout\.nats: TLS with nats:\/\/127\.0\.0\.1:\d+ failed \(.*\); give the CA that signed the server's certificate with rollout\.natsAuth\.tls\.caFile or NATS_CA/,
    );
    const ok = await workerUntil(
      ["--nats", server.url, "--tls-ca", certs.ca, "--verbose"],
      { NATS_TOKEN: TOKEN },
      /connected to|waiting for a trainer/,
    );
    assert.equal(ok.code, 0, ok.lines.join("\n"));
    assert.match(ok.lines.join("\n"), /token from NATS_TOKEN, TLS required \(CA .*ca\.pem\)/);
    // TLS required against a server without it
    await using plain = await (await import("@rlvr/infra")).startNatsServer();
    const noTls = await workerUntil(
      ["--nats", plain.url, "--tls-required"],
      {},
      /never/,
    );
    assert.equal(noTls.code, 1);
    assert.match(
      noTls.lines.at(-1)!,
      /does not offer TLS, which is required \(--tls-required, --tls-ca, NATS_CA or a tls:\/\/ URL\)/,
    );
  },
  {
    timeoutMs: 60_000,
    server: {
      config: certs === null
        ? TOKEN_CONFIG
        : `${TOKEN_CONFIG}tls {\n  cert_file: "${certs.cert}"\n  key_file: "${certs.key}"\n}\n`,
    },
  },
);

/** Uploads an object into a weights bucket as another client would (any bytes, any metadata). */
async function putRaw(
  nc: NatsConnection,
  bucket: string,
  version: number,
  bytes: Uint8Array,
  checksum: string,
): Promise<void> {
  const os = await new Objm(nc).open(bucket);
  await os.putBlob({
    name: `v${version}`,
    metadata: { "rlvr-version": String(version), "rlvr-sha256": checksum },
  }, bytes);
}

/** Bogus versions of `real` (see the test): same size garbage, a wrong checksum, wrong names. */
async function bogusWeights(
  nc: NatsConnection,
  bucket: string,
  real: WeightSnapshot,
  params: ReadonlyMap<string, unknown>,
  base: number,
): Promise<void> {
  // undecodable: random bytes of the real size, with their own (correct) checksum
  const garbage = new Uint8Array(real.bytes.length);
  for (let i = 0; i < garbage.length; i += 65536) {
    crypto.getRandomValues(garbage.subarray(i, i + 65536));
  }
  await putRaw(nc, bucket, base, garbage, await sha256Hex(garbage));
  // a checksum that is not the bytes'
  await putRaw(nc, bucket, base + 1, real.bytes, "0".repeat(64));
  // a valid snapshot of the same size whose tensor names are not the model's
  const renamed = new Map(
    [...params].map((
      [k, v],
      i,
    ) => [i === 0 ? k.slice(0, -1) + (k.endsWith("x") ? "y" : "x") : k, v]),
  ) as Parameters<typeof snapshot>[0];
  const wrong = await snapshot(renamed, base + 2);
  await putRaw(nc, bucket, base + 2, wrong.bytes, wrong.checksum);
  // far too big for the run's weights
  const big = new Uint8Array(real.bytes.length + 64 * 1024);
  await putRaw(nc, bucket, base + 3, big, await sha256Hex(big));
}

/** A run record of `config` naming `secret` as its dataset (outside the worker's directory). */
function forgedRun(real: NatsRun, incarnation: string, secret: string): NatsRun {
  return {
    ...real,
    incarnation,
    weightsBucket: `rlvr-weights-${incarnation}`,
    rolloutsBucket: `rlvr-rollouts-${incarnation}`,
    config: {
      ...real.config,
      task: {
        ...real.config.task,
        name: null,
        data: {
          path: secret,
          format: "jsonl",
          promptField: "prompt",
          answerField: "answer",
          testFraction: 0.1,
        },
      },
    },
  };
}

natsTest(
  "worker: bogus weights versions, forged run records and jobs are refused with a line; the trainer's job is served",
  async (server) => {
    const secret = `TOP-SECRET-${crypto.randomUUID()}`;
    const secretFile = await tempFile(`${secret}\nsecond line\n`, ".jsonl");
    const config = await tinyConfig(server.url);
    await using nc = await connect({ servers: server.url });
    // an in-process trainer: its run record, queue, weights and results
    const incarnation = newIncarnation();
    const run: NatsRun = {
      runId: "fake",
      incarnation,
      config,
      maxStaleness: 2,
      weightsBucket: `rlvr-weights-${incarnation}`,
      rolloutsBucket: `rlvr-rollouts-${incarnation}`,
      queue: { ackWaitMs: 2000, maxDeliver: 3 },
      inlineMaxBytes: 512 * 1024,
      startedAt: new Date().toISOString(),
    };
    const digest = await writeActiveRun(nc, run);
    await new Objm(nc).create(run.rolloutsBucket);
    const queue = await WorkQueue.open<NatsJob>(nc, run.queue);
    const results = await TrajectoryConsumer.open<NatsResult>(nc);
    const store = await WeightsStore.open(nc, { bucket: run.weightsBucket });
    const { model } = await loadPolicy(config.model.checkpoint);
    const w = worker(server.url, "wv", []);
    try {
      const real = await snapshot(model.params, 0);
      const { size } = await store.put(real);
      await bogusWeights(nc, run.weightsBucket, real, model.params, 5);

      // another client: a job that is not a job, and a job of a forged trainer whose record
      // names a file outside the worker's directory
      await queue.enqueue({ id: "junk", prompt: { incarnation: "../../x", job: 1 } as never });
      const evil = forgedRun(run, "evil0", secretFile);
      const evilBytes = new TextEncoder().encode(JSON.stringify(evil));
      await (await new Objm(nc).open(RUN_BUCKET)).putBlob(
        { name: runObjectName("evil0") },
        evilBytes,
      );
      await queue.enqueue({
        id: "evil/1",
        prompt: {
          incarnation: "evil0",
          job: await oneJob(config, 9),
          run: await sha256Hex(evilBytes),
        },
      });
      // ...and it replaced the trainer's own record
      const forged = forgedRun(run, incarnation, secretFile);
      await (await new Objm(nc).open(RUN_BUCKET)).putBlob(
        { name: runObjectName(incarnation) },
        new TextEncoder().encode(JSON.stringify(forged)),
      );

      // the trainer's job, naming its record and its weights
      const job = await oneJob(config);
      await queue.enqueue({
        id: "fake/1",
        prompt: {
          incarnation,
          job,
          run: digest,
          weights: { version: 0, checksum: real.checksum, bytes: size },
        },
      });
      await w.waitFor(/^worker wv: refused job junk: incarnation is "\.\.\/\.\.\/x"/);
      await w.waitFor(
        /^worker wv: refused run record run-evil0: task\.data\.path ".*" is outside the worker's allowed directories \(.*\); start the worker with --allow-dir <dir> to allow it$/,
      );
      await w.waitFor(
        new RegExp(
          `^worker wv: refused run record run-${incarnation}: its SHA-256 \\w+… is not the ` +
            `${digest.slice(0, 12)}… its jobs name`,
        ),
      );
      // the trainer restores its record (as nats_executor.ts's guard does)
      await writeActiveRun(nc, run);
      const got = await results.next({ expiresMs: 60_000 });
      assert.ok(got !== null, w.lines.join("\n"));
      await got.ack();
      assert.equal(got.trajectory.jobId, "fake/1");
      assert.equal(got.trajectory.policyVersion, 0); // not one of the bogus, newer versions
      assert.equal(got.trajectory.payload.kind, "inline");
      assert.equal((got.trajectory.payload as { checksum?: string }).checksum, real.checksum);
      await w.waitFor(/^job 1 v0 \d+ tokens/);
      // each bogus version: one line, and skipped
      await w.waitFor(
        /^worker wv: weights v8 refused \(\d+ bytes, where the run's weights have \d+\); skipped/,
      );
      await w.waitFor(
        /^worker wv: weights v7 refused \(.*missing from the (model|snapshot).*\); skipped/,
      );
      await w.waitFor(/^worker wv: weights v6 refused \(.*failed its checksum.*\); skipped/);
      await w.waitFor(/^worker wv: weights v5 refused \(.*\); skipped/);
      assert.equal(w.lines.filter((l) => /weights v5 refused/.test(l)).length, 1);
      assertNoSecret(w.lines, [secret]);
    } finally {
      await w.kill();
      model.dispose();
      await Deno.remove(secretFile);
    }
  },
  { timeoutMs: 120_000 },
);

natsTest(
  "runTraining over NATS with credentials: a peer's forged run records, jobs and weights do not stop the run",
  async (server) => {
    const out = await Deno.makeTempDir();
    const secret = `TOP-SECRET-${crypto.randomUUID()}`;
    const secretFile = await tempFile(`${secret}\n`, ".jsonl");
    const workerEnv = { NATS_USER: "worker", NATS_PASSWORD: AUTH_USERS.worker };
    const w1 = worker(server.url, "w1", [], workerEnv);
    let w2: ProcessLines | null = null;
    // The trainer's password from a file, not NATS_PASSWORD: Deno.env is the whole test
    // process's, and with --parallel other files' trainers would find it and refuse to start.
    const passwordFile = await tempFile(`${AUTH_USERS.trainer}\n`);
    Deno.env.set("RLVR_NATS_ACK_WAIT_MS", "3000");
    // the attacker: a client with credentials of its own (a compromised peer)
    await using peer = await connect({ servers: server.url, user: "peer", pass: AUTH_USERS.peer });
    try {
      const loaded = await loadConfig({
        out,
        steps: "8",
        device: "cpu",
        set: [
          ...TINY,
          "rollout.mode=async",
          "rollout.workers=2",
          `rollout.nats=${server.url}`,
          `rollout.natsAuth={user: trainer, passwordFile: ${passwordFile}}`,
          "trainer.saveEvery=0",
        ],
      });
      const logs: string[] = [];
      const run = runTraining(loaded, {
        log: (l) => logs.push(l),
        progress: () => {},
        report: false,
        handleSignals: false,
      });
      run.catch(() => {}); // awaited below
      await w1.waitFor(/^job \d+ v\d+ /, 120_000);

      // the peer reads the run record and attacks
      const active = await readRunRecord(peer, ACTIVE_RUN);
      assert.ok(active !== null);
      const real = active.value as NatsRun;
      assert.equal("natsAuth" in real.config.rollout, false); // the trainer's settings stay home
      const store = await WeightsStore.open(peer, { bucket: real.weightsBucket });
      const latest = await store.getLatest();
      assert.ok(latest !== null);
      const { model } = await loadPolicy(real.config.model.checkpoint);
      await bogusWeights(peer, real.weightsBucket, latest, model.params, 900);
      model.dispose();
      const runOs = await new Objm(peer).open(RUN_BUCKET);
      const forged = new TextEncoder().encode(
        JSON.stringify(forgedRun(real, real.incarnation, secretFile)),
      );
      await runOs.putBlob({ name: runObjectName(real.incarnation) }, forged);
      await runOs.putBlob({ name: ACTIVE_RUN }, forged);
      const evil = new TextEncoder().encode(JSON.stringify(forgedRun(real, "evil1", secretFile)));
      await runOs.putBlob({ name: runObjectName("evil1") }, evil);
      const queue = await WorkQueue.attach<NatsJob>(peer);
      for (let i = 0; i < 2; i++) {
        await queue!.enqueue({
          id: `evil/${i}`,
          prompt: {
            incarnation: "evil1",
            job: { id: 90 + i, key: 1, rows: [] },
            run: await sha256Hex(evil),
          },
        });
      }
      // a second worker joins after the attack
      w2 = worker(server.url, "w2", [], workerEnv);

      const result = await run;
      assert.equal(result.step, 8);
      assert.equal(result.interrupted, false);
      const { records } = await readJsonl<{ step: number }>(join(result.dir, "metrics.jsonl"));
      assert.deepEqual(records.map((r) => r.step), [1, 2, 3, 4, 5, 6, 7, 8]);
      // the trainer removed the peer's weights and restored its record
      const text = logs.join("\n");
      for (const v of [900, 901, 902, 903]) {
        assert.match(
          text,
          new RegExp(`deleted weights object "v${v}" .* not uploaded by this trainer`),
        );
      }
      assert.match(
        text,
        new RegExp(
          `the run record run-${real.incarnation} was replaced by another client; written again`,
        ),
      );
      // a worker refused the forged trainer's record; nobody opened the file it names
      const workers = [...w1.lines, ...w2.lines];
      assert.ok(
        workers.some((l) => /refused run record run-evil1: task\.data\.path .* outside/.test(l)),
        workers.join("\n"),
      );
      assertNoSecret([...workers, ...logs], [secret, ...Object.values(AUTH_USERS)]);
      const yaml = await Deno.readTextFile(join(result.dir, "config.yaml"));
      assert.match(yaml, /natsAuth:\n\s+user: trainer/);
      assertNoSecret([yaml], Object.values(AUTH_USERS));
    } finally {
      Deno.env.delete("RLVR_NATS_ACK_WAIT_MS");
      await Deno.remove(passwordFile);
      await w1.kill();
      await w2?.kill();
      await Deno.remove(out, { recursive: true });
      await Deno.remove(secretFile);
    }
  },
  { timeoutMs: 300_000, server: { config: AUTH_CONFIG } },
);

// The TLS test's certificates outlive its registration; remove them when the file's tests end.
globalThis.addEventListener("unload", () => {
  if (certs !== null) Deno.removeSync(certs.dir, { recursive: true });
});
