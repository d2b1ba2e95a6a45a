/**
 * Every numbered matmul variant against the CPU oracle, and the rules that choose between them.
 *
 * Each variant is forced on the shared backend in turn (`gpu.matmulVariant`), so every variant
 * sees every shape, including shapes the dispatcher would never give it. Shapes include sizes
 * that are not multiples of the tiles (16 for variant 1, 64 for variant 2, 64 or 8 columns for
 * variant 3) or of the vector width 4, all four transposition combinations and batches with
 * both broadcast (stride 0) and per-batch operands.
 *
 * Tolerance: f32, rtol 1e-4 and atol 1e-4. The GPU accumulates in f32 in its own order, the
 * oracle in float64 rounded once; for k <= 130 and O(1) inputs the f32 error is about 1e-6
 * relative, and the absolute term covers results that cancel to near zero. Non-finite values
 * must match exactly (assertClose compares NaN and ±Infinity by identity).
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import * as ops from "../../mod.ts";
import { Rng } from "../../random.ts";
import { assertClose } from "../../testing.ts";
import type { Backend, KernelParams } from "../types.ts";
import { assertParity, cpu, gpuTest, RAGGED, type Tol } from "./_test_utils.ts";
import type { GpuBinding } from "./kernels/_wgsl.ts";
import {
  MATMUL_VARIANTS,
  type MatmulVariant,
  parseMatmulVariant,
  pickMatmulVariant,
} from "./kernels/matmul.ts";
import { matmulV2 } from "./kernels/matmul_v2.ts";
import { matmulV3 } from "./kernels/matmul_v3.ts";
import { createWebGpuBackend, type WebGpuBackend } from "./webgpu_backend.ts";

const TOL: Tol = { rtol: 1e-4, atol: 1e-4 };

/** Runs `body` with `variant` forced on `gpu`, restoring the automatic choice afterwards. */
async function withVariant(
  gpu: WebGpuBackend,
  variant: MatmulVariant,
  body: () => Promise<void>,
): Promise<void> {
  gpu.matmulVariant = variant;
  try {
    await body();
  } finally {
    gpu.matmulVariant = "auto";
  }
}

/** One `matmul` kernel call on `backend` with host operands; returns `c`. */
async function runKernel(
  backend: Backend,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  p: KernelParams["matmul"],
): Promise<Float32Array> {
  const A = backend.alloc(a.length, "f32");
  const B = backend.alloc(b.length, "f32");
  const C = backend.alloc(p.batch * p.m * p.n, "f32");
  backend.write(A, a);
  backend.write(B, b);
  backend.run("matmul", [A, B], [C], p);
  const out = await backend.read(C);
  for (const x of [A, B, C]) backend.free(x);
  return out as Float32Array;
}

interface Case {
  m: number;
  n: number;
  k: number;
  batch: number;
  transA: boolean;
  transB: boolean;
  /** Whether b is one matrix broadcast over the batch (stride 0). */
  broadcastB: boolean;
}

function params(c: Case): KernelParams["matmul"] {
  return {
    batch: c.batch,
    m: c.m,
    n: c.n,
    k: c.k,
    transA: c.transA,
    transB: c.transB,
    aBatchStride: c.m * c.k,
    bBatchStride: c.broadcastB ? 0 : c.k * c.n,
  };
}

/** Compares one kernel call on the GPU with the CPU oracle. */
async function assertKernelParity(
  gpu: WebGpuBackend,
  c: Case,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  what: string,
): Promise<void> {
  const p = params(c);
  const want = await runKernel(cpu, a, b, p);
  const got = await runKernel(gpu, a, b, p);
  assertClose(got, want, { ...TOL, msg: `${what} ${JSON.stringify(c)}` });
}

function randomOperands(c: Case, seed: number): [number[], number[]] {
  const rng = new Rng(seed);
  const a = Array.from({ length: c.batch * c.m * c.k }, () => rng.normal());
  const b = Array.from({ length: (c.broadcastB ? 1 : c.batch) * c.k * c.n }, () => rng.normal());
  return [a, b];
}

const LAYOUTS = [[false, false], [false, true], [true, false], [true, true]] as const;

gpuTest(
  "matmul variants: each matches the CPU oracle through ops.matmul, forward and gradients, " +
    "on drawn ragged shapes, transpositions and batches",
  async (gpu) => {
    // 4, 20, 68: multiples of the vector width but not of a tile; 64: exactly one v2 tile.
    const mnk = fc.constantFrom<number>(...RAGGED, 4, 20, 64, 67, 68);
    const seed = fc.integer({ min: 0, max: 1 << 20 });
    const arb = fc.tuple(mnk, mnk, mnk, fc.constantFrom(0, 1, 3), fc.boolean(), fc.boolean(), seed);
    for (const variant of MATMUL_VARIANTS) {
      await withVariant(gpu, variant, () =>
        fc.assert(
          fc.asyncProperty(arb, async ([m, n, k, batch, ta, tb, s]) => {
            const aShape = ta ? [k, m] : [m, k];
            const bShape = tb ? [n, k] : [k, n];
            // batch 0: plain 2-D; 1: a batched, b broadcast; 3: both batched.
            const aFull = batch === 0 ? aShape : [batch, ...aShape];
            const bFull = batch === 3 ? [batch, ...bShape] : bShape;
            await assertParity(gpu, {
              name: `v${variant} matmul ${aFull}${ta ? "ᵀ" : ""} · ${bFull}${tb ? "ᵀ" : ""}`,
              seed: s,
              leaves: [{ shape: aFull }, { shape: bFull }],
              fn: (a, b) => ops.matmul(a, b, { transA: ta, transB: tb }),
              tol: TOL,
            });
          }),
          {
            numRuns: 8,
            examples: [
              [[67, 130, 68, 3, false, false, 1]],
              [[130, 67, 33, 3, true, true, 2]],
              [[68, 68, 68, 1, false, true, 3]],
              [[1, 68, 36, 3, true, false, 4]],
              [[5, 1, 130, 0, false, true, 5]],
            ],
          },
        ));
    }
  },
);

gpuTest(
  "matmul variants: every layout, vector and scalar load paths, broadcast and batched b",
  async (gpu) => {
    // (68, 72, 36): every contiguous dimension a multiple of 4, so v2 and v3 use vec4 loads
    // everywhere; (67, 70, 33) and (3, 5, 7): none is; (1, 68, 36): the decode shape; (64, 8, 0):
    // k = 0 gives zeros; (130, 65, 100): several v2 tiles in both directions with ragged edges.
    const shapes = [[68, 72, 36], [67, 70, 33], [3, 5, 7], [1, 68, 36], [64, 8, 0], [130, 65, 100]];
    let seed = 0;
    for (const variant of MATMUL_VARIANTS) {
      await withVariant(gpu, variant, async () => {
        for (const [m, n, k] of shapes) {
          for (const [transA, transB] of LAYOUTS) {
            for (const broadcastB of [false, true]) {
              const c = { m: m!, n: n!, k: k!, batch: 2, transA, transB, broadcastB };
              const [a, b] = randomOperands(c, seed++);
              await assertKernelParity(gpu, c, a, b, `v${variant}`);
            }
          }
        }
      });
    }
  },
);

gpuTest(
  "matmul variants: a zero of op(a) skips an infinite or NaN op(b) entry, as in the CPU oracle",
  async (gpu) => {
    // 70×70×70: v2 has 2×2 output tiles and 5 k-tiles, of which only the one holding kk = 5
    // contains non-finite values of op(b), so both of its inner loops run.
    const m = 70;
    const n = 70;
    const k = 70;
    for (const variant of MATMUL_VARIANTS) {
      await withVariant(gpu, variant, async () => {
        for (const [transA, transB] of LAYOUTS) {
          const c = { m, n, k, batch: 1, transA, transB, broadcastB: false };
          const [a, b] = randomOperands(c, 11);
          const at = (i: number, kk: number) => (transA ? kk * m + i : i * k + kk);
          const bt = (kk: number, j: number) => (transB ? j * k + kk : kk * n + j);
          for (let i = 0; i < m; i++) a[at(i, 5)] = 0; // column kk = 5 of op(a) is zero ...
          b[bt(5, 3)] = Infinity; // ... so these must contribute nothing,
          b[bt(5, 40)] = -Infinity;
          b[bt(5, 69)] = NaN;
          a[at(2, 9)] = 0;
          b[bt(9, 7)] = Infinity; // only row 2 skips this one: other rows of column 7 are ±Inf,
          a[at(60, 30)] = NaN; // and row 60 is NaN throughout.
          await assertKernelParity(gpu, c, a, b, `v${variant} zero skip`);
          const got = await runKernel(gpu, a, b, params(c));
          assert.ok(Number.isFinite(got[2 * n + 3]!), `v${variant}: 0·∞ leaked into c[2, 3]`);
          assert.ok(Number.isFinite(got[2 * n + 7]!), `v${variant}: 0·∞ leaked into c[2, 7]`);
          assert.ok(Number.isNaN(got[60 * n]!), `v${variant}: NaN of a lost in c[60, 0]`);
        }
      });
    }
  },
);

gpuTest("matmul variants: the forced variant is the kernel that runs", async () => {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args.join(" "));
  const b = await createWebGpuBackend({ debug: true, matmulVariant: 2 });
  try {
    const p = params({ m: 3, n: 5, k: 7, batch: 1, transA: false, transB: true, broadcastB: true });
    const run = async () => {
      await runKernel(b, new Array(21).fill(1), new Array(35).fill(1), p);
    };
    await run();
    b.matmulVariant = 3;
    await run();
    b.matmulVariant = "auto"; // m = 3 picks variant 3
    await run();
    b.matmulVariant = 1;
    await run();
  } finally {
    console.error = original;
    b.destroy();
  }
  const dispatched = lines.filter((l) => l.startsWith("[webgpu] dispatch matmul/"))
    .map((l) => l.split(" ")[2]!.split("/")[1]!);
  assert.deepEqual(dispatched, [
    "matmul_v2_NT_sss",
    "matmul_v3_nk_ss",
    "matmul_v3_nk_ss",
    "matmul_v1",
  ]);
});

gpuTest("matmul variants: option, env RLVR_MATMUL_VARIANT and property, validated", async (gpu) => {
  const previous = Deno.env.get("RLVR_MATMUL_VARIANT");
  try {
    Deno.env.set("RLVR_MATMUL_VARIANT", "3");
    const fromEnv = await createWebGpuBackend();
    assert.equal(fromEnv.matmulVariant, 3);
    fromEnv.destroy();
    const fromOption = await createWebGpuBackend({ matmulVariant: 1 });
    assert.equal(fromOption.matmulVariant, 1); // the option wins over the environment
    fromOption.destroy();
  } finally {
    if (previous === undefined) Deno.env.delete("RLVR_MATMUL_VARIANT");
    else Deno.env.set("RLVR_MATMUL_VARIANT", previous);
  }
  // A bad setting is rejected before a device is requested. (Only valid values go through the
  // environment: it is shared with test files running in parallel.)
  await assert.rejects(
    createWebGpuBackend({ matmulVariant: 0 as MatmulVariant }),
    /createWebGpuBackend: matmulVariant: the matmul variant must be "auto" or one of 1, 2, 3, got 0/,
  );
  assert.equal(gpu.matmulVariant, "auto");
  assert.throws(() => {
    gpu.matmulVariant = 4 as MatmulVariant;
  }, /webgpu\.matmulVariant: the matmul variant must be "auto" or one of 1, 2, 3, got 4/);
  assert.equal(gpu.matmulVariant, "auto");
});

Deno.test("pickMatmulVariant: GEMV for tiny m, register-blocked for large, else tiled", () => {
  const cases: [number, number, number, MatmulVariant][] = [
    [1, 4096, 4096, 3], // decode
    [4, 151936, 896, 3],
    [5, 4096, 4096, 1], // too few rows to fill 64-row tiles
    [64, 64, 16, 2],
    [4096, 896, 896, 2], // a training-step linear layer
    [64, 63, 4096, 1],
    [1024, 1024, 15, 1],
    [33, 17, 5, 1],
  ];
  for (const [m, n, k, want] of cases) {
    assert.equal(pickMatmulVariant({ m, n, k }), want, `${m}×${n}×${k}`);
  }
});

Deno.test("parseMatmulVariant: auto, numbers and numeric strings; anything else names the source", () => {
  assert.equal(parseMatmulVariant(undefined, "x"), "auto");
  assert.equal(parseMatmulVariant("", "x"), "auto");
  assert.equal(parseMatmulVariant("auto", "x"), "auto");
  assert.equal(parseMatmulVariant(" 2 ", "x"), 2);
  assert.equal(parseMatmulVariant(3, "x"), 3);
  for (const bad of ["0", "1.5", "v2", "AUTO", 4]) {
    assert.throws(() => parseMatmulVariant(bad, "opt"), /^RangeError: opt: the matmul variant/);
  }
});

Deno.test("matmul v2 and v3 read with vec4 exactly when the layout allows it", () => {
  const buf = (size: number): GpuBinding => ({
    buffer: null as unknown as GPUBuffer,
    size,
    dtype: "f32",
    bytes: Math.max(4, size * 4),
  });
  const label = (
    f: typeof matmulV2,
    m: number,
    n: number,
    k: number,
    transA: boolean,
    transB: boolean,
    batch = 1,
    bBatchStride = 0,
  ) =>
    f(buf(batch * m * k), buf((bBatchStride === 0 ? 1 : batch) * k * n), buf(batch * m * n), {
      batch,
      m,
      n,
      k,
      transA,
      transB,
      aBatchStride: m * k,
      bBatchStride,
    }).shader.label;
  // NN: a contiguous along k, b and c along n.
  assert.equal(label(matmulV2, 67, 72, 36, false, false), "matmul_v2_NN_vvv");
  assert.equal(label(matmulV2, 68, 70, 36, false, false), "matmul_v2_NN_vss");
  assert.equal(label(matmulV2, 68, 72, 33, false, false), "matmul_v2_NN_svv");
  // TN: a stored [k, m] is contiguous along m.
  assert.equal(label(matmulV2, 68, 72, 33, true, false), "matmul_v2_TN_vvv");
  assert.equal(label(matmulV2, 67, 72, 36, true, false), "matmul_v2_TN_svv");
  // NT: b stored [n, k] is contiguous along k.
  assert.equal(label(matmulV2, 68, 70, 36, false, true), "matmul_v2_NT_vvs");
  assert.equal(label(matmulV2, 68, 72, 33, false, true), "matmul_v2_NT_ssv");
  // A batch stride that is not a multiple of 4 rules vec4 out for that operand only.
  assert.equal(label(matmulV2, 68, 72, 36, false, false, 2, 36 * 72 + 2), "matmul_v2_NN_vsv");
  // v3: b stored [k, n] (kn) vectorises b and c along n; [n, k] (nk) vectorises a and b along k.
  assert.equal(label(matmulV3, 1, 72, 33, false, false), "matmul_v3_kn_vv");
  assert.equal(label(matmulV3, 1, 70, 36, false, false), "matmul_v3_kn_ss");
  assert.equal(label(matmulV3, 1, 70, 36, false, true), "matmul_v3_nk_vv");
  assert.equal(label(matmulV3, 1, 70, 36, true, true), "matmul_v3_nk_vv"); // m = 1: aᵀ is a row
  assert.equal(label(matmulV3, 2, 70, 36, true, true), "matmul_v3_nk_sv");
  assert.equal(label(matmulV3, 1, 70, 33, false, true), "matmul_v3_nk_ss");
});
