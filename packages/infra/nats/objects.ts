/**
 * Reading an object of a NATS JetStream object store without the risk of waiting forever.
 *
 * Why: `ObjectStore.get`/`getBlob` of `@nats-io/obj` reads the object's metadata, then starts a
 * consumer on the chunks of that version of the object and waits until the last one arrives.
 * When another client deletes or replaces the object in between (a delete or a put purges the
 * old chunks), the chunks never come, and the read waits forever: nothing errors, the
 * consumer's idle heartbeats keep arriving. A rollout worker stuck there keeps its job's ack
 * deadline alive with heartbeats, so the job is never redelivered and the trainer waits for it
 * forever (seen when a trainer deleted another client's weights while a worker downloaded
 * them).
 *
 * Design decision: {@link readObject} reads the chunks itself, and when none has arrived for a
 * second it asks the store for the object's metadata: deleted or replaced (another `nuid`) fails
 * the read at once with an {@link ObjectChangedError} (the caller reads again, or treats the
 * object as gone); otherwise it keeps waiting, up to `stallMs` without a chunk, then fails with
 * an error naming the object.
 *
 * @module
 */

/**
 * Thrown by {@link readObject} when the object was deleted or replaced while it was read.
 *
 * @example Usage
 * ```ts
 * import { ObjectChangedError } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const e = new ObjectChangedError("weights", "v3", "deleted");
 * assert.match(e.message, /weights\/v3 was deleted while it was read/);
 * ```
 */
export class ObjectChangedError extends Error {
  /** The bucket. */
  readonly bucket: string;
  /** The object's name. */
  readonly object: string;
  /** What happened to it. */
  readonly change: "deleted" | "replaced";
  /**
   * An object that changed under a read.
   *
   * @param bucket The bucket.
   * @param object The object's name.
   * @param change What happened to it.
   */
  constructor(bucket: string, object: string, change: "deleted" | "replaced") {
    super(
      `object store ${bucket}: ${bucket}/${object} was ${change} while it was read (another ` +
        `client wrote it); read it again`,
    );
    this.name = "ObjectChangedError";
    this.bucket = bucket;
    this.object = object;
    this.change = change;
  }
}

/**
 * An object's metadata, as {@link readObject} uses it (an `ObjectInfo` of `@nats-io/obj` is
 * one).
 *
 * @example Usage
 * ```ts
 * import type { ObjectMeta } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const m: ObjectMeta = { bucket: "w", nuid: "abc", size: 3, chunks: 1, deleted: false };
 * assert.equal(m.size, 3);
 * ```
 */
export interface ObjectMeta {
  /** The bucket. */
  bucket: string;
  /** The id of this version of the object (a put of the same name gets another). */
  nuid: string;
  /** Its size in bytes. */
  size: number;
  /** Its chunk count. */
  chunks: number;
  /** Whether it is deleted. */
  deleted: boolean;
}

/**
 * What {@link readObject} needs of an object store: an `ObjectStore` of `@nats-io/obj` (typed
 * here by shape: the public API does not name the npm client's types).
 *
 * @example Usage
 * ```ts
 * import type { ObjectSource } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const none: ObjectSource = { get: () => Promise.resolve(null), info: () => Promise.resolve(null) };
 * assert.equal(await none.get("x"), null);
 * ```
 */
export interface ObjectSource {
  /** Starts reading an object: its metadata, its chunks, and the read's outcome. */
  get(name: string): Promise<
    { info: ObjectMeta; data: ReadableStream<Uint8Array>; error: Promise<Error | null> } | null
  >;
  /** The object's current metadata, or null. */
  info(name: string): Promise<ObjectMeta | null>;
}

/**
 * Options of {@link readObject}.
 *
 * @example Usage
 * ```ts
 * import type { ReadObjectOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: ReadObjectOptions = { stallMs: 10_000 };
 * assert.equal(o.stallMs, 10_000);
 * ```
 */
export interface ReadObjectOptions {
  /** Longest wait for the next chunk before the read fails (default 30 000 ms). */
  stallMs?: number;
  /** How long without a chunk before the object's metadata is checked, and between checks
   * (default 1000 ms). */
  checkMs?: number;
}

/**
 * Reads a whole object (see the module doc): its metadata and bytes, or null when there is no
 * such object (or it is deleted).
 *
 * @param os The object store (an `ObjectStore` of `@nats-io/obj`).
 * @param name The object's name.
 * @param options When a read that receives nothing gives up.
 * @returns The object's metadata (the version read) and bytes, or null.
 * @throws {ObjectChangedError} when the object was deleted or replaced while it was read.
 * @throws {Error} when no chunk came for `options.stallMs`, or the chunks do not match the
 *   object's digest (the store's error).
 *
 * @example Usage
 * ```ts
 * import { findNatsServer, readObject, startNatsServer } from "@rlvr/infra";
 * import { Objm } from "@nats-io/obj";
 * import { connect } from "@nats-io/transport-node";
 * import assert from "node:assert/strict";
 * if (findNatsServer() !== null) {
 *   await using server = await startNatsServer();
 *   await using nc = await connect({ servers: server.url });
 *   const os = await new Objm(nc).create("docs");
 *   await os.putBlob({ name: "a" }, new Uint8Array([1, 2, 3]));
 *   assert.deepEqual((await readObject(os, "a"))?.bytes, new Uint8Array([1, 2, 3]));
 *   assert.equal(await readObject(os, "missing"), null);
 * }
 * ```
 */
export async function readObject(
  os: ObjectSource,
  name: string,
  options: ReadObjectOptions = {},
): Promise<{ info: ObjectMeta; bytes: Uint8Array } | null> {
  const stallMs = options.stallMs ?? 30_000;
  const checkMs = Math.min(options.checkMs ?? 1000, stallMs);
  const r = await os.get(name);
  if (r === null) return null;
  const { info } = r;
  r.error.catch(() => {}); // also rejects the stream's reads, which throw below
  const reader = r.data.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  let last = Date.now();
  let read = reader.read();
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const next = await Promise.race([
        read,
        new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), checkMs)),
      ]).finally(() => clearTimeout(timer));
      if (next !== null) {
        if (next.done) break;
        parts.push(next.value);
        size += next.value.length;
        last = Date.now();
        read = reader.read();
        continue;
      }
      // nothing for a while: is the object still the one being read?
      const now = await os.info(name).catch(() => undefined);
      if (now === null || now?.deleted === true) {
        throw new ObjectChangedError(info.bucket, name, "deleted");
      }
      if (now !== undefined && now.nuid !== info.nuid) {
        throw new ObjectChangedError(info.bucket, name, "replaced");
      }
      if (Date.now() - last >= stallMs) {
        throw new Error(
          `object store ${info.bucket}: reading ${name} (${info.size} bytes) received nothing for ` +
            `${stallMs} ms after ${size} bytes; the server may be overloaded or the object's ` +
            `chunks lost`,
        );
      }
    }
  } catch (e) {
    read.catch(() => {});
    await reader.cancel().catch(() => {}); // stops the chunk consumer
    throw e;
  }
  const failed = await r.error; // settled once the last chunk was checked
  if (failed) throw failed;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { info, bytes };
}
