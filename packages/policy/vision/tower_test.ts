import assert from "node:assert/strict";
import fc from "fast-check";
import { createCpuBackend, noGrad, Rng, rope, tensor } from "@rlvr/tensor";
import { assertClose } from "@rlvr/tensor/testing";
import { type GridThw, mropePositions, mropeTables, visionConfig, VisionTower } from "@rlvr/policy";

import {
  gradcheckTowerParams,
  randomPixels,
  refTower,
  towerOf,
  visionHostParams,
} from "./_test_reference.ts";

// The float64 reference of the tower is in _test_reference.ts.

const SMALL = (hiddenAct: "quick_gelu" | "gelu") =>
  visionConfig({
    depth: 2,
    embedDim: 16,
    numHeads: 2,
    mlpRatio: 1.5,
    hiddenAct,
    patchSize: 2,
    outHiddenSize: 12,
  });

// Tolerance against the float64 reference: rtol 1e-4, atol 1e-5. Weights are f32 (the same
// values feed the reference); every op rounds its output to f32 and the erf-GELU fit is within
// 1.2e-7 relative, so outputs of size ~1 carry ~1e-6 error through two blocks and the merger.
Deno.test("VisionTower: equals the float64 reference on random weights and random image sizes", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 1e6 }),
      fc.array(
        fc.tuple(
          fc.integer({ min: 1, max: 2 }),
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 3 }),
        ),
        {
          minLength: 1,
          maxLength: 3,
        },
      ),
      fc.constantFrom<"quick_gelu" | "gelu">("quick_gelu", "gelu"),
      async (seed, sizes, act) => {
        const v = SMALL(act);
        const grid: GridThw[] = sizes.map(([t, h, w]) => [t, 2 * h, 2 * w]);
        const host = visionHostParams(v, seed);
        const rng = new Rng(seed + 1);
        const rows = grid.reduce((s, [t, h, w]) => s + t * h * w, 0);
        const pixels = randomPixels(rng, rows, 3 * 2 * 2 * 2);
        const tower = towerOf(v, host);
        try {
          const got = noGrad(() => tower.forward(tensor(pixels), grid));
          const want = refTower(v, host, pixels, grid);
          assert.deepEqual(got.shape, [rows / 4, 12]);
          assertClose(await got.toArray(), want, { rtol: 1e-4, atol: 1e-5 });
          got.dispose();
        } finally {
          tower.dispose();
        }
      },
    ),
    { numRuns: 12 },
  );
});

Deno.test("VisionTower: parameter gradients equal central finite differences (f64 backend)", async () => {
  const f64 = createCpuBackend({ precision: "f64" });
  const v = SMALL("quick_gelu");
  const host = visionHostParams(v, 7);
  const tower = towerOf(v, host, f64);
  const grid: GridThw[] = [[1, 2, 2], [1, 2, 4]];
  const pixels = tensor(randomPixels(new Rng(8), 12, 24), { backend: f64 });
  await gradcheckTowerParams(tower, pixels, grid, [
    "visual.patch_embed.proj.weight",
    "visual.blocks.0.attn.qkv.weight",
    "visual.blocks.1.norm2.bias",
    "visual.merger.mlp.0.weight",
  ], f64);
  pixels.dispose();
  tower.dispose();
});

Deno.test("VisionTower: errors name the shape that was expected", () => {
  const tower = VisionTower.random(SMALL("gelu"));
  assert.throws(
    () => tower.forward(tensor([[1, 2]]), [[1, 2, 2]]),
    /pixelValues must be f32 \[Σ t·h·w, patchDim\] = \[4, 24\]/,
  );
  assert.throws(
    () => tower.forward(tensor(new Array(24 * 3).fill(0), { shape: [3, 24] }), [[1, 1, 3]]),
    /gridThw\[0\]/,
  );
  tower.dispose();
});

// ---------------------------------------------------------------------------------------------
// Multimodal RoPE.

Deno.test("mropePositions: a 3-frame grid, text before and after, as transformers' get_rope_index", () => {
  // <|vision_start|>(9), a 3×4×4 grid (3×2×2 = 12 tokens of id 8), <|vision_end|>(7), 3 text tokens.
  const ids = [[9, ...new Array(12).fill(8), 7, 1, 2]];
  const { positions, deltas } = mropePositions(ids, [[3, 4, 4]], {
    imageTokenId: 8,
    visionStartTokenId: 9,
    mergeSize: 2,
  });
  assert.deepEqual(positions[0]![0], [0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 5, 6]);
  assert.deepEqual(positions[1]![0], [0, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2, 4, 5, 6]);
  assert.deepEqual(positions[2]![0], [0, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 4, 5, 6]);
  assert.deepEqual(deltas, [7 - 16]);
});

Deno.test("mropePositions: left padding counts real tokens only, pads at 1; images are taken in batch order", () => {
  const tokens = { imageTokenId: 8, visionStartTokenId: 9, mergeSize: 2 };
  const ids = [[0, 0, 9, 8, 7, 5], [9, 8, 8, 7, 5, 6]];
  const mask = [[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]];
  const { positions, deltas } = mropePositions(ids, [[1, 2, 2], [1, 2, 4]], tokens, mask);
  assert.deepEqual(positions[0], [[1, 1, 0, 1, 2, 3], [0, 1, 1, 3, 4, 5]]);
  assert.deepEqual(positions[2], [[1, 1, 0, 1, 2, 3], [0, 1, 2, 3, 4, 5]]);
  assert.deepEqual(deltas, [4 - 6, 6 - 6]);
  assert.throws(() => mropePositions(ids, [[1, 2, 2]], tokens, mask), /more images than gridThw/);
  assert.throws(() => mropePositions([[9, 8, 7]], [[1, 4, 4]], tokens), /needs 4 image tokens/);
});

/** transformers' apply_multimodal_rotary_pos_emb on one head vector, in float64. */
function refMrope(
  x: number[],
  pos: [number, number, number],
  section: number[],
  theta: number,
): number[] {
  const d = x.length;
  const inv = Array.from({ length: d / 2 }, (_, i) => 1 / theta ** ((2 * i) / d));
  // emb[s] = cat(freqs_s, freqs_s) for each stream s; split by mrope_section·2, chunk i from stream i % 3.
  const emb = [0, 1, 2].map((s) => [...inv, ...inv].map((f) => pos[s]! * f));
  const split = [...section, ...section];
  const ang: number[] = [];
  let at = 0;
  split.forEach((len, i) => {
    ang.push(...emb[i % 3]!.slice(at, at + len));
    at += len;
  });
  const half = d / 2;
  return x.map((v, i) =>
    i < half
      ? v * Math.cos(ang[i]!) - x[i + half]! * Math.sin(ang[i]!)
      : v * Math.cos(ang[i]!) + x[i - half]! * Math.sin(ang[i]!)
  );
}

// Tolerance: rtol 1e-5, atol 1e-5 on values of size ~1; the angles are f32-rounded as PyTorch's
// (up to ~1e-5 rad at positions ~300), the reference's are exact.
Deno.test("mropeTables + rope: equal transformers' apply_multimodal_rotary_pos_emb (float64) on random positions and sections", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 1e6 }),
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 0, max: 4 }),
      async (seed, s0, s1) => {
        const half = 8;
        const section: [number, number, number] = [s0, Math.min(s1, half - s0), 0];
        section[2] = half - section[0] - section[1];
        const rng = new Rng(seed);
        const batch = 2;
        const t = 5;
        const heads = 2;
        const d = 2 * half;
        const pos = [0, 1, 2].map(() =>
          Array.from(
            { length: batch },
            () => Array.from({ length: t }, () => Math.floor(rng.uniform() * 300)),
          )
        );
        const x = Array.from(
          { length: batch },
          () =>
            Array.from(
              { length: heads },
              () =>
                Array.from({ length: t }, () =>
                  Array.from({ length: d }, () => Math.fround(rng.normal()))),
            ),
        );
        const tables = mropeTables(pos, { headDim: d, theta: 10000, section });
        const got = rope(tensor(x), tables.cos, tables.sin);
        const want = x.map((bh, b) =>
          bh.map((rows) =>
            rows.map((row, i) =>
              refMrope(row, [pos[0]![b]![i]!, pos[1]![b]![i]!, pos[2]![b]![i]!], section, 10000)
            )
          )
        );
        assertClose(await got.toArray(), want, { rtol: 1e-5, atol: 1e-5 });
        for (const tt of [got, tables.cos, tables.sin]) tt.dispose();
      },
    ),
    { numRuns: 20 },
  );
});
