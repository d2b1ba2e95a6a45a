/**
 * Rollout executors on remote workers over NATS JetStream (`rollout.nats`): the trainer's side
 * of `deno task worker --nats <url>` (`apps/train/worker.ts`). {@link startNatsExecutors} gives
 * the scheduler `count` executors ("slots" `nats0`, `nats1`, ...); each runs one job at a time
 * on whichever remote worker takes it, so `count` bounds the jobs in flight, not the workers.
 *
 * Design decisions:
 * - **One hub per trainer process**: the slots share one connection, one `WorkQueue`, one
 *   `WeightsStore` and one `TrajectoryConsumer`; the hub pulls every trajectory and routes it to
 *   the slot awaiting its job id. It closes with the last slot.
 * - **The run record** (`nats_protocol.ts`): at start the trainer publishes the resolved config,
 *   η and its bucket names as the active run, so a worker needs only the server's URL. One
 *   NATS server (one set of stream names) serves one run at a time; a new trainer takes over.
 * - **Incarnations**: every trainer process has a fresh id. Job ids restart from the checkpoint
 *   after a restart, and a regenerated job keeps its id, so a job's message id is
 *   `${runId}/${incarnation}/${job.id}/${dispatch}` (dispatch counts the hub's enqueues): never
 *   reused, hence never dropped by JetStream's duplicate window.
 * - **A dead trainer's leftovers are purged, and ignored if they come anyway**: at start the hub
 *   purges the prompt and trajectory streams, deletes the previous incarnation's buckets (its
 *   weights may be newer than the checkpoint this trainer resumes from) and writes its own
 *   record. A worker still computing an old job finds its incarnation gone and drops it, or
 *   publishes a trajectory no slot awaits, which the hub acknowledges and ignores. At close the
 *   hub purges the prompts it leaves.
 * - **Weights are uploaded once per version**, shared by the slots, in version order, into a
 *   bucket of this incarnation (fresh, so a resumed run may publish a version it published
 *   before); a slot's `version` is the latest it synced. The worker may hold newer weights: a
 *   slot returns the version the worker reports, and rejects one newer than the latest upload.
 * - **Result size**: a rollout travels inline when its message fits the server's `max_payload`
 *   (1 MB by default; less 8 KiB for headers), else through an object in the incarnation's
 *   rollouts bucket (chunked by the object store, so there is no size limit; deleted once
 *   read, expired after an hour if never read). A job message too big for `max_payload` is an
 *   error that names both sizes and the server setting.
 * - **No silent hangs**: an error in a worker's rollout is published and rejects the slot's
 *   `run` (as a Web Worker's does); a job JetStream gives up on after `maxDeliver` deliveries
 *   (every worker that took it died) rejects it too (max-deliveries advisory); a job that left
 *   the queue without a result (a worker dropped it, or another client took it) is queued
 *   again, up to `maxDeliver` times, then rejects; objects are read with `readObject`, which
 *   fails instead of waiting forever when another client deletes the object being read; and
 *   while jobs wait with no result the hub logs the queue's depth every `waitWarnS` seconds.
 * - **Credentials** (`rollout.natsAuth` and the `NATS_*` environment, `nats_protocol.ts`): a
 *   refused or missing login fails `startNatsExecutors` at once, naming the settings; the
 *   config published to the workers leaves `rollout.natsAuth` out, and URLs are logged without
 *   credentials.
 * - **Another client's writes are not the trainer's**: the hub guards what it owns. It remembers
 *   the object-store id (`nuid`) of every weights object and run record it wrote; any other
 *   object in its weights bucket (a version it never uploaded, or one of its versions replaced)
 *   is deleted and logged, and the newest snapshot put back if it was replaced; its run record,
 *   if replaced, is written again. A result computed under weights the trainer never uploaded
 *   (a version above its newest, or a checksum it did not upload) is logged and its job queued
 *   again (up to `maxDeliver` times), never a reason to fail the run. This keeps a peer's bogus
 *   upload from stopping a run; keeping peers out is the server's credentials (README, NATS
 *   security).
 *
 * @module
 */

import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { type ObjectInfo, type ObjectStore, Objm } from "@nats-io/obj";
import { nanos, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import {
  ObjectChangedError,
  readObject,
  type ReceivedTrajectory,
  TrajectoryConsumer,
  type WeightSnapshot,
  WeightsStore,
  WorkQueue,
} from "@rlvr/infra";
import type { Config } from "../config/types.ts";
import { rolloutSchedule } from "../config/mapping.ts";
import type { Rollout } from "./rollout.ts";
import type { RolloutExecutor, RolloutJob } from "./rollout_job.ts";
import {
  connectNatsSecure,
  decodeJson,
  NatsConnectError,
  type NatsJob,
  type NatsResult,
  type NatsRun,
  type NatsSecurity,
  type NatsWeightsPin,
  newIncarnation,
  readActiveRun,
  redactNatsUrl,
  resolveNatsSecurity,
  RUN_BUCKET,
  runObjectName,
  splitNatsUrl,
  TRAINER_AUTH_NAMES,
  writeActiveRun,
} from "./nats_protocol.ts";

/**
 * Options of {@link startNatsExecutors}.
 *
 * @example Usage
 * ```ts
 * import type { NatsExecutorOptions } from "./nats_executor.ts";
 * import assert from "node:assert/strict";
 * const o: NatsExecutorOptions = { runId: "grpo-1", ackWaitMs: 30_000 };
 * assert.equal(o.runId, "grpo-1");
 * ```
 */
export interface NatsExecutorOptions {
  /** The run's id (its directory name; the same when it is resumed). */
  runId: string;
  /** Where progress lines go (default: nowhere). */
  log?: (line: string) => void;
  /**
   * How long a worker may hold a job without a heartbeat before it is redelivered (default: the
   * environment variable `RLVR_NATS_ACK_WAIT_MS`, else 10 000 ms; workers heartbeat every
   * quarter of it, from a thread the rollout does not block).
   */
  ackWaitMs?: number;
  /** Most deliveries of one job before it fails the run (default 5). */
  maxDeliver?: number;
  /** Cap on inline results in bytes (default: the server's `max_payload` less 8 KiB). */
  inlineMaxBytes?: number;
  /** Seconds between "still waiting" lines while jobs wait for results (default 60). */
  waitWarnS?: number;
  /**
   * The environment the `NATS_*` credentials are read from (default `Deno.env.get`; tests pass
   * their own).
   */
  env?: (name: string) => string | undefined;
}

const HEADROOM = 8 * 1024;
const ROLLOUT_TTL_MS = 3600_000;

interface Pending {
  slot: string;
  job: RolloutJob;
  seq: number;
  /** Times the job was queued again after a result under weights this trainer never uploaded. */
  requeued: number;
  /** Times the job was queued again after it left the queue without a result. */
  lost: number;
  /** Missing from the queue at the last check (see `#checkLost`). */
  gone: boolean;
  resolve: (v: { rollout: Rollout; policyVersion: number }) => void;
  reject: (e: Error) => void;
}

/** A weights object this hub uploaded. */
interface Uploaded {
  pin: NatsWeightsPin;
  nuid: string;
}

function errorOf(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

function bytesOf(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** `RLVR_NATS_ACK_WAIT_MS`, when set (tests and operators shorten or lengthen the ack wait). */
function envAckWaitMs(): number | undefined {
  let raw: string | undefined;
  try {
    raw = Deno.env.get("RLVR_NATS_ACK_WAIT_MS");
  } catch {
    return undefined; // no env permission
  }
  if (raw === undefined || raw === "") return undefined;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 100) {
    throw new RangeError(`RLVR_NATS_ACK_WAIT_MS must be an integer >= 100 (ms), got ${raw}`);
  }
  return ms;
}

/** Deletes an object store bucket, if it exists. */
async function destroyBucket(nc: NatsConnection, bucket: string): Promise<void> {
  try {
    await (await new Objm(nc).open(bucket)).destroy();
  } catch { /* absent: nothing to delete */ }
}

/** The trainer's shared state behind the slots (see the module doc). */
class NatsHub {
  /** The server's URL, without credentials (for messages). */
  readonly url: string;
  readonly run: NatsRun;
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #queue: WorkQueue<NatsJob>;
  readonly #weights: WeightsStore;
  readonly #consumer: TrajectoryConsumer<NatsResult>;
  readonly #rollouts: ObjectStore;
  readonly #runOs: ObjectStore;
  readonly #log: (line: string) => void;
  readonly #waitWarnMs: number;
  readonly #pending = new Map<string, Pending>();
  readonly #bySeq = new Map<number, string>();
  /** Versions this hub uploaded, by version. */
  readonly #uploaded = new Map<number, Uploaded>();
  #latestSnap: WeightSnapshot | null = null;
  #runDigest: string;
  #runNuid = "";
  #dispatch = 0;
  #latestPut = -1;
  #puts: Promise<void> = Promise.resolve();
  #guardQueued = false;
  #open = 0;
  #closed = false;
  #pump: Promise<void> = Promise.resolve();
  #advisories: Subscription | null = null;
  #watchers: { stop(): void }[] = [];
  #lastProgress = Date.now();

  private constructor(
    url: string,
    nc: NatsConnection,
    jsm: JetStreamManager,
    parts: {
      run: NatsRun;
      runDigest: string;
      queue: WorkQueue<NatsJob>;
      weights: WeightsStore;
      consumer: TrajectoryConsumer<NatsResult>;
      rollouts: ObjectStore;
      runOs: ObjectStore;
      log: (line: string) => void;
      waitWarnMs: number;
    },
  ) {
    this.url = url;
    this.#nc = nc;
    this.#jsm = jsm;
    this.run = parts.run;
    this.#runDigest = parts.runDigest;
    this.#queue = parts.queue;
    this.#weights = parts.weights;
    this.#consumer = parts.consumer;
    this.#rollouts = parts.rollouts;
    this.#runOs = parts.runOs;
    this.#log = parts.log;
    this.#waitWarnMs = parts.waitWarnMs;
  }

  static async open(config: Config, options: NatsExecutorOptions): Promise<NatsHub> {
    const raw = config.rollout.nats;
    if (typeof raw !== "string" || raw === "") {
      throw new TypeError(
        `startNatsExecutors: config.rollout.nats is ${
          JSON.stringify(raw)
        }; set it to the server's URL (nats://host:4222)`,
      );
    }
    if (typeof options.runId !== "string" || options.runId === "") {
      throw new TypeError("startNatsExecutors: options.runId must be a non-empty string");
    }
    const url = redactNatsUrl(raw);
    const log = options.log ?? (() => {});
    const ackWaitMs = options.ackWaitMs ?? envAckWaitMs() ?? 10_000;
    const maxDeliver = options.maxDeliver ?? 5;
    let security: NatsSecurity;
    try {
      // A user:pass@ URL (refused in a config file, possible from code) logs in, unprinted.
      const { url: clean, fromUrl } = splitNatsUrl(raw);
      security = await resolveNatsSecurity(
        { ...config.rollout.natsAuth, ...(fromUrl === undefined ? {} : { fromUrl }) },
        TRAINER_AUTH_NAMES,
        options.env,
        clean,
      );
    } catch (e) {
      throw new Error(`rollout.natsAuth: ${errorOf(e).message}`, { cause: e });
    }
    let nc: NatsConnection;
    try {
      nc = await connectNatsSecure(raw, security, {
        name: `rlvr trainer ${options.runId}`,
        names: TRAINER_AUTH_NAMES,
      });
    } catch (e) {
      if (e instanceof NatsConnectError && e.kind !== "unreachable") {
        throw new Error(`rollout.nats: ${e.message}`, { cause: e });
      }
      throw new Error(
        `rollout.nats: cannot connect to ${url} (${
          errorOf(errorOf(e).cause ?? e).message
        }); start nats-server with JetStream there (nats-server -js), or set rollout.nats to ` +
          `null for local workers`,
        { cause: e },
      );
    }
    try {
      let jsm: JetStreamManager;
      try {
        jsm = await jetstreamManager(nc);
      } catch (e) {
        throw new Error(
          `rollout.nats: ${url} has no JetStream (${errorOf(e).message}); start nats-server ` +
            `with -js`,
          { cause: e },
        );
      }
      const incarnation = newIncarnation();
      const queue = await WorkQueue.open<NatsJob>(nc, { ackWaitMs, maxDeliver });
      const consumer = await TrajectoryConsumer.open<NatsResult>(nc);
      // A dead trainer's jobs, results and buckets (see the module doc).
      const previous = await readActiveRun(nc).catch(() => null);
      await jsm.streams.purge(queue.stream);
      await jsm.streams.purge(consumer.stream);
      const runOs = await new Objm(nc).create(RUN_BUCKET);
      if (previous !== null) {
        await destroyBucket(nc, previous.weightsBucket);
        await destroyBucket(nc, previous.rolloutsBucket);
        await runOs.delete(runObjectName(previous.incarnation)).catch(() => {});
        log(
          `rollout: NATS ${url}: replacing run ${previous.runId} (trainer ${previous.incarnation}` +
            `, started ${previous.startedAt}); its queued jobs were purged`,
        );
      }
      const weightsBucket = `rlvr-weights-${incarnation}`;
      const rolloutsBucket = `rlvr-rollouts-${incarnation}`;
      const weights = await WeightsStore.open(nc, { bucket: weightsBucket });
      const rollouts = await new Objm(nc).create(rolloutsBucket, { ttl: nanos(ROLLOUT_TTL_MS) });
      const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
      // The workers get the config without the trainer's credential settings (file names).
      const { natsAuth: _auth, ...rolloutSection } = config.rollout;
      const run: NatsRun = {
        runId: options.runId,
        incarnation,
        config: { ...config, rollout: rolloutSection },
        maxStaleness: rolloutSchedule(config).maxStaleness,
        weightsBucket,
        rolloutsBucket,
        queue: { ackWaitMs, maxDeliver },
        inlineMaxBytes: Math.max(
          0,
          Math.min(options.inlineMaxBytes ?? Infinity, maxPayload - HEADROOM),
        ),
        startedAt: new Date().toISOString(),
      };
      const runDigest = await writeActiveRun(nc, run);
      const hub = new NatsHub(url, nc, jsm, {
        run,
        runDigest,
        queue,
        weights,
        consumer,
        rollouts,
        runOs,
        log,
        waitWarnMs: (options.waitWarnS ?? 60) * 1000,
      });
      hub.#runNuid = (await runOs.info(runObjectName(incarnation)))?.nuid ?? "";
      hub.#startAdvisories();
      await hub.#startGuards();
      hub.#pump = hub.#pumpLoop();
      return hub;
    } catch (e) {
      await nc.close();
      throw e;
    }
  }

  /** A slot opened. */
  attach(): void {
    this.#open++;
  }

  /** Version of the newest weights uploaded (-1 before the first). */
  get latestPut(): number {
    return this.#latestPut;
  }

  /** Uploads a snapshot unless this or a newer version is already up (in version order). */
  put(snapshot: WeightSnapshot): Promise<void> {
    return this.#serial(async () => {
      if (snapshot.version <= this.#latestPut) return;
      await this.#upload(snapshot);
    });
  }

  /** Runs `fn` after every earlier upload and guard pass (they share the bucket). */
  #serial(fn: () => Promise<void>): Promise<void> {
    const next = this.#puts.catch(() => {}).then(() => {
      if (this.#closed) throw new Error("NATS rollout executors are closed");
      return fn();
    });
    this.#puts = next;
    return next;
  }

  /**
   * Uploads `snapshot` after deleting every object of the bucket this hub did not write (a
   * version another client put above the trainer's would make the store refuse the trainer's).
   */
  async #upload(snapshot: WeightSnapshot): Promise<void> {
    for (let attempt = 0;; attempt++) {
      await this.#removeForeign();
      try {
        const { size, nuid } = await this.#weights.put(snapshot);
        const pin = { version: snapshot.version, checksum: snapshot.checksum, bytes: size };
        this.#uploaded.set(snapshot.version, { pin, nuid });
        this.#latestSnap = snapshot;
        this.#latestPut = Math.max(this.#latestPut, snapshot.version);
        return;
      } catch (e) {
        // another client wrote a newer version between the clean-up and the upload: again
        if (attempt >= 4 || !/is not above the latest stored version/.test(errorOf(e).message)) {
          throw e;
        }
      }
    }
  }

  /** Deletes every object in the weights bucket this hub did not write; logs each. */
  async #removeForeign(): Promise<number> {
    let removed = 0;
    for (const e of await this.#weights.entries()) {
      const own = e.version === null ? undefined : this.#uploaded.get(e.version);
      if (own !== undefined && own.nuid === e.nuid) continue;
      await this.#weights.remove(e.name);
      removed++;
      this.#log(
        `rollout: NATS: deleted weights object ${
          JSON.stringify(e.name.slice(0, 64))
        } (${e.size} bytes) from ${this.#weights.bucket}: ${
          own === undefined ? "not uploaded by this trainer" : "it replaced this trainer's upload"
        }; another client is writing to the server (give it credentials: README, NATS security)`,
      );
    }
    return removed;
  }

  /** A guard pass: foreign weights deleted, the newest upload put back if it was replaced. */
  #guardWeights(): void {
    if (this.#guardQueued || this.#closed) return;
    this.#guardQueued = true;
    this.#serial(async () => {
      this.#guardQueued = false;
      if (await this.#removeForeign() === 0) return;
      const snap = this.#latestSnap;
      if (snap === null) return;
      const present = (await this.#weights.entries()).some((e) => e.version === snap.version);
      if (!present) {
        this.#uploaded.delete(snap.version);
        await this.#upload(snap);
        this.#log(`rollout: NATS: weights v${snap.version} uploaded again`);
      }
    }).catch((e) => {
      if (!this.#closed) this.#log(`rollout: NATS: weights guard failed (${errorOf(e).message})`);
    });
  }

  /** Watches the weights bucket and the run record for other clients' writes. */
  async #startGuards(): Promise<void> {
    const weightsOs = await new Objm(this.#nc).open(this.run.weightsBucket);
    const own = runObjectName(this.run.incarnation);
    const watch = async (os: ObjectStore, on: (info: ObjectInfo) => void) => {
      const it = await os.watch({ includeHistory: false });
      this.#watchers.push(it);
      (async () => {
        for await (const info of it) if (info !== null) on(info);
      })().catch(() => {});
    };
    await watch(weightsOs, (info) => {
      const m = /^v(0|[1-9][0-9]*)$/.exec(info.name);
      const mine = m === null ? undefined : this.#uploaded.get(Number(m[1]));
      // Our own upload's event can come before `put` returns: wait for the pass to decide.
      if (mine === undefined || mine.nuid !== info.nuid) this.#guardWeights();
    });
    await watch(this.#runOs, (info) => {
      if (info.name !== own || (info.nuid === this.#runNuid && !info.deleted)) return;
      this.#serial(async () => {
        const now = await this.#runOs.info(own);
        if (now !== null && !now.deleted && now.nuid === this.#runNuid) return;
        const bytes = new TextEncoder().encode(JSON.stringify(this.run));
        const put = await this.#runOs.putBlob({ name: own }, bytes);
        this.#runNuid = put.nuid;
        this.#log(
          `rollout: NATS: the run record ${own} was ${
            now === null || now.deleted ? "deleted" : "replaced"
          } by another client; written again (give clients credentials: README, NATS security)`,
        );
      }).catch((e) => {
        if (!this.#closed) {
          this.#log(`rollout: NATS: run record guard failed (${errorOf(e).message})`);
        }
      });
    });
  }

  /** Enqueues `job` for slot `slot` and resolves with its result. */
  async runJob(
    slot: string,
    job: RolloutJob,
  ): Promise<{ rollout: Rollout; policyVersion: number }> {
    if (this.#closed) throw new Error(`NATS rollout executor ${slot} is closed`);
    let pending!: Pending;
    const result = new Promise<{ rollout: Rollout; policyVersion: number }>((resolve, reject) => {
      pending = { slot, job, seq: -1, requeued: 0, lost: 0, gone: false, resolve, reject };
    });
    result.catch(() => {}); // settled while enqueueing: awaited (and thrown) below
    if (this.#pending.size === 0) this.#lastProgress = Date.now();
    await this.#enqueue(pending);
    return await result;
  }

  /** Queues `p`'s job under a fresh message id (see the module doc). */
  async #enqueue(p: Pending): Promise<void> {
    const { runId, incarnation } = this.run;
    const { slot, job } = p;
    const id = `${runId}/${incarnation}/${job.id}/${this.#dispatch++}`;
    const latest = this.#uploaded.get(this.#latestPut);
    const prompt: NatsJob = {
      incarnation,
      job,
      run: this.#runDigest,
      ...(latest === undefined ? {} : { weights: latest.pin }),
    };
    const size = bytesOf(JSON.stringify({ id, prompt }));
    const max = this.#nc.info?.max_payload ?? 1024 * 1024;
    if (size > max) {
      throw new RangeError(
        `NATS rollout executor ${slot}: job ${job.id} is ${size} bytes, above the server's ` +
          `max_payload of ${max} bytes (${this.url}); raise max_payload in the nats-server ` +
          `config (e.g. max_payload: 8MB) or make the job smaller (rollout.batchSize, ` +
          `dynamicSampling.maxRetries)`,
      );
    }
    this.#pending.set(id, p);
    p.gone = false;
    try {
      const { seq } = await this.#queue.enqueue({ id, prompt });
      if (this.#pending.get(id) === p) {
        p.seq = seq;
        this.#bySeq.set(seq, id);
      }
    } catch (e) {
      this.#pending.delete(id);
      throw new Error(`NATS rollout executor ${slot}: enqueueing job ${job.id} failed`, {
        cause: e,
      });
    }
  }

  /** A slot closed: its pending jobs reject; the last one closes the hub. */
  async detach(slot: string): Promise<void> {
    for (const [id, p] of this.#pending) {
      if (p.slot === slot) {
        this.#settle(id);
        p.reject(new Error(`NATS rollout executor ${slot} was closed (job ${p.job.id})`));
      }
    }
    if (--this.#open > 0 || this.#closed) return;
    this.#closed = true;
    try {
      await this.#jsm.streams.purge(this.#queue.stream); // nobody will read their results
    } catch { /* the connection is gone: nothing to clean */ }
    this.#advisories?.unsubscribe();
    for (const w of this.#watchers) w.stop();
    await this.#puts.catch(() => {});
    await this.#nc.close();
    await this.#pump;
  }

  #settle(id: string): Pending | undefined {
    const p = this.#pending.get(id);
    if (p === undefined) return undefined;
    this.#pending.delete(id);
    this.#bySeq.delete(p.seq);
    return p;
  }

  /** Fails a job JetStream stopped delivering (`maxDeliver` reached). */
  #startAdvisories(): void {
    const subject =
      `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${this.#queue.stream}.${this.#queue.consumer}`;
    const sub = this.#nc.subscribe(subject);
    this.#advisories = sub;
    (async () => {
      for await (const m of sub) {
        let seq: number;
        try {
          seq = (m.json() as { stream_seq: number }).stream_seq;
        } catch {
          continue;
        }
        const id = this.#bySeq.get(seq);
        const p = id === undefined ? undefined : this.#settle(id);
        p?.reject(
          new Error(
            `NATS rollout executor ${p.slot}: job ${p.job.id} was delivered ` +
              `${this.run.queue.maxDeliver} times without a result (every worker that took ` +
              `it died, hung past the ${this.run.queue.ackWaitMs} ms ack wait, or refused ` +
              `it); see the workers' output`,
          ),
        );
      }
    })().catch(() => {});
  }

  /**
   * Why a result's weights are not this trainer's (a version it never uploaded, or another
   * checksum), or null when they are.
   */
  #foreignWeights(version: number, checksum: string | undefined): string | null {
    if (version > this.#latestPut) {
      return `version ${version}, newer than the latest upload ${this.#latestPut}`;
    }
    const own = this.#uploaded.get(version);
    if (checksum !== undefined && own !== undefined && own.pin.checksum !== checksum) {
      return `version ${version} with SHA-256 ${checksum.slice(0, 12)}…, not the one this ` +
        `trainer uploaded (${own.pin.checksum.slice(0, 12)}…)`;
    }
    return null;
  }

  async #pumpLoop(): Promise<void> {
    while (!this.#closed) {
      let r: ReceivedTrajectory<NatsResult> | null;
      try {
        r = await this.#consumer.next({ expiresMs: 2000 });
      } catch (e) {
        if (this.#closed) return;
        this.#log(`rollout: NATS: reading results failed (${errorOf(e).message}); retrying`);
        await new Promise((res) => setTimeout(res, 1000));
        continue;
      }
      if (r === null) {
        await this.#checkLost();
        await this.#warnIfWaiting();
        continue;
      }
      const t = r.trajectory;
      const p = this.#settle(t.jobId);
      if (p === undefined) {
        // a result nobody awaits: a dead trainer's job, or a slot that closed
        await r.ack().catch(() => {});
        continue;
      }
      this.#lastProgress = Date.now();
      try {
        const payload = t.payload;
        const foreign = payload?.kind === "error"
          ? null
          : this.#foreignWeights(t.policyVersion, payload?.checksum);
        if (foreign !== null) {
          await r.ack().catch(() => {});
          if (payload?.kind === "object") await this.#rollouts.delete(payload.name).catch(() => {});
          const tail = `worker ${t.workerId} says job ${p.job.id} ran under weights ${foreign}`;
          if (p.requeued >= this.run.queue.maxDeliver) {
            throw new Error(
              `NATS rollout executor ${p.slot}: ${tail}; ${p.requeued + 1} such results for ` +
                `this job: another client is writing weights to ${this.url}; give the server ` +
                `credentials (README, NATS security) or use a server of your own`,
            );
          }
          p.requeued++;
          this.#log(
            `rollout: NATS: ignored a result: ${tail} (another client's upload?); job queued ` +
              `again (${p.requeued}/${this.run.queue.maxDeliver})`,
          );
          this.#guardWeights();
          await this.#enqueue(p);
          continue;
        }
        const rollout = await this.#decode(payload, t.workerId, p);
        await r.ack().catch(() => {});
        p.resolve({ rollout, policyVersion: t.policyVersion });
      } catch (e) {
        await r.ack().catch(() => {});
        p.reject(errorOf(e));
      }
    }
  }

  /**
   * Queues again the jobs that left the work queue without a result, so that the run never
   * waits for a job nobody has: a worker drops (terminates) a job whose run record it cannot
   * find (another client deleted it, or a new trainer took over the server), and any client of
   * the server can take a job and acknowledge it. Called when no result came for a while; a
   * job missing from the queue at one call and still without a result at the next is lost (a
   * worker publishes the result before it acknowledges the job, and the pump took every result
   * published in between). Up to `maxDeliver` times, then the job fails naming why.
   */
  async #checkLost(): Promise<void> {
    for (const [id, p] of [...this.#pending]) {
      if (this.#closed) return;
      if (p.seq < 0 || this.#pending.get(id) !== p) continue;
      if (!p.gone) {
        try {
          p.gone = await this.#jsm.streams.getMessage(this.#queue.stream, { seq: p.seq }) === null;
        } catch { /* asked again at the next call */ }
        continue;
      }
      this.#settle(id);
      const tail = `job ${p.job.id} (${id}) left the work queue without a result`;
      if (p.lost >= this.run.queue.maxDeliver) {
        p.reject(
          new Error(
            `NATS rollout executor ${p.slot}: ${tail}, ${p.lost + 1} times: a worker dropped ` +
              `it (it found no run record ${runObjectName(this.run.incarnation)}: another ` +
              `client deleted it, or another trainer took over ${this.url}), or another ` +
              `client took it; see the workers' output`,
          ),
        );
        continue;
      }
      p.lost++;
      this.#log(
        `rollout: NATS: ${tail} (a worker dropped it, or another client took it); queued ` +
          `again (${p.lost}/${this.run.queue.maxDeliver})`,
      );
      try {
        await this.#enqueue(p);
      } catch (e) {
        p.reject(errorOf(e));
      }
    }
  }

  async #decode(payload: NatsResult, workerId: string, p: Pending): Promise<Rollout> {
    if (payload.kind === "inline") return decodeJson<Rollout>(payload.json);
    if (payload.kind === "object") {
      // not `getBlob`, which waits forever when the object is deleted while read: the pump
      // would stop and the run with it; deleted or replaced, the rollout is gone
      const bytes = await readObject(this.#rollouts, payload.name).then(
        (r) => r?.bytes ?? null,
        (e) => {
          if (e instanceof ObjectChangedError) return null;
          throw e;
        },
      );
      if (bytes === null) {
        throw new Error(
          `NATS rollout executor ${p.slot}: the rollout of job ${p.job.id} (object ` +
            `${payload.name} in ${this.run.rolloutsBucket}) is gone`,
        );
      }
      await this.#rollouts.delete(payload.name).catch(() => {});
      return decodeJson<Rollout>(new TextDecoder().decode(bytes));
    }
    const err = new Error(
      `remote rollout worker ${workerId} (${p.slot}, job ${p.job.id}): ${payload.message}`,
    );
    err.name = payload.name;
    throw err;
  }

  async #warnIfWaiting(): Promise<void> {
    if (this.#pending.size === 0 || Date.now() - this.#lastProgress < this.#waitWarnMs) return;
    this.#lastProgress = Date.now();
    let depth = "";
    try {
      const d = await this.#queue.depth();
      depth = ` (queue: ${d.pending} waiting, ${d.inFlight} taken)`;
    } catch { /* reported below without the depth */ }
    this.#log(
      `rollout: ${this.#pending.size} job(s) waiting for a remote worker for ` +
        `${Math.round(this.#waitWarnMs / 1000)} s${depth}; start one with ` +
        `deno task worker --nats ${this.url}`,
    );
  }
}

/** One slot (see the module doc). */
class NatsExecutor implements RolloutExecutor {
  readonly name: string;
  readonly #hub: NatsHub;
  #version = -1;
  #closed = false;

  constructor(name: string, hub: NatsHub) {
    this.name = name;
    this.#hub = hub;
    hub.attach();
  }

  get version(): number {
    return this.#version;
  }

  async sync(snapshot: WeightSnapshot): Promise<void> {
    if (this.#closed) throw new Error(`NATS rollout executor ${this.name} is closed`);
    await this.#hub.put(snapshot);
    this.#version = Math.max(this.#version, snapshot.version);
  }

  run(job: RolloutJob): Promise<{ rollout: Rollout; policyVersion: number }> {
    if (this.#closed) {
      return Promise.reject(new Error(`NATS rollout executor ${this.name} is closed`));
    }
    return this.#hub.runJob(this.name, job);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#hub.detach(this.name);
  }
}

/**
 * Starts `count` rollout executors that run jobs on remote workers through the NATS server
 * `config.rollout.nats` (see the module doc). Start workers with
 * `deno task worker --nats <url>`, before or after.
 *
 * @param config The resolved config (published to the workers).
 * @param count Executors (jobs in flight at once), at least 1.
 * @param options The run's id, a log, queue settings.
 * @returns The executors `nats0`, `nats1`, ...; closing the last one closes the connection.
 *
 * @example Usage
 * ```ts
 * import { startNatsExecutors } from "./nats_executor.ts";
 * import assert from "node:assert/strict";
 * // with a server and `config.rollout.nats` set:
 * //   const executors = await startNatsExecutors(config, 2, { runId: "grpo-1", log: console.log });
 * //   await executors[0].sync(await snapshot(model.params, 0));
 * //   const { rollout, policyVersion } = await executors[0].run(job);
 * assert.equal(startNatsExecutors.length, 3);
 * ```
 */
export async function startNatsExecutors(
  config: Config,
  count: number,
  options: NatsExecutorOptions,
): Promise<RolloutExecutor[]> {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`startNatsExecutors: count must be an integer >= 1, got ${count}`);
  }
  const hub = await NatsHub.open(config, options);
  (options.log ?? (() => {}))(
    `rollout: NATS ${hub.url}, run ${hub.run.runId} (trainer ${hub.run.incarnation}), ` +
      `${count} job${count > 1 ? "s" : ""} in flight at most; start workers with ` +
      `deno task worker --nats ${hub.url}`,
  );
  return Array.from({ length: count }, (_, i) => new NatsExecutor(`nats${i}`, hub));
}
