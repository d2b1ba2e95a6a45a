import assert from "node:assert/strict";
import fc from "fast-check";
import { createCpuBackend } from "../backend/cpu/cpu_backend.ts";
import { tensor } from "../creation.ts";
import type { DType } from "../dtype.ts";
import type { Tensor } from "../tensor.ts";
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from "./half.ts";
import {
  MAX_HEADER_SIZE,
  parseSafetensors,
  SafetensorsError,
  serializeSafetensors,
} from "./safetensors.ts";
import {
  loadSafetensors,
  loadShardedSafetensors,
  readSafetensorsFile,
  readSafetensorsIndex,
  saveSafetensors,
} from "./safetensors_fs.ts";

// ---------------------------------------------------------------------------------------------
// helpers

/** Builds a file from a header string and data bytes, exactly as the format lays it out. */
function build(header: string, data: ArrayLike<number> = [], headerLength?: number): Uint8Array {
  const json = new TextEncoder().encode(header);
  const n = headerLength ?? json.length;
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(n), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function buildJson(header: unknown, dataLength: number): Uint8Array {
  return build(JSON.stringify(header), new Uint8Array(dataLength));
}

const entry = (dtype: string, shape: number[], offsets: [number, number]) => ({
  dtype,
  shape,
  data_offsets: offsets,
});

/** `assert.throws` for a SafetensorsError whose message matches every regex. */
function throwsAll(fn: () => unknown, ...patterns: RegExp[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof SafetensorsError, `expected SafetensorsError, got ${e}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

async function rejectsAll(fn: () => Promise<unknown>, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(fn, (e: unknown) => {
    assert.ok(e instanceof SafetensorsError, `expected SafetensorsError, got ${e}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

function disposeAll(m: Map<string, Tensor>): void {
  for (const t of m.values()) t.dispose();
}

/** Element-wise identity that treats NaN as equal to NaN and tells -0 from 0. */
function assertSameValues(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(
      Object.is(actual[i], expected[i]),
      `${what}[${i}]: got ${actual[i]}, want ${expected[i]}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// (1) round trips

const shapeArb = fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 4 });
const numelOf = (s: number[]) => s.reduce((a, b) => a * b, 1);

interface Spec {
  dtype: DType;
  shape: number[];
  values: number[];
}

const specArb: fc.Arbitrary<Spec> = fc
  .tuple(fc.constantFrom<DType>("f32", "i32", "bool"), shapeArb)
  .chain(([dtype, shape]) => {
    const n = numelOf(shape);
    const value = dtype === "f32"
      ? fc.float()
      : dtype === "i32"
      ? fc.integer({ min: -2147483648, max: 2147483647 })
      : fc.integer({ min: 0, max: 1 });
    return fc.array(value, { minLength: n, maxLength: n }).map((values) => ({
      dtype,
      shape,
      values,
    }));
  });

const nameArb = fc.string({ unit: "binary", minLength: 0, maxLength: 8 }).filter((s) =>
  s !== "__metadata__"
);

Deno.test("round trip: f32/i32/bool tensors of random shapes (0-d, empty) survive exactly", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(nameArb, specArb, { maxKeys: 5 }),
      fc.option(fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }), { nil: undefined }),
      async (specs, metadata) => {
        const tensors = new Map<string, Tensor>();
        for (const [name, s] of Object.entries(specs)) {
          tensors.set(name, tensor(s.values, { shape: s.shape, dtype: s.dtype }));
        }
        try {
          const bytes = await serializeSafetensors(
            tensors,
            metadata === undefined ? {} : { metadata },
          );
          // Layout invariants: the header length is a multiple of 8 and padding is spaces.
          const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
          assert.equal(n % 8, 0);
          const file = parseSafetensors(bytes);
          assert.deepEqual(new Set(file.names()), new Set(Object.keys(specs)));
          assert.deepEqual(file.metadata, { ...metadata });
          for (const [name, s] of Object.entries(specs)) {
            const e = file.entry(name);
            assert.equal(e.dtype, { f32: "F32", i32: "I32", bool: "BOOL" }[s.dtype]);
            assert.deepEqual(e.shape, s.shape);
            using t = file.tensor(name);
            assert.equal(t.dtype, s.dtype);
            assert.deepEqual(t.shape, s.shape);
            const want = s.dtype === "f32" ? Float32Array.from(s.values) : s.values;
            assertSameValues(await t.data(), want, name);
          }
          // Deterministic: same tensors in another insertion order give identical bytes.
          const reversed = new Map([...tensors].reverse());
          assert.deepEqual(
            await serializeSafetensors(reversed, metadata === undefined ? {} : { metadata }),
            bytes,
          );
        } finally {
          disposeAll(tensors);
        }
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("round trip: bf16 and f16 storage equal the f32ToBf16 / f32ToF16 rounded values", async () => {
  await fc.assert(
    fc.asyncProperty(shapeArb, fc.infiniteStream(fc.float()), async (shape, stream) => {
      const values = Float32Array.from(stream.take(numelOf(shape)));
      using w = tensor(values, { shape, dtype: "f32" });
      using ids = tensor([1, 2], { dtype: "i32" });
      for (
        const [store, tag, round] of [
          ["bf16", "BF16", (v: Float32Array) => bf16ToF32(f32ToBf16(v))],
          ["f16", "F16", (v: Float32Array) => f16ToF32(f32ToF16(v))],
        ] as const
      ) {
        const bytes = await serializeSafetensors({ w, ids }, { dtype: store });
        const file = parseSafetensors(bytes);
        assert.equal(file.entry("w").dtype, tag);
        assert.equal(file.entry("ids").dtype, "I32"); // non-f32 tensors keep their dtype
        assert.equal(file.entry("w").byteLength, 2 * values.length);
        using back = file.tensor("w");
        assert.equal(back.dtype, "f32");
        assertSameValues(await back.data(), round(values), `${store} w`);
      }
    }),
    { numRuns: 100 },
  );
});

Deno.test("serialize: per-tensor dtype map, f64 CPU backend, Map input, layout order", async () => {
  const cpu64 = createCpuBackend({ precision: "f64" });
  using a = tensor([0.1, 0.2], { backend: cpu64 }); // read back as Float64Array
  using b = tensor([1.5]);
  using m = tensor([true, false, true]);
  using i = tensor([7], { dtype: "i32" });
  const bytes = await serializeSafetensors(new Map([["m", m], ["b", b], ["a", a], ["i", i]]), {
    dtype: { a: "bf16" },
  });
  const file = parseSafetensors(bytes);
  // Reference writer order: descending dtype (F32, I32, BF16, BOOL), then name.
  assert.deepEqual(file.names(), ["b", "i", "a", "m"]);
  assert.deepEqual(file.entry("a").dtype, "BF16");
  assert.deepEqual(file.entry("b").dtype, "F32");
  assert.deepEqual(file.array("a"), bf16ToF32(f32ToBf16([0.1, 0.2])));
  assert.deepEqual(file.array("m"), new Uint8Array([1, 0, 1]));
  // The header text is compact JSON padded with spaces, as the reference writes it.
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const text = new TextDecoder().decode(bytes.subarray(8, 8 + n));
  assert.equal(
    text.trimEnd(),
    '{"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},' +
      '"i":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},' +
      '"a":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]},' +
      '"m":{"dtype":"BOOL","shape":[3],"data_offsets":[12,15]}}',
  );
  assert.match(text, /^[^ ]*} *$/);
  // A file with no tensors at all is valid too.
  const empty = parseSafetensors(await serializeSafetensors({}));
  assert.deepEqual(empty.names(), []);
});

Deno.test("round trip: awkward names and metadata keys (__proto__, unicode, JSON escapes)", async () => {
  const names = [
    "__proto__",
    "constructor",
    "0",
    "10",
    "2",
    "é",
    "\u{1F600}",
    "\uFFFD",
    'q"\\',
    "",
  ];
  const tensors = new Map(names.map((n, i) => [n, tensor([i])] as const));
  const metadata = Object.fromEntries([["__proto__", "p"], ["a\nb", "\u0000"]]);
  const dtype = Object.fromEntries([["__proto__", "bf16" as const]]);
  try {
    const file = parseSafetensors(await serializeSafetensors(tensors, { metadata, dtype }));
    // Sorted by code point (UTF-8 byte order), F32 before BF16, like the reference writer.
    assert.deepEqual(file.names(), [
      "",
      "0",
      "10",
      "2",
      "constructor",
      'q"\\',
      "é",
      "\uFFFD",
      "\u{1F600}",
      "__proto__",
    ]);
    assert.equal(file.entry("__proto__").dtype, "BF16");
    assert.deepEqual(Object.entries(file.metadata), [["__proto__", "p"], ["a\nb", "\u0000"]]);
    for (const [i, n] of names.entries()) assert.deepEqual(file.array(n), new Float32Array([i]));
  } finally {
    disposeAll(tensors);
  }
});

Deno.test("load options: dtype override, backend, filter, and tensors() disposal on error", async () => {
  const cpu = createCpuBackend();
  using ids = tensor([3, 4, 5], { dtype: "i32" });
  using x = tensor([1, 2.5]);
  const bytes = await serializeSafetensors({ ids, x });
  const file = parseSafetensors(bytes, { source: "opts.safetensors" });
  using asF32 = file.tensor("ids", { dtype: "f32", backend: cpu });
  assert.equal(asF32.backend, cpu);
  assert.deepEqual(await asF32.toArray(), [3, 4, 5]);
  using asBool = file.tensor("x", { dtype: "bool" });
  assert.deepEqual(await asBool.toArray(), [true, true]);
  throwsAll(
    () => file.tensor("x", { dtype: "i32" }),
    /opts\.safetensors/,
    /tensor "x"/,
    /F32 value 2\.5 at flat index 1 does not fit in i32/,
  );
  // tensors(): the failing x comes after ids; ids must be disposed again.
  const before = cpu.memory().liveBuffers;
  assert.throws(() => file.tensors({ dtype: "i32", backend: cpu }), SafetensorsError);
  assert.equal(cpu.memory().liveBuffers, before);
  const some = await loadSafetensors(bytes, { filter: (n) => n === "x", backend: cpu });
  assert.deepEqual([...some.keys()], ["x"]);
  disposeAll(some);
  throwsAll(() => file.entry("nope"), /no tensor named "nope"/, /the file holds "x", "ids"/);
});

// ---------------------------------------------------------------------------------------------
// (2) corrupt files

Deno.test("errors: header length prefix, size limits, encoding, JSON", () => {
  throwsAll(
    () => parseSafetensors(new Uint8Array(5), { source: "model.safetensors" }),
    /^safetensors \(model\.safetensors\): /,
    /file is 5 bytes, shorter than the 8-byte header length/,
  );
  const beyond = build('{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}', [], 4096);
  throwsAll(
    () => parseSafetensors(beyond, { source: "x.st" }),
    /\(x\.st\)/,
    /header length 4096 goes beyond the end of the file \(61 bytes/,
  );
  const huge = new Uint8Array(16);
  new DataView(huge.buffer).setBigUint64(0, BigInt(MAX_HEADER_SIZE + 1), true);
  throwsAll(() => parseSafetensors(huge), /header length 100000001 .* exceeds MAX_HEADER_SIZE/);
  const u64max = new Uint8Array(16).fill(0xff);
  throwsAll(() => parseSafetensors(u64max), /exceeds MAX_HEADER_SIZE/);
  const badUtf8 = build("{}");
  badUtf8[9] = 0xff;
  throwsAll(() => parseSafetensors(badUtf8), /header \(bytes 8\.\.10\) is not valid UTF-8/);
  throwsAll(
    () =>
      parseSafetensors(build('{"a": {"dtype": "F32"}, "lm_head.weight": {"dtype": "F32", garbage')),
    /tensor "lm_head\.weight": header is not valid JSON/,
    /it starts "\{\\"a\\": \{/,
  );
  throwsAll(() => parseSafetensors(build("")), /header is not valid JSON/);
  throwsAll(
    () => parseSafetensors(build("[1, 2]")),
    /header must be a JSON object .* got an array/,
  );
  throwsAll(() => parseSafetensors(build("null")), /got null/);
});

Deno.test("errors: truncated file names the tensor and the byte counts", async () => {
  using a = tensor([1, 2]);
  using b = tensor([3, 4, 5, 6]);
  const bytes = await serializeSafetensors({ a, b });
  const cut = bytes.subarray(0, bytes.length - 4);
  throwsAll(
    () => parseSafetensors(cut, { source: "model.safetensors" }),
    /safetensors \(model\.safetensors\): tensor "b": /,
    /data_offsets \[8, 24\] go past the end of the data buffer/,
    /file is truncated: needs 24 bytes of data, has 20/,
  );
  // Cut inside the header: the header length now points past the end.
  throwsAll(() => parseSafetensors(bytes.subarray(0, 20)), /header length \d+ goes beyond the end/);
  // Extra bytes after the last tensor are rejected like the reference does.
  const longer = new Uint8Array(bytes.length + 3);
  longer.set(bytes);
  throwsAll(
    () => parseSafetensors(longer),
    /data buffer has 27 bytes but the tensors cover only 24/,
  );
});

Deno.test("errors: dtype/shape mismatch, overlaps, holes, out-of-order offsets", () => {
  throwsAll(
    () =>
      parseSafetensors(buildJson({ "lm_head.weight": entry("F32", [4, 5], [0, 96]) }, 96), {
        source: "model.safetensors",
      }),
    /^safetensors \(model\.safetensors\): tensor "lm_head\.weight": data_offsets \[0, 96\] span 96 bytes but dtype F32 with shape \[4,5\] needs 80/,
  );
  throwsAll(
    () =>
      parseSafetensors(
        buildJson({ a: entry("F32", [2], [0, 8]), b: entry("F32", [2], [4, 12]) }, 12),
      ),
    /tensor "b": data_offsets \[4, 12\] overlap tensor "a" at \[0, 8\]/,
  );
  throwsAll(
    () =>
      parseSafetensors(
        buildJson({ a: entry("F32", [1], [0, 4]), b: entry("F32", [1], [8, 12]) }, 12),
      ),
    /tensor "b": data_offsets \[8, 12\] leave a hole of 4 bytes after tensor "a" \(ends at 4\)/,
  );
  throwsAll(
    () => parseSafetensors(buildJson({ a: entry("F32", [1], [4, 8]) }, 8)),
    /tensor "a": .*hole of 4 bytes after the start of the data buffer/,
  );
  throwsAll(
    () => parseSafetensors(buildJson({ a: entry("F32", [0], [8, 4]) }, 8)),
    /tensor "a": data_offsets \[8, 4\] are out of order/,
  );
  // An empty tensor inside another one's bytes is an overlap too.
  throwsAll(
    () =>
      parseSafetensors(
        buildJson({ a: entry("F32", [2], [0, 8]), e: entry("F32", [0], [4, 4]) }, 8),
      ),
    /tensor "e": data_offsets \[4, 4\] overlap tensor "a"/,
  );
  // ... but at a boundary it is fine.
  const ok = parseSafetensors(
    buildJson({ a: entry("F32", [2], [0, 8]), e: entry("F32", [3, 0], [8, 8]) }, 8),
  );
  assert.deepEqual(ok.entry("e").shape, [3, 0]);
});

Deno.test("errors: entry fields, unknown dtypes, shapes, metadata, duplicate keys", () => {
  const one = (info: unknown, len = 4) => () => parseSafetensors(buildJson({ w: info }, len));
  throwsAll(
    one(5),
    /tensor "w": header entry must be an object \{dtype, shape, data_offsets\}, got 5/,
  );
  throwsAll(
    one({ shape: [1], data_offsets: [0, 4] }),
    /tensor "w": header entry is missing "dtype"/,
  );
  throwsAll(one({ dtype: 3, shape: [1], data_offsets: [0, 4] }), /"dtype" must be a string, got 3/);
  throwsAll(
    one(entry("F128", [1], [0, 4])),
    /tensor "w": unknown dtype "F128"; readable dtypes are F32, F16, BF16, F64, I64, I32/,
  );
  throwsAll(
    one({ dtype: "F32", data_offsets: [0, 4] }),
    /tensor "w": header entry is missing "shape"/,
  );
  throwsAll(one({ dtype: "F32", shape: 4, data_offsets: [0, 4] }), /"shape" must be an array/);
  throwsAll(one(entry("F32", [-1], [0, 4])), /tensor "w": shape \[-1\] has invalid dimension -1/);
  throwsAll(one(entry("F32", [1.5], [0, 4])), /shape \[1\.5\] has invalid dimension 1\.5/);
  throwsAll(
    one({ dtype: "F32", shape: [1] }),
    /tensor "w": header entry is missing "data_offsets"/,
  );
  throwsAll(
    one({ dtype: "F32", shape: [1], data_offsets: [0] }),
    /"data_offsets" must be \[begin, end\]/,
  );
  throwsAll(one({ dtype: "F32", shape: [1], data_offsets: ["0", "4"] }), /got \["0","4"\]/);
  throwsAll(one(entry("F4", [3], [0, 2]), 2), /dtype F4 with shape \[3\] is 12 bits/);
  throwsAll(
    () => parseSafetensors(buildJson({ __metadata__: { step: 3 } }, 0)),
    /__metadata__ value of "step" must be a string, got 3/,
  );
  throwsAll(
    () => parseSafetensors(buildJson({ __metadata__: [1] }, 0)),
    /__metadata__ must be an object/,
  );
  const dupTop = build(
    '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},' +
      '"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
    new Uint8Array(4),
  );
  throwsAll(() => parseSafetensors(dupTop), /tensor "w": appears more than once in the header/);
  const dupEscaped = build(
    '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},' +
      '"\\u0077":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
    new Uint8Array(4),
  );
  throwsAll(() => parseSafetensors(dupEscaped), /tensor "w": appears more than once/);
  const dupField = build(
    '{"w":{"dtype":"F32","dtype":"I32","shape":[1],"data_offsets":[0,4]}}',
    new Uint8Array(4),
  );
  throwsAll(
    () => parseSafetensors(dupField),
    /tensor "w": header entry has the key "dtype" more than once/,
  );
  const dupMeta = build('{"__metadata__":{"a":"1","a":"2"}}');
  throwsAll(() => parseSafetensors(dupMeta), /__metadata__ has the key "a" more than once/);
  // Keys that only look alike in tricky JSON strings are not duplicates.
  const tricky = build(
    '{"a\\"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},' +
      '"a\\\\":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},' +
      '"__metadata__":{"k":"{\\"a\\\\\\"b\\":1}"}}',
    [1, 0],
  );
  assert.deepEqual(parseSafetensors(tricky).names(), ['a"b', "a\\"]);
});

Deno.test("errors: values that do not fit the tensor dtype", () => {
  // I64 [1, 2^32, -2^31 - 1]
  const i64 = new Uint8Array(24);
  const dv = new DataView(i64.buffer);
  dv.setBigInt64(0, 1n, true);
  dv.setBigInt64(8, 4294967296n, true);
  dv.setBigInt64(16, -2147483649n, true);
  const file = parseSafetensors(
    build(JSON.stringify({ "input_ids": entry("I64", [3], [0, 24]) }), i64),
    { source: "batch.safetensors" },
  );
  throwsAll(
    () => file.tensor("input_ids"),
    /^safetensors \(batch\.safetensors\): tensor "input_ids": I64 value 4294967296 at flat index 1 does not fit in i32/,
    /load it with \{ dtype: "f32" \}/,
  );
  assert.deepEqual(
    file.array("input_ids", { dtype: "f32" }),
    new Float32Array([1, 4294967296, -2147483649]),
  );
  const big = new Uint8Array(8);
  new DataView(big.buffer).setBigInt64(0, -(2n ** 62n) - 3n, true);
  throwsAll(
    () => parseSafetensors(build(JSON.stringify({ t: entry("I64", [], [0, 8]) }), big)).tensor("t"),
    /I64 value -4611686018427387907 at flat index 0/,
  );
  const u8 = parseSafetensors(build(JSON.stringify({ q: entry("U8", [3], [0, 3]) }), [0, 1, 200]));
  throwsAll(
    () => u8.tensor("q"),
    /tensor "q": U8 value 200 at flat index 2 is not 0 or 1/,
    /dtype: "i32"/,
  );
  assert.deepEqual(u8.array("q", { dtype: "i32" }), new Int32Array([0, 1, 200]));
  const f8 = parseSafetensors(build(JSON.stringify({ s: entry("F8_E4M3", [2], [0, 2]) }), [1, 2]));
  assert.deepEqual(f8.names(), ["s"]); // parses ...
  throwsAll(
    () => f8.tensor("s"),
    /tensor "s": dtype F8_E4M3 cannot be loaded as a tensor; readable dtypes/,
  );
});

Deno.test("errors: serialize rejects bad metadata, dtype options and tensors", async () => {
  using w = tensor([1]);
  using ids = tensor([1], { dtype: "i32" });
  await rejectsAll(
    // deno-lint-ignore no-explicit-any
    () => serializeSafetensors({ w }, { metadata: { step: 3 as any } }),
    /options\.metadata\["step"\] must be a string, got 3/,
  );
  await rejectsAll(
    () => serializeSafetensors({ w }, { dtype: { W: "bf16" } }),
    /tensor "W": options\.dtype names a tensor that is not being saved/,
  );
  await rejectsAll(
    () => serializeSafetensors({ ids }, { dtype: { ids: "bf16" } }),
    /tensor "ids": options\.dtype asks for bf16 but the tensor is i32/,
  );
  await rejectsAll(
    // deno-lint-ignore no-explicit-any
    () => serializeSafetensors({ w }, { dtype: "f64" as any }),
    /options\.dtype "f64" is not one of f32, bf16, f16/,
  );
  await rejectsAll(() => serializeSafetensors({ __metadata__: w }), /"__metadata__" is reserved/);
  const gone = tensor([1]);
  gone.dispose();
  await rejectsAll(() => serializeSafetensors({ gone }), /tensor "gone": the tensor was disposed/);
});

// ---------------------------------------------------------------------------------------------
// (3) a fixture written byte by byte, independent of our writer

Deno.test("parse: hand-built fixture with F16, BF16, I64, unaligned F32, BOOL, padded header", async () => {
  // Header keys are deliberately not in data order.
  const header = '{"__metadata__":{"format":"pt","note":"hand made"},' +
    '"scale":{"dtype":"F32","shape":[],"data_offsets":[14,18]},' +
    '"h":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},' +
    '"b":{"dtype":"BF16","shape":[3],"data_offsets":[8,14]},' +
    '"ids":{"dtype":"I64","shape":[3],"data_offsets":[18,42]},' +
    '"none":{"dtype":"F32","shape":[0,7],"data_offsets":[42,42]},' +
    '"mask":{"dtype":"BOOL","shape":[2],"data_offsets":[42,44]}}';
  const padded = header + "     "; // trailing spaces are allowed
  const n = padded.length; // ASCII: one byte per char
  const bytes: number[] = [n & 0xff, (n >> 8) & 0xff, 0, 0, 0, 0, 0, 0];
  for (let i = 0; i < padded.length; i++) bytes.push(padded.charCodeAt(i));
  // deno-fmt-ignore
  bytes.push(
    // h: F16 [1, -2, 65504, 2^-24], little-endian
    0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00,
    // b: BF16 [1, -3, 0.15625]
    0x80, 0x3f, 0x40, 0xc0, 0x20, 0x3e,
    // scale: F32 0.5 = 0x3f000000, at data offset 14 (not 4-aligned: decoded from a copy)
    0x00, 0x00, 0x00, 0x3f,
    // ids: I64 [1, -1, 2147483647]
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0x7f, 0x00, 0x00, 0x00, 0x00,
    // none: F32 [0, 7], no bytes; mask: BOOL [true, false]
    0x01, 0x00,
  );
  const file = parseSafetensors(new Uint8Array(bytes), { source: "fixture" });
  assert.equal(file.headerLength, n);
  assert.equal((8 + n + 14) % 4, 2, "the F32 entry is misaligned on purpose");
  assert.deepEqual(file.metadata, { format: "pt", note: "hand made" });
  assert.deepEqual(file.names(), ["h", "b", "scale", "ids", "none", "mask"]);
  assert.deepEqual(file.entry("ids"), {
    name: "ids",
    dtype: "I64",
    shape: [3],
    dataOffsets: [18, 42],
    byteOffset: 8 + n + 18,
    byteLength: 24,
  });
  const h = file.tensor("h");
  assert.equal(h.dtype, "f32");
  assert.deepEqual(await h.toArray(), [[1, -2], [65504, 2 ** -24]]);
  assert.deepEqual(await file.tensor("b").toArray(), [1, -3, 0.15625]);
  const scale = file.tensor("scale");
  assert.deepEqual([scale.shape, await scale.item()], [[], 0.5]);
  const ids = file.tensor("ids");
  assert.equal(ids.dtype, "i32");
  assert.deepEqual(await ids.toArray(), [1, -1, 2147483647]);
  const none = file.tensor("none");
  assert.deepEqual([none.shape, none.size], [[0, 7], 0]);
  assert.deepEqual(await file.tensor("mask").toArray(), [true, false]);
  assert.deepEqual([...file.raw("b")], [0x80, 0x3f, 0x40, 0xc0, 0x20, 0x3e]);
  // array() never aliases the file bytes, even for aligned F32 data.
  const aligned = parseSafetensors(
    build('{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}    ', [0, 0, 0x80, 0x3f]),
  );
  const arr = aligned.array("x");
  arr[0] = 5;
  assert.deepEqual(aligned.array("x"), new Float32Array([1]));
  for (const t of [h, scale, ids, none]) t.dispose();
});

Deno.test("parse: a subarray of a larger buffer at an odd offset", async () => {
  using w = tensor([1, 2, 3]);
  const bytes = await serializeSafetensors({ w });
  const host = new Uint8Array(bytes.length + 3);
  host.set(bytes, 3);
  const file = parseSafetensors(host.subarray(3));
  assert.deepEqual(file.array("w"), new Float32Array([1, 2, 3]));
});

// ---------------------------------------------------------------------------------------------
// (4) files: atomic save

Deno.test("saveSafetensors: complete file, no leftover temporaries, overwrite, failed save", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/model.safetensors`;
    using w = tensor([[1, 2], [3, 4]]);
    await saveSafetensors(path, { w }, { metadata: { step: "1" } });
    const listing = () => [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(listing(), ["model.safetensors"]);
    const first = await readSafetensorsFile(path);
    assert.equal(first.source, path);
    assert.deepEqual(first.metadata, { step: "1" });
    assert.equal(first.bytes.length, (await Deno.stat(path)).size);

    using v = tensor([9], { dtype: "i32" });
    await saveSafetensors(path, { v }); // overwrite
    const loaded = await loadSafetensors(path);
    assert.deepEqual([...loaded.keys()], ["v"]);
    assert.deepEqual(await loaded.get("v")!.toArray(), [9]);
    disposeAll(loaded);
    assert.deepEqual(listing(), ["model.safetensors"]);

    // A save that fails while serializing leaves the previous file untouched.
    const before = await Deno.readFile(path);
    await rejectsAll(
      // deno-lint-ignore no-explicit-any
      () => saveSafetensors(path, { v }, { metadata: { bad: 1 as any } }),
      new RegExp(`safetensors \\(${path.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\)`),
      /options\.metadata\["bad"\] must be a string/,
    );
    assert.deepEqual(await Deno.readFile(path), before);
    // A save whose rename fails (the target is a non-empty directory) cleans up its temporary.
    await Deno.mkdir(`${dir}/occupied`);
    await Deno.writeTextFile(`${dir}/occupied/x`, "x");
    await rejectsAll(() => saveSafetensors(`${dir}/occupied`, { v }), /could not save/);
    assert.deepEqual(listing(), ["model.safetensors", "occupied"]);
    // Writing into a missing directory fails cleanly.
    await rejectsAll(
      () => saveSafetensors(`${dir}/missing/m.safetensors`, { v }),
      /could not save/,
    );
    await rejectsAll(
      () => readSafetensorsFile(`${dir}/absent.safetensors`),
      /safetensors file not found at .*absent\.safetensors/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------------------------
// (5) sharded checkpoints

Deno.test("loadShardedSafetensors: two shards, filter, missing shard, out-of-sync index", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const s1 = "model-00001-of-00002.safetensors";
    const s2 = "model-00002-of-00002.safetensors";
    using embed = tensor([[1, 2], [3, 4]]);
    using norm = tensor([0.5, 0.25]);
    using head = tensor([[5, 6]]);
    await saveSafetensors(`${dir}/${s1}`, {
      "model.embed.weight": embed,
      "model.norm.weight": norm,
    });
    await saveSafetensors(`${dir}/${s2}`, { "lm_head.weight": head }, { dtype: "bf16" });
    const index = {
      metadata: { total_size: 28 },
      weight_map: {
        "model.embed.weight": s1,
        "lm_head.weight": s2,
        "model.norm.weight": s1,
      },
    };
    const indexPath = `${dir}/model.safetensors.index.json`;
    await Deno.writeTextFile(indexPath, JSON.stringify(index));

    const parsed = await readSafetensorsIndex(indexPath);
    assert.deepEqual(parsed.shards, [s1, s2]);
    assert.equal(parsed.dir, `${dir}/`);

    const cpu = createCpuBackend();
    const all = await loadShardedSafetensors(indexPath, { backend: cpu });
    assert.deepEqual(
      [...all.keys()].sort(),
      ["lm_head.weight", "model.embed.weight", "model.norm.weight"],
    );
    assert.deepEqual(await all.get("model.embed.weight")!.toArray(), [[1, 2], [3, 4]]);
    assert.deepEqual(await all.get("lm_head.weight")!.toArray(), [[5, 6]]);
    assert.equal(cpu.memory().liveBuffers, 3);
    disposeAll(all);

    // With a filter, a shard none of whose tensors is wanted is never read.
    await Deno.remove(`${dir}/${s2}`);
    const some = await loadShardedSafetensors(indexPath, { filter: (n) => n.startsWith("model.") });
    assert.deepEqual([...some.keys()].sort(), ["model.embed.weight", "model.norm.weight"]);
    disposeAll(some);

    // Missing shard: the error names the shard file and a tensor that needs it; nothing leaks.
    const liveBefore = cpu.memory().liveBuffers;
    await rejectsAll(
      () => loadShardedSafetensors(indexPath, { backend: cpu }),
      /model\.safetensors\.index\.json/,
      /shard file "model-00002-of-00002\.safetensors" \(needed for 1 tensor\(s\), e\.g\. "lm_head\.weight"\) not found/,
    );
    assert.equal(cpu.memory().liveBuffers, liveBefore);

    // The index names a tensor that its shard does not hold.
    await Deno.writeTextFile(
      indexPath,
      JSON.stringify({ weight_map: { "model.embed.weight": s1, "ghost": s1 } }),
    );
    await rejectsAll(
      () => loadShardedSafetensors(indexPath),
      /tensor "ghost": weight_map assigns it to shard "model-00001-of-00002\.safetensors", but that file has no such tensor/,
    );

    // Malformed indexes.
    await Deno.writeTextFile(indexPath, "{oops");
    await rejectsAll(() => readSafetensorsIndex(indexPath), /index is not valid JSON/);
    await Deno.writeTextFile(indexPath, JSON.stringify({ metadata: {} }));
    await rejectsAll(() => readSafetensorsIndex(indexPath), /index needs "weight_map"/);
    await Deno.writeTextFile(indexPath, JSON.stringify({ weight_map: { a: 3 } }));
    await rejectsAll(
      () => readSafetensorsIndex(indexPath),
      /tensor "a": weight_map value must be a shard file name/,
    );
    await Deno.writeTextFile(indexPath, JSON.stringify({ weight_map: { a: "../x.safetensors" } }));
    await rejectsAll(() => readSafetensorsIndex(indexPath), /must be a relative path inside/);
    await rejectsAll(() => readSafetensorsIndex(`${dir}/nope.json`), /index file not found/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
