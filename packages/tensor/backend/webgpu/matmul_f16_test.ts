/**
 * The f16 matmul against a float64 reference computed from the same f16-rounded inputs, on
 * random shapes (ragged and `vec4`-aligned). Tolerance, from the kernel's accumulation scheme
 * (16-term f16 partial sums, each rounded once per product and per addition, then summed in
 * f32): `|c − ref| ≤ 32 · 2⁻¹¹ · Σₖ|aᵢₖ·bₖⱼ| + 1e-6`.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { f16ToF32, f32ToF16 } from "../../io/half.ts";
import { gpuTest } from "./_test_utils.ts";
import {
  f16BufferBytes,
  MatmulF16,
  matmulF16ErrorRatio,
  matmulF16Wgsl,
} from "./kernels/matmul_f16.ts";
import { Rng } from "../../random.ts";

/** Throws naming the worst entry when any entry of `c` is past the kernel's error bound. */
function checkAgainstReference(
  a: Float32Array,
  b: Float32Array,
  c: Float32Array,
  m: number,
  n: number,
  k: number,
): void {
  const w = matmulF16ErrorRatio(a, b, c, m, n, k);
  if (!(w.ratio <= 1)) {
    throw new Error(
      `matmul_f16 ${m}×${n}×${k}: c[${w.i},${w.j}] = ${w.got}, float64 reference ${w.ref}, ` +
        `|diff| / bound = ${w.ratio} > 1`,
    );
  }
}

gpuTest("matmul_f16 equals the float64 reference of its f16 inputs on random shapes", async (g) => {
  if (!g.device.features.has("shader-f16")) {
    console.warn("matmul_f16 test skipped: the adapter lacks shader-f16");
    return;
  }
  const mm = new MatmulF16(g.device);
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 130 }),
      fc.integer({ min: 1, max: 130 }),
      fc.integer({ min: 1, max: 90 }),
      fc.boolean(),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      async (m0, n0, k0, aligned, seed) => {
        // Half the cases aligned to 4 so the vec4 paths run too.
        const [m, n, k] = aligned
          ? [m0, Math.ceil(n0 / 4) * 4, Math.ceil(k0 / 4) * 4]
          : [m0, n0, k0];
        const rng = new Rng(seed);
        // Inputs rounded to f16 first: the reference sees exactly what the kernel sees.
        const round = (len: number) =>
          f16ToF32(f32ToF16(Float32Array.from({ length: len }, () => rng.normal())));
        const a = round(m * k);
        const b = round(k * n);
        const c = await mm.multiply(a, b, m, n, k);
        checkAgainstReference(a, b, c, m, n, k);
      },
    ),
    { numRuns: 12 },
  );
});

gpuTest("matmul_f16: a 256×192×512 product (many k-tiles) stays within the bound", async (g) => {
  if (!g.device.features.has("shader-f16")) return;
  const [m, n, k] = [256, 192, 512];
  const rng = new Rng(5);
  const round = (len: number) =>
    f16ToF32(f32ToF16(Float32Array.from({ length: len }, () => rng.normal())));
  const a = round(m * k);
  const b = round(k * n);
  checkAgainstReference(
    a,
    b,
    await new MatmulF16(g.device).multiply(a, b, m, n, k),
    m,
    n,
    k,
  );
});

Deno.test("matmulF16Wgsl: enables f16 and picks vector or scalar bindings", () => {
  assert.match(matmulF16Wgsl(true, true), /^enable f16;/);
  assert.match(matmulF16Wgsl(true, false), /var<storage, read> A: array<vec4<f16>>/);
  assert.match(matmulF16Wgsl(true, false), /var<storage, read> B: array<f16>/);
  assert.equal(f16BufferBytes(1), 8);
  assert.equal(f16BufferBytes(8), 16);
});
