import assert from "node:assert/strict";
import { mulberry32 } from "@rlvr/common";
import { join } from "node:path";
import fc from "fast-check";
import {
  createCpuBackend,
  parseSafetensors,
  parseSafetensorsIndex,
  randn,
  serializeSafetensors,
  type Tensor,
  tensor,
  zeros,
} from "@rlvr/tensor";
import {
  type Checkpoint,
  CheckpointError,
  checkpointFiles,
  loadCheckpointFromFiles,
  loadCheckpointFromUrl,
  type SaveCheckpointOptions,
} from "./checkpoint.ts";
import { loadCheckpoint, saveCheckpoint } from "./checkpoint_fs.ts";
import {
  configFromHf,
  configToHf,
  modelConfig,
  type ModelConfigInit,
  parameterShapes,
} from "./config.ts";

// ---------------------------------------------------------------- helpers

/** Tiny Qwen2: GQA (4 query heads, 2 kv heads), QKV bias, untied head. */
const QWEN2: ModelConfigInit = {
  modelType: "qwen2",
  vocabSize: 32,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  eosTokenIds: [1],
  bosTokenId: 0,
};

/** The same architecture as a hand-written transformers `config.json`. */
const QWEN2_HF = {
  architectures: ["Qwen2ForCausalLM"],
  model_type: "qwen2",
  hidden_act: "silu",
  vocab_size: 32,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 4096,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  tie_word_embeddings: false,
  use_sliding_window: false,
  bos_token_id: 0,
  eos_token_id: 1,
  torch_dtype: "bfloat16",
};

function randomParams(init: ModelConfigInit = QWEN2, seed = 1): Map<string, Tensor> {
  const shapes = parameterShapes(modelConfig(init));
  let i = 0;
  return new Map(
    [...shapes].map(([name, shape]) => [name, randn(shape, { seed: seed * 1000 + i++ })]),
  );
}

async function f32(t: Tensor): Promise<Float32Array> {
  const d = await t.data();
  assert.ok(d instanceof Float32Array, `expected f32 data, got ${d.constructor.name}`);
  return d;
}

function bitsOf(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

function assertSameBits(actual: Float32Array, expected: Float32Array, label: string): void {
  assert.equal(actual.length, expected.length, `${label}: length`);
  const a = bitsOf(actual);
  const b = bitsOf(expected);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) {
      assert.fail(
        `${label}[${i}]: bits 0x${a[i]!.toString(16)} (${actual[i]}) != 0x${b[i]!.toString(16)} (${
          expected[i]
        })`,
      );
    }
  }
}

async function assertParamsEqual(
  actual: ReadonlyMap<string, Tensor>,
  expected: ReadonlyMap<string, Tensor>,
): Promise<void> {
  assert.deepEqual([...actual.keys()], [...expected.keys()]);
  for (const [name, t] of expected) {
    const got = actual.get(name)!;
    assert.deepEqual(got.shape, t.shape, name);
    assert.equal(got.dtype, "f32", name);
    assertSameBits(await f32(got), await f32(t), name);
  }
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "ckpt_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function listDir(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

interface RawEntry {
  name: string;
  dtype: string;
  shape: readonly number[];
  data: Uint8Array;
}

/**
 * A safetensors file written by hand from the format spec (not by the library's writer): u64 LE
 * header length, JSON header padded with spaces to 8 bytes, then the data in entry order.
 */
function rawSafetensors(entries: readonly RawEntry[], metadata?: Record<string, string>) {
  const header: Record<string, unknown> = {};
  if (metadata !== undefined) header.__metadata__ = metadata;
  let offset = 0;
  for (const e of entries) {
    header[e.name] = {
      dtype: e.dtype,
      shape: e.shape,
      data_offsets: [offset, offset + e.data.length],
    };
    offset += e.data.length;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLength = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLength), true);
  out.fill(0x20, 8, 8 + headerLength);
  out.set(json, 8);
  let at = 8 + headerLength;
  for (const e of entries) {
    out.set(e.data, at);
    at += e.data.length;
  }
  return out;
}

function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Reads the JSON header of a safetensors file ourselves (u64 LE length, then JSON). */
function readHeader(bytes: Uint8Array): { header: Record<string, unknown>; length: number } {
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  return { header, length };
}

/** Deterministic 32-bit generator (`@rlvr/common`'s mulberry32, as uint32) for bit patterns. */
function mulberry32Words(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() * 4294967296;
}

/** binary16 decoded from the IEEE 754 definition (independent of the library's tables). */
function f16Value(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return sign * Infinity; // callers never pass NaN patterns
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const copy = bytes.slice();
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", copy.buffer));
  return Array.from(d, (x) => x.toString(16).padStart(2, "0")).join("");
}

function hasPython(module: string): boolean {
  try {
    const r = new Deno.Command("python3", {
      args: ["-c", `import ${module}`],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return r.success;
  } catch {
    return false; // no python3 at all
  }
}

// ---------------------------------------------------------------- round trips

Deno.test("round trip: unsharded Qwen2 (GQA) params, config and folder contents are exact", async () => {
  await withDir(async (root) => {
    const dir = join(root, "new", "ckpt"); // created, parents included
    const config = modelConfig(QWEN2);
    const params = randomParams();
    await saveCheckpoint(dir, { config, params });
    assert.deepEqual(listDir(dir), ["config.json", "model.safetensors"]); // no temporaries left
    const ckpt = await loadCheckpoint(dir);
    assert.deepEqual(ckpt.config, config);
    assert.equal(ckpt.dir, dir);
    assert.equal(ckpt.extra.size, 0);
    assert.equal(ckpt.generationConfig, null);
    await assertParamsEqual(ckpt.params, params);
    assert.deepEqual(
      [...ckpt.params.keys()],
      [...parameterShapes(config).keys()],
      "params come in parameterShapes order",
    );
  });
});

Deno.test("round trip: sharded save writes HF's index and shard names, greedy shards, exact load", async () => {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    const params = randomParams(QWEN2, 2);
    const maxShardBytes = 2 * 24 * 16 * 4; // two MLP matrices
    await saveCheckpoint(dir, { config, params }, { maxShardBytes });
    const files = listDir(dir);
    const shards = files.filter((f) => f.startsWith("model-"));
    assert.ok(shards.length >= 3, `expected several shards, got ${files}`);
    assert.deepEqual(
      shards,
      shards.map((_, i) =>
        `model-${String(i + 1).padStart(5, "0")}-of-${
          String(shards.length).padStart(5, "0")
        }.safetensors`
      ),
    );
    assert.deepEqual(files, ["config.json", "model.safetensors.index.json", ...shards].sort());

    const indexText = await Deno.readTextFile(join(dir, "model.safetensors.index.json"));
    const index = JSON.parse(indexText);
    assert.deepEqual(Object.keys(index), ["metadata", "weight_map"]);
    let total = 0;
    for (const t of params.values()) total += t.size * 4;
    assert.deepEqual(index.metadata, { total_size: total });
    const mapped = Object.keys(index.weight_map);
    assert.deepEqual(mapped, [...params.keys()].sort(), "weight_map covers params, sorted");

    // Each shard holds what the index says, within the limit, and cutting is greedy in
    // parameter order: the first tensor of the next shard would not have fitted.
    const order = [...params.keys()];
    const sizes: number[] = [];
    let previousLast = -1;
    for (const shard of shards) {
      const bytes = await Deno.readFile(join(dir, shard));
      const { header } = readHeader(bytes);
      const names = Object.keys(header).filter((k) => k !== "__metadata__");
      assert.deepEqual(
        names.sort(),
        mapped.filter((n) => index.weight_map[n] === shard).sort(),
        shard,
      );
      const size = names.reduce((s, n) => s + params.get(n)!.size * 4, 0);
      assert.ok(size <= maxShardBytes || names.length === 1, `${shard}: ${size} bytes`);
      const positions = names.map((n) => order.indexOf(n)).sort((a, b) => a - b);
      assert.equal(positions[0], previousLast + 1, `${shard} continues the parameter order`);
      assert.equal(positions.at(-1)! - positions[0]! + 1, positions.length, "contiguous");
      if (sizes.length > 0) {
        assert.ok(sizes.at(-1)! + params.get(order[positions[0]!]!)!.size * 4 > maxShardBytes);
      }
      sizes.push(size);
      previousLast = positions.at(-1)!;
    }
    const ckpt = await loadCheckpoint(dir);
    await assertParamsEqual(ckpt.params, params);
  });
});

Deno.test("round trip (property): random configs, shard limits, f32 storage are bit exact", async () => {
  const arb = fc.record({
    modelType: fc.constantFrom("llama" as const, "qwen2" as const, "qwen3" as const),
    numKvHeads: fc.constantFrom(1, 2, 4),
    numLayers: fc.integer({ min: 1, max: 3 }),
    vocabSize: fc.integer({ min: 1, max: 40 }),
    tie: fc.boolean(),
    maxShardBytes: fc.option(fc.integer({ min: 1, max: 20_000 }), { nil: undefined }),
    seed: fc.nat(1000),
  });
  await withDir(async (root) => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(arb, async (a) => {
        const init: ModelConfigInit = {
          modelType: a.modelType,
          vocabSize: a.vocabSize,
          hiddenSize: 8,
          intermediateSize: 12,
          numLayers: a.numLayers,
          numHeads: 4,
          numKvHeads: a.numKvHeads,
          tieWordEmbeddings: a.tie,
        };
        const config = modelConfig(init);
        const params = randomParams(init, a.seed);
        const dir = join(root, String(run++));
        const opts: SaveCheckpointOptions = a.maxShardBytes === undefined
          ? {}
          : { maxShardBytes: a.maxShardBytes };
        await saveCheckpoint(dir, { config, params }, opts);
        const ckpt = await loadCheckpoint(dir);
        assert.deepEqual(ckpt.config, config);
        await assertParamsEqual(ckpt.params, params);
      }),
      { numRuns: 12, seed: 7 },
    );
  });
});

Deno.test("re-saving in another layout removes stale weight files and keeps other files", async () => {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    await Deno.writeTextFile(join(dir, "tokenizer.json"), "{}");
    await saveCheckpoint(dir, { config, params: randomParams(QWEN2, 3) }, { maxShardBytes: 4096 });
    assert.ok(listDir(dir).some((f) => f.startsWith("model-0000")));
    const second = randomParams(QWEN2, 4);
    await saveCheckpoint(dir, { config, params: second });
    assert.deepEqual(listDir(dir), ["config.json", "model.safetensors", "tokenizer.json"]);
    await assertParamsEqual((await loadCheckpoint(dir)).params, second);
    const third = randomParams(QWEN2, 5);
    await saveCheckpoint(dir, { config, params: third }, { maxShardBytes: 8192 });
    assert.ok(!listDir(dir).includes("model.safetensors"));
    assert.ok(listDir(dir).includes("tokenizer.json"));
    await assertParamsEqual((await loadCheckpoint(dir)).params, third);
  });
});

Deno.test("a save removes the temporaries a killed save left, of either naming, and only its own", async () => {
  await withDir(async (dir) => {
    const leftovers = [
      ".model.safetensors.tmp-4242-1a2b3c", // writeFileAtomic's naming
      ".config.json.tmp-17-zz",
      "model-00001-of-00002.safetensors.tmp-0123456789ab", // the naming of earlier versions
      "generation_config.json.tmp-ba9876543210",
    ];
    const others = [".notes.txt.tmp-1-a", "notes.txt.tmp-0123456789ab", "tokenizer.json"];
    for (const name of [...leftovers, ...others]) await Deno.writeTextFile(join(dir, name), "x");
    await saveCheckpoint(dir, { config: modelConfig(QWEN2), params: randomParams(QWEN2, 8) });
    assert.deepEqual(listDir(dir), ["config.json", "model.safetensors", ...others].sort());
  });
});

Deno.test("model.safetensors wins over an index when both exist (as in transformers)", async () => {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    const sharded = randomParams(QWEN2, 6);
    await saveCheckpoint(dir, { config, params: sharded }, { maxShardBytes: 4096 });
    const single = randomParams(QWEN2, 7);
    await Deno.writeFile(join(dir, "model.safetensors"), await serializeSafetensors(single));
    await assertParamsEqual((await loadCheckpoint(dir)).params, single);
  });
});

// ---------------------------------------------------------------- half precision on load

Deno.test("BF16 weights (hand-written file) load as exactly their bf16 values", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify(QWEN2_HF));
    const shapes = parameterShapes(configFromHf(QWEN2_HF));
    const next = mulberry32Words(11);
    const special = [0x0000, 0x8000, 0x0001, 0x807f, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x3f80];
    const expected = new Map<string, Float32Array>();
    const entries: RawEntry[] = [];
    let k = 0;
    for (const [name, shape] of shapes) {
      const n = shape.reduce((a, b) => a * b, 1);
      const h = new Uint16Array(n);
      for (let i = 0; i < n; i++) {
        let v = k < special.length ? special[k]! : next() & 0xffff;
        k++;
        if (((v >>> 7) & 0xff) === 0xff && (v & 0x7f) !== 0) v &= 0xbfff; // NaN -> finite
        h[i] = v;
      }
      // bf16 is the top half of an f32: the exact value has bits h << 16.
      expected.set(name, new Float32Array(Uint32Array.from(h, (x) => x << 16).buffer));
      entries.push({ name, dtype: "BF16", shape, data: bytesOf(h) });
    }
    await Deno.writeFile(
      join(dir, "model.safetensors"),
      rawSafetensors(entries, { format: "pt" }),
    );
    const ckpt = await loadCheckpoint(dir);
    assert.equal(ckpt.config.numKvHeads, 2);
    for (const [name, want] of expected) {
      const t = ckpt.params.get(name)!;
      assert.equal(t.dtype, "f32");
      assertSameBits(await f32(t), want, name);
    }
    // Spot values that are easy to read: 0x3f80 is 1.0, 0x7f80 is +Inf, 0x0001 is 2^-133.
    const embed = await f32(ckpt.params.get("model.embed_tokens.weight")!);
    assert.deepEqual([embed[8], embed[6], embed[2], Object.is(embed[1], -0)], [
      1,
      Infinity,
      2 ** -133,
      true,
    ]);
  });
});

Deno.test("F16 weights load exactly; a hand-written sharded index mixing F16 and F32 works", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify(QWEN2_HF));
    const shapes = [...parameterShapes(configFromHf(QWEN2_HF))];
    const next = mulberry32Words(12);
    const special = [
      0x0000,
      0x8000,
      0x0001,
      0x03ff,
      0x0400,
      0x7bff,
      0xfbff,
      0x7c00,
      0xfc00,
      0x3c00,
    ];
    const expected = new Map<string, Float32Array>();
    const shard1: RawEntry[] = [];
    const shard2: RawEntry[] = [];
    const weightMap: Record<string, string> = {};
    let k = 0;
    shapes.forEach(([name, shape], j) => {
      const n = shape.reduce((a, b) => a * b, 1);
      if (j % 2 === 0) {
        const h = new Uint16Array(n);
        for (let i = 0; i < n; i++) {
          let v = k < special.length ? special[k]! : next() & 0xffff;
          k++;
          if (((v >>> 10) & 0x1f) === 0x1f && (v & 0x3ff) !== 0) v &= 0xbfff; // NaN -> finite
          h[i] = v;
        }
        expected.set(name, Float32Array.from(h, f16Value));
        shard1.push({ name, dtype: "F16", shape, data: bytesOf(h) });
        weightMap[name] = "model-00001-of-00002.safetensors";
      } else {
        const v = Float32Array.from({ length: n }, () => (next() / 2 ** 32) * 2 - 1);
        expected.set(name, v);
        shard2.push({ name, dtype: "F32", shape, data: bytesOf(v) });
        weightMap[name] = "model-00002-of-00002.safetensors";
      }
    });
    await Deno.writeFile(join(dir, "model-00001-of-00002.safetensors"), rawSafetensors(shard1));
    await Deno.writeFile(join(dir, "model-00002-of-00002.safetensors"), rawSafetensors(shard2));
    await Deno.writeTextFile(
      join(dir, "model.safetensors.index.json"),
      JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap }),
    );
    const ckpt = await loadCheckpoint(dir);
    for (const [name, want] of expected) {
      assertSameBits(await f32(ckpt.params.get(name)!), want, name);
    }
    const embed = await f32(ckpt.params.get("model.embed_tokens.weight")!);
    // 0x0001 is the smallest subnormal 2^-24, 0x7bff the largest finite 65504, 0x3c00 is 1.
    assert.deepEqual([embed[2], embed[5], embed[9]], [2 ** -24, 65504, 1]);
  });
});

// ---------------------------------------------------------------- saving in bf16, header format

Deno.test("bf16 save: F32→BF16 rounds to the nearest bf16, header says BF16, torch_dtype bfloat16", async () => {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    const params = randomParams(QWEN2, 8);
    await saveCheckpoint(dir, { config, params }, { dtype: "bf16" });
    const bytes = await Deno.readFile(join(dir, "model.safetensors"));
    const { header } = readHeader(bytes);
    for (const name of params.keys()) {
      assert.equal((header[name] as { dtype: string }).dtype, "BF16", name);
    }
    const hf = JSON.parse(await Deno.readTextFile(join(dir, "config.json")));
    assert.equal(hf.torch_dtype, "bfloat16");
    const ckpt = await loadCheckpoint(dir);
    for (const [name, t] of params) {
      const x = await f32(t);
      const y = await f32(ckpt.params.get(name)!);
      const xb = bitsOf(x);
      const yb = bitsOf(y);
      for (let i = 0; i < x.length; i++) {
        assert.equal(yb[i]! & 0xffff, 0, `${name}[${i}] is a bf16 value`);
        // The nearest of the two bf16 neighbours of x (truncated and next up in magnitude).
        const down = new Float32Array(new Uint32Array([xb[i]! & 0xffff0000]).buffer)[0]!;
        const up = new Float32Array(new Uint32Array([(xb[i]! & 0xffff0000) + 0x10000]).buffer)[0]!;
        assert.ok(
          y[i] === down || y[i] === up,
          `${name}[${i}]: ${y[i]} not a neighbour of ${x[i]}`,
        );
        const other = y[i] === down ? up : down;
        assert.ok(Math.abs(x[i]! - y[i]!) <= Math.abs(x[i]! - other), `${name}[${i}] nearest`);
      }
    }
  });
});

Deno.test("header: what transformers writes (u64 length, 8-byte padding, __metadata__ format pt)", async () => {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    const params = randomParams(QWEN2, 9);
    const extra = new Map([["v_head.summary.weight", randn([1, 16], { seed: 1 })]]);
    await saveCheckpoint(dir, { config, params, extra });
    const bytes = await Deno.readFile(join(dir, "model.safetensors"));
    const { header, length } = readHeader(bytes);
    assert.equal(length % 8, 0);
    assert.deepEqual(header.__metadata__, { format: "pt" });
    const entries = Object.entries(header).filter(([k]) => k !== "__metadata__") as [
      string,
      { dtype: string; shape: number[]; data_offsets: [number, number] },
    ][];
    assert.deepEqual(
      entries.map(([k]) => k).sort(),
      [...params.keys(), ...extra.keys()].sort(),
    );
    let dataBytes = 0;
    for (const [name, e] of entries) {
      assert.deepEqual(Object.keys(e).sort(), ["data_offsets", "dtype", "shape"]);
      assert.equal(e.dtype, "F32", name);
      const t = params.get(name) ?? extra.get(name)!;
      assert.deepEqual(e.shape, t.shape, name);
      assert.equal(e.data_offsets[1] - e.data_offsets[0], t.size * 4, name);
      // The stored little-endian f32 bytes are the tensor's bytes.
      const start = 8 + length + e.data_offsets[0];
      const stored = bytes.slice(start, start + t.size * 4);
      assertSameBits(new Float32Array(stored.buffer), await f32(t), name);
      dataBytes += t.size * 4;
    }
    assert.equal(bytes.length, 8 + length + dataBytes, "no gaps or trailing bytes");

    const text = await Deno.readTextFile(join(dir, "config.json"));
    assert.ok(text.endsWith("}\n") && text.startsWith('{\n  "architectures": [\n'), text);
    const hf = JSON.parse(text);
    assert.deepEqual(Object.keys(hf), Object.keys(hf).sort(), "sorted keys, as json.dumps");
    assert.deepEqual(hf.architectures, ["Qwen2ForCausalLM"]);
    assert.equal(hf.torch_dtype, "float32");
    assert.equal(hf.num_key_value_heads, 2);
  });
});

// ---------------------------------------------------------------- independent readers

const HAS_NUMPY = hasPython("numpy");
const HAS_TORCH_SAFETENSORS = hasPython("safetensors.torch");

/** Python that decodes every tensor of a safetensors file into f32 bytes and hashes them. */
const NUMPY_READER = `
import hashlib, json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
out = {"__metadata__": header.pop("__metadata__", None)}
for name, e in header.items():
    b, end = e["data_offsets"]
    buf = raw[8 + n + b: 8 + n + end]
    if e["dtype"] == "F32":
        a = np.frombuffer(buf, dtype="<f4")
    elif e["dtype"] == "BF16":
        a = (np.frombuffer(buf, dtype="<u2").astype("<u4") << 16).view("<f4")
    else:
        raise SystemExit("unexpected dtype " + e["dtype"])
    a = a.reshape(e["shape"])
    out[name] = [e["dtype"], list(a.shape), hashlib.sha256(a.astype("<f4").tobytes()).hexdigest()]
print(json.dumps(out))
`;

const TORCH_READER = `
import hashlib, json, sys
import torch
from safetensors import safe_open
from safetensors.torch import load_file
tensors = load_file(sys.argv[1])
with safe_open(sys.argv[1], framework="pt") as f:
    meta = f.metadata()
out = {"__metadata__": meta}
for name, t in tensors.items():
    d = {torch.float32: "F32", torch.bfloat16: "BF16"}[t.dtype]
    b = t.to(torch.float32).contiguous().numpy().astype("<f4").tobytes()
    out[name] = [d, list(t.shape), hashlib.sha256(b).hexdigest()]
print(json.dumps(out))
`;

async function crossCheck(reader: string): Promise<void> {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    const params = randomParams(QWEN2, 10);
    for (const dtype of ["f32", "bf16"] as const) {
      const sub = join(dir, dtype);
      await saveCheckpoint(sub, { config, params }, { dtype });
      const loaded = (await loadCheckpoint(sub)).params;
      const r = await new Deno.Command("python3", {
        args: ["-c", reader, join(sub, "model.safetensors")],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(r.success, new TextDecoder().decode(r.stderr));
      const got = JSON.parse(new TextDecoder().decode(r.stdout));
      assert.deepEqual(got.__metadata__, { format: "pt" });
      for (const [name, t] of loaded) {
        // f32: the reader's values are the saved tensor's; bf16: they are what we load back.
        const want = dtype === "f32" ? await f32(params.get(name)!) : await f32(t);
        assert.deepEqual(got[name], [
          dtype === "f32" ? "F32" : "BF16",
          [...t.shape],
          await sha256Hex(bytesOf(want)),
        ], `${dtype} ${name}`);
      }
    }
  });
}

Deno.test({
  name: "independent reader: Python + numpy decode the written files to the same f32 values",
  ignore: !HAS_NUMPY,
  fn: () => crossCheck(NUMPY_READER),
});

if (!HAS_TORCH_SAFETENSORS) {
  console.log(
    "checkpoint_test: skipping the torch cross-check: `python3 -c 'import safetensors.torch'` " +
      "fails here (no torch/safetensors installed); the numpy reader and the header tests cover it",
  );
}

Deno.test({
  name: "independent reader: torch's safetensors load_file reads the written files",
  ignore: !HAS_TORCH_SAFETENSORS,
  fn: () => crossCheck(TORCH_READER),
});

// ---------------------------------------------------------------- validation errors

/** Saves a valid Qwen2 checkpoint, then replaces its weights with `tensors`. */
async function withWeights(
  tensors: Map<string, Tensor>,
  fn: (dir: string) => Promise<void>,
  init: ModelConfigInit = QWEN2,
): Promise<void> {
  await withDir(async (dir) => {
    await saveCheckpoint(dir, { config: modelConfig(init), params: randomParams(init) });
    await Deno.writeFile(join(dir, "model.safetensors"), await serializeSafetensors(tensors));
    await fn(dir);
  });
}

Deno.test("errors: missing, mis-shaped and unexpected weights all in one message with the fix", async () => {
  const params = randomParams();
  params.delete("model.layers.1.mlp.up_proj.weight");
  params.delete("model.norm.weight");
  params.set("model.layers.0.self_attn.k_proj.weight", zeros([32, 16])); // GQA: 2 kv heads of 4 = [8, 16]
  params.set("v_head.summary.weight", zeros([1, 16]));
  await withWeights(params, async (dir) => {
    const file = join(dir, "model.safetensors");
    const err = await loadCheckpoint(dir).then(
      () => assert.fail("expected an error"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof CheckpointError, String(err));
    assert.equal(err.dir, dir);
    assert.deepEqual(err.problems.map((p) => [p.kind, p.name]), [
      ["missing", "model.layers.1.mlp.up_proj.weight"],
      ["missing", "model.norm.weight"],
      ["shape", "model.layers.0.self_attn.k_proj.weight"],
      ["unexpected", "v_head.summary.weight"],
    ]);
    const m = err.message;
    assert.match(m, /^loadCheckpoint\(.*\): 4 problem\(s\)/);
    assert.ok(
      m.includes(`missing: "model.layers.1.mlp.up_proj.weight" (expected shape [24, 16])`),
      m,
    );
    assert.ok(m.includes(`missing: "model.norm.weight" (expected shape [16])`), m);
    assert.ok(
      m.includes(
        `wrong shape: "model.layers.0.self_attn.k_proj.weight" expected [8, 16], found [32, 16] in ${file}`,
      ),
      m,
    );
    assert.ok(m.includes(`unexpected: "v_head.summary.weight" (shape [1, 16]) in ${file}`), m);
    assert.ok(m.includes("num_key_value_heads"), m); // the config fix
    assert.ok(m.includes("allowExtra"), m); // the extras fix
    assert.ok(m.includes("qwen2, 2 layer(s), hidden 16"), m); // what it was checked against
  });
});

Deno.test("errors: a single missing weight, wrong shape or unexpected tensor each say so", async () => {
  const missing = randomParams();
  missing.delete("model.layers.0.self_attn.q_proj.bias");
  await withWeights(missing, async (dir) => {
    await assert.rejects(loadCheckpoint(dir), (e: unknown) => {
      assert.ok(e instanceof CheckpointError);
      assert.match(e.message, /1 problem\(s\)/);
      assert.match(
        e.message,
        /missing: "model.layers.0.self_attn.q_proj.bias" \(expected shape \[16\]\)/,
      );
      assert.doesNotMatch(e.message, /allowExtra/); // no extras, no extras advice
      return true;
    });
  });
  const shape = randomParams();
  shape.set("lm_head.weight", zeros([16, 32])); // transposed
  await withWeights(shape, async (dir) => {
    await assert.rejects(
      loadCheckpoint(dir),
      /wrong shape: "lm_head.weight" expected \[32, 16\], found \[16, 32\]/,
    );
  });
  const unexpected = randomParams();
  unexpected.set("score.weight", zeros([2, 16]));
  await withWeights(unexpected, async (dir) => {
    await assert.rejects(loadCheckpoint(dir), (e: unknown) => {
      assert.ok(e instanceof CheckpointError);
      assert.deepEqual(e.problems.map((p) => p.kind), ["unexpected"]);
      assert.match(e.message, /unexpected: "score.weight" \(shape \[2, 16\]\)/);
      assert.match(e.message, /allowExtra/);
      return true;
    });
  });
});

Deno.test("errors: names with a foreign prefix are diagnosed as such (e.g. PEFT's base_model.model.)", async () => {
  const params = new Map(
    [...randomParams()].map(([n, t]) => [`base_model.model.${n}`, t] as [string, Tensor]),
  );
  await withWeights(params, async (dir) => {
    await assert.rejects(loadCheckpoint(dir), /carry the prefix "base_model\.model\."/);
  });
});

Deno.test("errors: a parameter stored as an integer dtype is reported", async () => {
  const params = randomParams();
  params.set(
    "model.norm.weight",
    tensor(Array.from({ length: 16 }, (_, i) => i), { dtype: "i32" }),
  );
  await withWeights(params, async (dir) => {
    await assert.rejects(
      loadCheckpoint(dir),
      /wrong dtype: "model.norm.weight" is stored as I32 .*must be F32, BF16, F16 or F64/,
    );
  });
});

Deno.test("allowExtra: patterns and RegExps return extras; params stay exactly parameterShapes", async () => {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    const params = randomParams();
    const extra = new Map([
      ["v_head.summary.weight", randn([1, 16], { seed: 3 })],
      ["v_head.summary.bias", randn([1], { seed: 4 })],
      ["step", tensor([12], { dtype: "i32" })],
    ]);
    await saveCheckpoint(dir, { config, params, extra }, { dtype: "bf16" });
    await assert.rejects(loadCheckpoint(dir), (e: unknown) => {
      assert.ok(e instanceof CheckpointError);
      assert.deepEqual(e.problems.map((p) => p.name).sort(), [...extra.keys()].sort());
      return true;
    });
    await assert.rejects(loadCheckpoint(dir, { allowExtra: ["v_head.*"] }), /unexpected: "step"/);
    // `.` in a pattern is literal; `*` is the only wildcard.
    await assert.rejects(loadCheckpoint(dir, { allowExtra: ["v_head.*", "s.ep"] }), /"step"/);
    for (const allowExtra of [["v_head.*", "step"], /^(v_head\.|step$)/g]) {
      const ckpt = await loadCheckpoint(dir, { allowExtra });
      assert.deepEqual([...ckpt.params.keys()], [...parameterShapes(config).keys()]);
      assert.deepEqual([...ckpt.extra.keys()].sort(), [...extra.keys()].sort());
      assert.deepEqual(await ckpt.extra.get("step")!.toArray(), [12]);
      assert.equal(ckpt.extra.get("step")!.dtype, "i32", "integer extras keep their dtype");
      // bf16 storage applied to the f32 extras too: their values are bf16 values.
      const w = await f32(ckpt.extra.get("v_head.summary.weight")!);
      assert.ok(bitsOf(w).every((b) => (b & 0xffff) === 0));
    }
  });
});

Deno.test("tied embeddings: an equal lm_head.weight is accepted and dropped, a different one is an error", async () => {
  const tied: ModelConfigInit = { ...QWEN2, tieWordEmbeddings: true };
  const params = randomParams(tied);
  const embed = await f32(params.get("model.embed_tokens.weight")!);
  const same = new Map(params);
  same.set("lm_head.weight", tensor(embed.slice(), { shape: [32, 16] }));
  await withWeights(same, async (dir) => {
    const ckpt = await loadCheckpoint(dir);
    assert.ok(!ckpt.params.has("lm_head.weight"));
    assert.equal(ckpt.params.size, parameterShapes(modelConfig(tied)).size);
    await assertParamsEqual(ckpt.params, params);
  }, tied);
  const changed = embed.slice();
  changed[100] = Math.fround(changed[100]! * (1 + 2 ** -20)); // one element, a few ulps off
  assert.notEqual(changed[100], embed[100]);
  const different = new Map(params);
  different.set("lm_head.weight", tensor(changed, { shape: [32, 16] }));
  await withWeights(different, async (dir) => {
    await assert.rejects(loadCheckpoint(dir), (e: unknown) => {
      assert.ok(e instanceof CheckpointError);
      assert.deepEqual(e.problems.map((p) => p.kind), ["tied"]);
      assert.match(e.message, /differs from "model.embed_tokens.weight".*tie_word_embeddings/);
      assert.match(e.message, /Set tie_word_embeddings to false/);
      return true;
    });
  }, tied);
});

Deno.test("tied check also works when the tensors live on an f64 CPU backend", async () => {
  const tied: ModelConfigInit = { ...QWEN2, tieWordEmbeddings: true };
  const params = randomParams(tied);
  const same = new Map(params);
  same.set("lm_head.weight", params.get("model.embed_tokens.weight")!);
  await withWeights(same, async (dir) => {
    const backend = createCpuBackend({ precision: "f64" });
    const ckpt = await loadCheckpoint(dir, { backend });
    assert.equal(ckpt.params.get("model.norm.weight")!.backend, backend);
  }, tied);
});

// ---------------------------------------------------------------- missing and broken files

Deno.test("missing files: the error names the path and what is expected there", async () => {
  await withDir(async (dir) => {
    const nowhere = join(dir, "nope");
    await assert.rejects(
      loadCheckpoint(nowhere),
      new RegExp(`no checkpoint folder at ${nowhere}; expected a directory with config.json`),
    );
    await Deno.writeTextFile(join(dir, "file.txt"), "x");
    await assert.rejects(
      loadCheckpoint(join(dir, "file.txt")),
      /is a file; pass the checkpoint folder/,
    );
    await assert.rejects(
      loadCheckpoint(dir),
      new RegExp(`${join(dir, "config.json")} not found; expected the model's Hugging Face config`),
    );
    await Deno.writeTextFile(join(dir, "config.json"), "{ not json");
    await assert.rejects(
      loadCheckpoint(dir),
      new RegExp(`${join(dir, "config.json")}: not valid JSON`),
    );
    await Deno.writeTextFile(
      join(dir, "config.json"),
      JSON.stringify({ ...QWEN2_HF, vocab_size: 0 }),
    );
    await assert.rejects(
      loadCheckpoint(dir),
      new RegExp(
        `^RangeError: ${join(dir, "config.json")}: vocabSize must be an integer >= 1, got 0`,
      ),
    );
    await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify(QWEN2_HF));
    await Deno.writeFile(join(dir, "pytorch_model.bin"), new Uint8Array(4));
    await assert.rejects(
      loadCheckpoint(dir),
      /no weights in .*: expected model.safetensors, or model.safetensors.index.json with the shard files it names. It holds pytorch_model.bin/,
    );
  });
});

Deno.test("broken sharded checkpoints: a missing shard and an out-of-sync index are named", async () => {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    await saveCheckpoint(dir, { config, params: randomParams() }, { maxShardBytes: 4096 });
    const index = JSON.parse(await Deno.readTextFile(join(dir, "model.safetensors.index.json")));
    const last = Object.values(index.weight_map).at(-1) as string;
    const bytes = await Deno.readFile(join(dir, last));
    await Deno.remove(join(dir, last));
    await assert.rejects(
      loadCheckpoint(dir),
      new RegExp(
        `${join(dir, last)} not found; expected the shard model.safetensors.index.json assigns`,
      ),
    );
    await Deno.writeFile(join(dir, last), bytes);
    const first = index.weight_map["model.embed_tokens.weight"];
    assert.notEqual(index.weight_map["model.norm.weight"], first);
    index.weight_map["model.norm.weight"] = first;
    await Deno.writeTextFile(join(dir, "model.safetensors.index.json"), JSON.stringify(index));
    await assert.rejects(
      loadCheckpoint(dir),
      /assigns "model.norm.weight" to .*model-00001-of-.*, but that file has no such tensor; the index and the shards are out of sync/,
    );
  });
});

Deno.test("generation_config.json: written when given, read back, and must be an object", async () => {
  await withDir(async (dir) => {
    const generationConfig = {
      bos_token_id: 0,
      eos_token_id: [1, 2],
      temperature: 0.7,
      do_sample: true,
    };
    await saveCheckpoint(dir, {
      config: modelConfig(QWEN2),
      params: randomParams(),
      generationConfig,
    });
    assert.deepEqual((await loadCheckpoint(dir)).generationConfig, generationConfig);
    await Deno.writeTextFile(join(dir, "generation_config.json"), "[1]");
    await assert.rejects(
      loadCheckpoint(dir),
      /generation_config.json: must be a JSON object, got \[1\]/,
    );
  });
});

// ---------------------------------------------------------------- save validation and atomicity

Deno.test("save: every problem in one error before anything is written", async () => {
  await withDir(async (root) => {
    const dir = join(root, "out");
    const params = randomParams();
    params.delete("model.norm.weight");
    params.set("model.layers.1.mlp.down_proj.weight", zeros([24, 16])); // transposed
    params.set(
      "model.layers.0.input_layernorm.weight",
      tensor(new Array(16).fill(1), { dtype: "i32" }),
    );
    params.set("lm_head.bias", zeros([32]));
    const extra = new Map([["model.embed_tokens.weight", zeros([32, 16])]]);
    await assert.rejects(
      saveCheckpoint(dir, { config: modelConfig(QWEN2), params, extra }),
      (e: unknown) => {
        assert.ok(e instanceof CheckpointError);
        assert.deepEqual(e.problems.map((p) => `${p.kind} ${p.name}`).sort(), [
          "dtype model.layers.0.input_layernorm.weight",
          "duplicate model.embed_tokens.weight",
          "missing model.norm.weight",
          "shape model.layers.1.mlp.down_proj.weight",
          "unexpected lm_head.bias",
        ]);
        assert.match(e.message, /^saveCheckpoint\(.*\): 5 problem\(s\)/);
        assert.match(e.message, /Fix: params must hold exactly the tensors of parameterShapes/);
        return true;
      },
    );
    assert.throws(() => Deno.statSync(dir), Deno.errors.NotFound);
    await assert.rejects(
      saveCheckpoint(dir, { config: modelConfig(QWEN2), params: randomParams() }, {
        maxShardBytes: 0,
      }),
      /options.maxShardBytes must be an integer >= 1, got 0/,
    );
  });
});

Deno.test("save: a failed save leaves the previous checkpoint loadable", async () => {
  await withDir(async (dir) => {
    const config = modelConfig(QWEN2);
    const first = randomParams(QWEN2, 20);
    await saveCheckpoint(dir, { config, params: first });
    const second = randomParams(QWEN2, 21);
    second.get("model.norm.weight")!.dispose();
    await assert.rejects(
      saveCheckpoint(dir, { config, params: second }),
      /"model.norm.weight" was disposed before saving/,
    );
    assert.deepEqual(listDir(dir), ["config.json", "model.safetensors"]);
    await assertParamsEqual((await loadCheckpoint(dir)).params, first);
  });
});

/** Child process: saves a sharded checkpoint over and over, printing a line after each save. */
const SAVER = `
import { saveCheckpoint } from ${
  JSON.stringify(new URL("./checkpoint_fs.ts", import.meta.url).href)
};
import { modelConfig, parameterShapes } from ${
  JSON.stringify(new URL("./config.ts", import.meta.url).href)
};
import { randn } from "@rlvr/tensor";
const config = modelConfig({
  modelType: "qwen2", vocabSize: 4096, hiddenSize: 128, intermediateSize: 256, numLayers: 2,
  numHeads: 4, numKvHeads: 2,
});
const shapes = [...parameterShapes(config)];
const enc = new TextEncoder();
// Same values every time: the loop then spends its time writing files, where a kill matters.
const params = new Map(shapes.map(([n, s], j) => [n, randn(s, { seed: j })]));
for (let i = 0; ; i++) {
  await saveCheckpoint(Deno.args[0], { config, params }, { maxShardBytes: 1024 * 1024 });
  await Deno.stdout.write(enc.encode(i + "\\n"));
}
`;

Deno.test("atomic: SIGKILL during repeated saves never leaves a partial file under a final name", async () => {
  await withDir(async (root) => {
    const script = join(root, "saver.ts");
    await Deno.writeTextFile(script, SAVER);
    const configPath = new URL("../../deno.json", import.meta.url).pathname;
    const dir = join(root, "ckpt");
    const rand = mulberry32Words(5);
    let tmpSeen = 0;
    for (let round = 0; round < 3; round++) {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--no-check", "--config", configPath, script, dir],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // Wait for one complete save, then kill at a random moment of a later one.
      const reader = child.stdout.getReader();
      let text = "";
      while (!text.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      assert.ok(text.includes("\n"), "the child saved at least once");
      await new Promise((r) => setTimeout(r, rand() % 40));
      child.kill("SIGKILL");
      await reader.cancel();
      const status = await child.status;
      await child.stderr.cancel();
      assert.equal(status.signal, "SIGKILL", "killed mid-run, not finished");
      // Every file under a final name is complete; temporaries may remain and are ignored.
      for (const name of listDir(dir)) {
        if (name.includes(".tmp-")) {
          tmpSeen++;
          continue;
        }
        const bytes = await Deno.readFile(join(dir, name));
        if (name.endsWith(".json")) JSON.parse(new TextDecoder().decode(bytes));
        else parseSafetensors(bytes, { source: name }); // throws on a truncated file
      }
      const ckpt = await loadCheckpoint(dir);
      assert.equal(ckpt.params.size, 27); // 12 per Qwen2 layer, embedding, final norm, LM head
      for (const t of ckpt.params.values()) t.dispose();
    }
    // The next save clears the temporaries the killed ones left behind.
    await saveCheckpoint(dir, { config: modelConfig(QWEN2), params: randomParams() });
    assert.deepEqual(listDir(dir), ["config.json", "model.safetensors"]);
    console.log(
      `atomic test: kills interrupted a file write ${tmpSeen} time(s) (temporaries seen)`,
    );
  });
});

// ---------------------------------------------------------------- folder, bytes and URL

/** Every file of a folder, by name (what a browser would hand loadCheckpointFromFiles). */
async function readFolder(dir: string): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  for (const name of listDir(dir)) files[name] = await Deno.readFile(join(dir, name));
  return files;
}

/** Serves `files` under `/ckpt/` on a local port while `fn` runs; counts the requests. */
async function withServer(
  files: Record<string, Uint8Array>,
  fn: (base: string, requests: string[]) => Promise<void>,
): Promise<void> {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const name = new URL(req.url).pathname.replace(/^\/ckpt\//, "");
    requests.push(name);
    const body = files[name];
    return body === undefined
      ? new Response("no", { status: 404 })
      : new Response(body as Uint8Array<ArrayBuffer>);
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}/ckpt`, requests);
  } finally {
    await server.shutdown();
  }
}

async function assertSameCheckpoint(actual: Checkpoint, expected: Checkpoint): Promise<void> {
  assert.deepEqual(actual.config, expected.config);
  assert.deepEqual(actual.generationConfig, expected.generationConfig);
  await assertParamsEqual(actual.params, expected.params);
  await assertParamsEqual(actual.extra, expected.extra);
}

function disposeAll(c: Checkpoint): void {
  for (const t of [...c.params.values(), ...c.extra.values()]) t.dispose();
}

/** Checkpoints like the shipped tiny ones (apps/train/checkpoints), and the other layouts. */
const LAYOUTS: { name: string; init: ModelConfigInit; options: SaveCheckpointOptions }[] = [
  {
    // apps/train/checkpoints/tiny: llama, untied, f32, one file.
    name: "tiny (llama, f32, one file)",
    init: {
      modelType: "llama",
      vocabSize: 103,
      hiddenSize: 64,
      intermediateSize: 192,
      numLayers: 2,
      numHeads: 4,
      headDim: 16,
      maxPositions: 256,
      bosTokenId: 1,
      eosTokenIds: [2],
      padTokenId: 0,
    },
    options: {},
  },
  { name: "qwen2, bf16, sharded", init: QWEN2, options: { dtype: "bf16", maxShardBytes: 2048 } },
  { name: "qwen2, tied", init: { ...QWEN2, tieWordEmbeddings: true }, options: {} },
];

for (const layout of LAYOUTS) {
  Deno.test(`loadCheckpoint / loadCheckpointFromFiles / loadCheckpointFromUrl: ${layout.name}: the same tensors; checkpointFiles is what saveCheckpoint writes`, async () => {
    await withDir(async (dir) => {
      const config = modelConfig(layout.init);
      const params = randomParams(layout.init, 5);
      const extra = new Map([[
        "v_head.summary.weight",
        randn([1, config.hiddenSize], { seed: 3 }),
      ]]);
      const generationConfig = { eos_token_id: 2, temperature: 0.7 };
      const data = { config, params, extra, generationConfig };
      await saveCheckpoint(dir, data, layout.options);
      const files = await readFolder(dir);
      // The bytes a browser would offer for download are the folder's files, byte for byte.
      const made = await checkpointFiles(data, layout.options);
      assert.deepEqual(Object.keys(made).sort(), Object.keys(files));
      for (const [name, bytes] of Object.entries(made)) assert.deepEqual(bytes, files[name], name);

      const allowExtra = ["v_head.*"];
      const fromDir = await loadCheckpoint(dir, { allowExtra });
      const fromFiles = await loadCheckpointFromFiles(files, { allowExtra, name: "tiny" });
      // Text for the JSON files and a Map work too.
      const mixed = new Map<string, Uint8Array | string>(Object.entries(files));
      mixed.set("config.json", new TextDecoder().decode(files["config.json"]));
      const fromMap = await loadCheckpointFromFiles(mixed, { allowExtra });
      assert.equal(fromDir.dir, dir);
      assert.equal(fromFiles.dir, "tiny");
      assert.equal(fromMap.dir, "<files>");
      await assertSameCheckpoint(fromFiles, fromDir);
      await assertSameCheckpoint(fromMap, fromDir);
      await withServer(files, async (base, requests) => {
        const fromUrl = await loadCheckpointFromUrl(base, { allowExtra });
        assert.equal(fromUrl.dir, `${base}/`);
        await assertSameCheckpoint(fromUrl, fromDir);
        // Each file once, in the order the loader needs them.
        const sharded = files["model.safetensors"] === undefined;
        assert.deepEqual(
          requests,
          sharded
            ? [
              "config.json",
              "generation_config.json",
              "model.safetensors",
              "model.safetensors.index.json",
              // Shards in the order the index first names them (its keys are sorted).
              ...parseSafetensorsIndex(files["model.safetensors.index.json"]!, "i").shards,
            ]
            : ["config.json", "generation_config.json", "model.safetensors"],
        );
        disposeAll(fromUrl);
      });
      for (const c of [fromDir, fromFiles, fromMap]) disposeAll(c);
    });
  });
}

Deno.test("loadCheckpointFromFiles: the folder loader's checks and errors, naming the files", async () => {
  await withDir(async (dir) => {
    const wrong = modelConfig({ ...QWEN2, hiddenSize: 32 });
    const params = randomParams(QWEN2, 2);
    await saveCheckpoint(dir, { config: modelConfig(QWEN2), params }, { maxShardBytes: 4096 });
    await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify(configToHf(wrong)));
    const files = await readFolder(dir);
    const fromDir = await loadCheckpoint(dir).then(() => null, (e: unknown) => e);
    const fromFiles = await loadCheckpointFromFiles(files, { name: "m" }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(fromDir instanceof CheckpointError && fromFiles instanceof CheckpointError);
    // The same problems; the files are named `m/<file>` instead of `<dir>/<file>`.
    const rename = (p: CheckpointError["problems"][number]) => ({
      ...p,
      ...(p.file === undefined ? {} : { file: p.file.replace(dir, "m") }),
    });
    assert.deepEqual(fromFiles.problems, fromDir.problems.map(rename));
    assert.equal(
      fromFiles.message,
      fromDir.message.replaceAll(dir, "m").replace(
        "loadCheckpoint(m)",
        "loadCheckpointFromFiles(m)",
      ).replace("loadCheckpoint(dir, {", "loadCheckpointFromFiles(files, {"),
    );
  });
  await assert.rejects(
    loadCheckpointFromFiles({ "model.safetensors": new Uint8Array(8) }, { name: "m" }),
    /loadCheckpointFromFiles: m\/config\.json not found; expected the model's Hugging Face config/,
  );
  await assert.rejects(
    loadCheckpointFromFiles({ "config.json": JSON.stringify(configToHf(modelConfig(QWEN2))) }),
    /loadCheckpointFromFiles: no weights in <files>: expected model.safetensors/,
  );
  await assert.rejects(
    loadCheckpointFromFiles({ "config.json": 5 as unknown as string }),
    /files\["config.json"\] must be a Uint8Array, an ArrayBuffer or a string, got number/,
  );
  await assert.rejects(
    loadCheckpointFromFiles(null as unknown as Record<string, string>),
    /files must be a Map or an object from file name to contents, got null/,
  );
});

Deno.test("loadCheckpointFromUrl: a missing shard and an HTTP error name the URL", async () => {
  const config = modelConfig(QWEN2);
  const files = await checkpointFiles({ config, params: randomParams(QWEN2, 4) }, {
    maxShardBytes: 4096,
  });
  const shard = Object.keys(files).find((n) => n.startsWith("model-"))!;
  const { [shard]: _dropped, ...rest } = files;
  await withServer(rest, async (base) => {
    await assert.rejects(
      loadCheckpointFromUrl(base),
      new RegExp(`loadCheckpointFromUrl: ${base}/${shard} not found; expected the shard`),
    );
  });
  const failing = () => Promise.resolve(new Response("busy", { status: 503 }));
  await assert.rejects(
    loadCheckpointFromUrl("https://x.test/m", { fetch: failing }),
    /loadCheckpointFromUrl: cannot read https:\/\/x\.test\/m\/config\.json \(the model's Hugging Face config .*\): HTTP 503/,
  );
  await assert.rejects(
    loadCheckpointFromUrl("ckpt/"),
    /the base URL "ckpt\/" is not an absolute URL/,
  );
});
