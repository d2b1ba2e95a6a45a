/**
 * Versioned weight snapshots with a SHA-256 checksum: what a trainer publishes after an optimizer
 * step and what a rollout worker loads before it generates.
 *
 * Design decision: a snapshot is the plain safetensors bytes of the named f32 parameters (the
 * same writer as `@rlvr/tensor`, so a snapshot is also a valid checkpoint file), its version in
 * the safetensors metadata (`rlvr.version`), and the SHA-256 of exactly those bytes, computed with
 * WebCrypto. The checksum covers the bytes that travel, not the tensors, so any corruption on the
 * wire or on disk (one flipped bit) is caught before a single value is parsed. {@link
 * applySnapshot} verifies the checksum and then checks every name and shape before it writes
 * anything, so a bad snapshot is never half applied: a worker either holds all of version `v` or
 * none of it. Values are written in place into the existing parameter buffers (the optimizer and
 * the model keep their tensor objects).
 *
 * @module
 */

import { parseSafetensors, serializeSafetensors, type Tensor } from "@rlvr/tensor";
import { checkVersion } from "./_util.ts";

/** Safetensors metadata key that holds a snapshot's version. */
export const VERSION_METADATA_KEY = "rlvr.version";

/**
 * Named tensors of a policy: `CausalLM.params` (a `Map`) or a plain object.
 *
 * @example Usage
 * ```ts
 * import type { WeightParams } from "@rlvr/infra";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const params: WeightParams = new Map([["w", tensor([1, 2])]]);
 * assert.ok(params instanceof Map);
 * ```
 */
export type WeightParams = ReadonlyMap<string, Tensor> | Readonly<Record<string, Tensor>>;

/**
 * One version of the policy weights, ready to send or store.
 *
 * @example Usage
 * ```ts
 * import { snapshot, type WeightSnapshot } from "@rlvr/infra";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const snap: WeightSnapshot = await snapshot(new Map([["w", tensor([1, 2])]]), 3);
 * assert.equal(snap.version, 3);
 * assert.match(snap.checksum, /^[0-9a-f]{64}$/);
 * ```
 */
export interface WeightSnapshot {
  /** Policy version: a non-negative integer, strictly increasing over a run. */
  readonly version: number;
  /** Safetensors bytes of the named f32 tensors, with the version in the metadata. */
  readonly bytes: Uint8Array;
  /** Lower-case hex SHA-256 of `bytes`. */
  readonly checksum: string;
}

/**
 * Thrown when the bytes of a snapshot do not hash to the checksum that came with them: the
 * weights were corrupted in transit or in storage and must not be loaded.
 *
 * @example Usage
 * ```ts
 * import { snapshot, verifySnapshot, WeightChecksumError } from "@rlvr/infra";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const snap = await snapshot({ w: tensor([1, 2]) }, 1);
 * const bad = snap.bytes.slice();
 * bad[bad.length - 1] = bad[bad.length - 1]! ^ 1; // one flipped bit
 * await assert.rejects(
 *   verifySnapshot(bad, snap.checksum, 1),
 *   (e: unknown) => e instanceof WeightChecksumError && e.version === 1,
 * );
 * ```
 */
export class WeightChecksumError extends Error {
  /** Version of the snapshot that failed. */
  readonly version: number;
  /** Checksum that came with the snapshot. */
  readonly expected: string;
  /** SHA-256 of the bytes actually received. */
  readonly actual: string;

  /**
   * Builds the message from the version and both digests.
   *
   * @param version Version of the snapshot.
   * @param expected Checksum that came with it.
   * @param actual Checksum of the received bytes.
   * @param source Where the bytes came from, quoted in the message.
   */
  constructor(version: number, expected: string, actual: string, source = "snapshot") {
    super(
      `weight snapshot version ${version} (${source}) failed its checksum: expected sha256 ` +
        `${expected}, got ${actual}; the bytes were corrupted in transit or storage, so they ` +
        `were not loaded; fetch the version again or publish a fresh snapshot`,
    );
    this.name = "WeightChecksumError";
    this.version = version;
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * Thrown by {@link applySnapshot} when the snapshot does not fit the parameters (missing,
 * unexpected or differently shaped tensors). Lists every mismatch, not just the first.
 *
 * @example Usage
 * ```ts
 * import { applySnapshot, snapshot, WeightMismatchError } from "@rlvr/infra";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const snap = await snapshot({ w: tensor([1, 2, 3]) }, 1);
 * await assert.rejects(
 *   applySnapshot({ w: tensor([0, 0]) }, snap),
 *   (e: unknown) => e instanceof WeightMismatchError && e.mismatches.length === 1,
 * );
 * ```
 */
export class WeightMismatchError extends Error {
  /** Version of the snapshot. */
  readonly version: number;
  /** One line per problem, e.g. `w: shape [3] in the snapshot, [2] in the model`. */
  readonly mismatches: readonly string[];

  /**
   * Builds the message listing every mismatch.
   *
   * @param version Version of the snapshot.
   * @param mismatches One line per problem.
   */
  constructor(version: number, mismatches: readonly string[]) {
    super(
      `weight snapshot version ${version} does not fit the model parameters ` +
        `(${mismatches.length} mismatch${mismatches.length === 1 ? "" : "es"}; nothing was ` +
        `applied):\n  ${mismatches.join("\n  ")}\nsnapshot and model must come from the same ` +
        `config; check that the trainer and the worker load the same model`,
    );
    this.name = "WeightMismatchError";
    this.version = version;
    this.mismatches = Object.freeze([...mismatches]);
  }
}

/**
 * Lower-case hex SHA-256 of `bytes` (WebCrypto).
 *
 * @param bytes The data.
 * @returns 64 hex characters.
 *
 * @example Usage
 * ```ts
 * import { sha256Hex } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   await sha256Hex(new TextEncoder().encode("abc")),
 *   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
 * );
 * ```
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  // WebCrypto wants a BufferSource backed by an ArrayBuffer; a view of a SharedArrayBuffer or a
  // Node Buffer slice is copied first.
  const view = bytes.buffer instanceof ArrayBuffer
    ? bytes as Uint8Array<ArrayBuffer>
    : new Uint8Array(bytes);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", view));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}

function entriesOf(params: WeightParams): [string, Tensor][] {
  return params instanceof Map
    ? [...(params as ReadonlyMap<string, Tensor>).entries()]
    : Object.entries(params as Readonly<Record<string, Tensor>>);
}

/**
 * Serializes named f32 parameters at `version` and checksums the bytes.
 *
 * @param params The model parameters (`model.params`); every tensor must be f32.
 * @param version Policy version (the trainer's step count), a non-negative integer.
 * @returns The snapshot.
 *
 * @example Usage
 * ```ts
 * import { sha256Hex, snapshot } from "@rlvr/infra";
 * import { parseSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const snap = await snapshot(new Map([["w", tensor([[1, 2], [3, 4]])]]), 7);
 * assert.equal(snap.checksum, await sha256Hex(snap.bytes));
 * assert.equal(parseSafetensors(snap.bytes).metadata["rlvr.version"], "7");
 * ```
 */
export async function snapshot(params: WeightParams, version: number): Promise<WeightSnapshot> {
  checkVersion(version);
  const entries = entriesOf(params);
  if (entries.length === 0) {
    throw new RangeError("snapshot: params is empty; pass model.params (name -> tensor)");
  }
  for (const [name, t] of entries) {
    if (t.dtype !== "f32") {
      throw new TypeError(
        `snapshot: parameter ${JSON.stringify(name)} has dtype ${t.dtype}; weight snapshots ` +
          `hold f32 tensors only (cast it with t.cast("f32") or leave it out)`,
      );
    }
  }
  const bytes = await serializeSafetensors(new Map(entries), {
    metadata: { [VERSION_METADATA_KEY]: String(version) },
  });
  return Object.freeze({ version, bytes, checksum: await sha256Hex(bytes) });
}

/**
 * Checks that `bytes` hash to `expectedChecksum` and carry `version` in their metadata.
 *
 * @param bytes Received snapshot bytes.
 * @param expectedChecksum Hex SHA-256 that came with them (from the store or the message).
 * @param version The version they are supposed to be.
 * @param source Where they came from, quoted in errors (e.g. `"nats object store rlvr-weights"`).
 * @returns The verified snapshot.
 * @throws {WeightChecksumError} when the digest differs.
 *
 * @example Usage
 * ```ts
 * import { snapshot, verifySnapshot } from "@rlvr/infra";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const snap = await snapshot({ w: tensor([1]) }, 2);
 * const ok = await verifySnapshot(snap.bytes, snap.checksum, 2);
 * assert.equal(ok.version, 2);
 * ```
 */
export async function verifySnapshot(
  bytes: Uint8Array,
  expectedChecksum: string,
  version: number,
  source = "snapshot",
): Promise<WeightSnapshot> {
  checkVersion(version);
  const expected = expectedChecksum.toLowerCase();
  const actual = await sha256Hex(bytes);
  if (actual !== expected) throw new WeightChecksumError(version, expected, actual, source);
  // The checksum matches, so the bytes are what the publisher wrote; a different version in the
  // metadata means the publisher filed them under the wrong version, which is a bug upstream.
  const stored = parseSafetensors(bytes, { source }).metadata[VERSION_METADATA_KEY];
  if (stored !== String(version)) {
    throw new Error(
      `weight snapshot (${source}) was published as version ${version} but its metadata ` +
        `${VERSION_METADATA_KEY} is ${JSON.stringify(stored)}; the publisher filed it under the ` +
        `wrong version; republish it with snapshot(params, ${version})`,
    );
  }
  return Object.freeze({ version, bytes, checksum: actual });
}

/**
 * Options of {@link applySnapshot}.
 *
 * @example Usage
 * ```ts
 * import type { ApplySnapshotOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const opts: ApplySnapshotOptions = { currentVersion: 3 };
 * assert.equal(opts.currentVersion, 3);
 * ```
 */
export interface ApplySnapshotOptions {
  /**
   * The version the parameters hold now. A snapshot older than this is refused, so a worker
   * never goes back to older weights (a late or reordered download).
   */
  currentVersion?: number;
}

/**
 * Verifies a snapshot and writes its values into `params` in place. Nothing is written unless
 * the checksum matches and every name and shape fits.
 *
 * @param params The parameters to overwrite (`model.params`).
 * @param snap The snapshot (checksum re-verified here).
 * @param options Refuse going back in versions.
 * @returns The version now held by `params`.
 * @throws {WeightChecksumError} when the bytes are corrupt; {@link WeightMismatchError} when the
 *   names or shapes differ.
 *
 * @example Usage
 * ```ts
 * import { applySnapshot, snapshot } from "@rlvr/infra";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const trainer = new Map([["w", tensor([1, 2])]]);
 * const worker = new Map([["w", tensor([0, 0])]]);
 * const version = await applySnapshot(worker, await snapshot(trainer, 4));
 * assert.equal(version, 4);
 * assert.deepEqual(await worker.get("w")!.toArray(), [1, 2]);
 * ```
 */
export async function applySnapshot(
  params: WeightParams,
  snap: WeightSnapshot,
  options: ApplySnapshotOptions = {},
): Promise<number> {
  const verified = await verifySnapshot(snap.bytes, snap.checksum, snap.version);
  if (options.currentVersion !== undefined) {
    checkVersion(options.currentVersion, "options.currentVersion");
    if (verified.version < options.currentVersion) {
      throw new RangeError(
        `applySnapshot: snapshot version ${verified.version} is older than the version the ` +
          `parameters hold (${options.currentVersion}); refusing to go back; fetch the latest ` +
          `version instead`,
      );
    }
  }
  const file = parseSafetensors(verified.bytes, { source: `weight snapshot v${snap.version}` });
  const targets = entriesOf(params);
  const mismatches: string[] = [];
  const have = new Set<string>();
  for (const [name, t] of targets) {
    have.add(name);
    if (!file.has(name)) {
      mismatches.push(`${name}: in the model, missing from the snapshot`);
      continue;
    }
    const e = file.entry(name);
    if (e.dtype !== "F32") {
      mismatches.push(`${name}: dtype ${e.dtype} in the snapshot, expected F32`);
    }
    if (t.dtype !== "f32") mismatches.push(`${name}: dtype ${t.dtype} in the model, expected f32`);
    if (e.shape.length !== t.shape.length || e.shape.some((d, i) => d !== t.shape[i])) {
      mismatches.push(
        `${name}: shape [${e.shape.join(", ")}] in the snapshot, [${t.shape.join(", ")}] ` +
          `in the model`,
      );
    }
    if (t.isDisposed) mismatches.push(`${name}: the model tensor was disposed`);
  }
  for (const name of file.names()) {
    if (!have.has(name)) mismatches.push(`${name}: in the snapshot, missing from the model`);
  }
  if (mismatches.length > 0) throw new WeightMismatchError(snap.version, mismatches);
  // All checks passed: only now touch the model.
  for (const [name, t] of targets) {
    const values = file.tensor(name, { dtype: "f32" });
    try {
      t.backend.write(t.buffer, await values.data());
    } finally {
      values.dispose();
    }
  }
  return verified.version;
}
