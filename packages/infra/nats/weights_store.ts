/**
 * Policy weights in the NATS JetStream object store, one object per version.
 *
 * Design decisions:
 * - Objects are named `v<version>` and carry `rlvr-version` and `rlvr-sha256` metadata: the
 *   version and the SHA-256 of the snapshot bytes computed by the trainer before upload. A
 *   download is verified against that checksum ({@link verifySnapshot}) before it is returned,
 *   so a worker never loads corrupted weights: corruption is reported as a
 *   {@link WeightChecksumError}, not trained on.
 * - The object store keeps its own SHA-256 of each object and refuses to return a corrupted one
 *   (for example a damaged chunk in the stream); that refusal is turned into the same
 *   {@link WeightChecksumError}, with the digest the object store computed, so callers handle one
 *   error type. On upload the store's digest is compared with the trainer's checksum, so what was
 *   stored is what was hashed.
 * - Versions are strictly increasing: `put` refuses a version that is not above the latest one,
 *   so "latest" always means "newest weights" and a late upload cannot roll workers back.
 * - Old versions are deleted after each `put`, keeping the newest `keep` (default 4), so the
 *   store does not grow with the run; workers only ever need the latest.
 *
 * @module
 */

import { type ObjectStore, Objm } from "@nats-io/obj";
import type { NatsConnection } from "./_connect.ts";
import { verifySnapshot, WeightChecksumError, type WeightSnapshot } from "../weights.ts";
import { checkInt, checkVersion } from "../_util.ts";
import { ObjectChangedError, readObject } from "./objects.ts";

const NAME = /^v(0|[1-9][0-9]*)$/;

/** Object name of a version. */
function nameOf(version: number): string {
  return `v${version}`;
}

/** Hex of the object store's `SHA-256=<base64url>` digest, or null if it is not one. */
function digestHex(digest: string): string | null {
  if (!digest.startsWith("SHA-256=")) return null;
  const b64 = digest.slice(8).replaceAll("-", "+").replaceAll("_", "/");
  try {
    const bin = atob(b64);
    let hex = "";
    for (let i = 0; i < bin.length; i++) hex += bin.charCodeAt(i).toString(16).padStart(2, "0");
    return hex;
  } catch {
    return null;
  }
}

/**
 * Options of {@link WeightsStore.open}.
 *
 * @example Usage
 * ```ts
 * import type { WeightsStoreOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: WeightsStoreOptions = { bucket: "run-7-weights", keep: 2 };
 * assert.equal(o.keep, 2);
 * ```
 */
export interface WeightsStoreOptions {
  /** Object store bucket (default `"rlvr-weights"`). */
  bucket?: string;
  /** How many newest versions to keep after each `put` (default 4; at least 1). */
  keep?: number;
}

/**
 * Versioned weight snapshots in a NATS object store (see the module docs).
 *
 * @example Usage
 * ```ts
 * import { findNatsServer, snapshot, startNatsServer, WeightsStore } from "@rlvr/infra";
 * import { connect } from "@nats-io/transport-node";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * if (findNatsServer() !== null) {
 *   await using server = await startNatsServer();
 *   await using nc = await connect({ servers: server.url });
 *   const store = await WeightsStore.open(nc);
 *   await store.put(await snapshot({ w: tensor([1, 2]) }, 0));
 *   await store.put(await snapshot({ w: tensor([3, 4]) }, 1));
 *   assert.equal(await store.latestVersion(), 1);
 *   const latest = await store.getLatest(); // checksum verified
 *   assert.equal(latest?.version, 1);
 * }
 * ```
 */
export class WeightsStore {
  /** Bucket name. */
  readonly bucket: string;
  /** Versions kept after each `put`. */
  readonly keep: number;
  #os: ObjectStore;

  private constructor(os: ObjectStore, bucket: string, keep: number) {
    this.#os = os;
    this.bucket = bucket;
    this.keep = keep;
  }

  /**
   * Creates (or attaches to) the bucket.
   *
   * @param nc A NATS connection.
   * @param options Bucket name and retention.
   * @returns The store.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const store = await WeightsStore.open(nc, { bucket: "w" });
   *   assert.equal(await store.latestVersion(), null);
   * }
   * ```
   */
  static async open(nc: NatsConnection, options: WeightsStoreOptions = {}): Promise<WeightsStore> {
    const bucket = options.bucket ?? "rlvr-weights";
    const keep = checkInt(
      options.keep ?? 4,
      "WeightsStore: options.keep",
      1,
      "keep at least the latest version",
    );
    const os = await new Objm(nc).create(bucket);
    return new WeightsStore(os, bucket, keep);
  }

  /**
   * Versions present, ascending.
   *
   * @returns The versions.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, snapshot, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const store = await WeightsStore.open(nc, { keep: 2 });
   *   for (const v of [0, 1, 2]) await store.put(await snapshot({ w: tensor([v]) }, v));
   *   assert.deepEqual(await store.versions(), [1, 2]); // keep: 2
   * }
   * ```
   */
  async versions(): Promise<number[]> {
    const out: number[] = [];
    for (const info of await this.#os.list()) {
      const m = NAME.exec(info.name);
      if (m !== null && !info.deleted) out.push(Number(m[1]));
    }
    return out.sort((a, b) => a - b);
  }

  /**
   * The newest version, or null when none was published.
   *
   * @returns The version.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, snapshot, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const store = await WeightsStore.open(nc);
   *   await store.put(await snapshot({ w: tensor([1]) }, 5));
   *   assert.equal(await store.latestVersion(), 5);
   * }
   * ```
   */
  async latestVersion(): Promise<number | null> {
    const vs = await this.versions();
    return vs.length === 0 ? null : vs[vs.length - 1]!;
  }

  /**
   * Uploads a snapshot. Its version must be above the latest one.
   *
   * @param snap The snapshot (from {@link snapshot}).
   * @returns The stored object: its size and `nuid`, the id the object store gives each write
   *   (a later write of the same name, by anyone, has another), so an owner can tell its objects
   *   from objects another client put in the bucket.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, snapshot, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const store = await WeightsStore.open(nc);
   *   await store.put(await snapshot({ w: tensor([1]) }, 2));
   *   await assert.rejects(store.put(await snapshot({ w: tensor([1]) }, 2)), /strictly increasing/);
   * }
   * ```
   */
  async put(snap: WeightSnapshot): Promise<{ size: number; nuid: string }> {
    checkVersion(snap?.version, "snapshot.version");
    // Check the trainer's own bytes first: uploading a snapshot that is already inconsistent
    // would only move the failure to every worker.
    await verifySnapshot(snap.bytes, snap.checksum, snap.version, "WeightsStore.put");
    const latest = await this.latestVersion();
    if (latest !== null && snap.version <= latest) {
      throw new RangeError(
        `WeightsStore.put: version ${snap.version} is not above the latest stored version ` +
          `${latest}; versions must be strictly increasing (use the trainer's step count, and ` +
          `resume it from the checkpoint's step)`,
      );
    }
    const info = await this.#os.putBlob({
      name: nameOf(snap.version),
      metadata: { "rlvr-version": String(snap.version), "rlvr-sha256": snap.checksum },
    }, snap.bytes);
    if (digestHex(info.digest) !== snap.checksum) {
      await this.#os.delete(info.name);
      throw new WeightChecksumError(
        snap.version,
        snap.checksum,
        digestHex(info.digest) ?? info.digest,
        `object store ${this.bucket} upload`,
      );
    }
    const vs = await this.versions();
    for (const old of vs.slice(0, Math.max(0, vs.length - this.keep))) {
      await this.#os.delete(nameOf(old));
    }
    return { size: info.size, nuid: info.nuid };
  }

  /**
   * Every object in the bucket (any name: a client may have put others), without downloading
   * them: name, version (null for a name that is not `v<version>`), the `rlvr-sha256` metadata
   * (null when absent), size and `nuid` (see {@link WeightsStore.put}); newest version first.
   *
   * @returns The objects.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, snapshot, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const store = await WeightsStore.open(nc);
   *   const snap = await snapshot({ w: tensor([1]) }, 0);
   *   const { nuid } = await store.put(snap);
   *   const [e] = await store.entries();
   *   assert.deepEqual([e!.version, e!.checksum, e!.nuid], [0, snap.checksum, nuid]);
   * }
   * ```
   */
  async entries(): Promise<
    { name: string; version: number | null; checksum: string | null; size: number; nuid: string }[]
  > {
    const out = [];
    for (const info of await this.#os.list()) {
      if (info.deleted) continue;
      const m = NAME.exec(info.name);
      out.push({
        name: info.name,
        version: m === null ? null : Number(m[1]),
        checksum: info.metadata?.["rlvr-sha256"] ?? null,
        size: info.size,
        nuid: info.nuid,
      });
    }
    return out.sort((a, b) => (b.version ?? -1) - (a.version ?? -1));
  }

  /**
   * Deletes an object by name (any name, e.g. one another client put in the bucket); nothing
   * when it is absent.
   *
   * @param name The object's name (`v<version>` for a version).
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, snapshot, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const store = await WeightsStore.open(nc);
   *   await store.put(await snapshot({ w: tensor([1]) }, 0));
   *   await store.remove("v0");
   *   assert.equal(await store.latestVersion(), null);
   * }
   * ```
   */
  async remove(name: string): Promise<void> {
    const info = await this.#os.info(name);
    if (info === null || info.deleted) return;
    await this.#os.delete(name);
  }

  /**
   * Downloads a version and verifies its checksum.
   *
   * @param version The version.
   * @returns The verified snapshot.
   * @throws {WeightChecksumError} when the bytes are corrupt.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, snapshot, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const store = await WeightsStore.open(nc);
   *   const snap = await snapshot({ w: tensor([1]) }, 0);
   *   await store.put(snap);
   *   assert.equal((await store.get(0)).checksum, snap.checksum);
   *   await assert.rejects(store.get(9), /version 9 is not in object store rlvr-weights/);
   * }
   * ```
   */
  async get(version: number): Promise<WeightSnapshot> {
    checkVersion(version);
    const name = nameOf(version);
    const source = `object store ${this.bucket}/${name}`;
    const info = await this.#os.info(name);
    if (info === null || info.deleted) {
      throw new Error(
        `WeightsStore.get: version ${version} is not in object store ${this.bucket} ` +
          `(present: ${(await this.versions()).join(", ") || "none"}); old versions are ` +
          `deleted after each put (keep = ${this.keep}); fetch the latest instead`,
      );
    }
    const expected = info.metadata?.["rlvr-sha256"];
    if (expected === undefined || info.metadata?.["rlvr-version"] !== String(version)) {
      throw new Error(
        `WeightsStore.get: ${source} has no rlvr-sha256/rlvr-version metadata; it was not ` +
          `written by WeightsStore.put, so it cannot be verified and is not loaded`,
      );
    }
    let bytes: Uint8Array | null;
    try {
      // not `getBlob`: it waits forever when the object is deleted or replaced while read
      // (another client's version deleted by the trainer, an old one pruned), see objects.ts
      bytes = (await readObject(this.#os, name))?.bytes ?? null;
    } catch (e) {
      if (e instanceof ObjectChangedError) {
        throw new Error(`WeightsStore.get: ${source} disappeared while reading (${e.change})`, {
          cause: e,
        });
      }
      // The object store checks its own SHA-256 of the chunks and refuses a corrupt object;
      // it is the same hash as ours, so its computed digest is the actual one.
      const m = /computed: SHA-256 ([0-9a-f]{64})/.exec((e as Error).message ?? "");
      if (m !== null) throw new WeightChecksumError(version, expected, m[1]!, source);
      throw e;
    }
    if (bytes === null) throw new Error(`WeightsStore.get: ${source} disappeared while reading`);
    // readObject assembles the chunks into a plain Uint8Array (not a Node Buffer): no copy.
    return await verifySnapshot(bytes, expected, version, source);
  }

  /**
   * Downloads and verifies the newest version.
   *
   * @returns The snapshot, or null when none was published.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   assert.equal(await (await WeightsStore.open(nc)).getLatest(), null);
   * }
   * ```
   */
  async getLatest(): Promise<WeightSnapshot | null> {
    const v = await this.latestVersion();
    return v === null ? null : await this.get(v);
  }

  /**
   * The hex SHA-256 the store holds for a version, without downloading it.
   *
   * @param version The version.
   * @returns The checksum, or null when the version is absent.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, snapshot, startNatsServer, WeightsStore } from "@rlvr/infra";
   * import { connect } from "@nats-io/transport-node";
   * import { tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   await using nc = await connect({ servers: server.url });
   *   const store = await WeightsStore.open(nc);
   *   const snap = await snapshot({ w: tensor([1]) }, 0);
   *   await store.put(snap);
   *   assert.equal(await store.checksum(0), snap.checksum);
   * }
   * ```
   */
  async checksum(version: number): Promise<string | null> {
    checkVersion(version);
    const info = await this.#os.info(nameOf(version));
    if (info === null || info.deleted) return null;
    return info.metadata?.["rlvr-sha256"] ?? null;
  }
}
