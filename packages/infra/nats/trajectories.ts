/**
 * The trajectory stream: rollout workers publish finished trajectories, the trainer consumes
 * them exactly once.
 *
 * Design decisions:
 * - **Two layers of deduplication by trajectory id.** A job can run twice (its worker died after
 *   publishing but before acknowledging), so the same trajectory can be published twice. The
 *   publisher sends the id as `Nats-Msg-Id`, and JetStream drops a repeat inside the stream's
 *   duplicate window; a repeat after the window (a slow redelivery) is dropped by the
 *   {@link TrajectoryConsumer}, which remembers the ids it has delivered (and can save and
 *   restore them with a checkpoint). Trajectory ids must therefore be deterministic per job and
 *   sample: `${jobId}/${sampleIndex}`, never random.
 * - **A stale worker refuses to publish.** Every trajectory carries the `policyVersion` that
 *   generated it; {@link TrajectoryPublisher.publish} compares it with the latest published
 *   weight version and throws a {@link StaleWeightsError} when it is more than η behind, so a
 *   worker that missed weight updates syncs (and regenerates) instead of flooding the trainer
 *   with samples it will drop. This check is advisory: the version can advance between the
 *   check and the trainer reading the sample, so the trainer's `StalenessGate` remains the
 *   guarantee.
 * - Explicit acks on the trainer's durable consumer: a trajectory the trainer received but did
 *   not acknowledge (it crashed) is delivered again after `ackWaitMs`.
 * - Limits retention with a maximum age (default 24 h), so other consumers (loggers, replay) can
 *   read the same stream.
 *
 * @module
 */

import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy } from "@nats-io/jetstream";
import type { Consumer, JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { NatsConnection } from "./_connect.ts";
import { ensureConsumer, ensureStream } from "./_streams.ts";
import { checkInt, checkPositive, checkVersion } from "../_util.ts";

/**
 * One finished rollout with its provenance.
 *
 * @example Usage
 * ```ts
 * import type { Trajectory } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const t: Trajectory<{ text: string }> = {
 *   id: "p17/0", jobId: "p17", policyVersion: 3, workerId: "w1", payload: { text: "5" },
 * };
 * assert.equal(t.policyVersion, 3);
 * ```
 */
export interface Trajectory<T> {
  /** Deterministic id, e.g. `${jobId}/${sampleIndex}` (deduplication key). */
  readonly id: string;
  /** The prompt job it answers. */
  readonly jobId: string;
  /** Version of the weights that generated it. */
  readonly policyVersion: number;
  /** The worker that generated it. */
  readonly workerId: string;
  /** Tokens, log-probs, text, reward inputs: any JSON value. */
  readonly payload: T;
}

/**
 * Where the latest published weight version comes from; `WeightsStore` implements it.
 *
 * @example Usage
 * ```ts
 * import type { LatestVersionSource } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const fixed: LatestVersionSource = { latestVersion: () => Promise.resolve(4) };
 * assert.equal(await fixed.latestVersion(), 4);
 * ```
 */
export interface LatestVersionSource {
  /** The newest published version, or null when none is published yet. */
  latestVersion(): Promise<number | null>;
}

/**
 * Thrown by {@link TrajectoryPublisher.publish} when the trajectory's weights are more than η
 * versions older than the latest published weights. Sync the weights, then regenerate.
 *
 * @example Usage
 * ```ts
 * import { StaleWeightsError } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const e = new StaleWeightsError("w1", "p1/0", 2, 5, 1);
 * assert.match(e.message, /version 2 but the latest is 5, more than η = 1/);
 * ```
 */
export class StaleWeightsError extends Error {
  /** The worker. */
  readonly workerId: string;
  /** The refused trajectory. */
  readonly trajectoryId: string;
  /** Version of the weights that generated it. */
  readonly workerVersion: number;
  /** Latest published version. */
  readonly latestVersion: number;
  /** η. */
  readonly maxStaleness: number;

  /**
   * Builds the message from the versions and the fix.
   *
   * @param workerId The worker.
   * @param trajectoryId The refused trajectory.
   * @param workerVersion Its policy version.
   * @param latestVersion Latest published version.
   * @param maxStaleness η.
   */
  constructor(
    workerId: string,
    trajectoryId: string,
    workerVersion: number,
    latestVersion: number,
    maxStaleness: number,
  ) {
    super(
      `worker ${workerId} refused to publish trajectory ${trajectoryId}: it was generated with ` +
        `weights version ${workerVersion} but the latest is ${latestVersion}, more than ` +
        `η = ${maxStaleness} versions behind; sync the weights (WeightsStore.getLatest + ` +
        `applySnapshot) and regenerate it`,
    );
    this.name = "StaleWeightsError";
    this.workerId = workerId;
    this.trajectoryId = trajectoryId;
    this.workerVersion = workerVersion;
    this.latestVersion = latestVersion;
    this.maxStaleness = maxStaleness;
  }
}

/**
 * Stream options shared by {@link TrajectoryPublisher} and {@link TrajectoryConsumer}.
 *
 * @example Usage
 * ```ts
 * import type { TrajectoryStreamOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: TrajectoryStreamOptions = { duplicateWindowMs: 60_000 };
 * assert.equal(o.duplicateWindowMs, 60_000);
 * ```
 */
export interface TrajectoryStreamOptions {
  /** Stream name (default `"RLVR_TRAJECTORIES"`). */
  stream?: string;
  /** Subject (default `"rlvr.trajectories"`). */
  subject?: string;
  /** Window in which a repeated trajectory id is stored once (default 120 000 ms). */
  duplicateWindowMs?: number;
  /** How long trajectories are kept (default 24 h). */
  maxAgeMs?: number;
}

interface StreamNames {
  stream: string;
  subject: string;
}

async function openStream(
  nc: NatsConnection,
  options: TrajectoryStreamOptions,
): Promise<StreamNames> {
  const stream = options.stream ?? "RLVR_TRAJECTORIES";
  const subject = options.subject ?? "rlvr.trajectories";
  const dupMs = checkPositive(
    options.duplicateWindowMs ?? 120_000,
    "trajectory stream: options.duplicateWindowMs",
    "pass the window in which a repeated trajectory id is ignored (ms)",
  );
  const maxAgeMs = checkPositive(
    options.maxAgeMs ?? 24 * 3600_000,
    "trajectory stream: options.maxAgeMs",
    "pass how long trajectories are kept (ms)",
  );
  if (dupMs > maxAgeMs) {
    throw new RangeError(
      `trajectory stream: duplicateWindowMs (${dupMs}) must not exceed maxAgeMs (${maxAgeMs})`,
    );
  }
  await ensureStream(await jetstreamManager(nc), {
    name: stream,
    subjects: [subject],
    retention: RetentionPolicy.Limits,
    duplicate_window: nanos(dupMs),
    max_age: nanos(maxAgeMs),
  });
  return { stream, subject };
}

function checkTrajectory(t: Trajectory<unknown>): void {
  for (const key of ["id", "jobId", "workerId"] as const) {
    if (typeof t?.[key] !== "string" || t[key] === "") {
      throw new TypeError(
        `trajectory.${key} must be a non-empty string, got ${JSON.stringify(t?.[key])}; ` +
          `ids are deterministic per job and sample, e.g. \`\${jobId}/\${sampleIndex}\``,
      );
    }
  }
  checkVersion(t.policyVersion, "trajectory.policyVersion");
}

/**
 * Options of {@link TrajectoryPublisher.open}.
 *
 * @example Usage
 * ```ts
 * import type { TrajectoryPublisherOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: TrajectoryPublisherOptions = {
 *   maxStaleness: 1,
 *   versions: { latestVersion: () => Promise.resolve(0) },
 * };
 * assert.equal(o.maxStaleness, 1);
 * ```
 */
export interface TrajectoryPublisherOptions extends TrajectoryStreamOptions {
  /** η: refuse trajectories more than this many versions behind the latest weights. */
  maxStaleness: number;
  /** Latest published weight version (a `WeightsStore`). */
  versions: LatestVersionSource;
}

/**
 * Publishes trajectories, refusing stale ones (see the module docs).
 *
 * @example Usage
 * ```ts
 * import {
 *   findNatsServer, StaleWeightsError, startNatsServer, TrajectoryPublisher,
 * } from "@rlvr/infra";
 * import { connect } from "@nats-io/transport-node";
 * import assert from "node:assert/strict";
 * if (findNatsServer() !== null) {
 *   await using server = await startNatsServer();
 *   await using nc = await connect({ servers: server.url });
 *   const pub = await TrajectoryPublisher.open<string>(nc, {
 *     maxStaleness: 1,
 *     versions: { latestVersion: () => Promise.resolve(3) },
 *   });
 *   const t = { id: "p1/0", jobId: "p1", workerId: "w1", payload: "5" };
 *   assert.equal((await pub.publish({ ...t, policyVersion: 2 })).duplicate, false);
 *   await assert.rejects(pub.publish({ ...t, policyVersion: 1 }), StaleWeightsError);
 * }
 * ```
 */
export class TrajectoryPublisher<T> {
  /** Stream name. */
  readonly stream: string;
  /** Subject. */
  readonly subject: string;
  /** η. */
  readonly maxStaleness: number;
  #js: JetStreamClient;
  #versions: LatestVersionSource;

  private constructor(
    js: JetStreamClient,
    names: StreamNames,
    maxStaleness: number,
    versions: LatestVersionSource,
  ) {
    this.#js = js;
    this.stream = names.stream;
    this.subject = names.subject;
    this.maxStaleness = maxStaleness;
    this.#versions = versions;
  }

  /**
   * Creates (or attaches to) the trajectory stream.
   *
   * @param nc A NATS connection.
   * @param options η, the version source and stream options.
   * @returns The publisher.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, TrajectoryPublisher } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const pub = await TrajectoryPublisher.open(nc, {
   *     maxStaleness: 0,
   *     versions: { latestVersion: () => Promise.resolve(null) },
   *   });
   *   assert.equal(pub.stream, "RLVR_TRAJECTORIES");
   * }
   * ```
   */
  static async open<T>(
    nc: NatsConnection,
    options: TrajectoryPublisherOptions,
  ): Promise<TrajectoryPublisher<T>> {
    const eta = checkInt(
      options.maxStaleness,
      "TrajectoryPublisher: options.maxStaleness",
      0,
      "use the trainer's η (0 sync, 1 one-step-off, k async)",
    );
    if (typeof options.versions?.latestVersion !== "function") {
      throw new TypeError(
        "TrajectoryPublisher: options.versions must have latestVersion() (pass the WeightsStore)",
      );
    }
    const names = await openStream(nc, options);
    return new TrajectoryPublisher<T>(jetstream(nc), names, eta, options.versions);
  }

  /**
   * Publishes one trajectory unless its weights are too stale.
   *
   * @param trajectory The trajectory (`id` deduplicates, `policyVersion` is checked).
   * @returns Whether JetStream saw the id as a duplicate within its window.
   * @throws {StaleWeightsError} when `latest - policyVersion > η` (nothing is published).
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, TrajectoryPublisher } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const pub = await TrajectoryPublisher.open<number>(nc, {
   *     maxStaleness: 0,
   *     versions: { latestVersion: () => Promise.resolve(0) },
   *   });
   *   const t = { id: "j/0", jobId: "j", policyVersion: 0, workerId: "w", payload: 1 };
   *   assert.equal((await pub.publish(t)).duplicate, false);
   *   assert.equal((await pub.publish(t)).duplicate, true); // same id: stored once
   * }
   * ```
   */
  async publish(trajectory: Trajectory<T>): Promise<{ duplicate: boolean; seq: number }> {
    checkTrajectory(trajectory);
    const latest = await this.#versions.latestVersion();
    if (latest !== null && latest - trajectory.policyVersion > this.maxStaleness) {
      throw new StaleWeightsError(
        trajectory.workerId,
        trajectory.id,
        trajectory.policyVersion,
        latest,
        this.maxStaleness,
      );
    }
    const data = JSON.stringify(trajectory);
    const ack = await this.#js.publish(this.subject, data, { msgID: trajectory.id });
    return { duplicate: ack.duplicate, seq: ack.seq };
  }
}

/**
 * A trajectory as the trainer received it.
 *
 * @example Usage
 * ```ts
 * import type { ReceivedTrajectory } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const use = (r: ReceivedTrajectory<string>) => r.trajectory.payload;
 * assert.equal(typeof use, "function");
 * ```
 */
export interface ReceivedTrajectory<T> {
  /** The trajectory. */
  readonly trajectory: Trajectory<T>;
  /** Confirms it was taken (the server confirms before this resolves). */
  ack(): Promise<void>;
  /** Gives it back for redelivery; its id is forgotten so the redelivery is not a duplicate. */
  nak(delayMs?: number): void;
}

/**
 * Options of {@link TrajectoryConsumer.open}.
 *
 * @example Usage
 * ```ts
 * import type { TrajectoryConsumerOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: TrajectoryConsumerOptions = { consumer: "trainer", seenIds: ["p1/0"] };
 * assert.deepEqual([...o.seenIds!], ["p1/0"]);
 * ```
 */
export interface TrajectoryConsumerOptions extends TrajectoryStreamOptions {
  /** Durable consumer name (default `"trainer"`). */
  consumer?: string;
  /** How long the trainer may hold a trajectory unacknowledged (default 60 000 ms). */
  ackWaitMs?: number;
  /** Ids already consumed, from a checkpoint (see {@link TrajectoryConsumer.seenIds}). */
  seenIds?: Iterable<string>;
}

/**
 * The trainer's side of the trajectory stream: delivers each trajectory id once.
 *
 * @example Usage
 * ```ts
 * import {
 *   findNatsServer, startNatsServer, TrajectoryConsumer, TrajectoryPublisher,
 * } from "@rlvr/infra";
 * import { connect } from "@nats-io/transport-node";
 * import assert from "node:assert/strict";
 * if (findNatsServer() !== null) {
 *   await using server = await startNatsServer();
 *   await using nc = await connect({ servers: server.url });
 *   const versions = { latestVersion: () => Promise.resolve(0) };
 *   const pub = await TrajectoryPublisher.open<string>(nc, { maxStaleness: 0, versions });
 *   const sub = await TrajectoryConsumer.open<string>(nc);
 *   await pub.publish({ id: "p/0", jobId: "p", policyVersion: 0, workerId: "w", payload: "ok" });
 *   const got = await sub.next();
 *   assert.equal(got?.trajectory.payload, "ok");
 *   await got!.ack();
 * }
 * ```
 */
export class TrajectoryConsumer<T> {
  /** Stream name. */
  readonly stream: string;
  /** Durable consumer name. */
  readonly consumer: string;
  #js: JetStreamClient;
  #consumer: Consumer | null = null;
  #seen: Set<string>;
  #duplicates = 0;

  private constructor(js: JetStreamClient, stream: string, consumer: string, seen: Set<string>) {
    this.#js = js;
    this.stream = stream;
    this.consumer = consumer;
    this.#seen = seen;
  }

  /**
   * Creates (or attaches to) the stream and the trainer's durable consumer.
   *
   * @param nc A NATS connection.
   * @param options Consumer name, ack deadline, seen ids from a checkpoint, stream options.
   * @returns The consumer.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, TrajectoryConsumer } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const sub = await TrajectoryConsumer.open(nc, { seenIds: ["a/0"] });
   *   assert.deepEqual(sub.seenIds(), ["a/0"]);
   * }
   * ```
   */
  static async open<T>(
    nc: NatsConnection,
    options: TrajectoryConsumerOptions = {},
  ): Promise<TrajectoryConsumer<T>> {
    const { stream } = await openStream(nc, options);
    const consumer = options.consumer ?? "trainer";
    const ackWaitMs = checkPositive(
      options.ackWaitMs ?? 60_000,
      "TrajectoryConsumer: options.ackWaitMs",
      "pass how long the trainer may hold a trajectory before it is redelivered (ms)",
    );
    await ensureConsumer(await jetstreamManager(nc), stream, {
      durable_name: consumer,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
    });
    return new TrajectoryConsumer<T>(jetstream(nc), stream, consumer, new Set(options.seenIds));
  }

  /**
   * Duplicates dropped so far (ids already delivered).
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, TrajectoryConsumer } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   assert.equal((await TrajectoryConsumer.open(nc)).duplicates, 0);
   * }
   * ```
   */
  get duplicates(): number {
    return this.#duplicates;
  }

  /**
   * Ids delivered so far, for a checkpoint (restore with `options.seenIds`).
   *
   * @returns The ids, in delivery order.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, TrajectoryConsumer } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   assert.deepEqual((await TrajectoryConsumer.open(nc)).seenIds(), []);
   * }
   * ```
   */
  seenIds(): string[] {
    return [...this.#seen];
  }

  /**
   * The next trajectory whose id was not delivered before; duplicates are acknowledged and
   * counted on the way.
   *
   * @param options How long to wait (ms, at least 1000; default 5000).
   * @returns The trajectory, or null when none came in time.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, TrajectoryConsumer } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const sub = await TrajectoryConsumer.open(nc);
   *   assert.equal(await sub.next({ expiresMs: 1000 }), null);
   * }
   * ```
   */
  async next(options: { expiresMs?: number } = {}): Promise<ReceivedTrajectory<T> | null> {
    const expires = options.expiresMs ?? 5000;
    if (!Number.isFinite(expires) || expires < 1000) {
      throw new RangeError(
        `TrajectoryConsumer.next: expiresMs must be >= 1000 (JetStream's minimum pull ` +
          `expiry), got ${expires}`,
      );
    }
    this.#consumer ??= await this.#js.consumers.get(this.stream, this.consumer);
    const deadline = Date.now() + expires;
    for (;;) {
      const left = Math.max(1000, deadline - Date.now());
      const msg: JsMsg | null = await this.#consumer.next({ expires: left });
      if (msg === null) return null;
      let t: Trajectory<T>;
      try {
        t = msg.json<Trajectory<T>>();
        checkTrajectory(t);
      } catch (e) {
        msg.term(); // no reason: nats-server 2.9 ignores a "+TERM reason" ack
        throw new Error(
          `TrajectoryConsumer: message ${msg.seq} is not a trajectory (${(e as Error).message}); ` +
            `it was terminated; publish with TrajectoryPublisher`,
        );
      }
      if (this.#seen.has(t.id)) {
        this.#duplicates++;
        await msg.ackAck(); // done with it: a duplicate must not come back either
        if (Date.now() >= deadline) return null;
        continue;
      }
      this.#seen.add(t.id);
      const seen = this.#seen;
      return {
        trajectory: t,
        ack: async () => {
          if (!await msg.ackAck()) {
            throw new Error(`TrajectoryConsumer: the ack of ${t.id} was not confirmed`);
          }
        },
        nak: (delayMs) => {
          // handed back: its redelivery is the same trajectory, not a duplicate
          seen.delete(t.id);
          msg.nak(delayMs);
        },
      };
    }
  }
}
