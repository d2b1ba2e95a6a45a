import assert from "node:assert/strict";
import fc from "fast-check";
import { matmul as matmulTs, matmulReference } from "../cpu/matmul.ts";
import { createCpuBackend } from "../cpu/cpu_backend.ts";
import { runWithEnv } from "../_env_test_util.ts";
import type { KernelParams } from "../types.ts";
import {
  createCpuMatmul,
  detectWasmMatmul,
  WASM_MATMUL_TUNING,
  WASM_MIN_NK,
  WasmMatmul,
  type WasmMatmulFlavour,
} from "./matmul_wasm.ts";

// Tolerance against the float64 reference: every element is an f32 sum of k products, so its
// error is at most about k·2⁻²⁴·Σ|a·b| (γ_k), plus 2⁻²⁴·|c| for the reference's own rounding to
// f32. The tests allow (k + 1)·2⁻²³·Σ|a·b|, twice that bound; there is no tolerance at all where
// bits are compared (m-independence, the fallbacks).

const detected = detectWasmMatmul();
const flavours: WasmMatmulFlavour[] = detected === null
  ? []
  : detected === "relaxed"
  ? ["simd", "relaxed"]
  : ["simd"];
const ignore = flavours.length === 0; // no WebAssembly SIMD: nothing to test but the fallback

type Params = KernelParams["matmul"];

/** Deterministic values: 20% zeros, else uniform in [-4, 4). */
function draw(seed: number, length: number, f64 = false): Float32Array | Float64Array {
  let s = seed >>> 0;
  const out = f64 ? new Float64Array(length) : new Float32Array(length);
  for (let i = 0; i < length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const u = s / 2 ** 32;
    out[i] = u < 0.2 ? 0 : u * 8 - 4;
  }
  return out;
}

/** Σ|a·b| per element, for the tolerance. */
function absProducts(a: Float32Array, b: Float32Array, p: Params): Float64Array {
  const abs = (x: Float32Array) => x.map(Math.abs);
  const out = new Float64Array(p.batch * p.m * p.n);
  matmulReference([abs(a), abs(b)], [out], p);
  return out;
}

function assertClose(got: Float32Array, a: Float32Array, b: Float32Array, p: Params): void {
  const ref = new Float64Array(got.length);
  matmulReference([a, b], [ref], p);
  const mag = absProducts(a, b, p);
  for (let i = 0; i < ref.length; i++) {
    const tol = (p.k + 1) * 2 ** -23 * mag[i]!;
    if (!(Math.abs(got[i]! - ref[i]!) <= tol)) {
      assert.fail(
        `element ${i}: wasm ${got[i]} vs reference ${ref[i]} (tol ${tol}) ${JSON.stringify(p)}`,
      );
    }
  }
}

function sameBits(x: Float32Array, y: Float32Array, what: string): void {
  assert.equal(x.length, y.length, what);
  for (let i = 0; i < x.length; i++) {
    if (!Object.is(x[i], y[i])) assert.fail(`${what}: element ${i}: ${x[i]} != ${y[i]}`);
  }
}

const shape = fc.record({
  batch: fc.integer({ min: 1, max: 3 }),
  m: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 37 })),
  n: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 45 })),
  k: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 70 })),
  transA: fc.boolean(),
  transB: fc.boolean(),
  broadcastA: fc.boolean(),
  broadcastB: fc.boolean(),
  seed: fc.integer(),
});

interface Shape {
  batch: number;
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  broadcastA: boolean;
  broadcastB: boolean;
  seed: number;
}

function setup(s: Shape) {
  const aStride = s.broadcastA ? 0 : s.m * s.k;
  const bStride = s.broadcastB ? 0 : s.k * s.n;
  const a = draw(s.seed, (s.broadcastA ? 1 : s.batch) * s.m * s.k) as Float32Array;
  const b = draw(s.seed ^ 0x5bd1e995, (s.broadcastB ? 1 : s.batch) * s.k * s.n) as Float32Array;
  const p: Params = {
    batch: s.batch,
    m: s.m,
    n: s.n,
    k: s.k,
    transA: s.transA,
    transB: s.transB,
    aBatchStride: aStride,
    bBatchStride: bStride,
  };
  return { a, b, p };
}

/** Runs `fn` with small blocks, so that small shapes cross k-block, row-block and chunk edges. */
function withTinyBlocks(fn: () => void): void {
  const saved = { ...WASM_MATMUL_TUNING };
  Object.assign(WASM_MATMUL_TUNING, { kBlock: 5, mBlock: 2, chunkBytes: 4 * 16 * 24 });
  try {
    fn();
  } finally {
    Object.assign(WASM_MATMUL_TUNING, saved);
  }
}

for (const flavour of flavours.length === 0 ? ["simd" as const] : flavours) {
  Deno.test({
    name:
      `wasm matmul (${flavour}): random shapes, transposes and batch strides match the reference`,
    ignore,
    fn() {
      const mm = new WasmMatmul(flavour);
      for (const tiny of [false, true]) {
        fc.assert(
          fc.property(shape, (s) => {
            const { a, b, p } = setup(s);
            const c = new Float32Array(p.batch * p.m * p.n).fill(NaN);
            const run = () => mm.run([a, b], [c], p);
            if (tiny) withTinyBlocks(run);
            else run();
            assertClose(c, a, b, p);
          }),
          { numRuns: 300 },
        );
      }
    },
  });

  Deno.test({
    name: `wasm matmul (${flavour}): a row's bits do not depend on m, the batch or the blocking`,
    ignore,
    fn() {
      const mm = new WasmMatmul(flavour);
      fc.assert(
        fc.property(shape, fc.boolean(), (s, tiny) => {
          const { a, b, p } = setup({ ...s, batch: 1, m: Math.max(1, s.m) });
          const { m, n, k } = p;
          const full = new Float32Array(m * n);
          mm.run([a, b], [full], p);
          // Row i of op(a) alone (a 1×k matrix; stored k×1 when transA, i.e. the same values).
          const rowOf = (i: number) =>
            Float32Array.from({ length: k }, (_, kk) => a[p.transA ? kk * m + i : i * k + kk]!);
          const one = new Float32Array(n);
          for (let i = 0; i < m; i++) {
            const q = { ...p, m: 1, aBatchStride: 0 };
            if (tiny) withTinyBlocks(() => mm.run([rowOf(i), b], [one], q));
            else mm.run([rowOf(i), b], [one], q);
            sameBits(one, full.subarray(i * n, (i + 1) * n), `row ${i} of ${JSON.stringify(p)}`);
          }
          // The same rows as a batch of m 1-row products sharing b.
          if (!p.transA) {
            const batched = new Float32Array(m * n);
            mm.run([a, b], [batched], { ...p, batch: m, m: 1, aBatchStride: k, bBatchStride: 0 });
            sameBits(batched, full, `batched ${JSON.stringify(p)}`);
          }
        }),
        { numRuns: 150 },
      );
    },
  });
}

Deno.test({
  name: "wasm matmul: relaxed and plain SIMD agree with the reference on a 300×200×500 product",
  ignore,
  fn() {
    const p: Params = {
      batch: 1,
      m: 300,
      n: 200,
      k: 500,
      transA: false,
      transB: true,
      aBatchStride: 0,
      bBatchStride: 0,
    };
    const a = draw(1, p.m * p.k) as Float32Array;
    const b = draw(2, p.n * p.k) as Float32Array;
    for (const flavour of flavours) {
      const c = new Float32Array(p.m * p.n);
      new WasmMatmul(flavour).run([a, b], [c], p);
      assertClose(c, a, b, p);
    }
  },
});

Deno.test({
  name: "wasm matmul: a b with ±∞ or NaN runs the TypeScript kernel (0·∞ skipped), bit for bit",
  ignore,
  fn() {
    for (const flavour of flavours) {
      const mm = new WasmMatmul(flavour);
      for (const special of [Infinity, -Infinity, NaN]) {
        const p: Params = {
          batch: 2,
          m: 5,
          n: 9,
          k: 6,
          transA: false,
          transB: false,
          aBatchStride: 30,
          bBatchStride: 54,
        };
        const a = draw(3, 60) as Float32Array;
        const b = draw(4, 108) as Float32Array;
        a[30] = 0;
        b[54 + 3] = special; // batch 1, b[0, 3]: met by a zero of a in row 0
        const c = new Float32Array(90), ts = new Float32Array(90);
        mm.run([a, b], [c], p);
        matmulTs([a, b], [ts], p);
        sameBits(c.subarray(45), ts.subarray(45), `batch 1 with ${special}`);
        assertClose(c.subarray(0, 45), a.subarray(0, 30), b.subarray(0, 54), { ...p, batch: 1 });
      }
      // Infinities and NaN in a propagate as in the reference.
      const a = new Float32Array([Infinity, 1, 2, NaN, 0, 3]);
      const b = new Float32Array(3 * 8).fill(1);
      b[0] = 0;
      const c = new Float32Array(2 * 8);
      mm.run([a, b], [c], {
        batch: 1,
        m: 2,
        n: 8,
        k: 3,
        transA: false,
        transB: false,
        aBatchStride: 0,
        bBatchStride: 0,
      });
      assert.ok(Number.isNaN(c[0])); // ∞·0
      assert.equal(c[1], Infinity);
      assert.ok(c.subarray(8).every(Number.isNaN));
    }
  },
});

Deno.test({
  name: "wasm matmul: k = 0 gives zeros, empty m or n writes nothing",
  ignore,
  fn() {
    const mm = new WasmMatmul(flavours[0]!);
    const c = new Float32Array(6).fill(5);
    const p = { batch: 2, m: 1, n: 3, k: 0, transA: false, transB: true };
    mm.run([new Float32Array(0), new Float32Array(0)], [c], {
      ...p,
      aBatchStride: 0,
      bBatchStride: 0,
    });
    assert.deepEqual([...c], [0, 0, 0, 0, 0, 0]);
    c.fill(5);
    mm.run([new Float32Array(0), new Float32Array(0)], [c], {
      ...p,
      n: 0,
      k: 2,
      aBatchStride: 2,
      bBatchStride: 0,
    });
    assert.deepEqual([...c], [5, 5, 5, 5, 5, 5]);
  },
});

Deno.test("cpu matmul selection: ts, auto and wasm paths, and the fallbacks", async () => {
  assert.equal(createCpuMatmul("ts").path, "ts");
  assert.equal(createCpuMatmul("auto", null).path, "ts");
  assert.throws(() => createCpuMatmul("wasm", null), /needs WebAssembly SIMD/);
  assert.throws(() => createCpuMatmul("fast" as never), /must be "auto", "ts" or "wasm"/);
  assert.equal(createCpuBackend({ kernels: "ts" }).matmulPath, "ts");
  assert.equal(createCpuBackend({ kernels: "ts" }).matmulThreads, 1);
  assert.throws(() => createCpuBackend({ threads: 0 }), /threads must be an integer >= 1, got 0/);
  assert.throws(() => createCpuMatmul("auto", null, 1.5), /threads must be an integer >= 1/);
  assert.equal(createCpuBackend({ precision: "f64", kernels: "wasm" }).matmulPath, "ts");
  assert.throws(() => createCpuBackend({ kernels: "x" as never }), /kernels must be/);
  const expected = detected === null ? "ts" : `wasm-${detected}`;
  assert.equal(
    createCpuBackend().matmulPath,
    Deno.env.get("RLVR_CPU_KERNELS") === "ts" ? "ts" : expected,
  );
  // The environment's settings, in child processes (see _env_test_util.ts for why).
  const backend = new URL("../cpu/cpu_backend.ts", import.meta.url).href;
  const head = `import assert from "node:assert/strict";
import { createCpuBackend } from "${backend}";
`;
  await runWithEnv(
    head + `assert.equal(createCpuBackend().matmulPath, "ts");
assert.equal(createCpuBackend({ kernels: "auto" }).matmulPath, ${JSON.stringify(expected)});`,
    { RLVR_CPU_KERNELS: "ts" },
  );
  await runWithEnv(
    head + `assert.throws(() => createCpuBackend(), /env RLVR_CPU_KERNELS must be/);`,
    { RLVR_CPU_KERNELS: "gpu" },
  );
  await runWithEnv(
    head + `assert.equal(createCpuBackend().matmulThreads, 1);`,
    { RLVR_CPU_KERNELS: "auto", RLVR_CPU_THREADS: "1" },
  );
  await runWithEnv(
    head +
      `assert.throws(() => createCpuBackend(), /env RLVR_CPU_THREADS must be an integer >= 1/);`,
    { RLVR_CPU_KERNELS: "auto", RLVR_CPU_THREADS: "many" },
  );

  // Through backend.run: ts gives the TypeScript kernel's bits, auto the wasm tolerance, and
  // small n·k (below WASM_MIN_NK) the TypeScript bits on every path.
  for (const [n, k] of [[40, 30], [4, 8]] as const) {
    const m = 7;
    const p: Params = {
      batch: 1,
      m,
      n,
      k,
      transA: false,
      transB: true,
      aBatchStride: 0,
      bBatchStride: 0,
    };
    const a = draw(5, m * k) as Float32Array;
    const b = draw(6, n * k) as Float32Array;
    const ts = new Float32Array(m * n);
    matmulTs([a, b], [ts], p);
    for (const kernels of ["ts", "auto"] as const) {
      const cpu = createCpuBackend({ kernels });
      const [ba, bb, bc] = [
        cpu.alloc(m * k, "f32"),
        cpu.alloc(n * k, "f32"),
        cpu.alloc(m * n, "f32"),
      ];
      cpu.write(ba, a);
      cpu.write(bb, b);
      cpu.run("matmul", [ba, bb], [bc], p);
      const c = await cpu.read(bc) as Float32Array;
      if (kernels === "ts" || n * k < WASM_MIN_NK || detected === null) sameBits(c, ts, kernels);
      else assertClose(c, a, b, p);
      for (const x of [ba, bb, bc]) cpu.free(x);
    }
  }
});

Deno.test("cpu matmul selection: f64 operands always take the TypeScript kernel", () => {
  const { kernel } = createCpuMatmul("auto");
  const p: Params = {
    batch: 1,
    m: 3,
    n: 40,
    k: 40,
    transA: false,
    transB: false,
    aBatchStride: 0,
    bBatchStride: 0,
  };
  const a = draw(7, 120, true), b = draw(8, 1600, true);
  const c = new Float64Array(120), ts = new Float64Array(120);
  kernel([a, b], [c], p);
  matmulTs([a, b], [ts], p);
  assert.deepEqual(c, ts);
});

Deno.test({
  name: "wasm matmul threads: two threads give the one-thread bits, for every shape and layout",
  ignore,
  async fn() {
    const one = new WasmMatmul(flavours[0]!, 1);
    const two = new WasmMatmul(flavours[0]!, 2);
    assert.equal(two.threads, 2, "Deno provides node:worker_threads and shared memory");
    for (let i = 0; i < 500 && two.activeThreads < 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(two.activeThreads, 2, "the worker did not start within 5 s");
    const saved = WASM_MATMUL_TUNING.parallelMinMacs;
    WASM_MATMUL_TUNING.parallelMinMacs = 0; // split even tiny products
    try {
      fc.assert(
        fc.property(shape, fc.boolean(), (s, tiny) => {
          const { a, b, p } = setup(s);
          const c1 = new Float32Array(p.batch * p.m * p.n);
          const c2 = new Float32Array(p.batch * p.m * p.n);
          const run = () => {
            one.run([a, b], [c1], p);
            two.run([a, b], [c2], p);
          };
          if (tiny) withTinyBlocks(run);
          else run();
          sameBits(c2, c1, JSON.stringify(p));
        }),
        { numRuns: 200 },
      );
      // A product big enough for the default threshold, both ways round.
      WASM_MATMUL_TUNING.parallelMinMacs = saved;
      const p: Params = {
        batch: 1,
        m: 200,
        n: 300,
        k: 600,
        transA: false,
        transB: true,
        aBatchStride: 0,
        bBatchStride: 0,
      };
      assert.ok(200 * 304 * 600 >= saved);
      const a = draw(9, p.m * p.k) as Float32Array, b = draw(10, p.n * p.k) as Float32Array;
      const c1 = new Float32Array(p.m * p.n), c2 = new Float32Array(p.m * p.n);
      one.run([a, b], [c1], p);
      two.run([a, b], [c2], p);
      sameBits(c2, c1, "200×300×600");
      assertClose(c2, a, b, p);
      // After close, the same instance runs on one thread and still gives the same bits.
      two.close();
      assert.equal(two.activeThreads, 1);
      c2.fill(0);
      two.run([a, b], [c2], p);
      sameBits(c2, c1, "after close");
    } finally {
      WASM_MATMUL_TUNING.parallelMinMacs = saved;
      one.close();
      two.close();
    }
  },
});

Deno.test({
  name: "wasm matmul resident weights: a keyed b gives the unkeyed bits on every sighting, " +
    "re-packs on a new version and falls back on non-finite values",
  ignore,
  fn() {
    for (const flavour of flavours) {
      for (const threads of [1, 2]) {
        const mm = new WasmMatmul(flavour, threads);
        const plain = new WasmMatmul(flavour);
        fc.assert(
          fc.property(shape, fc.boolean(), fc.nat(4), (s, tiny, poison) => {
            const { a, b, p } = setup({ ...s, m: Math.max(1, s.m) });
            const key = { key: {}, version: 0 };
            const c = new Float32Array(p.batch * p.m * p.n);
            const want = new Float32Array(c.length);
            const go = (mmx: WasmMatmul, out: Float32Array, kb?: typeof key) => {
              const run = () => mmx.run([a, b], [out], p, kb);
              if (tiny) withTinyBlocks(run);
              else run();
            };
            for (let version = 0; version < 3; version++) {
              key.version = version;
              if (version > 0) b[(version * 7) % b.length] = version === poison ? NaN : version;
              go(plain, want);
              // First sighting, slot, hit: the same bits each time, and for one row too.
              for (let sighting = 0; sighting < 3; sighting++) {
                c.fill(-1);
                go(mm, c, key);
                sameBits(c, want, `v${version} sighting ${sighting} ${JSON.stringify(p)}`);
              }
            }
            mm.release(key.key);
          }),
          { numRuns: 120 },
        );
        mm.close();
      }
    }
  },
});

/** A 4-row product through a 64×64 transposed weight: the resident-cache tests' shape. */
const DECODE_4x64: Params = {
  batch: 1,
  m: 4,
  n: 64,
  k: 64,
  transA: false,
  transB: true,
  aBatchStride: 0,
  bBatchStride: 0,
};

Deno.test({
  name: "wasm matmul resident weights: slots are bounded, reused after release, " +
    "and dropped when scratch must grow",
  ignore,
  fn() {
    const saved = WASM_MATMUL_TUNING.residentBytes;
    const mm = new WasmMatmul(flavours[0]!);
    const p = DECODE_4x64;
    const slot = 4 * 64 * 64;
    try {
      WASM_MATMUL_TUNING.residentBytes = 2 * slot;
      const a = draw(1, 4 * 64) as Float32Array;
      const c = new Float32Array(4 * 64);
      const keys = [{}, {}, {}].map((key) => ({ key, version: 0 }));
      const use = (kb: { key: object; version: number }) => {
        mm.run([a, draw(9, 64 * 64) as Float32Array], [c], p, kb);
        mm.run([a, draw(9, 64 * 64) as Float32Array], [c], p, kb);
      };
      use(keys[0]!);
      assert.equal(mm.residentBytes, slot);
      use(keys[1]!);
      use(keys[2]!); // over the budget: packed per call
      assert.equal(mm.residentBytes, 2 * slot);
      mm.release(keys[0]!.key);
      use(keys[2]!); // takes the released slot
      assert.equal(mm.residentBytes, 2 * slot);
      // A product whose scratch does not fit below the resident region drops the region.
      const big = { ...p, m: 2048, k: 1024, n: 1024 };
      mm.run([draw(3, 2048 * 1024) as Float32Array, draw(4, 1024 * 1024) as Float32Array], [
        new Float32Array(2048 * 1024),
      ], big);
      assert.equal(mm.residentBytes, 0);
      WASM_MATMUL_TUNING.residentBytes = 0; // off: nothing is held
      use(keys[1]!);
      assert.equal(mm.residentBytes, 0);
    } finally {
      WASM_MATMUL_TUNING.residentBytes = saved;
    }
  },
});

Deno.test({
  name: "wasm matmul resident weights: a version used by one product only never takes a slot " +
    "(training), and a region dropped for scratch is reused without growing the memory",
  ignore,
  fn() {
    const mm = new WasmMatmul(flavours[0]!);
    const p = DECODE_4x64;
    const a = draw(1, 4 * 64) as Float32Array;
    const b = draw(9, 64 * 64) as Float32Array;
    const c = new Float32Array(4 * 64);
    const kb = { key: {}, version: 0 };
    // An optimizer step between every two products: each version is seen once.
    for (let step = 0; step < 5; step++, kb.version++) mm.run([a, b], [c], p, kb);
    assert.equal(mm.residentBytes, 0);
    // Decoding: many products of one version; the second takes the slot.
    mm.run([a, b], [c], p, kb);
    assert.equal(mm.residentBytes, 0);
    mm.run([a, b], [c], p, kb);
    assert.equal(mm.residentBytes, 4 * 64 * 64);
    // A large product drops the region; taking slots again reuses its pages.
    const big = { ...p, m: 512, k: 512, n: 512, transB: false };
    mm.run([draw(3, 512 * 512) as Float32Array, draw(4, 512 * 512) as Float32Array], [
      new Float32Array(512 * 512),
    ], big);
    assert.equal(mm.residentBytes, 0);
    const grown = mm.memoryBytes;
    for (let i = 0; i < 3; i++) mm.run([a, b], [c], p, kb);
    assert.equal(mm.residentBytes, 4 * 64 * 64);
    assert.equal(mm.memoryBytes, grown);
  },
});

Deno.test({
  name: "cpu backend: a weight changed in place (write, AdamW) is never read from a stale " +
    "resident copy",
  ignore,
  async fn() {
    const { tensor, matmul, noGrad, AdamW } = await import("../../mod.ts");
    const backend = createCpuBackend({ kernels: "wasm", blas: "wasm" });
    const xs = draw(5, 3 * 96) as Float32Array;
    const x = tensor(xs, { shape: [3, 96], backend });
    const w = tensor(draw(6, 80 * 96) as Float32Array, {
      shape: [80, 96],
      backend,
      requiresGrad: true,
    });
    const opt = new AdamW([w], { lr: 0.1 });
    const p: Params = {
      batch: 1,
      m: 3,
      n: 80,
      k: 96,
      transA: false,
      transB: true,
      aBatchStride: 0,
      bBatchStride: 0,
    };
    for (let step = 0; step < 4; step++) {
      if (step === 2) backend.write(w.buffer, draw(7, 80 * 96)); // a host write
      const values = Float32Array.from(await w.data());
      const want = new Float32Array(3 * 80);
      new WasmMatmul(detected!).run([xs, values], [want], p);
      for (let use = 0; use < 3; use++) {
        const y = noGrad(() => matmul(x, w, { transB: true }));
        sameBits(Float32Array.from(await y.data()), want, `step ${step} use ${use}`);
        y.dispose();
      }
      const loss = matmul(x, w, { transB: true }).sum();
      loss.backward();
      opt.step();
      opt.zeroGrad();
      loss.dispose();
    }
    opt.dispose();
  },
});
