/**
 * Entry point of `deno task worker --nats <url> [--id <name>]`: a remote rollout worker for
 * `deno task train` runs with `rollout.nats` set (the trainer's side is
 * `loop/nats_executor.ts`, the messages `loop/nats_protocol.ts`).
 *
 * It connects (with credentials from its flags or the `NATS_*` environment), attaches to the
 * trainer's work queue, then loops: take a job, read and check the run record of the job's
 * trainer (config, η, bucket names) and load its task and policy on the device
 * `trainer.device` selects, make sure it holds weights the job may run under (checksum
 * verified), sample and score the job, publish the rollout tagged with its weight version and
 * checksum, acknowledge the job. It prints one line per job: `job <id> v<version> <tokens>
 * tokens <s> s`.
 *
 * Design decisions:
 * - **The rollout is computed by `loop/rollout_worker.ts` in a Web Worker**, through the same
 *   `WorkerExecutor` the trainer uses for local workers: a job is computed exactly as a local
 *   worker computes it (`collectRollout` with `rolloutOptionsOf`), and this thread stays free
 *   for NATS (pings, and heartbeats, `inProgress()` every quarter of the ack wait, so a long job
 *   is not redelivered while a killed worker's job is, after the ack wait).
 * - **Nothing from the server is trusted before it is checked**, since any client of the
 *   server can write there (credentials on the server keep strangers out; these checks keep a
 *   peer's forgery from stopping a run or taking over this machine):
 *   - a job must have the protocol's shape (else it is terminated, with a line);
 *   - a run record is read from the job's incarnation (`run-<incarnation>`), at most 1 MiB,
 *     must hash to the digest the job names, and passes `checkRunRecord`: fields type-checked,
 *     the config validated, and every local path it names (model checkpoint, dataset, reward
 *     modules) inside `--allow-dir` (default: the working directory), URLs only with
 *     `--allow-remote`, reward modules never by URL. A refused record is logged once and its
 *     jobs handed back; it never opens a file;
 *   - weights: a job runs under the version the trainer named in it or a newer one; a version
 *     whose object has another checksum than the job names, a size far from the run's
 *     snapshots, a checksum that does not verify, or bytes that do not decode to the model's
 *     tensors is refused, logged once and skipped (the newest valid version is used), never a
 *     reason to fail jobs. Waiting for usable weights ends after 30 s: the job is handed back.
 * - **Stale weights are refused before publishing** (`TrajectoryPublisher`, η = the run's
 *   `maxStaleness`, counting only versions not refused): the worker then loads the latest
 *   weights and computes the job again; the trainer's staleness gate stays the guarantee.
 * - **Ack after publish**: a worker killed before its ack has its job redelivered to another
 *   worker, and the trainer takes the first result of a job (ids deduplicate the rest).
 * - **An error computing a job is published** as the job's result (the trainer's run fails with
 *   it, as with a local worker) and the policy is reloaded; an error talking to NATS hands the
 *   job back for another try.
 * - **A job of another trainer** (a new incarnation: the trainer restarted) makes the worker
 *   open that trainer's run; a job whose trainer's record is gone is dropped (`term`).
 * - **Credentials never reach the output**: passwords and tokens only from files, the
 *   environment or the URL (printed as `nats://***@host`); a refused login exits at once
 *   naming the flags and variables to fix.
 * - Exit codes: 0 stopped (Ctrl-C or SIGTERM finish the current job first; Ctrl-C twice quits
 *   at once), 1 bad URL, unreachable server, refused credentials or a failure, 2 bad arguments
 *   (unreadable credential files included).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { type ObjectStore, Objm } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  type ReceivedJob,
  StaleWeightsError,
  type Trajectory,
  TrajectoryPublisher,
  type WeightSnapshot,
  WeightsStore,
  WorkQueue,
} from "@rlvr/infra";
import type { Rollout } from "./loop/rollout.ts";
import { WorkerExecutor } from "./loop/worker_executor.ts";
import {
  checkNatsJob,
  checkRunRecord,
  connectNatsSecure,
  encodeJson,
  type NatsAuthNames,
  type NatsAuthOptions,
  NatsConnectError,
  type NatsJob,
  type NatsResult,
  type NatsRun,
  type NatsSecurity,
  type NatsWeightsPin,
  readRunRecord,
  redactNatsUrl,
  resolveNatsSecurity,
  runObjectName,
  splitNatsUrl,
} from "./loop/nats_protocol.ts";

/**
 * The usage text of `deno task worker`.
 *
 * @example Usage
 * ```ts
 * import { WORKER_USAGE } from "./worker.ts";
 * import assert from "node:assert/strict";
 * assert.match(WORKER_USAGE, /--nats <url>/);
 * assert.match(WORKER_USAGE, /--allow-dir <dir>/);
 * ```
 */
export const WORKER_USAGE = `Usage: deno task worker --nats <url> [--id <name>] [--verbose]
         [credentials] [--allow-dir <dir>]... [--allow-remote]

A remote rollout worker for deno task train with rollout.nats set (rollout.mode one_step_off or
async). It serves whatever run is active on the server: start it before or after the trainer,
on any machine that can reach the server and has the run's model checkpoint and data.

Options:
  --nats <url>            the NATS server, with JetStream (nats://host:4222; tls://host:4222
                          requires TLS); a user:password@ or token@ part is used to log in
                          and printed as ***
  --id <name>             this worker's name in logs and results (default <hostname>-<pid>)
  --verbose               also print a line when a job is taken and when weights are loaded
  -h, --help              show this help

Credentials (a flag wins over its environment variable; one way to log in):
  --user <name>           user name (NATS_USER); the password from --password-file or
                          NATS_PASSWORD
  --password-file <file>  a file holding the password (no --password: it would show in ps)
  --token-file <file>     a file holding a token (or the token itself in NATS_TOKEN)
  --creds <file>          a .creds file: JWT and nkey seed, as nsc writes it (NATS_CREDS)
  --nkey <file>           a file holding a user nkey seed, SU... (NATS_NKEY)
  --tls-ca <file>         the CA of the server's certificate; TLS is then required (NATS_CA)
  --tls-cert <file>       a client certificate, with --tls-key <file>
  --tls-required          refuse a server without TLS (system CAs unless --tls-ca)

What a run record may make this worker open (anything else is refused, with a line):
  --allow-dir <dir>       a directory the run's local files (model.checkpoint, task.data.path,
                          reward modules) may be in; repeatable (default: the working directory)
  --allow-remote          let run records name http(s) URLs: a checkpoint or dataset by URL,
                          an endpoint in options (a judge); reward modules stay local

Prints one line per job: job <id> v<weights version> <tokens> tokens <seconds> s.
Ctrl-C finishes the current job and exits (Ctrl-C again quits at once).`;

/**
 * What `deno task worker`'s arguments ask for.
 *
 * @example Usage
 * ```ts
 * import type { WorkerArgs } from "./worker.ts";
 * import assert from "node:assert/strict";
 * const a: WorkerArgs = {
 *   kind: "run", url: "nats://127.0.0.1:4222", id: "gpu0", verbose: false, auth: {},
 *   allowDirs: ["/srv/rlvr"], allowRemote: false,
 * };
 * assert.equal(a.kind, "run");
 * ```
 */
export type WorkerArgs =
  | { kind: "help" }
  | {
    /** Run a worker. */
    kind: "run";
    /** The server (normalised: `nats://host:port`, without credentials). */
    url: string;
    /** The worker's name. */
    id: string;
    /** Print job-taken and weights-loaded lines too. */
    verbose: boolean;
    /**
     * Credentials from the flags and the URL's `user:password@` part (the environment is read
     * when connecting). May hold a password: never print it.
     */
    auth: {
      user?: string;
      passwordFile?: string;
      tokenFile?: string;
      credsFile?: string;
      nkeyFile?: string;
      fromUrl?: { user?: string; password?: string; token?: string };
      tls?: { caFile?: string; certFile?: string; keyFile?: string; required?: boolean };
    };
    /** Directories a run record's local paths may be in (absolute). */
    allowDirs: string[];
    /** Whether a run record may name http(s) URLs. */
    allowRemote: boolean;
  };

/**
 * A bad command line (`exitCode` 2) or a bad URL (`exitCode` 1).
 *
 * @example Usage
 * ```ts
 * import { parseWorkerArgs, WorkerArgsError } from "./worker.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => parseWorkerArgs([]), WorkerArgsError);
 * ```
 */
export class WorkerArgsError extends Error {
  /** The exit code. */
  readonly exitCode: number;
  /**
   * An argument error with the exit code the CLI ends with.
   *
   * @param message One line.
   * @param exitCode The exit code.
   */
  constructor(message: string, exitCode: number) {
    super(message);
    this.name = "WorkerArgsError";
    this.exitCode = exitCode;
  }
}

/** How the worker's credential settings are called, for messages. */
const WORKER_AUTH_NAMES: NatsAuthNames = Object.freeze({
  user: "--user",
  password: null,
  passwordFile: "--password-file",
  token: null,
  tokenFile: "--token-file",
  credsFile: "--creds",
  nkeyFile: "--nkey",
  caFile: "--tls-ca",
  certFile: "--tls-cert",
  keyFile: "--tls-key",
  required: "--tls-required",
  url: "--nats",
});

/**
 * `nats://host:port` from what the user typed (`host`, `host:port`, `nats://...`, `tls://...`),
 * and the credentials of its `user:password@` (or `token@`) part. Messages never show them.
 */
function normaliseUrl(raw: string): ReturnType<typeof splitNatsUrl> {
  const bad = (why: string) =>
    new WorkerArgsError(
      `worker: --nats ${
        JSON.stringify(redactNatsUrl(raw.includes("://") ? raw : `nats://${raw}`))
      } is not a NATS URL (${why}); use one like nats://127.0.0.1:4222`,
      1,
    );
  let split: ReturnType<typeof splitNatsUrl>;
  try {
    split = splitNatsUrl(raw.includes("://") ? raw : `nats://${raw}`);
  } catch {
    throw bad("its user:password@ part is not valid percent-encoding");
  }
  let u: URL;
  try {
    u = new URL(split.url);
  } catch {
    throw bad("it does not parse");
  }
  if (u.protocol !== "nats:" && u.protocol !== "tls:") {
    throw bad(`scheme ${u.protocol.replace(/:$/, "")}; use nats:// or tls://`);
  }
  if (u.hostname === "") throw bad("no host");
  if ((u.pathname !== "" && u.pathname !== "/") || u.search !== "" || u.hash !== "") {
    throw bad("a server URL has no path, query or fragment");
  }
  const url = `${u.protocol}//${u.host}`;
  return split.fromUrl === undefined ? { url } : { url, fromUrl: split.fromUrl };
}

/**
 * Parses `deno task worker`'s arguments (credential files are read later, when connecting).
 *
 * @param args The arguments.
 * @returns What to do.
 * @throws {WorkerArgsError} on unknown options, a missing `--nats`, a bad URL or credentials
 *   given twice.
 *
 * @example Usage
 * ```ts
 * import { parseWorkerArgs } from "./worker.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseWorkerArgs(["--nats", "10.0.0.5:4222", "--id", "gpu0"]), {
 *   kind: "run", url: "nats://10.0.0.5:4222", id: "gpu0", verbose: false, auth: {},
 *   allowDirs: [Deno.cwd()], allowRemote: false,
 * });
 * const a = parseWorkerArgs(["--nats", "nats://w:s3cret@h:4222", "--allow-dir", "/data"]);
 * assert.deepEqual(a.kind === "run" && [a.url, a.auth, a.allowDirs], [
 *   "nats://h:4222", { fromUrl: { user: "w", password: "s3cret" } }, ["/data"],
 * ]);
 * assert.deepEqual(parseWorkerArgs(["--help"]), { kind: "help" });
 * assert.throws(() => parseWorkerArgs(["--nats", "http://x"]), /not a NATS URL/);
 * ```
 */
export function parseWorkerArgs(args: readonly string[]): WorkerArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        nats: { type: "string" },
        id: { type: "string" },
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        user: { type: "string" },
        "password-file": { type: "string" },
        "token-file": { type: "string" },
        creds: { type: "string" },
        nkey: { type: "string" },
        "tls-ca": { type: "string" },
        "tls-cert": { type: "string" },
        "tls-key": { type: "string" },
        "tls-required": { type: "boolean" },
        "allow-dir": { type: "string", multiple: true },
        "allow-remote": { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new WorkerArgsError(`worker: ${(e as Error).message}; see --help`, 2);
  }
  if (values.help === true) return { kind: "help" };
  if (values.nats === undefined || values.nats === "") {
    throw new WorkerArgsError("worker: --nats <url> is required (e.g. nats://127.0.0.1:4222)", 2);
  }
  const id = values.id ?? `${hostname()}-${Deno.pid}`;
  if (id === "" || /\s/.test(id)) {
    throw new WorkerArgsError(
      `worker: --id must be a name without spaces, got ${JSON.stringify(id)}`,
      2,
    );
  }
  const { url, fromUrl } = normaliseUrl(values.nats);
  const auth: Extract<WorkerArgs, { kind: "run" }>["auth"] = fromUrl === undefined
    ? {}
    : { fromUrl };
  const flag = (name: string, value: string | undefined, key: keyof NatsAuthOptions) => {
    if (value === undefined) return;
    if (value === "") throw new WorkerArgsError(`worker: ${name} needs a value`, 2);
    if (key === "user" && fromUrl !== undefined) {
      throw new WorkerArgsError(
        `worker: --user and the --nats URL's user:password@ part both give credentials; keep ` +
          `one`,
        2,
      );
    }
    (auth as Record<string, string>)[key] = value;
  };
  flag("--user", values.user, "user");
  flag("--password-file", values["password-file"], "passwordFile");
  flag("--token-file", values["token-file"], "tokenFile");
  flag("--creds", values.creds, "credsFile");
  flag("--nkey", values.nkey, "nkeyFile");
  const tls: NonNullable<Extract<WorkerArgs, { kind: "run" }>["auth"]["tls"]> = {};
  if (values["tls-ca"] !== undefined) tls.caFile = values["tls-ca"];
  if (values["tls-cert"] !== undefined) tls.certFile = values["tls-cert"];
  if (values["tls-key"] !== undefined) tls.keyFile = values["tls-key"];
  if (values["tls-required"] === true) tls.required = true;
  if (Object.keys(tls).length > 0) auth.tls = tls;
  const dirs = values["allow-dir"] ?? [];
  if (dirs.some((d) => d === "")) throw new WorkerArgsError("worker: --allow-dir needs a value", 2);
  return {
    kind: "run",
    url,
    id,
    verbose: values.verbose === true,
    auth,
    allowDirs: dirs.length === 0 ? [Deno.cwd()] : dirs.map((d) => resolve(d)),
    allowRemote: values["allow-remote"] === true,
  };
}

const HEADROOM = 8 * 1024;
/** How long a job waits for weights it may run under before it is handed back. */
const WEIGHTS_WAIT_MS = 30_000;
/**
 * How far a version's size may be from the run's (the job's named version): snapshots of one
 * model differ only in the digits of the version in their header.
 */
const SIZE_SLACK = 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function errorOf(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** A message's text cut to one short line (it may quote what another client wrote). */
function short(text: string, max = 300): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** Thrown when a job cannot be served here yet (handed back, not reported as its result). */
class HandBack extends Error {
  constructor(message: string, readonly delayMs = 1000) {
    super(message);
    this.name = "HandBack";
  }
}

/** A weights object as listed. */
interface WeightsEntry {
  version: number;
  checksum: string | null;
  size: number;
  nuid: string;
}

/** What the worker holds for one trainer incarnation. */
interface Session {
  run: NatsRun;
  /** SHA-256 of the run record's bytes (jobs name it). */
  digest: string;
  executor: WorkerExecutor;
  store: WeightsStore;
  rollouts: ObjectStore;
  publisher: TrajectoryPublisher<NatsResult>;
  /** The weights the executor holds. */
  loaded: (WeightsEntry & { checksum: string }) | null;
  /** Weights objects refused (`version/nuid`): another write of the version is a new object. */
  bad: Set<string>;
}

/** Options of {@link RemoteWorker}. */
interface RunWorkerOptions {
  url: string;
  id: string;
  verbose: boolean;
  log: (line: string) => void;
  allowDirs: string[];
  allowRemote: boolean;
  /** Aborted: finish the current job and return. */
  signal: AbortSignal;
}

/** Whether a failed download or load is the object's fault (a bad version), not the network's. */
function isBadWeights(e: Error): boolean {
  if (/timeout|timed out|connection|disconnect|no responders|closed|draining/i.test(e.message)) {
    return false;
  }
  return !/TimeoutError|ConnectionError|RequestError|ClosedConnectionError/.test(e.name);
}

class RemoteWorker {
  readonly #nc: NatsConnection;
  readonly #o: RunWorkerOptions;
  #session: Session | null = null;
  /** Refusals already logged (a line each, however often they come back). */
  readonly #said = new Set<string>();

  constructor(nc: NatsConnection, options: RunWorkerOptions) {
    this.#nc = nc;
    this.#o = options;
  }

  #verbose(line: string): void {
    if (this.#o.verbose) this.#o.log(line);
  }

  /** Logs `line` the first time `key` comes up. */
  #once(key: string, line: string): void {
    if (this.#said.has(key)) return;
    // another client chooses the keys: bounded, so a flood of forgeries cannot fill the memory
    if (this.#said.size >= 1000) this.#said.clear();
    this.#said.add(key);
    this.#o.log(line);
  }

  async #open(run: NatsRun, digest: string): Promise<Session> {
    await this.#close();
    const executor = await WorkerExecutor.start(this.#o.id, run.config);
    try {
      const store = await WeightsStore.open(this.#nc, { bucket: run.weightsBucket });
      const rollouts = await new Objm(this.#nc).open(run.rolloutsBucket);
      // Staleness counts only versions this worker would run under (not refused ones); the
      // publisher asks the session, which needs the publisher: a holder ties the knot.
      const holder: { session?: Session } = {};
      const publisher = await TrajectoryPublisher.open<NatsResult>(this.#nc, {
        maxStaleness: run.maxStaleness,
        versions: {
          latestVersion: async () =>
            holder.session === undefined
              ? null
              : (await this.#usable(holder.session))[0]?.version ?? null,
        },
      });
      const session: Session = {
        run,
        digest,
        executor,
        store,
        rollouts,
        publisher,
        loaded: null,
        bad: new Set(),
      };
      holder.session = session;
      this.#o.log(
        `worker ${this.#o.id}: serving run ${run.runId} (trainer ${run.incarnation}) on ` +
          `${executor.device}, ${run.config.model.checkpoint}, max staleness ${run.maxStaleness}`,
      );
      this.#session = session;
      return session;
    } catch (e) {
      await executor.close();
      throw e;
    }
  }

  async #close(): Promise<void> {
    const s = this.#session;
    this.#session = null;
    await s?.executor.close();
  }

  /** The work queue, once a trainer has created it. */
  async #attach(): Promise<WorkQueue<unknown> | null> {
    let said = false;
    while (!this.#o.signal.aborted) {
      const queue = await WorkQueue.attach<unknown>(this.#nc);
      if (queue !== null) return queue;
      if (!said) {
        this.#o.log(`worker ${this.#o.id}: waiting for a trainer on ${this.#o.url}`);
        said = true;
      }
      await sleep(1000);
    }
    return null;
  }

  /** Serves jobs until the signal aborts. */
  async serve(): Promise<void> {
    const queue = await this.#attach();
    if (queue === null) return;
    try {
      while (!this.#o.signal.aborted) {
        let job: ReceivedJob<unknown> | null;
        try {
          job = await queue.next({ expiresMs: 2000 });
        } catch (e) {
          this.#o.log(
            `worker ${this.#o.id}: taking a job failed (${errorOf(e).message}); retrying`,
          );
          await sleep(1000);
          continue;
        }
        if (job === null) continue;
        if (this.#o.signal.aborted) {
          job.nak(); // stopping: another worker takes it now
          break;
        }
        await this.#job(job, queue.ackWaitMs);
      }
    } finally {
      await this.#close();
    }
  }

  /**
   * The session of the job's trainer: the current one, or one opened from the trainer's checked
   * run record. Throws {@link HandBack} when the record is refused, null when it is gone.
   */
  async #sessionFor(body: NatsJob): Promise<Session | null> {
    const current = this.#session;
    if (current !== null && current.run.incarnation === body.incarnation) {
      if (body.run !== undefined && body.run !== current.digest) {
        throw new RefusedJob(
          `it names run record ${body.run.slice(0, 12)}…, but trainer ${body.incarnation}'s is ` +
            `${current.digest.slice(0, 12)}… (another client published this job?)`,
        );
      }
      return current;
    }
    const name = runObjectName(body.incarnation);
    let stored;
    try {
      stored = await readRunRecord(this.#nc, name);
    } catch (e) {
      const reason = short(errorOf(e).message);
      this.#once(
        `record ${name} ${reason}`,
        `worker ${this.#o.id}: refused run record ${name}: ${reason}`,
      );
      throw new HandBack(`run record ${name} refused`, 2000);
    }
    if (stored === null) return null;
    if (body.run !== undefined && stored.digest !== body.run) {
      this.#once(
        `record ${name} ${stored.digest}`,
        `worker ${this.#o.id}: refused run record ${name}: its SHA-256 ${
          stored.digest.slice(0, 12)
        }… is not the ${
          body.run.slice(0, 12)
        }… its jobs name (another client replaced it); waiting for the trainer to restore it`,
      );
      throw new HandBack(`run record ${name} does not match the job`, 1000);
    }
    let run: NatsRun;
    try {
      run = await checkRunRecord(stored.value, {
        allowDirs: this.#o.allowDirs,
        allowRemote: this.#o.allowRemote,
      });
    } catch (e) {
      const reason = short(errorOf(e).message, 600);
      this.#once(
        `record ${name} ${stored.digest}`,
        `worker ${this.#o.id}: refused run record ${name}: ${reason}`,
      );
      throw new HandBack(`run record ${name} refused`, 2000);
    }
    if (run.incarnation !== body.incarnation) {
      throw new HandBack(`run record ${name} is of trainer ${run.incarnation}`, 2000);
    }
    return await this.#open(run, stored.digest);
  }

  /** Handles one job. */
  async #job(job: ReceivedJob<unknown>, ackWaitMs: number): Promise<void> {
    // A heartbeat every quarter of the ack wait: the consumer's (read when attaching) or, when
    // shorter, the one the current trainer's record names (a new trainer may have shortened it).
    const every = (ms: number) => Math.max(200, Math.floor(ms / 4));
    const wait = Math.min(ackWaitMs, this.#session?.run.queue.ackWaitMs ?? ackWaitMs);
    let heartbeat = setInterval(() => job.inProgress(), every(wait));
    let label = job.id.slice(0, 120);
    try {
      let body: NatsJob;
      try {
        body = checkNatsJob(job.prompt);
      } catch (e) {
        throw new RefusedJob(errorOf(e).message);
      }
      label = String(body.job.id);
      const session = await this.#sessionFor(body);
      if (session === null) {
        job.term();
        this.#verbose(`drop ${job.id}: its trainer (${body.incarnation}) is gone`);
        return;
      }
      if (session.run.queue.ackWaitMs < wait) {
        clearInterval(heartbeat);
        heartbeat = setInterval(() => job.inProgress(), every(session.run.queue.ackWaitMs));
      }
      this.#verbose(`take job ${body.job.id} (${job.id}, delivery ${job.deliveryCount})`);
      // Test hook (nats_executor_test.ts): freeze with the job taken and not acknowledged, so a
      // test can kill the worker mid-job deterministically, whatever the machine's speed.
      if (Deno.env.get("RLVR_WORKER_TEST_HANG_AFTER_TAKE") === "1") await new Promise(() => {});
      const started = performance.now();
      const { version, tokens } = await this.#compute(session, job, body);
      await job.ack();
      this.#o.log(
        `job ${body.job.id} v${version} ${tokens} tokens ${
          ((performance.now() - started) / 1000).toFixed(2)
        } s`,
      );
    } catch (e) {
      if (e instanceof RefusedJob) {
        // not a job of a trainer's: nobody waits for it
        job.term();
        this.#once(
          `job ${e.message}`,
          `worker ${this.#o.id}: refused job ${short(job.id, 120)}: ${short(e.message)}`,
        );
        return;
      }
      const delay = e instanceof HandBack ? e.delayMs : 1000;
      // NATS trouble, a refused record, no usable weights: another try, maybe elsewhere
      this.#o.log(`job ${label}: ${short(errorOf(e).message)}; handed back`);
      try {
        job.nak(delay);
      } catch { /* the connection is gone: the ack wait hands it back */ }
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** The weights objects of the session's bucket a job may run under, newest first. */
  async #usable(s: Session, pin?: NatsWeightsPin): Promise<WeightsEntry[]> {
    const expect = pin?.bytes ?? s.loaded?.size ?? null;
    const out: WeightsEntry[] = [];
    for (const e of await s.store.entries()) {
      if (e.version === null || e.version < (pin?.version ?? 0)) continue;
      const entry = { ...e, version: e.version };
      if (s.bad.has(`${e.version}/${e.nuid}`)) continue;
      if (pin !== undefined && e.version === pin.version && e.checksum !== pin.checksum) {
        continue; // not the object the trainer uploaded under this version
      }
      if (expect !== null && Math.abs(e.size - expect) > SIZE_SLACK) {
        this.#refuse(s, entry, `${e.size} bytes, where the run's weights have ${expect}`);
        continue;
      }
      out.push(entry);
    }
    return out;
  }

  /** Marks a weights object refused, with a line. */
  #refuse(s: Session, e: WeightsEntry, why: string): void {
    const key = `${e.version}/${e.nuid}`;
    s.bad.add(key);
    this.#once(
      `weights ${s.run.weightsBucket} ${key}`,
      `worker ${this.#o.id}: weights v${e.version} refused (${
        short(why)
      }); skipped: jobs run under the newest valid version`,
    );
  }

  /**
   * Makes the executor hold the newest usable weights for `pin` (the job's version or newer,
   * refused versions skipped); waits for them up to {@link WEIGHTS_WAIT_MS}.
   */
  async #sync(s: Session, pin: NatsWeightsPin | undefined): Promise<void> {
    const deadline = Date.now() + WEIGHTS_WAIT_MS;
    for (;;) {
      for (const e of await this.#usable(s, pin)) {
        if (s.loaded !== null && s.loaded.version === e.version && s.loaded.nuid === e.nuid) {
          return;
        }
        let snap: WeightSnapshot;
        try {
          snap = await s.store.get(e.version); // checksum verified
        } catch (err) {
          const error = errorOf(err);
          // pruned or replaced between the listing and the download: list again
          if (/is not in object store|disappeared/.test(error.message)) break;
          if (!isBadWeights(error)) throw error;
          this.#refuse(s, e, error.message);
          continue;
        }
        if (pin !== undefined && e.version === pin.version && snap.checksum !== pin.checksum) {
          break; // replaced since the listing
        }
        if (e.version < s.executor.version) {
          // it held a version that is gone (another client's, deleted by the trainer), and the
          // policy refuses to go back: start a fresh one
          await s.executor.close();
          s.executor = await WorkerExecutor.start(this.#o.id, s.run.config);
        }
        try {
          await s.executor.sync(snap); // checksum verified again, then names and shapes
        } catch (err) {
          const error = errorOf(err);
          if (/crashed|was closed/.test(error.message)) {
            s.executor = await WorkerExecutor.start(this.#o.id, s.run.config);
            s.loaded = null;
            break;
          }
          this.#refuse(s, e, error.message);
          continue;
        }
        s.loaded = { ...e, checksum: snap.checksum };
        this.#verbose(`weights v${e.version}`);
        return;
      }
      if (s.loaded !== null && s.loaded.version >= (pin?.version ?? 0)) {
        const still = (await this.#usable(s, pin)).some((e) =>
          e.version === s.loaded!.version && e.nuid === s.loaded!.nuid
        );
        if (still) return;
      }
      if (Date.now() > deadline) {
        throw new HandBack(
          `no usable weights ${
            pin === undefined ? "" : `v${pin.version} or newer `
          }in ${s.run.weightsBucket} within ${WEIGHTS_WAIT_MS / 1000} s`,
        );
      }
      await sleep(500);
    }
  }

  /** Computes the job under usable weights and publishes it; redone while refused stale. */
  async #compute(
    s: Session,
    job: ReceivedJob<unknown>,
    body: NatsJob,
  ): Promise<{ version: number; tokens: number }> {
    for (;;) {
      await this.#sync(s, body.weights);
      const loaded = s.loaded!;
      const version = loaded.version;
      let rollout: Rollout | null = null;
      let payload: NatsResult;
      try {
        rollout = (await s.executor.run(body.job)).rollout;
        payload = { kind: "inline", json: encodeJson(rollout), checksum: loaded.checksum };
      } catch (e) {
        const err = errorOf(e);
        this.#o.log(`job ${body.job.id}: ${err.message}; reported to the trainer`);
        payload = { kind: "error", name: err.name, message: err.message };
        // the policy may be in any state: start a fresh one (it syncs on the next job)
        await s.executor.close();
        s.executor = await WorkerExecutor.start(this.#o.id, s.run.config);
        s.loaded = null;
      }
      const base = {
        id: `${job.id}/0`,
        jobId: job.id,
        policyVersion: version,
        workerId: this.#o.id,
      };
      let trajectory: Trajectory<NatsResult> = { ...base, payload };
      const max = Math.min(
        s.run.inlineMaxBytes,
        (this.#nc.info?.max_payload ?? 1024 * 1024) - HEADROOM,
      );
      let object: string | null = null;
      if (payload.kind === "inline") {
        const size = new TextEncoder().encode(JSON.stringify(trajectory)).length;
        if (size > max) {
          // too big for one message: the object store chunks it (see nats_protocol.ts)
          const bytes = new TextEncoder().encode(payload.json);
          object = `${job.id}/${this.#o.id}/${job.deliveryCount}/${crypto.randomUUID()}`;
          await s.rollouts.putBlob({ name: object }, bytes);
          trajectory = {
            ...base,
            payload: {
              kind: "object",
              name: object,
              bytes: bytes.length,
              checksum: loaded.checksum,
            },
          };
          this.#verbose(
            `job ${body.job.id}: ${size} bytes > ${max}: sent as object ${object}`,
          );
        }
      }
      try {
        await s.publisher.publish(trajectory);
        return { version, tokens: rollout?.generatedTokens ?? 0 };
      } catch (e) {
        if (object !== null) await s.rollouts.delete(object).catch(() => {});
        if (!(e instanceof StaleWeightsError)) throw e;
        this.#o.log(
          `job ${body.job.id}: weights v${version} are stale (latest ` +
            `v${e.latestVersion}, max staleness ${s.run.maxStaleness}); syncing and ` +
            `regenerating`,
        );
      }
    }
  }
}

/** A job no trainer of this server sent (bad shape, or a run digest that does not match). */
class RefusedJob extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RefusedJob";
  }
}

/**
 * Runs `deno task worker` with `args`; returns the exit code (see the module doc).
 *
 * @param args The command line.
 * @param options Where lines go (default `console.log` / `console.error`), a signal that
 *   stops the worker after its current job (default: Ctrl-C and SIGTERM), and the environment
 *   the `NATS_*` credentials are read from (default `Deno.env.get`).
 * @returns The exit code.
 *
 * @example Usage
 * ```ts
 * import { workerMain } from "./worker.ts";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const log = (l: string) => lines.push(l);
 * assert.equal(await workerMain(["--help"], { log, error: log }), 0);
 * assert.equal(await workerMain(["--nats", "http://x"], { log, error: log }), 1);
 * assert.match(lines.at(-1)!, /not a NATS URL/);
 * // a credential file that does not exist: a bad argument, before connecting
 * const env = () => undefined;
 * assert.equal(
 *   await workerMain(["--nats", "nats://127.0.0.1:1", "--creds", "/nonexistent.creds"], { log, error: log, env }),
 *   2,
 * );
 * assert.match(lines.at(-1)!, /--creds: cannot read "\/nonexistent.creds"/);
 * ```
 */
export async function workerMain(
  args: readonly string[],
  options: {
    log?: (line: string) => void;
    error?: (line: string) => void;
    signal?: AbortSignal;
    env?: (name: string) => string | undefined;
  } = {},
): Promise<number> {
  const log = options.log ?? ((l: string) => console.log(l));
  const error = options.error ?? ((l: string) => console.error(l));
  let parsed: WorkerArgs;
  try {
    parsed = parseWorkerArgs(args);
  } catch (e) {
    if (!(e instanceof WorkerArgsError)) throw e;
    error(e.message);
    return e.exitCode;
  }
  if (parsed.kind === "help") {
    log(WORKER_USAGE);
    return 0;
  }
  const { url, id } = parsed;
  let security: NatsSecurity;
  try {
    security = await resolveNatsSecurity(parsed.auth, WORKER_AUTH_NAMES, options.env, url);
  } catch (e) {
    error(`worker: ${errorOf(e).message}`);
    return 2;
  }
  let nc: NatsConnection;
  try {
    nc = await connectNatsSecure(url, security, {
      name: `rlvr worker ${id}`,
      names: WORKER_AUTH_NAMES,
    });
  } catch (e) {
    if (e instanceof NatsConnectError && e.kind !== "unreachable") {
      error(`worker: ${e.message}`);
    } else {
      error(
        `worker: cannot connect to ${url} (${
          errorOf(errorOf(e).cause ?? e).message
        }); is nats-server running there with JetStream (nats-server -js)?`,
      );
    }
    return 1;
  }
  if (parsed.verbose) log(`worker ${id}: connected to ${url} (${security.description})`);
  let signal = options.signal;
  let removeSignals = () => {};
  if (signal === undefined) {
    const stop = new AbortController();
    signal = stop.signal;
    const onSignal = () => {
      if (stop.signal.aborted) Deno.exit(130);
      log(`worker ${id}: stopping after the current job (Ctrl-C again to quit now)`);
      stop.abort();
    };
    Deno.addSignalListener("SIGINT", onSignal);
    if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", onSignal);
    removeSignals = () => {
      Deno.removeSignalListener("SIGINT", onSignal);
      if (Deno.build.os !== "windows") Deno.removeSignalListener("SIGTERM", onSignal);
    };
  }
  try {
    await new RemoteWorker(nc, {
      url,
      id,
      verbose: parsed.verbose,
      log,
      allowDirs: parsed.allowDirs,
      allowRemote: parsed.allowRemote,
      signal,
    }).serve();
    log(`worker ${id}: stopped`);
    return 0;
  } catch (e) {
    const err = errorOf(e);
    error(`worker ${id}: ${err.message}`);
    if (Deno.env.get("RLVR_DEBUG") === "1" && err.stack !== undefined) error(err.stack);
    return 1;
  } finally {
    removeSignals();
    await nc.close().catch(() => {});
  }
}

if (import.meta.main) {
  Deno.exit(await workerMain(Deno.args));
}
