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
import { f16BufferBytes, MatmulF16, matmulF16Wgsl } from "./kernels/matmul_f16.ts";
import { Rng } from "../../random.ts";

const STORAGE = 0x80 | 0x08 | 0x04;

async function runF16(
  device: GPUDevice,
  mm: MatmulF16,
  a: Float32Array,
  b: Float32Array,
  m: number,
  n: number,
  k: number,
): Promise<Float32Array> {
  const upload = (values: Float32Array) => {
    const bytes = f16BufferBytes(values.length);
    const buffer = device.createBuffer({ size: bytes, usage: STORAGE });
    const bits = new Uint16Array(bytes / 2);
    bits.set(f32ToF16(values));
    device.queue.writeBuffer(buffer, 0, bits);
    return buffer;
  };
  const ga = upload(a);
  const gb = upload(b);
  const cBytes = Math.max(16, m * n * 4);
  const gc = device.createBuffer({ size: cBytes, usage: STORAGE });
  const out = device.createBuffer({ size: cBytes, usage: 0x01 | 0x08 });
  const encoder = device.createCommandEncoder();
  mm.encode(encoder, ga, gb, gc, m, n, k);
  encoder.copyBufferToBuffer(gc, 0, out, 0, cBytes);
  device.queue.submit([encoder.finish()]);
  await out.mapAsync(1);
  const c = new Float32Array(out.getMappedRange().slice(0, m * n * 4));
  out.unmap();
  for (const x of [ga, gb, gc, out]) x.destroy();
  return c;
}

function checkAgainstReference(
  a: Float32Array,
  b: Float32Array,
  c: Float32Array,
  m: number,
  n: number,
  k: number,
): void {
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let ref = 0;
      let mag = 0;
      for (let kk = 0; kk < k; kk++) {
        const p = a[i * k + kk]! * b[kk * n + j]!;
        ref += p;
        mag += Math.abs(p);
      }
      const got = c[i * n + j]!;
      const tol = 32 * 2 ** -11 * mag + 1e-6;
      if (!(Math.abs(got - ref) <= tol)) {
        throw new Error(
          `matmul_f16 ${m}×${n}×${k}: c[${i},${j}] = ${got}, float64 reference ${ref}, ` +
            `|diff| ${Math.abs(got - ref)} > tol ${tol}`,
        );
      }
    }
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
        const c = await runF16(g.device, mm, a, b, m, n, k);
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
    await runF16(g.device, new MatmulF16(g.device), a, b, m, n, k),
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
