import assert from "node:assert/strict";
import fc from "fast-check";
import { type GridThw, visionWindowIndex, visionWindowTokens } from "@rlvr/policy";
import { refWindowIndex } from "./_test_reference_25.ts";

Deno.test("visionWindowIndex: a hand-worked pair of images (padding, empty windows, offsets)", () => {
  // ws = 8 // 2 // 2 = 2 merged tokens. Image 0: 6×4 patches = 3×2 merged tokens, padded to 4×4
  // (a whole ws of columns, since 2 divides 2): windows (0,0) = 0 1 2 3, (0,1) empty, (1,0) = 4 5,
  // (1,1) empty. Image 1: 2×6 patches = 1×3 merged tokens (ids 6, 7, 8), padded to 2×4:
  // windows 6 7 | 8.
  const w = visionWindowIndex([[1, 6, 4], [1, 2, 6]], {
    mergeSize: 2,
    patchSize: 2,
    windowSize: 8,
  });
  assert.deepEqual(w.index, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(w.lengths, [16, 8, 8, 4]);
  // 4×4 merged tokens in 2×2 windows: row-major windows, row-major inside each.
  const sq = visionWindowIndex([[1, 8, 8]], { mergeSize: 2, patchSize: 2, windowSize: 8 });
  assert.deepEqual(sq.index, [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]);
  // Two frames: windows frame by frame, ids of the second frame after the first's.
  const tw = visionWindowIndex([[2, 2, 4]], { mergeSize: 2, patchSize: 2, windowSize: 4 });
  assert.deepEqual(tw.index, [0, 1, 2, 3]);
  assert.deepEqual(tw.lengths, [4, 4, 4, 4]);
  assert.equal(visionWindowTokens({ mergeSize: 2, patchSize: 14, windowSize: 112 }), 4);
  assert.throws(
    () => visionWindowIndex([[1, 3, 4]], { mergeSize: 2, patchSize: 2, windowSize: 8 }),
    /visionWindowIndex: gridThw\[0\]/,
  );
  assert.throws(
    () => visionWindowTokens({ mergeSize: 2, patchSize: 14, windowSize: 27 }),
    /at least 28/,
  );
});

Deno.test("visionWindowIndex: equals transformers' get_window_index (padded grid, unique_consecutive) on random grids", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.integer({ min: 1, max: 2 }),
          fc.integer({ min: 1, max: 9 }),
          fc.integer({ min: 1, max: 9 }),
        ),
        { minLength: 1, maxLength: 3 },
      ),
      fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 0, max: 5 }),
      (sizes, merge, ws, extra) => {
        const patchSize = 3;
        // windowSize need not be a multiple: transformers floor-divides.
        const windowSize = ws * merge * patchSize + Math.min(extra, merge * patchSize - 1);
        const grid: GridThw[] = sizes.map(([t, h, w]) => [t, merge * h, merge * w]);
        const got = visionWindowIndex(grid, { mergeSize: merge, patchSize, windowSize });
        const want = refWindowIndex(grid, { spatialMergeSize: merge, patchSize, windowSize });
        assert.deepEqual(got.index, want.windowIndex);
        const cu = [0];
        for (const len of got.lengths) cu.push(cu[cu.length - 1]! + len);
        assert.deepEqual(cu, want.cuWindowSeqlens);
        assert.deepEqual([...got.index].sort((a, b) => a - b), got.index.map((_, i) => i));
      },
    ),
    { numRuns: 200 },
  );
});
