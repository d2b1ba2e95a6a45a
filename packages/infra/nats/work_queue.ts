/**
 * A durable work queue of prompts on NATS JetStream: the trainer enqueues prompt jobs, rollout
 * workers anywhere take them one at a time and acknowledge them when their trajectories are
 * published.
 *
 * Design decisions:
 * - One stream with **WorkQueue retention** (a message is deleted once acknowledged) and one
 *   shared durable **pull** consumer with **explicit acks**: every worker pulls from the same
 *   consumer, so JetStream hands each job to one worker at a time, and a job a worker took but
 *   did not acknowledge within `ackWaitMs` (the worker crashed, was killed, or hangs) is
 *   delivered again to whichever worker asks next. Nothing is lost when a worker dies.
 * - Every job has an **id**, sent as the `Nats-Msg-Id` header: enqueueing the same id twice
 *   within the stream's duplicate window stores it once (a trainer that retries after a timeout,
 *   or re-enqueues after a restart, does not double the work). The id also names the
 *   trajectories the job produces, which is what lets the trainer drop duplicates when a job
 *   ran twice (see `trajectories.ts`).
 * - Long rollouts call {@link ReceivedJob.inProgress} to extend the ack deadline rather than
 *   running with a huge `ackWaitMs`, which would delay the redelivery of a crashed worker's job.
 * - `maxDeliver` bounds how often a job is tried (a prompt that crashes every worker would
 *   otherwise loop forever); it defaults to 10.
 * - Jobs are JSON: `{ id, prompt }`.
 *
 * @module
 */

import {
  AckPolicy,
  jetstream,
  JetStreamApiError,
  jetstreamManager,
  RetentionPolicy,
} from "@nats-io/jetstream";
import type { Consumer, JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { NatsConnection } from "./_connect.ts";
import { ensureConsumer, ensureStream } from "./_streams.ts";
import { checkInt, checkPositive } from "../_util.ts";

/**
 * One prompt to roll out.
 *
 * @example Usage
 * ```ts
 * import type { PromptJob } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const job: PromptJob<{ question: string }> = { id: "epoch0/17", prompt: { question: "2+3" } };
 * assert.equal(job.id, "epoch0/17");
 * ```
 */
export interface PromptJob<P> {
  /** Unique job id (e.g. `epoch/index`); deduplicates enqueues and names the trajectories. */
  readonly id: string;
  /** The prompt (any JSON value). */
  readonly prompt: P;
}

/**
 * A job as a worker received it, with its acknowledgement controls.
 *
 * @example Usage
 * ```ts
 * import type { ReceivedJob } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const done = (job: ReceivedJob<string>) => job.deliveryCount;
 * assert.equal(typeof done, "function");
 * ```
 */
export interface ReceivedJob<P> extends PromptJob<P> {
  /** 1 on the first delivery, 2 after one redelivery, ... */
  readonly deliveryCount: number;
  /** Marks the job done; the server confirms before this resolves, then deletes it. */
  ack(): Promise<void>;
  /** Gives the job back for redelivery (after `delayMs`, default at once). */
  nak(delayMs?: number): void;
  /** Resets the ack deadline: the worker is still on it. */
  inProgress(): void;
  /**
   * Gives up on the job for good (it is not delivered again). A `reason` needs nats-server
   * 2.10 or newer; older servers ignore a termination that carries one.
   */
  term(reason?: string): void;
}

/**
 * Depth of a {@link WorkQueue}.
 *
 * @example Usage
 * ```ts
 * import type { WorkQueueDepth } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const d: WorkQueueDepth = { pending: 3, inFlight: 1, redelivered: 0 };
 * assert.equal(d.pending + d.inFlight, 4);
 * ```
 */
export interface WorkQueueDepth {
  /** Jobs not yet delivered to any worker. */
  pending: number;
  /** Jobs delivered and not yet acknowledged. */
  inFlight: number;
  /** Of those in flight, jobs delivered more than once. */
  redelivered: number;
}

/**
 * Options of {@link WorkQueue.open}.
 *
 * @example Usage
 * ```ts
 * import type { WorkQueueOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: WorkQueueOptions = { ackWaitMs: 120_000, maxDeliver: 5 };
 * assert.equal(o.maxDeliver, 5);
 * ```
 */
export interface WorkQueueOptions {
  /** Stream name (default `"RLVR_PROMPTS"`). */
  stream?: string;
  /** Subject the jobs are published on (default `"rlvr.prompts"`). */
  subject?: string;
  /** Durable consumer shared by the workers (default `"rollout-workers"`). */
  consumer?: string;
  /** How long a worker may hold a job without ack or `inProgress()` (default 60 000 ms). */
  ackWaitMs?: number;
  /** Most deliveries of one job (default 10; -1 for unlimited). */
  maxDeliver?: number;
  /** Window in which a repeated job id is stored once (default 120 000 ms). */
  duplicateWindowMs?: number;
}

function jobOf<P>(msg: JsMsg, subject: string): ReceivedJob<P> {
  let body: { id?: unknown; prompt?: unknown };
  try {
    body = msg.json();
  } catch (e) {
    msg.term(); // no reason: nats-server 2.9 ignores a "+TERM reason" ack
    throw new Error(
      `WorkQueue: message ${msg.seq} on ${subject} is not JSON (${(e as Error).message}); it ` +
        `was terminated; enqueue jobs with WorkQueue.enqueue`,
    );
  }
  if (typeof body?.id !== "string" || !("prompt" in body)) {
    msg.term();
    throw new Error(
      `WorkQueue: message ${msg.seq} on ${subject} is not a job ({ id: string, prompt }); it ` +
        `was terminated; enqueue jobs with WorkQueue.enqueue`,
    );
  }
  return {
    id: body.id,
    prompt: body.prompt as P,
    deliveryCount: msg.info.deliveryCount,
    ack: async () => {
      // ackAck waits for the server's confirmation: once it resolves the job cannot come back.
      if (!await msg.ackAck()) {
        throw new Error(`WorkQueue: the ack of job ${body.id} was not confirmed by the server`);
      }
    },
    nak: (delayMs) => msg.nak(delayMs),
    inProgress: () => msg.working(),
    term: (reason) => msg.term(reason),
  };
}

/**
 * The prompt work queue (see the module docs).
 *
 * @example Usage
 * ```ts
 * import { findNatsServer, startNatsServer, WorkQueue } from "@rlvr/infra";
 * import { connect } from "@nats-io/transport-node";
 * import assert from "node:assert/strict";
 * if (findNatsServer() !== null) {
 *   await using server = await startNatsServer();
 *   await using nc = await connect({ servers: server.url });
 *   const queue = await WorkQueue.open<string>(nc);
 *   await queue.enqueue({ id: "p1", prompt: "What is 2+3?" });
 *   const job = await queue.next();
 *   assert.equal(job?.prompt, "What is 2+3?");
 *   await job!.ack();
 *   assert.deepEqual(await queue.depth(), { pending: 0, inFlight: 0, redelivered: 0 });
 * }
 * ```
 */
export class WorkQueue<P> {
  /** Stream name. */
  readonly stream: string;
  /** Subject of the jobs. */
  readonly subject: string;
  /** Durable consumer name. */
  readonly consumer: string;
  /** Ack deadline in ms. */
  readonly ackWaitMs: number;
  #js: JetStreamClient;
  #jsm: JetStreamManager;
  #consumer: Consumer | null = null;

  private constructor(
    js: JetStreamClient,
    jsm: JetStreamManager,
    stream: string,
    subject: string,
    consumer: string,
    ackWaitMs: number,
  ) {
    this.#js = js;
    this.#jsm = jsm;
    this.stream = stream;
    this.subject = subject;
    this.consumer = consumer;
    this.ackWaitMs = ackWaitMs;
  }

  /**
   * Creates (or attaches to) the stream and the shared durable consumer. Trainer and workers
   * call it with the same options (the last `open` wins: a different `ackWaitMs` or
   * `maxDeliver` updates the shared consumer).
   *
   * @param nc A NATS connection.
   * @param options Names, ack deadline, delivery limit, duplicate window.
   * @returns The queue.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, WorkQueue } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const a = await WorkQueue.open(nc, { ackWaitMs: 5000 });
   *   const b = await WorkQueue.open(nc, { ackWaitMs: 5000 }); // idempotent
   *   assert.equal(a.stream, b.stream);
   * }
   * ```
   */
  static async open<P>(nc: NatsConnection, options: WorkQueueOptions = {}): Promise<WorkQueue<P>> {
    const stream = options.stream ?? "RLVR_PROMPTS";
    const subject = options.subject ?? "rlvr.prompts";
    const consumer = options.consumer ?? "rollout-workers";
    const ackWaitMs = checkPositive(
      options.ackWaitMs ?? 60_000,
      "WorkQueue: options.ackWaitMs",
      "pass how long a worker may hold a job before it is redelivered (ms)",
    );
    const maxDeliver = options.maxDeliver ?? 10;
    if (maxDeliver !== -1) {
      checkInt(maxDeliver, "WorkQueue: options.maxDeliver", 1, "or -1 for unlimited");
    }
    const dupMs = checkPositive(
      options.duplicateWindowMs ?? 120_000,
      "WorkQueue: options.duplicateWindowMs",
      "pass the window in which a repeated job id is ignored (ms)",
    );
    const jsm = await jetstreamManager(nc);
    await ensureStream(jsm, {
      name: stream,
      subjects: [subject],
      retention: RetentionPolicy.Workqueue,
      duplicate_window: nanos(dupMs),
    });
    await ensureConsumer(jsm, stream, {
      durable_name: consumer,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
      max_deliver: maxDeliver,
    });
    return new WorkQueue<P>(jetstream(nc), jsm, stream, subject, consumer, ackWaitMs);
  }

  /**
   * Attaches to an existing queue without creating or changing anything: the stream and the
   * shared consumer as the producer (the trainer) configured them, the ack wait read from the
   * server. For consumers that must not be able to change the queue's settings (a rollout
   * worker: a forged setting could make every job expire). Null while the stream or the
   * consumer does not exist yet.
   *
   * @param nc A NATS connection.
   * @param options Stream, subject and consumer names (defaults as in {@link WorkQueue.open}).
   * @returns The queue, or null.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, WorkQueue } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   assert.equal(await WorkQueue.attach(nc), null); // nothing created yet
   *   await WorkQueue.open(nc, { ackWaitMs: 7000 });
   *   assert.equal((await WorkQueue.attach(nc))!.ackWaitMs, 7000);
   * }
   * ```
   */
  static async attach<P>(
    nc: NatsConnection,
    options: Pick<WorkQueueOptions, "stream" | "subject" | "consumer"> = {},
  ): Promise<WorkQueue<P> | null> {
    const stream = options.stream ?? "RLVR_PROMPTS";
    const subject = options.subject ?? "rlvr.prompts";
    const consumer = options.consumer ?? "rollout-workers";
    const jsm = await jetstreamManager(nc);
    let info;
    try {
      info = await jsm.consumers.info(stream, consumer);
    } catch (e) {
      // 10059: stream not found; 10014: consumer not found
      if (e instanceof JetStreamApiError && (e.code === 10059 || e.code === 10014)) return null;
      throw e;
    }
    // ack_wait is in ns; JetStream fills in its 30 s default when the creator gave none
    const ackWaitMs = Math.round((info.config.ack_wait ?? 30e9) / 1e6);
    return new WorkQueue<P>(jetstream(nc), jsm, stream, subject, consumer, ackWaitMs);
  }

  /**
   * Enqueues one job. A job id seen within the duplicate window is not stored again.
   *
   * @param job Id and prompt.
   * @returns Whether the server saw it as a duplicate, and its stream sequence.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, WorkQueue } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const queue = await WorkQueue.open<number>(nc);
   *   assert.equal((await queue.enqueue({ id: "a", prompt: 1 })).duplicate, false);
   *   assert.equal((await queue.enqueue({ id: "a", prompt: 1 })).duplicate, true);
   *   assert.equal((await queue.depth()).pending, 1);
   * }
   * ```
   */
  async enqueue(job: PromptJob<P>): Promise<{ duplicate: boolean; seq: number }> {
    if (typeof job?.id !== "string" || job.id === "") {
      throw new TypeError(
        `WorkQueue.enqueue: job.id must be a non-empty string, got ${
          JSON.stringify(job?.id)
        }; give every prompt a stable id such as "epoch/index"`,
      );
    }
    const data = JSON.stringify({ id: job.id, prompt: job.prompt });
    if (data === undefined) throw new TypeError(`WorkQueue.enqueue: job ${job.id} is not JSON`);
    const ack = await this.#js.publish(this.subject, data, { msgID: job.id });
    return { duplicate: ack.duplicate, seq: ack.seq };
  }

  /**
   * Takes the next job, waiting up to `expiresMs` for one.
   *
   * @param options How long to wait (ms, at least 1000; default 5000).
   * @returns The job, or null when none came in time.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, WorkQueue } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const queue = await WorkQueue.open(nc);
   *   assert.equal(await queue.next({ expiresMs: 1000 }), null); // empty
   * }
   * ```
   */
  async next(options: { expiresMs?: number } = {}): Promise<ReceivedJob<P> | null> {
    const expires = options.expiresMs ?? 5000;
    if (!Number.isFinite(expires) || expires < 1000) {
      throw new RangeError(
        `WorkQueue.next: expiresMs must be >= 1000 (JetStream's minimum pull expiry), got ` +
          `${expires}`,
      );
    }
    this.#consumer ??= await this.#js.consumers.get(this.stream, this.consumer);
    const msg = await this.#consumer.next({ expires });
    return msg === null ? null : jobOf<P>(msg, this.subject);
  }

  /**
   * Jobs waiting, in flight and redelivered (the "queue depth" metric).
   *
   * @returns The counts, from the consumer's state on the server.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, WorkQueue } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const queue = await WorkQueue.open(nc);
   *   await queue.enqueue({ id: "x", prompt: null });
   *   await queue.next();
   *   assert.deepEqual(await queue.depth(), { pending: 0, inFlight: 1, redelivered: 0 });
   * }
   * ```
   */
  async depth(): Promise<WorkQueueDepth> {
    const info = await this.#jsm.consumers.info(this.stream, this.consumer);
    return {
      pending: info.num_pending,
      inFlight: info.num_ack_pending,
      redelivered: info.num_redelivered,
    };
  }
}
