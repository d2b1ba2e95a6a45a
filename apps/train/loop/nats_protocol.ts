/**
 * What the trainer (`nats_executor.ts`) and the remote rollout workers (`apps/train/worker.ts`)
 * exchange over NATS JetStream: the run record, the job and result messages, the JSON encoding
 * of rollouts, and the credentials and checks that keep a hostile client from stopping or
 * taking over a run.
 *
 * - **The run record** ({@link NatsRun}) is one object per trainer incarnation, `run-<id>`, in
 *   the object store bucket {@link RUN_BUCKET}, copied to `active` (the newest trainer's; read by
 *   a new trainer to clean up after a dead one): the run id, the incarnation, the resolved config
 *   (without `rollout.natsAuth`), η, the names of the incarnation's buckets and the work queue's
 *   settings. A worker started with only `--nats <url>` takes a job, reads the record of the
 *   job's incarnation, and serves it; a job of another incarnation makes it read that one.
 * - **A job message** ({@link NatsJob}) is `{ incarnation, job, run, weights }` on the
 *   `WorkQueue`: `run` is the SHA-256 of the run record's bytes (a worker refuses a record whose
 *   bytes hash otherwise: another client replaced it) and `weights` names the trainer's newest
 *   upload when the job was queued (version, SHA-256, size): the worker runs the job under that
 *   version or a newer one, and never under an object of that version with another checksum or
 *   of a size the trainer's snapshots do not have. The message id (`Nats-Msg-Id`) is unique
 *   across trainer restarts (see `nats_executor.ts`).
 * - **A result** is one trajectory (`TrajectoryPublisher`) whose id is `${jobMessageId}/0` and
 *   whose payload ({@link NatsResult}) is the rollout inline when the message fits the server's
 *   `max_payload`, a reference to an object in the incarnation's rollouts bucket when it does
 *   not (the object store chunks it, so a rollout of any size goes through), or the error that
 *   stopped the worker computing it; a rollout names the SHA-256 of the weights it ran under, so
 *   the trainer accepts only rollouts of weights it uploaded.
 * - **Rollouts travel as JSON with non-finite numbers kept** ({@link encodeJson} /
 *   {@link decodeJson}): `NaN` and `±Infinity` (a log-probability or a reward can be one) become
 *   `{"$num": "NaN"}` objects instead of JSON's `null`; every finite number round-trips exactly.
 * - **Credentials** ({@link resolveNatsSecurity}): user and password, a token, an nkey seed file
 *   or a `.creds` file (JWT and seed), and TLS (a CA file, a client certificate, whether TLS is
 *   required), from the config (`rollout.natsAuth`, which holds file names only: a secret in the
 *   config would be saved in the run's `config.yaml` and sent to every worker), from the
 *   worker's flags, or from the environment (`NATS_USER`, `NATS_PASSWORD`, `NATS_TOKEN`,
 *   `NATS_CREDS`, `NATS_NKEY`, `NATS_CA`). Secrets are never part of a message or a log line:
 *   descriptions name where a secret came from, and URLs are printed with
 *   {@link redactNatsUrl}. A refused login fails at once with the settings to fix.
 * - **Run records are checked before use** ({@link checkRunRecord}): at most
 *   {@link RUN_RECORD_MAX_BYTES}, every field type-checked, the config validated by the schema,
 *   bucket names derived from the incarnation, and every local path the config names (model
 *   checkpoint, dataset, reward modules) inside the worker's allowed directories; URLs (a
 *   checkpoint, a dataset, a judge endpoint) only when the worker allows remote access, and a
 *   reward module never from a URL (it is code the worker would run).
 *
 * @module
 */

import { Objm } from "@nats-io/obj";
import {
  connect,
  type ConnectionOptions,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
} from "@nats-io/transport-node";
import { isAbsolute, join, resolve, sep } from "node:path";
import { readObject, sha256Hex } from "@rlvr/infra";
import { validateConfig } from "../config/schema.ts";
import { withoutUserMethods } from "../config/methods.ts";
import { ConfigError } from "../config/errors.ts";
import type { Config } from "../config/types.ts";
import type { RolloutJob } from "./rollout_job.ts";

/**
 * The object store bucket holding the active run record.
 *
 * @example Usage
 * ```ts
 * import { RUN_BUCKET } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.equal(RUN_BUCKET, "rlvr-run");
 * ```
 */
export const RUN_BUCKET = "rlvr-run";
/**
 * The object naming the active run in {@link RUN_BUCKET}.
 *
 * @example Usage
 * ```ts
 * import { ACTIVE_RUN } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.equal(ACTIVE_RUN, "active");
 * ```
 */
export const ACTIVE_RUN = "active";

/**
 * The active run, as the trainer publishes it for the workers (see the module doc).
 *
 * @example Usage
 * ```ts
 * import type { NatsRun } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const bucketOf = (run: NatsRun) => run.weightsBucket;
 * assert.equal(typeof bucketOf, "function");
 * ```
 */
export interface NatsRun {
  /** The run's id (its directory name): the same across restarts. */
  runId: string;
  /** This trainer process's id (`[a-z0-9]+`): a restarted trainer has a new one. */
  incarnation: string;
  /** The resolved config (task, model checkpoint, sampling, device). */
  config: Config;
  /** η: a worker refuses to publish a rollout more than this many versions behind. */
  maxStaleness: number;
  /** The `WeightsStore` bucket of this incarnation. */
  weightsBucket: string;
  /** The object store bucket for rollouts too big to travel inline. */
  rolloutsBucket: string;
  /** The work queue's settings (a worker opens the shared consumer with the same ones). */
  queue: { ackWaitMs: number; maxDeliver: number };
  /** Largest trajectory message sent inline, in bytes (larger ones go through the bucket). */
  inlineMaxBytes: number;
  /** When the trainer started (ISO 8601). */
  startedAt: string;
}

/**
 * A job on the work queue.
 *
 * @example Usage
 * ```ts
 * import type { NatsJob } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const j: NatsJob = { incarnation: "abc", job: { id: 1, key: 1, rows: [] } };
 * assert.equal(j.job.key, 1);
 * ```
 */
export interface NatsJob {
  /** The trainer incarnation that enqueued it. */
  incarnation: string;
  /** The job. */
  job: RolloutJob;
  /** SHA-256 (hex) of the bytes of the incarnation's run record (absent from older trainers). */
  run?: string;
  /**
   * The trainer's newest weights upload when the job was queued (absent before the first): the
   * version, the SHA-256 (hex) of its bytes and their size ({@link NatsWeightsPin}).
   */
  weights?: { version: number; checksum: string; bytes: number };
}

/**
 * A weights version as the trainer uploaded it: what a job runs under at least (see the module
 * doc).
 *
 * @example Usage
 * ```ts
 * import type { NatsWeightsPin } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const pin: NatsWeightsPin = { version: 3, checksum: "ab".repeat(32), bytes: 1024 };
 * assert.equal(pin.version, 3);
 * ```
 */
export interface NatsWeightsPin {
  /** The version. */
  version: number;
  /** SHA-256 (hex) of the snapshot's bytes. */
  checksum: string;
  /** Size of the snapshot in bytes (every version of a run's weights has about this size). */
  bytes: number;
}

/**
 * A result's payload (see the module doc).
 *
 * @example Usage
 * ```ts
 * import type { NatsResult } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const r: NatsResult = { kind: "error", name: "Error", message: "out of memory" };
 * assert.equal(r.kind, "error");
 * ```
 */
export type NatsResult =
  | {
    /** The rollout travels in the message. */
    kind: "inline";
    /** The rollout, {@link encodeJson}-encoded. */
    json: string;
    /** SHA-256 (hex) of the weights it ran under (absent from older workers). */
    checksum?: string;
  }
  | {
    /** The rollout is an object in the run's rollouts bucket. */
    kind: "object";
    /** The object's name. */
    name: string;
    /** Its size in bytes. */
    bytes: number;
    /** SHA-256 (hex) of the weights it ran under (absent from older workers). */
    checksum?: string;
  }
  | {
    /** The worker could not compute the job. */
    kind: "error";
    /** The error's class name. */
    name: string;
    /** Its message. */
    message: string;
  };

/**
 * JSON text of `value`, with `NaN` and `±Infinity` kept (see the module doc).
 *
 * @param value Any JSON value (numbers may be non-finite).
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { decodeJson, encodeJson } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const text = encodeJson({ logprobs: [-0.5, -Infinity], reward: NaN });
 * assert.deepEqual(decodeJson(text), { logprobs: [-0.5, -Infinity], reward: NaN });
 * ```
 */
export function encodeJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) => typeof v === "number" && !Number.isFinite(v) ? { $num: String(v) } : v,
  );
}

/**
 * Parses {@link encodeJson}'s text.
 *
 * @param text The text.
 * @returns The value.
 *
 * @example Usage
 * ```ts
 * import { decodeJson } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeJson('[1, {"$num": "-Infinity"}]'), [1, -Infinity]);
 * ```
 */
export function decodeJson<T = unknown>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const n = (v as { $num?: unknown }).$num;
      if (keys.length === 1 && typeof n === "string") return Number(n);
    }
    return v;
  }) as T;
}

/**
 * The largest run record a worker reads, in bytes (1 MiB): a resolved config is a few KiB, and a
 * bigger object is refused from its size, before it is downloaded.
 *
 * @example Usage
 * ```ts
 * import { RUN_RECORD_MAX_BYTES } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.equal(RUN_RECORD_MAX_BYTES, 1024 * 1024);
 * ```
 */
export const RUN_RECORD_MAX_BYTES = 1024 * 1024;

/**
 * The object holding the run record of trainer `incarnation` in {@link RUN_BUCKET}.
 *
 * @param incarnation The trainer's incarnation.
 * @returns The object's name, `run-<incarnation>`.
 *
 * @example Usage
 * ```ts
 * import { runObjectName } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.equal(runObjectName("k3x9"), "run-k3x9");
 * ```
 */
export function runObjectName(incarnation: string): string {
  return `run-${incarnation}`;
}

/**
 * A run record as stored: its bytes, their SHA-256 and the parsed JSON (unchecked).
 *
 * @example Usage
 * ```ts
 * import type { StoredRunRecord } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const r: StoredRunRecord = { bytes: new Uint8Array([123, 125]), digest: "0".repeat(64), value: {} };
 * assert.equal(r.bytes.length, 2);
 * ```
 */
export interface StoredRunRecord {
  /** The object's bytes. */
  bytes: Uint8Array;
  /** Their SHA-256 (hex). */
  digest: string;
  /** The parsed JSON: anything, until {@link checkRunRecord} says otherwise. */
  value: unknown;
}

/**
 * A refused run record or job: thrown by {@link readRunRecord} (too big, not JSON),
 * {@link checkRunRecord} and {@link checkNatsJob}.
 *
 * @example Usage
 * ```ts
 * import { checkNatsJob, RunRecordError } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => checkNatsJob("no"), RunRecordError);
 * ```
 */
export class RunRecordError extends Error {
  /**
   * A refused run record.
   *
   * @param message What is wrong, and the fix.
   */
  constructor(message: string) {
    super(message);
    this.name = "RunRecordError";
  }
}

/**
 * Reads a run record object (`active` or `run-<incarnation>`), refusing one above `maxBytes`
 * before downloading it; null when the object (or the bucket) does not exist.
 *
 * @param nc A NATS connection (JetStream enabled).
 * @param name The object's name.
 * @param maxBytes Largest size read (default {@link RUN_RECORD_MAX_BYTES}).
 * @returns The record, unchecked.
 * @throws {RunRecordError} when it is too big or not JSON.
 *
 * Internal to the NATS transport (its parameter is the npm client's connection type; not
 * exported from `mod.ts`); tested with a real server in `nats_security_test.ts`.
 */
export async function readRunRecord(
  nc: NatsConnection,
  name: string,
  maxBytes = RUN_RECORD_MAX_BYTES,
): Promise<StoredRunRecord | null> {
  let os;
  try {
    os = await new Objm(nc).open(RUN_BUCKET);
  } catch {
    return null; // no trainer has written a record yet
  }
  // A record replaced while being read loses its chunks: read it again.
  for (let attempt = 0;; attempt++) {
    try {
      const info = await os.info(name);
      if (info === null || info.deleted) return null;
      if (info.size > maxBytes) {
        throw new RunRecordError(
          `run record ${name} is ${info.size} bytes, above the ${maxBytes} a record may have; ` +
            `it was not read (a trainer writes a few KiB; another client wrote this one)`,
        );
      }
      // not `getBlob`: it waits forever when the record is replaced while read (the trainer
      // writes its record again after another client replaced it), see readObject
      const read = await readObject(os, name);
      if (read === null) return null;
      const copy = read.bytes;
      if (copy.length > maxBytes) {
        throw new RunRecordError(`run record ${name} grew above ${maxBytes} bytes while read`);
      }
      let value: unknown;
      try {
        value = JSON.parse(new TextDecoder().decode(copy));
      } catch (e) {
        throw new RunRecordError(
          `run record ${name} is not JSON (${(e as Error).message.slice(0, 80)})`,
        );
      }
      return { bytes: copy, digest: await sha256Hex(copy), value };
    } catch (e) {
      if (e instanceof RunRecordError || attempt >= 2) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Reads the `active` run record and checks its shape (not its config), or null when none was
 * published or it is not a run record. The trainer reads it to clean up after the trainer
 * before it (its bucket names must be those of its incarnation, so a forged record cannot name
 * other buckets to delete).
 *
 * @param nc A NATS connection (JetStream enabled).
 * @returns The record.
 *
 * Internal to the NATS transport (not exported from `mod.ts`: its parameter is the npm client's
 * connection type); tested with a real server in `nats_executor_test.ts`.
 */
export async function readActiveRun(nc: NatsConnection): Promise<NatsRun | null> {
  const stored = await readRunRecord(nc, ACTIVE_RUN).catch(() => null);
  if (stored === null) return null;
  try {
    return checkRunShape(stored.value);
  } catch {
    return null;
  }
}

/**
 * Publishes `run` as trainer `run.incarnation`'s record and as the active one.
 *
 * @param nc A NATS connection (JetStream enabled).
 * @param run The record.
 * @returns The SHA-256 of the record's bytes (what jobs name as `run`).
 *
 * Internal to the NATS transport (not exported from `mod.ts`: its parameter is the npm client's
 * connection type); tested with a real server in `nats_executor_test.ts`.
 */
export async function writeActiveRun(nc: NatsConnection, run: NatsRun): Promise<string> {
  const os = await new Objm(nc).create(RUN_BUCKET);
  const bytes = new TextEncoder().encode(JSON.stringify(run));
  await os.putBlob({ name: runObjectName(run.incarnation) }, bytes);
  await os.putBlob({ name: ACTIVE_RUN }, bytes);
  return await sha256Hex(bytes);
}

/**
 * A fresh incarnation id: base-36 time and randomness, `[a-z0-9]+` (usable in bucket names).
 *
 * @returns The id.
 *
 * @example Usage
 * ```ts
 * import { newIncarnation } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const a = newIncarnation();
 * assert.match(a, /^[a-z0-9]+$/);
 * assert.notEqual(a, newIncarnation());
 * ```
 */
export function newIncarnation(): string {
  const rand = crypto.getRandomValues(new Uint32Array(2));
  return Date.now().toString(36) + rand[0]!.toString(36) + rand[1]!.toString(36);
}

// ---------------------------------------------------------------------------------------------
// Credentials

/**
 * Credentials and TLS settings of a NATS connection as given (config `rollout.natsAuth`, the
 * worker's flags): secrets as values (flags, environment) or as files.
 *
 * @example Usage
 * ```ts
 * import type { NatsAuthOptions } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const o: NatsAuthOptions = { user: "trainer", passwordFile: "secrets/nats.pw" };
 * assert.equal(o.user, "trainer");
 * ```
 */
export interface NatsAuthOptions {
  /** User name (with a password). */
  user?: string | undefined;
  /** Password (never from the config: see the module doc). */
  password?: string | undefined;
  /** A file holding the password (trailing newlines ignored). */
  passwordFile?: string | undefined;
  /** Token (never from the config). */
  token?: string | undefined;
  /** A file holding the token. */
  tokenFile?: string | undefined;
  /** A `.creds` file (JWT and nkey seed, as `nsc` writes it). */
  credsFile?: string | undefined;
  /** A file holding an nkey seed (`SU...`). */
  nkeyFile?: string | undefined;
  /** Credentials of the server URL's `user:password@` (or `token@`) part ({@link splitNatsUrl}). */
  fromUrl?: { user?: string; password?: string; token?: string } | undefined;
  /** TLS: the CA that signed the server's certificate, a client certificate, whether required. */
  tls?:
    | {
      caFile?: string | undefined;
      certFile?: string | undefined;
      keyFile?: string | undefined;
      required?: boolean | undefined;
    }
    | null
    | undefined;
}

/**
 * How each setting is called where the user gives it, for messages: config keys for the
 * trainer, flags for the worker.
 *
 * @example Usage
 * ```ts
 * import { TRAINER_AUTH_NAMES } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.equal(TRAINER_AUTH_NAMES.credsFile, "rollout.natsAuth.credsFile");
 * ```
 */
export interface NatsAuthNames {
  /** The user setting. */
  user: string;
  /** The password setting (null: none besides the environment). */
  password: string | null;
  /** The password-file setting. */
  passwordFile: string;
  /** The token setting (null: none besides the environment). */
  token: string | null;
  /** The token-file setting. */
  tokenFile: string;
  /** The creds-file setting. */
  credsFile: string;
  /** The nkey-seed-file setting. */
  nkeyFile: string;
  /** The CA-file setting. */
  caFile: string;
  /** The client-certificate setting. */
  certFile: string;
  /** The client-key setting. */
  keyFile: string;
  /** The TLS-required setting. */
  required: string;
  /** The server URL setting. */
  url: string;
}

/**
 * The trainer's names: `rollout.natsAuth.*` (secrets only through files or the environment).
 *
 * @example Usage
 * ```ts
 * import { TRAINER_AUTH_NAMES } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.equal(TRAINER_AUTH_NAMES.password, null);
 * ```
 */
export const TRAINER_AUTH_NAMES: NatsAuthNames = Object.freeze({
  user: "rollout.natsAuth.user",
  password: null,
  passwordFile: "rollout.natsAuth.passwordFile",
  token: null,
  tokenFile: "rollout.natsAuth.tokenFile",
  credsFile: "rollout.natsAuth.credsFile",
  nkeyFile: "rollout.natsAuth.nkeyFile",
  caFile: "rollout.natsAuth.tls.caFile",
  certFile: "rollout.natsAuth.tls.certFile",
  keyFile: "rollout.natsAuth.tls.keyFile",
  required: "rollout.natsAuth.tls.required",
  url: "rollout.nats",
});

/**
 * The environment variables read for settings not given otherwise (trainer and worker alike).
 *
 * @example Usage
 * ```ts
 * import { NATS_ENV } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.equal(NATS_ENV.password, "NATS_PASSWORD");
 * ```
 */
export const NATS_ENV = Object.freeze({
  user: "NATS_USER",
  password: "NATS_PASSWORD",
  token: "NATS_TOKEN",
  credsFile: "NATS_CREDS",
  nkeyFile: "NATS_NKEY",
  caFile: "NATS_CA",
});

/**
 * Credentials resolved from settings, files and the environment ({@link resolveNatsSecurity}).
 * Holds secrets: never print it; print {@link NatsSecurity.description}.
 *
 * @example Usage
 * ```ts
 * import type { NatsSecurity } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const none: NatsSecurity = { auth: { kind: "none" }, tls: null, description: "no credentials", fix: "" };
 * assert.equal(none.auth.kind, "none");
 * ```
 */
export interface NatsSecurity {
  /** How the client authenticates. */
  auth:
    | { kind: "none" }
    | { kind: "user"; user: string; password: string }
    | { kind: "token"; token: string }
    | { kind: "creds"; file: string; bytes: Uint8Array }
    | { kind: "nkey"; file: string; seed: Uint8Array };
  /** TLS: required, with these files (null: TLS when the server offers it, system CAs). */
  tls: { caFile?: string; certFile?: string; keyFile?: string } | null;
  /** What is used and where it came from, without any secret (for messages). */
  description: string;
  /** The settings that give credentials, for "fix" messages. */
  fix: string;
}

/** Reads a secret or a credentials file, with an error that names the setting. */
async function readSecretFile(path: string, setting: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (e) {
    throw new TypeError(
      `${setting}: cannot read ${JSON.stringify(path)} (${
        e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).name
      }); give the path of an existing, readable file`,
    );
  }
}

function checkFileExists(path: string, setting: string): void {
  try {
    if (Deno.statSync(path).isFile) return;
  } catch { /* reported below */ }
  throw new TypeError(
    `${setting}: ${JSON.stringify(path)} is not a file; give the path of an existing file`,
  );
}

/**
 * Splits the credentials off a server URL: `nats://user:password@host` gives a user and a
 * password, `nats://token@host` a token (the client's convention).
 *
 * @param url A server URL.
 * @returns The URL without credentials, and the credentials (absent without any).
 * @throws {TypeError} when the part is not valid percent-encoding.
 *
 * @example Usage
 * ```ts
 * import { splitNatsUrl } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(splitNatsUrl("nats://w:p%40ss@h:4222"), {
 *   url: "nats://h:4222", fromUrl: { user: "w", password: "p@ss" },
 * });
 * assert.deepEqual(splitNatsUrl("nats://t0k@h:4222"), { url: "nats://h:4222", fromUrl: { token: "t0k" } });
 * assert.deepEqual(splitNatsUrl("nats://h:4222"), { url: "nats://h:4222" });
 * ```
 */
export function splitNatsUrl(
  url: string,
): { url: string; fromUrl?: { user?: string; password?: string; token?: string } } {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i.exec(url);
  if (m === null) return { url };
  const clean = m[1]! + url.slice(m[0].length);
  const [user = "", ...rest] = m[2]!.split(":");
  let dec: (x: string) => string = decodeURIComponent;
  try {
    dec(m[2]!);
  } catch {
    dec = () => {
      throw new TypeError(
        `${redactNatsUrl(url)}: its user:password@ part is not valid percent-encoding`,
      );
    };
  }
  if (rest.length === 0) {
    return user === "" ? { url: clean } : { url: clean, fromUrl: { token: dec(user) } };
  }
  return { url: clean, fromUrl: { user: dec(user), password: dec(rest.join(":")) } };
}

/**
 * A NATS URL with any `user:password@` (or `token@`) part replaced by `***`, for messages.
 *
 * @param url A server URL.
 * @returns The URL without credentials.
 *
 * @example Usage
 * ```ts
 * import { redactNatsUrl } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * assert.equal(redactNatsUrl("nats://trainer:s3cret@10.0.0.5:4222"), "nats://***@10.0.0.5:4222");
 * assert.equal(redactNatsUrl("nats://10.0.0.5:4222"), "nats://10.0.0.5:4222");
 * ```
 */
export function redactNatsUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1***@");
}

/**
 * Resolves credentials and TLS from `options` (the config or flags; `fromUrl`, the URL's
 * `user:pass@` part), and the environment, in that order per setting. One way to authenticate: user and
 * password, a token, a creds file or an nkey seed; the environment fills in only settings of the
 * way `options` chose (a `user` with `NATS_PASSWORD`), or chooses one when `options` gives none.
 * Files are read here, so a missing file fails before connecting, naming its setting.
 *
 * @param options The given settings.
 * @param names How the settings are called, for messages.
 * @param env The environment (default `Deno.env.get`; none without `--allow-env`).
 * @param url The server URL (`tls://` requires TLS).
 * @returns The credentials.
 * @throws {TypeError} naming the setting when they are incomplete, ambiguous or unreadable.
 *
 * @example Usage
 * ```ts
 * import { resolveNatsSecurity, TRAINER_AUTH_NAMES } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const env = (n: string) => ({ NATS_PASSWORD: "s3cret" } as Record<string, string>)[n];
 * const sec = await resolveNatsSecurity({ user: "trainer" }, TRAINER_AUTH_NAMES, env);
 * assert.deepEqual(sec.auth, { kind: "user", user: "trainer", password: "s3cret" });
 * assert.equal(sec.description, 'user "trainer" (from rollout.natsAuth.user), password from NATS_PASSWORD');
 * await assert.rejects(
 *   resolveNatsSecurity({ user: "trainer" }, TRAINER_AUTH_NAMES, () => undefined),
 *   /has no password; set rollout\.natsAuth\.passwordFile or NATS_PASSWORD/,
 * );
 * ```
 */
export async function resolveNatsSecurity(
  options: NatsAuthOptions | null | undefined,
  names: NatsAuthNames,
  env: (name: string) => string | undefined = defaultEnv,
  url = "",
): Promise<NatsSecurity> {
  const o = options ?? {};
  const e = (name: string): string | undefined => {
    const v = env(name);
    return v === undefined || v === "" ? undefined : v;
  };
  const fromUrl = o.fromUrl !== undefined && (o.fromUrl.user ?? o.fromUrl.token) !== undefined
    ? { user: o.fromUrl.user ?? o.fromUrl.token!, password: o.fromUrl.password ?? "" }
    : null;
  const urlName = `the user:password@ part of ${names.url}`;
  const alt = (...xs: (string | null)[]) => xs.filter((x) => x !== null && x !== "").join(" or ");
  const fix = `${alt(names.user, "NATS_USER")} with ${
    alt(names.password, names.passwordFile, "NATS_PASSWORD")
  }, ${alt(names.token, names.tokenFile, "NATS_TOKEN")}, ${alt(names.credsFile, "NATS_CREDS")} or ${
    alt(names.nkeyFile, "NATS_NKEY")
  }`;

  // What `options` (and the URL) choose, before the environment.
  const given: { kind: string; where: string }[] = [];
  const user = o.user ?? (fromUrl !== null && fromUrl.password !== "" ? fromUrl.user : undefined);
  if (user !== undefined) {
    given.push({ kind: "user", where: o.user !== undefined ? names.user : urlName });
  } else if (o.password !== undefined || o.passwordFile !== undefined) {
    // a password alone still chooses user/password (its user then comes from NATS_USER)
    given.push({
      kind: "user",
      where: o.password !== undefined ? names.password ?? "password" : names.passwordFile,
    });
  }
  const urlToken = fromUrl !== null && fromUrl.password === "" && fromUrl.user !== ""
    ? fromUrl.user
    : undefined;
  if (o.token !== undefined || o.tokenFile !== undefined || urlToken !== undefined) {
    given.push({
      kind: "token",
      where: o.token !== undefined
        ? names.token ?? "token"
        : o.tokenFile !== undefined
        ? names.tokenFile
        : `the token@ part of ${names.url}`,
    });
  }
  if (o.credsFile !== undefined) given.push({ kind: "creds", where: names.credsFile });
  if (o.nkeyFile !== undefined) given.push({ kind: "nkey", where: names.nkeyFile });
  if (given.length > 1) {
    throw new TypeError(
      `NATS credentials: ${
        given.map((g) => g.where).join(" and ")
      } each give credentials; keep one way to log in`,
    );
  }
  let kind = given[0]?.kind;
  if (kind === undefined) {
    const fromEnv = [
      e(NATS_ENV.user) !== undefined || e(NATS_ENV.password) !== undefined ? "NATS_USER" : null,
      e(NATS_ENV.token) !== undefined ? "NATS_TOKEN" : null,
      e(NATS_ENV.credsFile) !== undefined ? "NATS_CREDS" : null,
      e(NATS_ENV.nkeyFile) !== undefined ? "NATS_NKEY" : null,
    ].filter((x) => x !== null);
    if (fromEnv.length > 1) {
      throw new TypeError(
        `NATS credentials: the environment sets ${
          fromEnv.join(" and ")
        }; keep one way to log in (unset the others), or choose one with ${names.user}, ` +
          `${names.tokenFile}, ${names.credsFile} or ${names.nkeyFile}`,
      );
    }
    kind = { NATS_USER: "user", NATS_TOKEN: "token", NATS_CREDS: "creds", NATS_NKEY: "nkey" }[
      fromEnv[0] ?? ""
    ];
  }

  let auth: NatsSecurity["auth"] = { kind: "none" };
  let description = "no credentials";
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes).replace(/[\r\n]+$/, "");
  if (kind === "user") {
    const u = user ?? e(NATS_ENV.user);
    const uWhere = o.user !== undefined ? names.user : user !== undefined ? urlName : "NATS_USER";
    let password: string | undefined;
    let pWhere = "";
    if (o.password !== undefined) [password, pWhere] = [o.password, names.password ?? "password"];
    else if (o.passwordFile !== undefined) {
      password = text(await readSecretFile(o.passwordFile, names.passwordFile));
      pWhere = `${names.passwordFile} ${o.passwordFile}`;
    } else if (fromUrl !== null && fromUrl.password !== "" && o.user === undefined) {
      [password, pWhere] = [fromUrl.password, urlName];
    } else if (e(NATS_ENV.password) !== undefined) {
      [password, pWhere] = [e(NATS_ENV.password), "NATS_PASSWORD"];
    }
    if (u === undefined) {
      throw new TypeError(
        `NATS credentials: a password is given (${pWhere}) but no user; set ${names.user} or ` +
          `NATS_USER`,
      );
    }
    if (password === undefined || password === "") {
      throw new TypeError(
        `NATS credentials: user ${JSON.stringify(u)} (${uWhere}) has no password; set ${
          alt(names.password, names.passwordFile, "NATS_PASSWORD")
        }`,
      );
    }
    auth = { kind: "user", user: u, password };
    description = `user ${JSON.stringify(u)} (from ${uWhere}), password from ${pWhere}`;
  } else if (kind === "token") {
    let token: string | undefined;
    let where: string;
    if (o.token !== undefined) [token, where] = [o.token, names.token ?? "token"];
    else if (o.tokenFile !== undefined) {
      token = text(await readSecretFile(o.tokenFile, names.tokenFile));
      where = `${names.tokenFile} ${o.tokenFile}`;
    } else if (urlToken !== undefined) {
      [token, where] = [urlToken, `the token@ part of ${names.url}`];
    } else [token, where] = [e(NATS_ENV.token), "NATS_TOKEN"];
    if (token === undefined || token === "") {
      throw new TypeError(`NATS credentials: the token (${where}) is empty; give a token`);
    }
    auth = { kind: "token", token };
    description = `token from ${where}`;
  } else if (kind === "creds") {
    const file = o.credsFile ?? e(NATS_ENV.credsFile)!;
    const setting = o.credsFile !== undefined ? names.credsFile : "NATS_CREDS";
    const bytes = await readSecretFile(file, setting);
    if (!/-----BEGIN NATS USER JWT-----/.test(new TextDecoder().decode(bytes))) {
      throw new TypeError(
        `${setting}: ${file} is not a NATS creds file (no "BEGIN NATS USER JWT" block); give ` +
          `the .creds file nsc wrote for this user`,
      );
    }
    auth = { kind: "creds", file, bytes };
    description = `creds file ${file} (from ${setting})`;
  } else if (kind === "nkey") {
    const file = o.nkeyFile ?? e(NATS_ENV.nkeyFile)!;
    const setting = o.nkeyFile !== undefined ? names.nkeyFile : "NATS_NKEY";
    const seed = text(await readSecretFile(file, setting)).trim();
    if (!/^SU[A-Z2-7]{56}$/.test(seed)) {
      throw new TypeError(
        `${setting}: ${file} does not hold a user nkey seed (one line starting with SU, as ` +
          `nk -gen user writes it); give the seed file of this user`,
      );
    }
    auth = { kind: "nkey", file, seed: new TextEncoder().encode(seed) };
    description = `nkey seed ${file} (from ${setting})`;
  }

  let tls: NatsSecurity["tls"] = null;
  const t = o.tls ?? null;
  const caFile = t?.caFile ?? e(NATS_ENV.caFile);
  const required = t?.required ?? (t !== null || caFile !== undefined || /^tls:/i.test(url));
  if (t !== null && t.required === false && (t.caFile ?? t.certFile ?? t.keyFile) !== undefined) {
    throw new TypeError(
      `${names.required} is false but TLS files are set; the client uses a CA or a client ` +
        `certificate only when TLS is required: set ${names.required} to true, or remove the files`,
    );
  }
  if (required) {
    tls = {};
    if (caFile !== undefined) {
      checkFileExists(caFile, t?.caFile !== undefined ? names.caFile : "NATS_CA");
      tls.caFile = caFile;
    }
    if ((t?.certFile === undefined) !== (t?.keyFile === undefined)) {
      throw new TypeError(
        `${t?.certFile === undefined ? names.keyFile : names.certFile} is set without ${
          t?.certFile === undefined ? names.certFile : names.keyFile
        }; a client certificate needs both files`,
      );
    }
    if (t?.certFile !== undefined) {
      checkFileExists(t.certFile, names.certFile);
      checkFileExists(t.keyFile!, names.keyFile);
      tls.certFile = t.certFile;
      tls.keyFile = t.keyFile!;
    }
    description += `, TLS required${caFile !== undefined ? ` (CA ${caFile})` : ""}${
      t?.certFile !== undefined ? ", client certificate" : ""
    }`;
  }
  return { auth, tls, description, fix };
}

function defaultEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env
  }
}

/**
 * The client options for `security` (typed with the npm client's option type, so not exported
 * from `mod.ts`).
 *
 * @param security Resolved credentials.
 * @returns `connect` options: user and password, token or authenticator, and TLS.
 *
 * @example Usage
 * ```ts
 * import { natsConnectOptions } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const o = natsConnectOptions({
 *   auth: { kind: "user", user: "w", password: "p" }, tls: { caFile: "ca.pem" }, description: "", fix: "",
 * });
 * assert.deepEqual(o, { user: "w", pass: "p", tls: { caFile: "ca.pem" } });
 * ```
 */
export function natsConnectOptions(
  security: NatsSecurity,
): Pick<ConnectionOptions, "user" | "pass" | "token" | "authenticator"> & {
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
} {
  const a = security.auth;
  const out: ReturnType<typeof natsConnectOptions> = {};
  if (a.kind === "user") Object.assign(out, { user: a.user, pass: a.password });
  else if (a.kind === "token") out.token = a.token;
  else if (a.kind === "creds") out.authenticator = credsAuthenticator(a.bytes);
  else if (a.kind === "nkey") out.authenticator = nkeyAuthenticator(a.seed);
  if (security.tls !== null) out.tls = { ...security.tls };
  return out;
}

/**
 * Why a connection failed, for the caller's message: `auth` (credentials refused or missing),
 * `tls` (TLS required but not offered, or the certificate not trusted) or `unreachable`.
 *
 * @example Usage
 * ```ts
 * import { NatsConnectError } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const e = new NatsConnectError("auth", "nats://h:4222 refused the credentials", null);
 * assert.equal(e.kind, "auth");
 * ```
 */
export class NatsConnectError extends Error {
  /** What failed. */
  readonly kind: "auth" | "tls" | "unreachable";
  /**
   * A failed connection.
   *
   * @param kind What failed.
   * @param message The message (names the settings to fix; no secret).
   * @param cause The client's error.
   */
  constructor(kind: "auth" | "tls" | "unreachable", message: string, cause: unknown) {
    super(message, { cause });
    this.name = "NatsConnectError";
    this.kind = kind;
  }
}

/**
 * After a refused connection, the Node transport under Deno can see its discarded socket reset
 * by the server after it removed the socket's listeners (the server closes the connection right
 * after `-ERR 'Authorization Violation'`): an `ECONNRESET` with no listener, which would surface
 * as an uncaught error and end the process before the caller prints the clear message. For a few
 * seconds after a failed connect, such resets are dropped; any other error still surfaces.
 */
function swallowLateResets(): void {
  const onError = (e: ErrorEvent) => {
    const code = (e.error as { code?: unknown } | undefined)?.code;
    if (code === "ECONNRESET" || code === "EPIPE") e.preventDefault();
  };
  globalThis.addEventListener("error", onError);
  const timer = setTimeout(() => globalThis.removeEventListener("error", onError), 3000);
  Deno.unrefTimer(timer);
}

/**
 * Connects to `url` with `security`; a refused login or a TLS failure fails at once with a
 * message naming the settings to fix (never a secret; the URL printed without credentials).
 *
 * @param url Server URL (a `user:pass@` part is dropped here: `security` carries it).
 * @param security Resolved credentials.
 * @param options Client name and timeout.
 * @returns The connection.
 * @throws {NatsConnectError} when the connection fails.
 *
 * Internal to the NATS transport (returns the npm client's connection type); tested with real
 * servers that require credentials in `nats_security_test.ts`.
 */
export async function connectNatsSecure(
  url: string,
  security: NatsSecurity,
  options: { name: string; timeoutMs?: number; names: NatsAuthNames },
): Promise<NatsConnection> {
  const shown = redactNatsUrl(url);
  const servers = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1");
  try {
    return await connect({
      servers,
      name: options.name,
      timeout: options.timeoutMs ?? 5000,
      ...natsConnectOptions(security),
    });
  } catch (e) {
    swallowLateResets();
    const err = e instanceof Error ? e : new Error(String(e));
    const text = `${err.name}: ${err.message}`;
    const n = options.names;
    if (/authori[sz]ation|authentication|auth(entication)? (violation|timeout)/i.test(text)) {
      throw new NatsConnectError(
        "auth",
        security.auth.kind === "none"
          ? `${shown} requires credentials and none were given (${err.message}); give them ` +
            `with ${security.fix}`
          : `${shown} refused the credentials (${security.description}): ${err.message}; ` +
            `check them (${security.fix})`,
        e,
      );
    }
    if (/tls|certificate|self[- ]signed|ssl|handshake/i.test(text)) {
      throw new NatsConnectError(
        "tls",
        /does not support 'tls'/.test(err.message)
          ? `${shown} does not offer TLS, which is required (${n.required}, ${n.caFile}, ` +
            `NATS_CA or a tls:// URL); enable tls on the server, or stop requiring it`
          : `TLS with ${shown} failed (${err.message}); give the CA that signed the server's ` +
            `certificate with ${n.caFile} or NATS_CA`,
        e,
      );
    }
    throw new NatsConnectError("unreachable", `cannot connect to ${shown} (${err.message})`, e);
  }
}

// ---------------------------------------------------------------------------------------------
// Checks of what arrives over NATS

/**
 * What a worker accepts in a run record's config: local paths inside `allowDirs` (absolute;
 * symlinks resolved), and URLs (a checkpoint, a dataset, an endpoint in options) only with
 * `allowRemote`. Reward modules are always local.
 *
 * @example Usage
 * ```ts
 * import type { RunRecordPolicy } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const p: RunRecordPolicy = { allowDirs: [Deno.cwd()], allowRemote: false };
 * assert.equal(p.allowRemote, false);
 * ```
 */
export interface RunRecordPolicy {
  /** Directories local paths must be in (absolute). */
  allowDirs: readonly string[];
  /** Whether `http:`/`https:` URLs are allowed (not for reward modules). */
  allowRemote: boolean;
}

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const INCARNATION = /^[a-z0-9]{1,64}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const URL_LIKE = /^[a-z][a-z0-9+.-]+:/i;

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function intIn(v: unknown, field: string, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new RunRecordError(
      `${field} is ${JSON.stringify(v)?.slice(0, 40)}; expected an integer in [${min}, ${max}]`,
    );
  }
  return v;
}

function stringMatching(v: unknown, field: string, re: RegExp, what: string): string {
  if (typeof v !== "string" || !re.test(v)) {
    throw new RunRecordError(
      `${field} is ${JSON.stringify(v)?.slice(0, 80)}; expected ${what}`,
    );
  }
  return v;
}

/**
 * Checks the shape of a run record (every field's type and range, bucket names derived from
 * the incarnation), not its config.
 */
function checkRunShape(v: unknown): NatsRun {
  if (!isRecord(v)) throw new RunRecordError("the record is not a JSON object");
  const known = new Set([
    "runId",
    "incarnation",
    "config",
    "maxStaleness",
    "weightsBucket",
    "rolloutsBucket",
    "queue",
    "inlineMaxBytes",
    "startedAt",
  ]);
  const extra = Object.keys(v).filter((k) => !known.has(k));
  if (extra.length > 0) throw new RunRecordError(`unknown fields ${extra.join(", ")}`);
  const incarnation = stringMatching(v.incarnation, "incarnation", INCARNATION, "[a-z0-9]{1,64}");
  const runId = stringMatching(v.runId, "runId", RUN_ID, "a run directory name");
  if (v.weightsBucket !== `rlvr-weights-${incarnation}`) {
    throw new RunRecordError(
      `weightsBucket is ${JSON.stringify(v.weightsBucket)?.slice(0, 80)}, not ` +
        `rlvr-weights-${incarnation} (the incarnation's own bucket)`,
    );
  }
  if (v.rolloutsBucket !== `rlvr-rollouts-${incarnation}`) {
    throw new RunRecordError(
      `rolloutsBucket is ${JSON.stringify(v.rolloutsBucket)?.slice(0, 80)}, not ` +
        `rlvr-rollouts-${incarnation} (the incarnation's own bucket)`,
    );
  }
  if (
    !isRecord(v.queue) || Object.keys(v.queue).some((k) => !["ackWaitMs", "maxDeliver"].includes(k))
  ) {
    throw new RunRecordError("queue is not { ackWaitMs, maxDeliver }");
  }
  const ackWaitMs = intIn(v.queue.ackWaitMs, "queue.ackWaitMs", 100, 3_600_000);
  const maxDeliver = intIn(v.queue.maxDeliver, "queue.maxDeliver", 1, 1000);
  const startedAt = stringMatching(
    v.startedAt,
    "startedAt",
    /^\d{4}-\d\d-\d\dT[0-9:.]+Z$/,
    "an ISO 8601 time",
  );
  if (!isRecord(v.config)) throw new RunRecordError("config is not an object");
  return {
    runId,
    incarnation,
    config: v.config as unknown as Config,
    maxStaleness: intIn(v.maxStaleness, "maxStaleness", 0, 1_000_000),
    weightsBucket: v.weightsBucket,
    rolloutsBucket: v.rolloutsBucket,
    queue: { ackWaitMs, maxDeliver },
    inlineMaxBytes: intIn(v.inlineMaxBytes, "inlineMaxBytes", 0, 64 * 1024 * 1024),
    startedAt,
  };
}

/** The real path of `path` (or of its nearest existing parent, plus the rest). */
function realPathOf(path: string): string {
  const abs = resolve(path);
  let dir = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(Deno.realPathSync(dir), ...rest.reverse());
    } catch {
      const parent = resolve(dir, "..");
      if (parent === dir) return abs;
      rest.push(dir.slice(parent.length).replace(/^[/\\]/, ""));
      dir = parent;
    }
  }
}

function inside(path: string, dirs: readonly string[]): boolean {
  return dirs.some((d) => path === d || path.startsWith(d.endsWith(sep) ? d : d + sep));
}

/** Problems with the paths and URLs of a config under `policy` (before anything is opened). */
function pathProblems(config: Record<string, unknown>, policy: RunRecordPolicy): string[] {
  const out: string[] = [];
  const dirs = policy.allowDirs.map((d) => realPathOf(d));
  const local = (field: string, value: unknown, code: boolean) => {
    if (typeof value !== "string" || value === "") {
      out.push(`${field} is ${JSON.stringify(value)?.slice(0, 80)}, not a path`);
      return;
    }
    const shown = JSON.stringify(value.slice(0, 200));
    if (URL_LIKE.test(value) && !value.startsWith("file:")) {
      if (code) {
        out.push(
          `${field} ${shown} is a URL; a worker imports reward modules only from its own files ` +
            `(copy the module under an allowed directory)`,
        );
      } else if (!/^https?:\/\//i.test(value)) {
        out.push(`${field} ${shown}: only http(s) URLs and local paths are read`);
      } else if (!policy.allowRemote) {
        out.push(
          `${field} ${shown} is a URL; start the worker with --allow-remote to let run records ` +
            `name URLs`,
        );
      }
      return;
    }
    let path = value;
    if (path.startsWith("file:")) {
      try {
        path = decodeURIComponent(new URL(path).pathname);
      } catch {
        out.push(`${field} ${shown} is not a file URL`);
        return;
      }
    }
    const real = realPathOf(isAbsolute(path) ? path : resolve(Deno.cwd(), path));
    if (!inside(real, dirs)) {
      out.push(
        `${field} ${shown} is outside the worker's allowed directories (${
          dirs.join(", ") || "none"
        }); start the worker with --allow-dir <dir> to allow it`,
      );
    }
  };
  const model = isRecord(config.model) ? config.model : {};
  if (typeof model.checkpoint !== "string" || !model.checkpoint.startsWith("builtin:")) {
    local("model.checkpoint", model.checkpoint, false);
  }
  const task = isRecord(config.task) ? config.task : {};
  if (isRecord(task.data)) local("task.data.path", task.data.path, false);
  if (Array.isArray(config.rewards)) {
    config.rewards.forEach((r, i) => {
      if (isRecord(r) && r.path !== undefined) {
        const file = typeof r.path === "string" ? r.path.split("#")[0] : r.path;
        local(`rewards[${i}].path`, file, true);
      }
    });
  }
  // URLs anywhere in options (a judge's endpoint, say): the worker would send requests there.
  const walk = (field: string, v: unknown, depth: number) => {
    if (depth > 8) return;
    if (typeof v === "string" && /^[a-z][a-z0-9+.-]*:\/\//i.test(v) && !policy.allowRemote) {
      out.push(
        `${field} ${JSON.stringify(v.slice(0, 200))} is a URL; start the worker with ` +
          `--allow-remote to let run records name URLs`,
      );
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(`${field}[${i}]`, x, depth + 1));
    else if (isRecord(v)) {
      for (const [k, x] of Object.entries(v)) walk(`${field}.${k}`, x, depth + 1);
    }
  };
  walk("task.options", task.options, 0);
  if (isRecord(task.env)) walk("task.env.options", task.env.options, 0);
  if (Array.isArray(config.rewards)) {
    config.rewards.forEach((r, i) => isRecord(r) && walk(`rewards[${i}].options`, r.options, 0));
  }
  return out;
}

/**
 * Checks a run record a worker read (see the module doc): its shape, the paths and URLs of its
 * config under `policy` (before anything is opened), then the config against the schema.
 *
 * @param value The parsed record ({@link StoredRunRecord.value}).
 * @param policy Allowed directories and remote access.
 * @returns The record, typed.
 * @throws {RunRecordError} naming every problem found.
 *
 * @example Usage
 * ```ts
 * import { checkRunRecord } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   checkRunRecord({ runId: "x" }, { allowDirs: [Deno.cwd()], allowRemote: false }),
 *   /incarnation is undefined/,
 * );
 * ```
 */
export async function checkRunRecord(value: unknown, policy: RunRecordPolicy): Promise<NatsRun> {
  const run = checkRunShape(value);
  const problems = pathProblems(run.config as unknown as Record<string, unknown>, policy);
  if (problems.length > 0) throw new RunRecordError(problems.join("; "));
  let config: Config;
  try {
    // A worker samples: the trainer's own estimator/loss modules are neither needed nor loaded.
    config = await validateConfig(withoutUserMethods(run.config));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    throw new RunRecordError(
      `its config is not valid: ${e.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
        .slice(0, 2000),
    );
  }
  if (config.rollout.nats == null || (config.rollout.mode ?? "sync") === "sync") {
    throw new RunRecordError("its config has no rollout.nats with an asynchronous rollout.mode");
  }
  return { ...run, config };
}

/**
 * Checks a job message's body (any client can publish one): the incarnation, the job's fields,
 * the run digest and the weights it names.
 *
 * @param value The message's `prompt`.
 * @returns The job, typed.
 * @throws {RunRecordError} naming the first problem.
 *
 * @example Usage
 * ```ts
 * import { checkNatsJob } from "./nats_protocol.ts";
 * import assert from "node:assert/strict";
 * const job = checkNatsJob({ incarnation: "abc", job: { id: 1, key: 1, rows: [] } });
 * assert.equal(job.job.id, 1);
 * assert.throws(() => checkNatsJob({ incarnation: "../x", job: {} }), /incarnation/);
 * ```
 */
export function checkNatsJob(value: unknown): NatsJob {
  if (!isRecord(value)) throw new RunRecordError("the job is not a JSON object");
  const incarnation = stringMatching(
    value.incarnation,
    "incarnation",
    INCARNATION,
    "[a-z0-9]{1,64}",
  );
  const j = value.job;
  if (!isRecord(j)) throw new RunRecordError("job is not an object");
  intIn(j.id, "job.id", 0, Number.MAX_SAFE_INTEGER);
  if (typeof j.key !== "number" || !Number.isFinite(j.key)) {
    throw new RunRecordError(`job.key is ${JSON.stringify(j.key)?.slice(0, 40)}, not a number`);
  }
  if (!Array.isArray(j.rows)) throw new RunRecordError("job.rows is not an array");
  const out: NatsJob = { incarnation, job: j as unknown as RolloutJob };
  if (value.run !== undefined) out.run = stringMatching(value.run, "run", HEX64, "a SHA-256");
  if (value.weights !== undefined) {
    const w = value.weights;
    if (!isRecord(w)) throw new RunRecordError("weights is not an object");
    out.weights = {
      version: intIn(w.version, "weights.version", 0, Number.MAX_SAFE_INTEGER),
      checksum: stringMatching(w.checksum, "weights.checksum", HEX64, "a SHA-256"),
      bytes: intIn(w.bytes, "weights.bytes", 1, Number.MAX_SAFE_INTEGER),
    };
  }
  return out;
}
