import assert from "node:assert/strict";
import fc from "fast-check";
import { BLAS_TUNING, blasMatmul, loadNativeBlas } from "./blas.ts";
import { matmul as matmulTs, matmulReference } from "./matmul.ts";
import { createCpuBackend } from "./cpu_backend.ts";
import type { KernelParams } from "../types.ts";
import { tensor } from "../../creation.ts";
import { matmul } from "../../ops/matmul.ts";

// Tolerance against the float64 reference: every element is an f32 sum of k products (in an
// order the library picks), so its error is at most about k·2⁻²⁴·Σ|a·b|; the test allows
// (k + 1)·2⁻²³·Σ|a·b|, twice that. Bits are compared only where the oracle must run.

const { lib, error } = loadNativeBlas();
// Without a BLAS (no library, no FFI) these tests have nothing to run; CI installs OpenBLAS.
const ignore = lib === null;
if (ignore) console.warn(`blas_test: no native BLAS here (${error}); the BLAS tests are skipped`);

type Params = KernelParams["matmul"];

/** Runs `fn` with every product, however small, allowed on the BLAS. */
async function everyProduct(fn: () => void | Promise<void>): Promise<void> {
  const before = { ...BLAS_TUNING };
  Object.assign(BLAS_TUNING, { minMacs: 0, minRows: 0 });
  try {
    await fn();
  } finally {
    Object.assign(BLAS_TUNING, before);
  }
}

function draw(seed: number, length: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const u = s / 2 ** 32;
    out[i] = u < 0.2 ? 0 : u * 8 - 4;
  }
  return out;
}

function assertClose(got: Float32Array, a: Float32Array, b: Float32Array, p: Params): void {
  const ref = new Float64Array(got.length);
  matmulReference([a, b], [ref], p);
  const mag = new Float64Array(got.length);
  matmulReference([a.map(Math.abs), b.map(Math.abs)], [mag], p);
  for (let i = 0; i < ref.length; i++) {
    const tol = (p.k + 1) * 2 ** -23 * mag[i]!;
    if (!(Math.abs(got[i]! - ref[i]!) <= tol)) {
      assert.fail(
        `element ${i}: blas ${got[i]} vs reference ${ref[i]} (tol ${tol}) ${JSON.stringify(p)}`,
      );
    }
  }
}

const arbParams: fc.Arbitrary<Params> = fc.record({
  batch: fc.integer({ min: 1, max: 3 }),
  m: fc.integer({ min: 0, max: 37 }),
  n: fc.integer({ min: 0, max: 70 }),
  k: fc.integer({ min: 0, max: 90 }),
  transA: fc.boolean(),
  transB: fc.boolean(),
  broadcastA: fc.boolean(),
  broadcastB: fc.boolean(),
}).map(({ broadcastA, broadcastB, ...p }) => ({
  ...p,
  aBatchStride: broadcastA ? 0 : p.m * p.k,
  bBatchStride: broadcastB ? 0 : p.k * p.n,
}));

Deno.test({
  name: "blas: cblas_sgemm equals the float64 reference within f32 rounding, every flag and stride",
  ignore,
  fn() {
    fc.assert(
      fc.property(arbParams, fc.integer({ min: 0, max: 2 ** 31 }), (p, seed) => {
        const a = draw(seed, Math.max(1, p.batch * p.m * p.k));
        const b = draw(seed ^ 0x5bd1e995, Math.max(1, p.batch * p.k * p.n));
        const c = new Float32Array(p.batch * p.m * p.n).fill(NaN);
        lib!.sgemm(a, b, c, p);
        assertClose(c, a, b, p);
      }),
      { numRuns: 300 },
    );
  },
});

Deno.test({
  name: "blas: large shapes (several library blocks, threads) stay within rounding",
  ignore,
  fn() {
    for (
      const p of [
        { m: 300, n: 257, k: 513, transA: false, transB: true },
        { m: 129, n: 600, k: 700, transA: true, transB: false },
        { m: 1, n: 1000, k: 777, transA: false, transB: true },
      ]
    ) {
      const q = { ...p, batch: 1, aBatchStride: 0, bBatchStride: 0 };
      const a = draw(p.m, p.m * p.k), b = draw(p.n, p.k * p.n);
      const c = new Float32Array(p.m * p.n);
      lib!.sgemm(a, b, c, q);
      assertClose(c, a, b, q);
    }
  },
});

Deno.test({
  name: "blas: an op(b) holding ∞ or NaN runs the oracle (0·∞ adds nothing), bit for bit",
  ignore,
  fn: () =>
    everyProduct(() => {
      const wasm = () => {
        throw new Error("the fallback kernel must not run for a BLAS product");
      };
      const kernel = blasMatmul(lib!, wasm, () => true);
      for (const bad of [Infinity, -Infinity, NaN]) {
        const p = {
          batch: 2,
          m: 5,
          n: 6,
          k: 7,
          transA: false,
          transB: true,
          aBatchStride: 35,
          bBatchStride: 42,
        };
        const a = draw(1, 70), b = draw(2, 84);
        b[60] = bad; // in the second batch only
        const got = new Float32Array(60), want = new Float32Array(60);
        kernel([a, b], [got], p);
        matmulTs([a, b], [want], p);
        assert.deepEqual(got, want);
      }
    }),
});

Deno.test({
  name: "blas: auto sends only gradient products to the BLAS; forward bits stay the wasm kernel's",
  ignore,
  fn: () =>
    everyProduct(async () => {
      const auto = createCpuBackend({ blas: "auto" });
      const wasm = createCpuBackend({ blas: "wasm" });
      const all = createCpuBackend({ blas: "openblas" });
      assert.equal(auto.gradientMatmulPath, "openblas");
      assert.notEqual(auto.matmulPath, "openblas");
      assert.equal(all.matmulPath, "openblas");
      assert.equal(wasm.gradientMatmulPath, wasm.matmulPath);
      assert.equal(wasm.blasLibrary, null);
      assert.equal(auto.blasLibrary, lib!.library);
      const x0 = draw(3, 24 * 40), w0 = draw(4, 48 * 40), g0 = draw(5, 24 * 48);
      const run = async (backend: typeof auto) => {
        const x = tensor(x0, { backend, shape: [24, 40], requiresGrad: true });
        const w = tensor(w0, { backend, shape: [48, 40], requiresGrad: true });
        const y = matmul(x, w, { transB: true });
        // A loss linear in y: its gradient g0 does not depend on how y was rounded, so the
        // gradient products of every backend multiply the same operands.
        y.mul(tensor(g0, { backend, shape: [24, 48] })).sum().backward();
        const f32 = async (t: { data(): Promise<ArrayLike<number>> }) =>
          Float32Array.from(await t.data());
        return { y: await f32(y), gx: await f32(x.grad!), gw: await f32(w.grad!) };
      };
      const [a, b, c] = [await run(auto), await run(wasm), await run(all)];
      assert.deepEqual(a.y, b.y, "auto's forward product is the wasm kernel's, bit for bit");
      assert.deepEqual(a.gx, c.gx, "auto's gradient products are the BLAS's, bit for bit");
      assert.deepEqual(a.gw, c.gw, "auto's gradient products are the BLAS's, bit for bit");
      // A product a hand-written backward marks as a gradient product takes the BLAS too.
      const marked = await matmul(
        tensor(x0, { backend: auto, shape: [24, 40] }),
        tensor(w0, { backend: auto, shape: [48, 40] }),
        { transB: true, gradient: true },
      ).data();
      assert.deepEqual(Float32Array.from(marked), c.y, "a marked product is the BLAS's");
      for (const [got, want] of [[a.gx, b.gx], [a.gw, b.gw], [c.y, b.y]] as const) {
        for (let i = 0; i < want.length; i++) {
          assert.ok(
            Math.abs(got[i]! - want[i]!) <= 1e-4 * (1 + Math.abs(want[i]!)),
            `element ${i}: ${got[i]} vs ${want[i]}`,
          );
        }
      }
    }),
});

Deno.test("blas: bad RLVR_BLAS values and contradictions name the field, the value and the fix", () => {
  assert.throws(
    () => createCpuBackend({ blas: "mkl" as "auto" }),
    /blas must be one of auto, openblas, wasm, ts, got "mkl"/,
  );
  assert.throws(
    () => createCpuBackend({ kernels: "ts", blas: "openblas" }),
    /kernels "ts" contradicts blas "openblas"; drop one of them/,
  );
  const oracle = createCpuBackend({ blas: "ts" });
  assert.equal(oracle.matmulPath, "ts");
  assert.equal(oracle.gradientMatmulPath, "ts");
  assert.equal(createCpuBackend({ precision: "f64", blas: "openblas" }).blasLibrary, null);
});

Deno.test("blas: RLVR_BLAS=openblas with a library that is not there fails with the reason and the fix", async () => {
  const script = `import { createCpuBackend } from ${
    JSON.stringify(new URL("./cpu_backend.ts", import.meta.url).href)
  }; createCpuBackend();`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", script],
    env: { RLVR_BLAS: "openblas", RLVR_BLAS_LIB: "/nonexistent/libnothing.so" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, text);
  assert.match(text, /blas "openblas" could not load a BLAS \(\/nonexistent\/libnothing\.so: /);
  assert.match(text, /apt install libopenblas0-pthread/);
});
