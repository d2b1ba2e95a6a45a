import assert from "node:assert/strict";
import fc from "fast-check";
import { expandImageTokens, imageInputs } from "@rlvr/policy";

Deno.test("expandImageTokens: each image token becomes its count, everything else kept in order", () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constant(-1)), { maxLength: 20 }),
      fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 20 }),
      (raw, pool) => {
        // -1 marks an image position; its count is drawn from the pool.
        const ids = raw.map((v) => (v === -1 ? 8 : v === 8 ? 0 : v));
        const images = ids.filter((v) => v === 8).length;
        const counts = Array.from(
          { length: images },
          (_, i) => pool[i % Math.max(1, pool.length)] ?? 1,
        );
        const out = expandImageTokens(ids, 8, counts);
        assert.deepEqual(out.filter((v) => v !== 8), ids.filter((v) => v !== 8));
        assert.equal(out.filter((v) => v === 8).length, counts.reduce((a, b) => a + b, 0));
      },
    ),
  );
  assert.throws(
    () => expandImageTokens([8, 8], 8, [1]),
    /holds 2 image token\(s\) .* 1 image\(s\)/,
  );
  assert.throws(() => expandImageTokens([8], 8, [0]), /counts\[0\] must be an integer >= 1/);
});

Deno.test("imageInputs: shape and grid checked against the values", () => {
  const inputs = imageInputs({
    pixelValues: new Float32Array(12 * 24),
    patchDim: 24,
    gridThw: [[1, 2, 2], [1, 2, 4]],
  });
  assert.deepEqual(inputs.pixelValues.shape, [12, 24]);
  assert.deepEqual(inputs.gridThw, [[1, 2, 2], [1, 2, 4]]);
  inputs.pixelValues.dispose();
  assert.throws(
    () => imageInputs({ pixelValues: new Float32Array(10), patchDim: 24, gridThw: [[1, 2, 2]] }),
    /has 4 patches of 24 values, 96 in all, but pixelValues holds 10/,
  );
});
