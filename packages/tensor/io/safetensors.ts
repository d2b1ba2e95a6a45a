/**
 * The safetensors format (huggingface/safetensors): parsing, validation and serialization of
 * whole files held in memory. File-system helpers (atomic save, sharded checkpoints) are in
 * `safetensors_fs.ts`.
 *
 * Layout: 8 bytes `N` (u64, little-endian), then `N` bytes of UTF-8 JSON (possibly padded with
 * trailing spaces), then the data buffer. The JSON maps each tensor name to
 * `{dtype, shape, data_offsets: [begin, end)}` (offsets relative to the data buffer, C order,
 * little-endian), plus an optional `__metadata__` map of strings to strings.
 *
 * Design decisions:
 * - **Parse first, materialise on demand.** {@link parseSafetensors} validates the header and the
 *   byte layout and allocates no tensors; `file.tensor(name)` decodes one entry. Loading a subset
 *   of a checkpoint costs only that subset.
 * - **Validation is as strict as the reference reader** (`safetensors/src/tensor.rs`): header at
 *   most {@link MAX_HEADER_SIZE} bytes, byte span = element count × dtype size, tensors packed
 *   back to back with no holes or overlaps, and the offsets covering the data buffer exactly.
 *   On top of it, duplicate JSON keys are rejected (a JavaScript `JSON.parse` would silently keep
 *   the last one) and every error names the source, the tensor and the fix.
 * - **Tensor dtypes are only f32, i32 and bool**, so values are converted on load: F32, F16,
 *   BF16 and F64 become f32 (halves are widened exactly; F64 is rounded to f32), integers become
 *   i32 with a range check (an I64 value that does not fit is an error naming the value, never a
 *   silent wrap), BOOL becomes bool, and U8 becomes bool when it holds only 0/1 (attention masks)
 *   and is an error otherwise (ask for `{ dtype: "i32" }`).
 * - **Zero-copy where possible.** When an entry is aligned in memory it is viewed in place;
 *   otherwise it is copied once. The backend then copies it into its own buffer.
 * - **Deterministic writer.** {@link serializeSafetensors} orders tensors like the reference
 *   writer: by descending dtype (F32, I32, BF16, F16, BOOL), then by name. The same inputs always
 *   give the same bytes, and wider dtypes come first so that they stay aligned. The header is
 *   padded with spaces to a multiple of 8 bytes.
 * - The host must be little-endian (every platform Deno runs on is).
 *
 * @module
 */

import { tensor as createTensor } from "../creation.ts";
import type { DType } from "../dtype.ts";
import type { Backend } from "../backend/types.ts";
import { fmtShape } from "../shape.ts";
import { Tensor } from "../tensor.ts";
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from "./half.ts";

/**
 * The largest header the parser accepts, in bytes (100,000,000, as in the reference reader).
 *
 * @example Usage
 * ```ts
 * import { MAX_HEADER_SIZE } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_HEADER_SIZE, 100_000_000);
 * ```
 */
export const MAX_HEADER_SIZE = 100_000_000;

/**
 * Every dtype the safetensors format names, in the order of the reference `enum Dtype` (the
 * writer sorts by this order, descending).
 *
 * @example Usage
 * ```ts
 * import { SAFETENSORS_DTYPES } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.ok(SAFETENSORS_DTYPES.includes("BF16"));
 * ```
 */
export const SAFETENSORS_DTYPES = [
  "BOOL",
  "F4",
  "F6_E2M3",
  "F6_E3M2",
  "U8",
  "I8",
  "F8_E5M2",
  "F8_E4M3",
  "F8_E8M0",
  "F8_E4M3FNUZ",
  "F8_E5M2FNUZ",
  "I16",
  "U16",
  "F16",
  "BF16",
  "I32",
  "U32",
  "F32",
  "C64",
  "F64",
  "I64",
  "U64",
] as const;

/**
 * A dtype as written in a safetensors header.
 *
 * @example Usage
 * ```ts
 * import type { SafetensorsDType } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const d: SafetensorsDType = "BF16";
 * assert.equal(d, "BF16");
 * ```
 */
export type SafetensorsDType = typeof SAFETENSORS_DTYPES[number];

const BITS: Readonly<Record<SafetensorsDType, number>> = {
  BOOL: 8,
  F4: 4,
  F6_E2M3: 6,
  F6_E3M2: 6,
  U8: 8,
  I8: 8,
  F8_E5M2: 8,
  F8_E4M3: 8,
  F8_E8M0: 8,
  F8_E4M3FNUZ: 8,
  F8_E5M2FNUZ: 8,
  I16: 16,
  U16: 16,
  F16: 16,
  BF16: 16,
  I32: 32,
  U32: 32,
  F32: 32,
  C64: 64,
  F64: 64,
  I64: 64,
  U64: 64,
};

/**
 * The safetensors dtypes this reader turns into tensors, with the tensor dtype each becomes by
 * default. The other dtypes of {@link SAFETENSORS_DTYPES} (F8 variants, F4, F6, C64) parse
 * (their entries are listed and validated) but cannot be materialised.
 *
 * @example Usage
 * ```ts
 * import { READABLE_DTYPES } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(READABLE_DTYPES.BF16, "f32");
 * assert.equal(READABLE_DTYPES.I64, "i32");
 * assert.equal(READABLE_DTYPES.F8_E4M3, undefined);
 * ```
 */
export const READABLE_DTYPES: Readonly<Partial<Record<SafetensorsDType, DType>>> = Object.freeze({
  F32: "f32",
  F16: "f32",
  BF16: "f32",
  F64: "f32",
  I64: "i32",
  I32: "i32",
  I16: "i32",
  I8: "i32",
  U64: "i32",
  U32: "i32",
  U16: "i32",
  U8: "bool",
  BOOL: "bool",
});

const READABLE_LIST = Object.keys(READABLE_DTYPES).join(", ");

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * An error in a safetensors file or call. The message reads
 * `safetensors (<source>): tensor "<name>": <problem and fix>`.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, SafetensorsError } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => parseSafetensors(new Uint8Array(3), { source: "tiny.safetensors" }),
 *   (e: unknown) => e instanceof SafetensorsError && e.source === "tiny.safetensors",
 * );
 * ```
 */
export class SafetensorsError extends Error {
  /** Where the bytes came from: a path, or `"<bytes>"` for an anonymous buffer. */
  readonly source: string;
  /** The tensor the problem is about, when there is one. */
  readonly tensorName: string | undefined;

  /**
   * Builds the message from its parts.
   *
   * @param source Where the bytes came from (a path or `"<bytes>"`).
   * @param tensorName The tensor concerned, if any.
   * @param problem What is wrong and how to fix it.
   */
  constructor(source: string, tensorName: string | undefined, problem: string) {
    const who = tensorName === undefined ? "" : `tensor ${JSON.stringify(tensorName)}: `;
    super(`safetensors (${source}): ${who}${problem}`);
    this.name = "SafetensorsError";
    this.source = source;
    this.tensorName = tensorName;
  }
}

/**
 * One tensor of a parsed file, as its header describes it (no data decoded).
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const file = parseSafetensors(await serializeSafetensors({ w: tensor([1, 2, 3]) }));
 * const e = file.entry("w");
 * assert.deepEqual([e.dtype, e.shape, e.dataOffsets, e.byteLength], ["F32", [3], [0, 12], 12]);
 * ```
 */
export interface SafetensorsEntry {
  /** Tensor name (the header key). */
  readonly name: string;
  /** Stored dtype. */
  readonly dtype: SafetensorsDType;
  /** Shape, outermost first; `[]` for a scalar. */
  readonly shape: readonly number[];
  /** `[begin, end)` relative to the start of the data buffer, as written in the header. */
  readonly dataOffsets: readonly [number, number];
  /** Absolute byte offset of the data in the file (`8 + headerLength + begin`). */
  readonly byteOffset: number;
  /** Bytes of data (`end - begin`). */
  readonly byteLength: number;
}

/**
 * Options of {@link parseSafetensors}.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, type ParseOptions, serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const opts: ParseOptions = { source: "w.safetensors" };
 * assert.equal(parseSafetensors(await serializeSafetensors({ w: tensor(1) }), opts).source, "w.safetensors");
 * ```
 */
export interface ParseOptions {
  /** Name of the bytes' origin (e.g. a path), quoted in every error. Default `"<bytes>"`. */
  source?: string;
}

/**
 * Options for materialising entries as tensors.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, serializeSafetensors, type TensorLoadOptions, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const file = parseSafetensors(await serializeSafetensors({ ids: tensor([3, 4], { dtype: "i32" }) }));
 * const opts: TensorLoadOptions = { dtype: "f32" };
 * assert.equal(file.tensor("ids", opts).dtype, "f32");
 * ```
 */
export interface TensorLoadOptions {
  /** Backend to allocate on (default: `getBackend()`). */
  backend?: Backend;
  /**
   * Tensor dtype to produce instead of the default of {@link READABLE_DTYPES}. Floats become i32
   * only when every value is an integer in range; anything becomes bool as `value != 0`.
   */
  dtype?: DType;
}

/** Host arrays of the tensor dtypes: Float32Array (f32), Int32Array (i32), Uint8Array (bool). */
type DecodedArray = Float32Array | Int32Array | Uint8Array;

/** A tensor's values decoded from its stored dtype, before conversion to the requested dtype. */
type Decoded =
  | { kind: "float"; values: Float32Array }
  | { kind: "int"; values: ArrayLike<number> }
  | { kind: "bool"; values: Uint8Array };

/** A short printable form of a value for error messages. */
function describe(value: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Finds the first duplicate key in any object of a JSON text that `JSON.parse` accepted.
 * Returns the key and the key of the enclosing object (`undefined` at the top level).
 */
function findDuplicateKey(text: string): { key: string; parent: string | undefined } | null {
  interface Frame {
    keys: Set<string> | null; // null for arrays
    expectKey: boolean;
    lastKey: string | undefined;
    name: string | undefined;
  }
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top !== undefined && top.keys !== null && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return { key, parent: top.name };
        top.keys.add(key);
        top.lastKey = key;
        top.expectKey = false;
      }
      i = j;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = stack[stack.length - 1];
      stack.push({
        keys: c === 0x7b ? new Set() : null,
        expectKey: true,
        lastKey: undefined,
        // An object or array is named by the key it sits under (arrays pass their name down).
        name: parent === undefined
          ? undefined
          : parent.keys !== null
          ? parent.lastKey
          : parent.name,
      });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top !== undefined && top.keys !== null) top.expectKey = true;
    }
  }
  return null;
}

/**
 * The tensors and metadata of a safetensors file held in memory; made by {@link parseSafetensors}
 * (or `readSafetensorsFile`). Entries are decoded only when asked for.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, SafetensorsFile, serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const bytes = await serializeSafetensors({ w: tensor([1, 2]), b: tensor([0.5]) });
 * const file = parseSafetensors(bytes, { source: "model.safetensors" });
 * assert.ok(file instanceof SafetensorsFile);
 * assert.deepEqual(file.names(), ["b", "w"]);
 * assert.deepEqual(await file.tensor("w").toArray(), [1, 2]);
 * ```
 */
export class SafetensorsFile {
  /** Where the bytes came from (quoted in errors). */
  readonly source: string;
  /** The `__metadata__` map (empty when the file has none). */
  readonly metadata: Readonly<Record<string, string>>;
  /** Entries by name, in the order their data lies in the file. */
  readonly entries: ReadonlyMap<string, SafetensorsEntry>;
  /** Length of the JSON header in bytes (including padding). */
  readonly headerLength: number;
  /** The whole file. Entries are views into it, so keep it unchanged while the file is in use. */
  readonly bytes: Uint8Array;

  /**
   * Low level: use {@link parseSafetensors}, which validates the header first.
   *
   * @param bytes The whole file.
   * @param source Origin quoted in errors.
   * @param headerLength Length of the JSON header.
   * @param metadata The `__metadata__` map.
   * @param entries Validated entries in file order.
   */
  constructor(
    bytes: Uint8Array,
    source: string,
    headerLength: number,
    metadata: Record<string, string>,
    entries: ReadonlyMap<string, SafetensorsEntry>,
  ) {
    this.bytes = bytes;
    this.source = source;
    this.headerLength = headerLength;
    this.metadata = Object.freeze(metadata);
    this.entries = entries;
  }

  /**
   * Tensor names in the order their data lies in the file.
   *
   * @example Usage
   * ```ts
   * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const bytes = await serializeSafetensors({ b: tensor([1]), a: tensor([2]) });
   * assert.deepEqual(parseSafetensors(bytes).names(), ["a", "b"]);
   * ```
   */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Whether the file holds a tensor of this name.
   *
   * @example Usage
   * ```ts
   * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const file = parseSafetensors(await serializeSafetensors({ a: tensor([2]) }));
   * assert.ok(file.has("a") && !file.has("b"));
   * ```
   */
  has(name: string): boolean {
    return this.entries.has(name);
  }

  /**
   * The header entry of `name`; throws naming a few present tensors when absent.
   *
   * @example Usage
   * ```ts
   * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const file = parseSafetensors(await serializeSafetensors({ a: tensor([[1, 2]]) }));
   * assert.deepEqual(file.entry("a").shape, [1, 2]);
   * assert.throws(() => file.entry("b"), /no tensor named "b"/);
   * ```
   */
  entry(name: string): SafetensorsEntry {
    const e = this.entries.get(name);
    if (e === undefined) {
      const names = this.names();
      const some = names.slice(0, 5).map((n) => JSON.stringify(n)).join(", ");
      const more = names.length > 5 ? `, ... (${names.length} in all)` : "";
      throw new SafetensorsError(
        this.source,
        undefined,
        `no tensor named ${JSON.stringify(name)}; the file holds ${
          names.length === 0 ? "no tensors" : `${some}${more}`
        }`,
      );
    }
    return e;
  }

  /**
   * The stored bytes of `name` (a view into {@link SafetensorsFile.bytes}, no copy).
   *
   * @example Usage
   * ```ts
   * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const file = parseSafetensors(await serializeSafetensors({ m: tensor([true, false]) }));
   * assert.deepEqual([...file.raw("m")], [1, 0]);
   * ```
   */
  raw(name: string): Uint8Array {
    const e = this.entry(name);
    return this.bytes.subarray(e.byteOffset, e.byteOffset + e.byteLength);
  }

  /**
   * Decodes `name` to a fresh host array of the tensor dtype it would load as: Float32Array for
   * f32, Int32Array for i32, Uint8Array of 0/1 for bool. Same conversions and checks as
   * {@link SafetensorsFile.tensor}, without a backend.
   *
   * @example Usage
   * ```ts
   * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const file = parseSafetensors(await serializeSafetensors({ w: tensor([0.5, 1]) }, { dtype: "bf16" }));
   * assert.deepEqual(file.array("w"), new Float32Array([0.5, 1]));
   * ```
   */
  array(name: string, options: { dtype?: DType } = {}): Float32Array | Int32Array | Uint8Array {
    const e = this.entry(name);
    const out = this.#convert(e, this.#decode(e), options.dtype);
    // Make sure the caller never aliases the file bytes.
    return out.buffer === this.bytes.buffer ? out.slice() : out;
  }

  /**
   * Materialises one entry as a tensor (see the module doc for the dtype conversions). The data is
   * copied into the backend; the file bytes are not retained by the tensor.
   *
   * @example Usage
   * ```ts
   * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const bytes = await serializeSafetensors({ w: tensor([[1, 2], [3, 4]]) });
   * const w = parseSafetensors(bytes).tensor("w");
   * assert.deepEqual(await w.toArray(), [[1, 2], [3, 4]]);
   * ```
   */
  tensor(name: string, options: TensorLoadOptions = {}): Tensor {
    const e = this.entry(name);
    const values = this.#convert(e, this.#decode(e), options.dtype);
    const dtype: DType = values instanceof Float32Array
      ? "f32"
      : values instanceof Int32Array
      ? "i32"
      : "bool";
    return createTensor(values, {
      shape: e.shape,
      dtype,
      ...(options.backend !== undefined ? { backend: options.backend } : {}),
    });
  }

  /**
   * Materialises several entries (all by default) as a map from name to tensor, in file order.
   * If one fails, those already created are disposed before the error propagates.
   *
   * @example Usage
   * ```ts
   * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const file = parseSafetensors(await serializeSafetensors({ a: tensor([1]), b: tensor([2]) }));
   * const all = file.tensors();
   * assert.deepEqual([...all.keys()], ["a", "b"]);
   * const some = file.tensors({ filter: (n) => n === "b" });
   * assert.deepEqual([...some.keys()], ["b"]);
   * ```
   */
  tensors(
    options: TensorLoadOptions & { filter?: (name: string) => boolean } = {},
  ): Map<string, Tensor> {
    const out = new Map<string, Tensor>();
    try {
      for (const name of this.entries.keys()) {
        if (options.filter !== undefined && !options.filter(name)) continue;
        out.set(name, this.tensor(name, options));
      }
    } catch (e) {
      for (const t of out.values()) t.dispose();
      throw e;
    }
    return out;
  }

  #fail(e: SafetensorsEntry, problem: string): never {
    throw new SafetensorsError(this.source, e.name, problem);
  }

  /** Views (or, when unaligned, copies) the entry's bytes as `ctor` elements. */
  #view<T>(
    e: SafetensorsEntry,
    ctor: { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T },
    width: number,
  ): T {
    if (!LITTLE_ENDIAN) {
      this.#fail(e, "decoding needs a little-endian host; this platform is big-endian");
    }
    const start = this.bytes.byteOffset + e.byteOffset;
    if (start % width === 0) return new ctor(this.bytes.buffer, start, e.byteLength / width);
    const copy = this.bytes.slice(e.byteOffset, e.byteOffset + e.byteLength);
    return new ctor(copy.buffer, 0, e.byteLength / width);
  }

  #decode(e: SafetensorsEntry): Decoded {
    switch (e.dtype) {
      case "F32":
        return { kind: "float", values: this.#view(e, Float32Array, 4) };
      case "F16":
        return { kind: "float", values: f16ToF32(this.#view(e, Uint16Array, 2)) };
      case "BF16":
        return { kind: "float", values: bf16ToF32(this.#view(e, Uint16Array, 2)) };
      case "F64":
        return { kind: "float", values: Float32Array.from(this.#view(e, Float64Array, 8)) };
      case "I32":
        return { kind: "int", values: this.#view(e, Int32Array, 4) };
      case "U32":
        return { kind: "int", values: this.#view(e, Uint32Array, 4) };
      case "I16":
        return { kind: "int", values: this.#view(e, Int16Array, 2) };
      case "U16":
        return { kind: "int", values: this.#view(e, Uint16Array, 2) };
      case "I8":
        return { kind: "int", values: this.#view(e, Int8Array, 1) };
      case "U8":
        return { kind: "int", values: this.#view(e, Uint8Array, 1) };
      case "BOOL":
        return { kind: "bool", values: this.#view(e, Uint8Array, 1) };
      case "I64":
      case "U64": {
        // Exact for |v| < 2^53; larger values are out of every supported range anyway, and the
        // error message re-reads them exactly as BigInt.
        const words = this.#view(e, Uint32Array, 4);
        const out = new Float64Array(words.length / 2);
        const signed = e.dtype === "I64";
        for (let i = 0; i < out.length; i++) {
          const lo = words[2 * i]!;
          const hi = words[2 * i + 1]!;
          out[i] = (signed ? hi | 0 : hi) * 4294967296 + lo;
        }
        return { kind: "int", values: out };
      }
      default:
        return this.#fail(
          e,
          `dtype ${e.dtype} cannot be loaded as a tensor; readable dtypes are ${READABLE_LIST} ` +
            `(convert the checkpoint, e.g. to BF16 or F32, before loading)`,
        );
    }
  }

  /** The exact stored value at flat index `i`, for error messages. */
  #exact(e: SafetensorsEntry, i: number, value: number): string {
    if (e.dtype !== "I64" && e.dtype !== "U64") return String(value);
    const dv = new DataView(this.bytes.buffer, this.bytes.byteOffset + e.byteOffset + 8 * i, 8);
    return (e.dtype === "I64" ? dv.getBigInt64(0, true) : dv.getBigUint64(0, true)).toString();
  }

  #convert(e: SafetensorsEntry, d: Decoded, requested: DType | undefined): DecodedArray {
    if (
      requested !== undefined && requested !== "f32" && requested !== "i32" && requested !== "bool"
    ) {
      this.#fail(
        e,
        `options.dtype ${describe(requested)} is not a tensor dtype; use f32, i32 or bool`,
      );
    }
    const target = requested ?? READABLE_DTYPES[e.dtype]!;
    const v = d.values;
    if (target === "f32") {
      return v instanceof Float32Array ? v : Float32Array.from(v);
    }
    if (target === "bool") {
      const out = new Uint8Array(v.length);
      const strict = requested === undefined && e.dtype === "U8";
      for (let i = 0; i < v.length; i++) {
        const x = v[i]!;
        if (strict && x > 1) {
          this.#fail(
            e,
            `U8 value ${x} at flat index ${i} is not 0 or 1, so it cannot load as bool (the default ` +
              `for U8); load it with { dtype: "i32" }`,
          );
        }
        out[i] = x !== 0 ? 1 : 0;
      }
      return out;
    }
    // target i32
    if (v instanceof Int32Array) return v;
    const out = new Int32Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i]!;
      if (!Number.isInteger(x) || x < -2147483648 || x > 2147483647) {
        const fix = d.kind === "float"
          ? `load it without { dtype: "i32" } (as f32)`
          : `tensors have no 64-bit integers; load it with { dtype: "f32" } if the values are not ` +
            `indices, or re-save it as I32`;
        this.#fail(
          e,
          `${e.dtype} value ${this.#exact(e, i, x)} at flat index ${i} does not fit in i32 ` +
            `(range -2147483648..2147483647, integers only); ${fix}`,
        );
      }
      out[i] = x;
    }
    return out;
  }
}

/** Throws a {@link SafetensorsError} for the tensor (if any) with this problem. */
type Fail = (tensorName: string | undefined, problem: string) => never;

/** An entry with its offsets unpacked, for the layout checks. */
interface Parsed extends SafetensorsEntry {
  begin: number;
  end: number;
}

/** Reads the length prefix and the JSON header; returns the header length and the parsed object. */
function readHeader(bytes: Uint8Array, fail: Fail): { n: number; header: Record<string, unknown> } {
  if (!(bytes instanceof Uint8Array)) {
    fail(undefined, `expected the file contents as a Uint8Array, got ${typeof bytes}`);
  }
  if (bytes.length < 8) {
    fail(
      undefined,
      `file is ${bytes.length} bytes, shorter than the 8-byte header length at its start; it is ` +
        `empty, truncated or not a safetensors file`,
    );
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = dv.getUint32(0, true) + dv.getUint32(4, true) * 4294967296;
  if (n > MAX_HEADER_SIZE) {
    fail(
      undefined,
      `header length ${n} (the u64 in the first 8 bytes) exceeds MAX_HEADER_SIZE ` +
        `(${MAX_HEADER_SIZE}); this is not a safetensors file or its start is corrupt`,
    );
  }
  if (8 + n > bytes.length) {
    fail(
      undefined,
      `header length ${n} goes beyond the end of the file (${bytes.length} bytes, leaving at most ` +
        `${bytes.length - 8} for the header); the file is truncated or not a safetensors file`,
    );
  }
  let text = "";
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
      bytes.subarray(8, 8 + n),
    );
  } catch {
    fail(undefined, `header (bytes 8..${8 + n}) is not valid UTF-8; the file is corrupt`);
  }
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    const start = describe(text.slice(0, 40));
    fail(
      entryBefore(text, message),
      `header is not valid JSON (${message}); it starts ${start}`,
    );
  }
  if (!isPlainObject(header)) {
    const got = header === null ? "null" : Array.isArray(header) ? "an array" : typeof header;
    fail(
      undefined,
      `header must be a JSON object mapping tensor names to {dtype, shape, data_offsets}, got ${got}`,
    );
  }
  const dup = findDuplicateKey(text);
  if (dup !== null) {
    if (dup.parent === undefined) {
      fail(dup.key, `appears more than once in the header; each tensor name must be unique`);
    }
    const inMeta = dup.parent === "__metadata__";
    fail(
      inMeta ? undefined : dup.parent,
      `${inMeta ? "__metadata__" : "header entry"} has the key ${JSON.stringify(dup.key)} more ` +
        `than once; keys must be unique`,
    );
  }
  return { n, header: header as Record<string, unknown> };
}

/** Validates `__metadata__` (absent or null means empty). */
function parseMetadata(raw: unknown, fail: Fail): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) {
    fail(undefined, `__metadata__ must be an object of strings, got ${describe(raw)}`);
  }
  const pairs = Object.entries(raw as Record<string, unknown>);
  for (const [k, v] of pairs) {
    if (typeof v !== "string") {
      fail(
        undefined,
        `__metadata__ value of ${JSON.stringify(k)} must be a string, got ${describe(v)}; ` +
          `safetensors metadata maps strings to strings (stringify other values)`,
      );
    }
  }
  // fromEntries defines own properties, so even a key "__proto__" is kept as data.
  return Object.fromEntries(pairs) as Record<string, string>;
}

/** Validates one header entry: field types, dtype, shape, and byte span = numel × dtype size. */
function parseEntry(name: string, info: unknown, dataStart: number, fail: Fail): Parsed {
  if (!isPlainObject(info)) {
    fail(
      name,
      `header entry must be an object {dtype, shape, data_offsets}, got ${describe(info)}`,
    );
  }
  const { dtype, shape, data_offsets: offsets } = info as Record<string, unknown>;
  if (dtype === undefined) fail(name, `header entry is missing "dtype" (e.g. "F32")`);
  if (typeof dtype !== "string") fail(name, `"dtype" must be a string, got ${describe(dtype)}`);
  if (!(SAFETENSORS_DTYPES as readonly string[]).includes(dtype as string)) {
    const others = SAFETENSORS_DTYPES.filter((d) => !(d in READABLE_DTYPES)).join(", ");
    fail(
      name,
      `unknown dtype ${describe(dtype)}; readable dtypes are ${READABLE_LIST} (the format also ` +
        `names ${others})`,
    );
  }
  if (shape === undefined) {
    fail(name, `header entry is missing "shape" (e.g. [4, 5], [] for a scalar)`);
  }
  if (!Array.isArray(shape)) {
    fail(name, `"shape" must be an array of integers, got ${describe(shape)}`);
  }
  for (const d of shape as unknown[]) {
    if (typeof d !== "number" || !Number.isSafeInteger(d) || d < 0) {
      fail(
        name,
        `shape ${describe(shape)} has invalid dimension ${describe(d)}; dimensions must be ` +
          `integers >= 0`,
      );
    }
  }
  if (offsets === undefined) fail(name, `header entry is missing "data_offsets" ([begin, end])`);
  if (
    !Array.isArray(offsets) || offsets.length !== 2 ||
    !offsets.every((x) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0)
  ) {
    fail(name, `"data_offsets" must be [begin, end] with integers >= 0, got ${describe(offsets)}`);
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end) {
    fail(name, `data_offsets [${begin}, ${end}] are out of order; begin must be <= end`);
  }
  const dims = shape as number[];
  const dt = dtype as SafetensorsDType;
  let numel = 1;
  for (const d of dims) numel *= d;
  const bits = numel * BITS[dt];
  if (!Number.isSafeInteger(bits)) {
    fail(name, `shape ${fmtShape(dims)} with dtype ${dt} is too large (${numel} elements)`);
  }
  if (bits % 8 !== 0) {
    fail(name, `dtype ${dt} with shape ${fmtShape(dims)} is ${bits} bits, not whole bytes`);
  }
  if (end - begin !== bits / 8) {
    fail(
      name,
      `data_offsets [${begin}, ${end}] span ${end - begin} bytes but dtype ${dt} with shape ` +
        `${fmtShape(dims)} needs ${bits / 8}; the dtype, shape or offsets are wrong`,
    );
  }
  return {
    name,
    dtype: dt,
    shape: Object.freeze([...dims]),
    dataOffsets: Object.freeze([begin, end] as [number, number]),
    byteOffset: dataStart + begin,
    byteLength: end - begin,
    begin,
    end,
  };
}

/**
 * Checks that the entries tile the data buffer exactly: nothing past its end (truncation), no
 * overlaps, no holes, no trailing bytes. Sorts `list` by offset.
 */
function checkLayout(list: Parsed[], dataLength: number, fail: Fail): void {
  let last: Parsed | undefined;
  for (const e of list) if (last === undefined || e.end > last.end) last = e;
  if (last !== undefined && last.end > dataLength) {
    fail(
      last.name,
      `data_offsets [${last.begin}, ${last.end}] go past the end of the data buffer; file is ` +
        `truncated: needs ${last.end} bytes of data, has ${dataLength}`,
    );
  }
  list.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let cursor = 0;
  let prev: Parsed | undefined;
  for (const e of list) {
    if (e.begin < cursor) {
      fail(
        e.name,
        `data_offsets [${e.begin}, ${e.end}] overlap tensor ${JSON.stringify(prev!.name)} at ` +
          `[${prev!.begin}, ${prev!.end}]; each byte of the data buffer belongs to one tensor`,
      );
    }
    if (e.begin > cursor) {
      const after = prev === undefined
        ? "the start of the data buffer"
        : `tensor ${JSON.stringify(prev.name)} (ends at ${prev.end})`;
      fail(
        e.name,
        `data_offsets [${e.begin}, ${e.end}] leave a hole of ${e.begin - cursor} bytes after ` +
          `${after}; safetensors requires tensors packed back to back`,
      );
    }
    cursor = e.end;
    prev = e;
  }
  if (cursor !== dataLength) {
    fail(
      undefined,
      `the data buffer has ${dataLength} bytes but the tensors cover only ${cursor}; ` +
        `${dataLength - cursor} trailing bytes are not described by the header`,
    );
  }
}

/**
 * Parses and validates a safetensors file held in memory. No tensor is allocated: use
 * `file.tensor(name)` or `file.tensors()`.
 *
 * Throws {@link SafetensorsError} for: files shorter than 8 bytes; a header length beyond the file
 * or above {@link MAX_HEADER_SIZE}; a header that is not UTF-8, not JSON or not an object; duplicate
 * keys; entries lacking or mistyping `dtype`/`shape`/`data_offsets`; unknown dtypes; shapes with
 * negative or fractional dimensions; byte spans that do not match dtype × shape; offsets out of
 * order, overlapping, leaving holes, beyond the data (truncated file) or not covering it;
 * `__metadata__` values that are not strings.
 *
 * @param bytes The whole file.
 * @param options `source` names the bytes in errors.
 * @returns The parsed file.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const bytes = await serializeSafetensors(
 *   { w: tensor([[1, 2, 3]]), step: tensor(7, { dtype: "i32" }) },
 *   { metadata: { format: "pt" } },
 * );
 * const file = parseSafetensors(bytes, { source: "ckpt.safetensors" });
 * assert.deepEqual(file.metadata, { format: "pt" });
 * assert.deepEqual(file.names(), ["w", "step"]); // F32 before I32, like the reference writer
 * assert.equal(await file.tensor("step").item(), 7);
 * ```
 */
export function parseSafetensors(bytes: Uint8Array, options: ParseOptions = {}): SafetensorsFile {
  const source = options.source ?? "<bytes>";
  const fail: Fail = (tensorName, problem) => {
    throw new SafetensorsError(source, tensorName, problem);
  };
  const { n, header } = readHeader(bytes, fail);
  const metadata = parseMetadata(header["__metadata__"], fail);
  const list: Parsed[] = [];
  for (const [name, info] of Object.entries(header)) {
    if (name !== "__metadata__") list.push(parseEntry(name, info, 8 + n, fail));
  }
  checkLayout(list, bytes.length - 8 - n, fail);
  const entries = new Map<string, SafetensorsEntry>();
  for (const { begin: _b, end: _e, ...entry } of list) {
    entries.set(entry.name, Object.freeze(entry));
  }
  return new SafetensorsFile(bytes, source, n, metadata, entries);
}

/**
 * Storage dtype of an f32 tensor when saving. i32 tensors are always stored as I32 and bool
 * tensors as BOOL.
 *
 * @example Usage
 * ```ts
 * import type { SaveDType } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const d: SaveDType = "bf16";
 * assert.equal(d, "bf16");
 * ```
 */
export type SaveDType = "f32" | "bf16" | "f16";

/**
 * Options of {@link serializeSafetensors}.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, type SerializeOptions, serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const opts: SerializeOptions = { dtype: { a: "bf16" }, metadata: { step: "3" } };
 * const file = parseSafetensors(await serializeSafetensors({ a: tensor([1]), b: tensor([2]) }, opts));
 * assert.deepEqual([file.entry("a").dtype, file.entry("b").dtype], ["BF16", "F32"]);
 * ```
 */
export interface SerializeOptions {
  /** The `__metadata__` map (strings to strings). Omitted from the header when not given. */
  metadata?: Readonly<Record<string, string>>;
  /**
   * How f32 tensors are stored: one {@link SaveDType} for the whole file, or a map from tensor
   * name to dtype (unlisted tensors stay f32). Default `"f32"`.
   */
  dtype?: SaveDType | Readonly<Record<string, SaveDType>>;
}

/**
 * Tensors to save: a plain object or a map from name to tensor.
 *
 * @example Usage
 * ```ts
 * import { type TensorCollection, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const c: TensorCollection = new Map([["w", tensor([1])]]);
 * assert.ok(c instanceof Map);
 * ```
 */
export type TensorCollection = Readonly<Record<string, Tensor>> | ReadonlyMap<string, Tensor>;

const SAVE_DTYPES: readonly string[] = ["f32", "bf16", "f16"];
const RANK = new Map<string, number>(SAFETENSORS_DTYPES.map((d, i) => [d, i]));

/** Orders strings by Unicode code point (= UTF-8 byte order, as Rust's `str::cmp`). */
function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

/**
 * Serializes tensors to safetensors bytes. f32 tensors are stored as F32, BF16 or F16 (see
 * {@link SerializeOptions.dtype}; narrowing rounds to nearest even), i32 as I32, bool as BOOL.
 * Async because it reads the tensors back from their backend.
 *
 * @param tensors Name → tensor (a plain object or a Map).
 * @param options Metadata and storage dtypes.
 * @returns The file contents.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensors, serializeSafetensors, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const bytes = await serializeSafetensors({ w: tensor([0.1, 2]) }, { dtype: "bf16" });
 * assert.equal(bytes.length % 8, 4); // 8-byte prefix + header padded to 8 + 2 × 2 bytes of data
 * const w = parseSafetensors(bytes).tensor("w");
 * assert.deepEqual(await w.toArray(), [0.10009765625, 2]); // 0.1 rounded to the nearest bf16
 * ```
 */
export function serializeSafetensors(
  tensors: TensorCollection,
  options: SerializeOptions = {},
): Promise<Uint8Array> {
  return serializeTo("serialize", tensors, options);
}

/**
 * {@link serializeSafetensors} with `source` (e.g. the destination path) quoted in errors.
 * Internal: used by `saveSafetensors`.
 */
export async function serializeTo(
  source: string,
  tensors: TensorCollection,
  options: SerializeOptions,
): Promise<Uint8Array> {
  const fail = (tensorName: string | undefined, problem: string): never => {
    throw new SafetensorsError(source, tensorName, problem);
  };
  if (!LITTLE_ENDIAN) fail(undefined, "writing needs a little-endian host; this one is big-endian");
  const pairs: [string, Tensor][] = tensors instanceof Map
    ? [...(tensors as ReadonlyMap<string, Tensor>).entries()]
    : Object.entries(tensors as Record<string, Tensor>);
  const names = new Set(pairs.map(([name]) => name));

  const metadata = options.metadata;
  if (metadata !== undefined) {
    if (!isPlainObject(metadata)) fail(undefined, `options.metadata must be an object of strings`);
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== "string") {
        fail(
          undefined,
          `options.metadata[${JSON.stringify(k)}] must be a string, got ${describe(v)}; ` +
            `safetensors metadata maps strings to strings (use String(value) or JSON.stringify)`,
        );
      }
    }
  }
  const dtypeOpt = options.dtype ?? "f32";
  if (typeof dtypeOpt === "string") {
    if (!SAVE_DTYPES.includes(dtypeOpt)) {
      fail(
        undefined,
        `options.dtype ${describe(dtypeOpt)} is not one of ${SAVE_DTYPES.join(", ")}`,
      );
    }
  } else {
    for (const [k, v] of Object.entries(dtypeOpt)) {
      if (!names.has(k)) {
        fail(k, `options.dtype names a tensor that is not being saved; check the spelling`);
      }
      if (!SAVE_DTYPES.includes(v)) {
        fail(k, `options.dtype ${describe(v)} is not one of ${SAVE_DTYPES.join(", ")}`);
      }
    }
  }

  interface Item {
    name: string;
    dtype: SafetensorsDType;
    shape: readonly number[];
    bytes: Uint8Array;
  }
  const items: Item[] = [];
  for (const [name, t] of pairs) {
    if (name === "__metadata__") {
      fail(name, `"__metadata__" is reserved for the metadata map; rename the tensor`);
    }
    if (!(t instanceof Tensor)) fail(name, `expected a Tensor, got ${describe(t)}`);
    if (t.isDisposed) fail(name, `the tensor was disposed before saving`);
    const requested = typeof dtypeOpt !== "string" && Object.hasOwn(dtypeOpt, name)
      ? dtypeOpt[name]
      : undefined;
    if (requested !== undefined && requested !== "f32" && t.dtype !== "f32") {
      fail(
        name,
        `options.dtype asks for ${requested} but the tensor is ${t.dtype}; only f32 tensors can be narrowed`,
      );
    }
    const data = await t.data();
    let dtype: SafetensorsDType;
    let typed: ArrayBufferView;
    if (t.dtype === "i32") {
      dtype = "I32";
      typed = data instanceof Int32Array ? data : Int32Array.from(data);
    } else if (t.dtype === "bool") {
      dtype = "BOOL";
      typed = Uint8Array.from(data, (x) => (x !== 0 ? 1 : 0));
    } else {
      const store = requested ?? (typeof dtypeOpt === "string" ? dtypeOpt : "f32");
      const f = data instanceof Float32Array ? data : Float32Array.from(data);
      if (store === "bf16") {
        dtype = "BF16";
        typed = f32ToBf16(f);
      } else if (store === "f16") {
        dtype = "F16";
        typed = f32ToF16(f);
      } else {
        dtype = "F32";
        typed = f;
      }
    }
    items.push({
      name,
      dtype,
      shape: t.shape,
      bytes: new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength),
    });
  }
  items.sort((a, b) =>
    RANK.get(b.dtype)! - RANK.get(a.dtype)! || compareCodePoints(a.name, b.name)
  );

  const parts: string[] = [];
  if (metadata !== undefined) {
    const m = Object.entries(metadata).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
    parts.push(`"__metadata__":{${m.join(",")}}`);
  }
  let offset = 0;
  for (const it of items) {
    const end = offset + it.bytes.length;
    parts.push(
      `${JSON.stringify(it.name)}:{"dtype":"${it.dtype}","shape":[${it.shape.join(",")}],` +
        `"data_offsets":[${offset},${end}]}`,
    );
    offset = end;
  }
  const json = new TextEncoder().encode(`{${parts.join(",")}}`);
  const headerLength = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLength + offset);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, headerLength % 4294967296, true);
  dv.setUint32(4, Math.floor(headerLength / 4294967296), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLength);
  let at = 8 + headerLength;
  for (const it of items) {
    out.set(it.bytes, at);
    at += it.bytes.length;
  }
  return out;
}

/**
 * The name of the last tensor entry that starts before the position a JSON error reports, so a
 * corrupt header names the tensor being read when it broke (undefined when none can be found).
 */
function entryBefore(text: string, jsonError: string): string | undefined {
  const at = Number(/position (\d+)/.exec(jsonError)?.[1] ?? text.length);
  let name: string | undefined;
  for (const m of text.slice(0, at).matchAll(/"((?:[^"\\]|\\.)*)"\s*:\s*\{/g)) {
    if (m[1] !== "__metadata__") name = m[1];
  }
  return name;
}
