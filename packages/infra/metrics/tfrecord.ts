/**
 * TFRecord framing, the container of TensorBoard event files: each record is
 *
 * ```
 * uint64 length            (little endian)
 * uint32 masked_crc32c(length bytes)
 * byte   data[length]
 * uint32 masked_crc32c(data)
 * ```
 *
 * with `masked(crc) = ((crc >>> 15) | (crc << 17)) + 0xa282ead8` (mod 2^32) and CRC32C the
 * Castagnoli CRC (reflected polynomial 0x82f63b78, as iSCSI and TensorFlow's `crc32c.h`).
 *
 * Design decisions: a record is framed in full and handed to the OS in one `write` by the
 * writers, so a crash leaves at most one incomplete record at the end of a file. The reader
 * reports such an incomplete tail (`tornBytes`) instead of failing, as the JSONL readers do
 * with a partial last line; a complete record whose CRC does not match is corruption, not a
 * crash artifact, and is a {@link TfRecordError} naming the offset and both checksums.
 *
 * @module
 */

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

const MASK_DELTA = 0xa282ead8;
const TWO32 = 4294967296;

/**
 * The CRC32C (Castagnoli) checksum of `bytes`.
 *
 * @param bytes The data.
 * @returns The checksum, an unsigned 32-bit integer.
 *
 * @example Usage
 * ```ts
 * import { crc32c } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * assert.equal(crc32c(new TextEncoder().encode("123456789")), 0xe3069283); // the check value
 * ```
 */
export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * The masked CRC32C that TFRecord stores: `((crc >>> 15) | (crc << 17)) + 0xa282ead8`, mod 2^32.
 *
 * @param bytes The data.
 * @returns The masked checksum.
 *
 * @example Usage
 * ```ts
 * import { crc32c, maskedCrc32c } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const data = new Uint8Array([1, 2, 3]);
 * const crc = crc32c(data);
 * assert.equal(maskedCrc32c(data), ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) % 2 ** 32);
 * ```
 */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) % TWO32;
}

/**
 * Frames `data` as one TFRecord (length, its masked CRC, the data, its masked CRC).
 *
 * @param data The record's payload (a serialized `Event` in event files).
 * @returns The framed bytes (`data.length + 16`).
 *
 * @example Usage
 * ```ts
 * import { encodeTfRecord, readTfRecords } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const framed = encodeTfRecord(new Uint8Array([7, 8, 9]));
 * assert.equal(framed.length, 19);
 * assert.deepEqual(readTfRecords(framed).records, [new Uint8Array([7, 8, 9])]);
 * ```
 */
export function encodeTfRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(data.length + 16);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length % TWO32, true);
  view.setUint32(4, Math.floor(data.length / TWO32), true);
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc32c(data), true);
  return out;
}

/**
 * Thrown by {@link readTfRecords} when a complete record's checksum does not match.
 *
 * @example Usage
 * ```ts
 * import { encodeTfRecord, readTfRecords, TfRecordError } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const framed = encodeTfRecord(new Uint8Array([1, 2, 3]));
 * framed[13] = framed[13]! ^ 1; // flip a bit of the data
 * assert.throws(() => readTfRecords(framed, "e.tfevents"), (e: unknown) =>
 *   e instanceof TfRecordError && e.offset === 0 && /e\.tfevents/.test(e.message));
 * ```
 */
export class TfRecordError extends Error {
  /** Byte offset of the record in the file. */
  readonly offset: number;

  /**
   * Builds the message naming where, what and both checksums.
   *
   * @param where The file (or another name for the bytes).
   * @param offset The record's byte offset.
   * @param what `"length"` or `"data"`.
   * @param expected The checksum stored in the file.
   * @param actual The checksum of the bytes read.
   */
  constructor(where: string, offset: number, what: string, expected: number, actual: number) {
    super(
      `readTfRecords: ${where}: the record at byte ${offset} has a bad ${what} checksum ` +
        `(stored 0x${expected.toString(16).padStart(8, "0")}, computed 0x${
          actual.toString(16).padStart(8, "0")
        }); the file is corrupted before its end, which a crash cannot cause - remove it or ` +
        `cut it at byte ${offset}`,
    );
    this.name = "TfRecordError";
    this.offset = offset;
  }
}

/** What {@link readTfRecords} returns. */
export interface TfRecords {
  /** The payloads of the complete records, in file order. */
  records: Uint8Array[];
  /** Bytes of an incomplete last record (a write cut by a crash); 0 normally. */
  tornBytes: number;
}

/**
 * Reads the records of a TFRecord file's bytes, verifying both checksums of each. An
 * incomplete last record is reported in `tornBytes`, not returned.
 *
 * @param bytes The file's contents.
 * @param where Names the file in errors.
 * @returns The payloads and the size of a torn tail.
 * @throws {TfRecordError} when a complete record's checksum does not match.
 *
 * @example Usage
 * ```ts
 * import { encodeTfRecord, readTfRecords } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const a = encodeTfRecord(new Uint8Array([1])), b = encodeTfRecord(new Uint8Array([2, 2]));
 * const cut = new Uint8Array([...a, ...b.subarray(0, 5)]); // a crash cut the second write
 * const r = readTfRecords(cut);
 * assert.deepEqual(r.records, [new Uint8Array([1])]);
 * assert.equal(r.tornBytes, 5);
 * ```
 */
export function readTfRecords(bytes: Uint8Array, where = "TFRecord bytes"): TfRecords {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 12) break;
    const header = bytes.subarray(at, at + 8);
    const storedLen = view.getUint32(at + 8, true);
    const actualLen = maskedCrc32c(header);
    if (storedLen !== actualLen) throw new TfRecordError(where, at, "length", storedLen, actualLen);
    const length = view.getUint32(at, true) + view.getUint32(at + 4, true) * TWO32;
    if (bytes.length - at - 12 < length + 4) break;
    const data = bytes.subarray(at + 12, at + 12 + length);
    const stored = view.getUint32(at + 12 + length, true);
    const actual = maskedCrc32c(data);
    if (stored !== actual) throw new TfRecordError(where, at, "data", stored, actual);
    records.push(data.slice());
    at += length + 16;
  }
  return { records, tornBytes: bytes.length - at };
}
