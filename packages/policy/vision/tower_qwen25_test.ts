// The Qwen2.5-VL tower (VisionTower with kind "qwen2_5_vl") against its float64 reference
// (_test_reference_25.ts), finite differences, and the config checks that come with it.

import assert from "node:assert/strict";
import fc from "fast-check";
import { createCpuBackend, noGrad, Rng, tensor } from "@rlvr/tensor";
import { assertClose } from "@rlvr/tensor/testing";
import {
  type GridThw,
  type VisionActivation,
  type VisionConfig,
  visionConfig,
  visionParameterShapes,
  VisionTower,
} from "@rlvr/policy";
import {
  gradcheckTowerParams,
  randomPixels,
  towerOf,
  visionHostParams,
} from "./_test_reference.ts";
import { refTower25 } from "./_test_reference_25.ts";

// patchSize 2 and a 2×2 merge: patch rows of 3·2·2·2 = 24 values; windowSize 8 gives windows of
// 2×2 merged tokens (16 patches), windowSize 12 of 3×3.
const PATCH_DIM = 24;

function small(
  fullattBlockIndexes: readonly number[],
  opts: { hiddenAct?: VisionActivation; windowSize?: number; depth?: number } = {},
): VisionConfig {
  return visionConfig({
    kind: "qwen2_5_vl",
    depth: opts.depth ?? 3,
    embedDim: 16,
    numHeads: 2,
    intermediateSize: 20,
    hiddenAct: opts.hiddenAct ?? "silu",
    patchSize: 2,
    windowSize: opts.windowSize ?? 8,
    fullattBlockIndexes,
    outHiddenSize: 12,
  });
}

function rowsOf(grid: readonly GridThw[]): number {
  return grid.reduce((s, [t, h, w]) => s + t * h * w, 0);
}

async function run(
  v: VisionConfig,
  host: Map<string, Float64Array>,
  pixels: number[][],
  grid: GridThw[],
): Promise<number[][]> {
  const tower = towerOf(v, host);
  try {
    const out = noGrad(() => tower.forward(tensor(pixels), grid));
    assert.deepEqual(out.shape, [rowsOf(grid) / 4, v.outHiddenSize]);
    const a = await out.toArray() as number[][];
    out.dispose();
    return a;
  } finally {
    tower.dispose();
  }
}

function maxAbsDiff(a: number[][], b: number[][]): number {
  let m = 0;
  a.forEach((row, i) => row.forEach((x, j) => m = Math.max(m, Math.abs(x - b[i]![j]!))));
  return m;
}

// Tolerance against the float64 reference: rtol 1e-4, atol 1e-5, as the Qwen2-VL tower's test.
// Weights are f32 (the same values feed the reference); every op rounds its output to f32, the
// rotary angles are f32-rounded as PyTorch's and the erf-GELU fit is within 1.2e-7 relative, so
// outputs of size ~1 carry ~1e-6 error through three blocks and the merger (the max error seen
// is printed by the hand-picked cases below).
Deno.test("VisionTower (qwen2_5_vl): equals the float64 reference on random weights, image sizes, windows and full-attention blocks", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 1e6 }),
      fc.array(
        fc.tuple(
          fc.constant(1),
          fc.integer({ min: 1, max: 5 }),
          fc.integer({ min: 1, max: 5 }),
        ),
        { minLength: 1, maxLength: 2 },
      ),
      fc.constantFrom([], [1], [0, 2], [0, 1, 2]),
      fc.constantFrom<VisionActivation>("silu", "gelu", "quick_gelu"),
      fc.constantFrom(8, 12),
      async (seed, sizes, full, act, windowSize) => {
        const v = small(full, { hiddenAct: act, windowSize });
        const grid: GridThw[] = sizes.map(([t, h, w]) => [t, 2 * h, 2 * w]);
        const host = visionHostParams(v, seed);
        const pixels = randomPixels(new Rng(seed + 1), rowsOf(grid), PATCH_DIM);
        const got = await run(v, host, pixels, grid);
        assertClose(got, refTower25(v, host, pixels, grid), { rtol: 1e-4, atol: 1e-5 });
      },
    ),
    { numRuns: 10 },
  );
});

Deno.test("VisionTower (qwen2_5_vl): hand-picked sizes (H, W multiples of the window or not, two images, two frames) equal the reference", async () => {
  // Merged grids with ws = 2: 4×4 (divisible: an extra empty window row and column), 3×5 (not),
  // 2×3 and 1×1 together in one call, and a two-frame 2×2 image (full blocks attend over both
  // frames, as the Qwen2-VL tower does; see the report in _test_reference_25.ts).
  const cases: GridThw[][] = [
    [[1, 8, 8]],
    [[1, 6, 10]],
    [[1, 4, 6], [1, 2, 2]],
    [[1, 10, 4], [1, 8, 8]],
    [[2, 4, 4]],
  ];
  const v = small([1]);
  let worst = 0;
  for (const [i, grid] of cases.entries()) {
    const host = visionHostParams(v, 100 + i);
    const pixels = randomPixels(new Rng(200 + i), rowsOf(grid), PATCH_DIM);
    const got = await run(v, host, pixels, grid);
    const want = refTower25(v, host, pixels, grid);
    assertClose(got, want, { rtol: 1e-4, atol: 1e-5, msg: JSON.stringify(grid) });
    worst = Math.max(worst, maxAbsDiff(got, want));
  }
  console.log(`qwen2_5_vl tower vs float64 reference: max abs error ${worst.toExponential(2)}`);
});

Deno.test("VisionTower (qwen2_5_vl): window attention differs from full attention, and equals it when each image is one window", async () => {
  const host = visionHostParams(small([]), 5);
  // 3×4 merged tokens: six 2×2 windows (ws = 2), so window blocks see less than the image.
  const grid: GridThw[] = [[1, 6, 8]];
  const pixels = randomPixels(new Rng(6), rowsOf(grid), PATCH_DIM);
  const windowed = await run(small([]), host, pixels, grid);
  const full = await run(small([0, 1, 2]), host, pixels, grid);
  const mixed = await run(small([1]), host, pixels, grid);
  assert.ok(maxAbsDiff(windowed, full) > 1e-2, `window vs full: ${maxAbsDiff(windowed, full)}`);
  assert.ok(maxAbsDiff(mixed, full) > 1e-2 && maxAbsDiff(mixed, windowed) > 1e-2);
  // The references differ the same way (the test above is not vacuous).
  const refW = refTower25(small([]), host, pixels, grid);
  const refF = refTower25(small([0, 1, 2]), host, pixels, grid);
  assertClose(windowed, refW, { rtol: 1e-4, atol: 1e-5 });
  assertClose(full, refF, { rtol: 1e-4, atol: 1e-5 });
  // 12-pixel windows (3×3 merged tokens) hold a 3×2 image whole: window = full attention.
  const small1: GridThw[] = [[1, 6, 4], [1, 2, 6]];
  const px = randomPixels(new Rng(7), rowsOf(small1), PATCH_DIM);
  const w1 = await run(small([], { windowSize: 12 }), host, px, small1);
  const f1 = await run(small([0, 1, 2], { windowSize: 12 }), host, px, small1);
  assertClose(w1, f1, { rtol: 1e-5, atol: 1e-6 });
});

// Gradients on the f64 CPU backend against central finite differences of the same forward:
// rtol 1e-5, atol 1e-7 (as the Qwen2-VL tower's gradient test).
Deno.test("VisionTower (qwen2_5_vl): parameter gradients equal central finite differences (f64 backend)", async () => {
  const f64 = createCpuBackend({ precision: "f64" });
  const v = small([1], { depth: 2 });
  const host = visionHostParams(v, 7);
  const tower = towerOf(v, host, f64);
  // Windows of unequal length (padding slots, masked) and two images.
  const grid: GridThw[] = [[1, 6, 4], [1, 2, 2]];
  const pixels = tensor(randomPixels(new Rng(8), rowsOf(grid), PATCH_DIM), { backend: f64 });
  try {
    await gradcheckTowerParams(tower, pixels, grid, [
      "visual.patch_embed.proj.weight",
      "visual.blocks.0.norm1.weight",
      "visual.blocks.0.attn.qkv.weight",
      "visual.blocks.0.mlp.gate_proj.weight",
      "visual.blocks.1.attn.qkv.bias",
      "visual.blocks.1.mlp.down_proj.weight",
      "visual.merger.ln_q.weight",
      "visual.merger.mlp.0.weight",
    ], f64);
  } finally {
    pixels.dispose();
    tower.dispose();
  }
});

Deno.test("VisionTower (qwen2_5_vl): a loss reaches every tower parameter", async () => {
  const v = small([1]);
  const tower = VisionTower.random(v, { seed: 3, std: 0.3 });
  const grid: GridThw[] = [[1, 6, 8], [1, 2, 2]];
  const pixels = tensor(randomPixels(new Rng(4), rowsOf(grid), PATCH_DIM));
  const weights = tensor(randomPixels(new Rng(5), rowsOf(grid) / 4, v.outHiddenSize));
  const loss = tower.forward(pixels, grid).mul(weights).sum();
  loss.backward();
  assert.deepEqual([...tower.params.keys()], [...visionParameterShapes(v).keys()]);
  for (const [name, p] of tower.params) {
    assert.ok(p.grad !== null, `${name}: no gradient`);
    const g = await p.grad.data();
    assert.ok(g.some((x) => x !== 0), `${name}: zero gradient`);
    assert.ok(Array.from(g).every(Number.isFinite), `${name}: non-finite gradient`);
  }
  for (const t of [loss, pixels, weights]) t.dispose();
  tower.dispose();
});

Deno.test("visionConfig (qwen2_5_vl): defaults, and errors that name the field, the value and the fix", () => {
  const v = visionConfig({
    kind: "qwen2_5_vl",
    depth: 32,
    embedDim: 1280,
    numHeads: 16,
    intermediateSize: 3420,
    outHiddenSize: 2048,
  });
  assert.deepEqual(v.fullattBlockIndexes, [7, 15, 23, 31]);
  assert.equal(v.windowSize, 112);
  assert.equal(v.hiddenAct, "silu");
  assert.equal(v.mlpRatio, 3420 / 1280);
  assert.deepEqual(visionConfig(v), v); // idempotent (visionLanguageConfig re-validates)
  assert.deepEqual(small([]).fullattBlockIndexes, []);
  assert.deepEqual(
    visionConfig({ kind: "qwen2_5_vl", depth: 2, embedDim: 16, numHeads: 2, outHiddenSize: 8 })
      .fullattBlockIndexes,
    [],
  );
  const base = { depth: 4, embedDim: 16, numHeads: 2, outHiddenSize: 8 };
  assert.throws(
    () => visionConfig({ ...base, kind: "qwen2_5_vl", fullattBlockIndexes: [1, 4] }),
    /fullattBlockIndexes must be a list of distinct block indexes in \[0, 4\).*got \[1,4\]/,
  );
  assert.throws(
    () => visionConfig({ ...base, kind: "qwen2_5_vl", windowSize: 3, patchSize: 2 }),
    /windowSize must be at least patchSize · spatialMergeSize = 4 pixels.*got 3/,
  );
  assert.throws(
    () => visionConfig({ ...base, kind: "qwen2_5_vl", intermediateSize: 20, mlpRatio: 2 }),
    /mlpRatio must be intermediateSize \/ embedDim = 1.25 or omitted/,
  );
  assert.throws(
    () => visionConfig({ ...base, intermediateSize: 20 }),
    /intermediateSize must be int\(embedDim · mlpRatio\) = 64 or omitted.*set mlpRatio/,
  );
  assert.throws(
    () => visionConfig({ ...base, fullattBlockIndexes: [1] }),
    /fullattBlockIndexes must be every block.*kind: "qwen2_5_vl"/,
  );
  assert.throws(
    () => visionConfig({ ...base, kind: "qwen3_vl" as "qwen2_vl" }),
    /kind must be "qwen2_vl" \(Qwen2-VL\) or "qwen2_5_vl" \(Qwen2.5-VL\), got "qwen3_vl"/,
  );
  assert.throws(
    () => visionConfig({ ...base, kind: "qwen2_5_vl", hiddenAct: "relu" as "silu" }),
    /hiddenAct must be "quick_gelu", "gelu" or "silu", got "relu"/,
  );
  // Qwen2-VL configs keep their fields and derived values.
  const q2 = visionConfig(base);
  assert.equal(q2.kind, "qwen2_vl");
  assert.equal(q2.intermediateSize, 64);
  assert.equal(q2.windowSize, 0);
  assert.deepEqual(q2.fullattBlockIndexes, [0, 1, 2, 3]);
});
