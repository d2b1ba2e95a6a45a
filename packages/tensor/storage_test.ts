import assert from "node:assert/strict";
import fc from "fast-check";
import {
  AdamW,
  bf16ToF32,
  createCpuBackend,
  embedding,
  f32ToBf16,
  matmul,
  noGrad,
  rmsNorm,
  setStorageFormat,
  storageFormat,
  tensor,
} from "./mod.ts";

// bf16 storage changes how values are held, never the arithmetic: every result below must equal,
// bit for bit, the same computation on an f32 tensor holding the bf16-rounded values.

/** Values in [−4, 4) with 20% zeros and, sometimes, ones that need all 24 bits. */
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

const rounded = (x: Float32Array) => bf16ToF32(f32ToBf16(x));

function sameBits(x: ArrayLike<number>, y: ArrayLike<number>, what: string): void {
  assert.equal(x.length, y.length, what);
  for (let i = 0; i < x.length; i++) {
    if (!Object.is(x[i], y[i])) assert.fail(`${what}: element ${i}: ${x[i]} != ${y[i]}`);
  }
}

Deno.test("bf16 storage: values round once to nearest-even bf16, widen back exactly, half the bytes", async () => {
  const backend = createCpuBackend();
  const values = draw(1, 1000);
  const t = tensor(values, { shape: [10, 100], backend });
  assert.equal(backend.memory().liveBytes, 4000);
  setStorageFormat(t, "bf16");
  assert.equal(storageFormat(t), "bf16");
  assert.equal(backend.memory().liveBytes, 2000);
  sameBits(await t.data(), rounded(values), "read");
  const view = t.reshape(1000); // views share the storage
  assert.equal(storageFormat(view), "bf16");
  backend.write(t.buffer, values); // a host write rounds too
  sameBits(await view.data(), rounded(values), "after write");
  setStorageFormat(t, "f32");
  assert.equal(backend.memory().liveBytes, 4000);
  sameBits(await t.data(), rounded(values), "widened back");
  view.dispose();
  t.dispose();
  assert.deepEqual(backend.memory(), { liveBuffers: 0, liveBytes: 0 });
});

for (const kernels of ["auto", "ts"] as const) {
  Deno.test(
    `bf16 storage (kernels ${kernels}): matmul with a bf16 weight equals the f32 ` +
      "weight of the rounded values bit for bit, repeated (resident), transposed, batched",
    async () => {
      const backend = createCpuBackend({ kernels, blas: kernels === "ts" ? "ts" : "wasm" });
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 9 }),
          fc.integer({ min: 1, max: 70 }),
          fc.integer({ min: 1, max: 70 }),
          fc.boolean(),
          fc.integer(),
          async (m, n, k, transB, seed) => {
            const xs = draw(seed, 2 * m * k);
            const ws = draw(seed ^ 7, k * n);
            const x = tensor(xs, { shape: [2, m, k], backend });
            const shape = transB ? [n, k] : [k, n];
            const w16 = tensor(ws, { shape, backend });
            setStorageFormat(w16, "bf16");
            const w32 = tensor(rounded(ws), { shape, backend });
            for (let use = 0; use < 3; use++) {
              const a = noGrad(() => matmul(x, w16, { transB }));
              const b = noGrad(() => matmul(x, w32, { transB }));
              sameBits(await a.data(), await b.data(), `use ${use} m${m} n${n} k${k} ${transB}`);
              a.dispose();
              b.dispose();
            }
            x.dispose();
            w16.dispose();
            w32.dispose();
          },
        ),
        { numRuns: 60 },
      );
    },
  );
}

Deno.test("bf16 storage: embedding, RMSNorm and the gradient through a frozen bf16 weight equal the f32 computation on rounded values", async () => {
  const backend = createCpuBackend();
  const table = draw(3, 50 * 64);
  const e16 = tensor(table, { shape: [50, 64], backend });
  setStorageFormat(e16, "bf16");
  const e32 = tensor(rounded(table), { shape: [50, 64], backend });
  const ids = tensor([[3, 49, 0, 3]], { dtype: "i32", backend });
  const g = tensor(draw(4, 64), { shape: [64], backend });
  setStorageFormat(g, "bf16");
  const g32 = tensor(rounded(draw(4, 64)), { shape: [64], backend });
  const run = async (e: typeof e16, gain: typeof g) => {
    const h = embedding(e, ids);
    const x = tensor(draw(5, 4 * 64), { shape: [4, 64], backend, requiresGrad: true });
    const y = matmul(rmsNorm(h.reshape(4, 64).add(x), gain), e, { transB: true });
    y.square().sum().backward();
    return [await h.data(), await y.data(), await x.grad!.data()];
  };
  const got = await run(e16, g), want = await run(e32, g32);
  for (const [i, name] of ["embedding", "logits", "dx"].entries()) {
    sameBits(got[i]!, want[i]!, name);
  }
});

Deno.test("bf16 storage: an optimizer step on a bf16-stored parameter computes in f32 and rounds the result", async () => {
  const backend = createCpuBackend();
  const init = draw(6, 32);
  const w16 = tensor(init, { backend, requiresGrad: true });
  setStorageFormat(w16, "bf16");
  const w32 = tensor(rounded(init), { backend, requiresGrad: true });
  const o16 = new AdamW([w16], { lr: 0.01 }), o32 = new AdamW([w32], { lr: 0.01 });
  for (const [w, o] of [[w16, o16], [w32, o32]] as const) {
    w.square().sum().backward();
    o.step();
  }
  sameBits(await w16.data(), rounded(Float32Array.from(await w32.data())), "after one step");
  assert.equal(storageFormat(w16), "bf16");
  o16.dispose();
  o32.dispose();
});

Deno.test("bf16 storage: errors name the tensor, the value and the fix", () => {
  const backend = createCpuBackend();
  assert.throws(
    () => setStorageFormat(tensor([1], { dtype: "i32", backend }), "bf16"),
    /setStorageFormat: only f32 tensors have a storage format, this one is i32/,
  );
  assert.throws(
    () => setStorageFormat(tensor([1], { backend }), "f16" as never),
    /setStorageFormat: format must be one of f32, bf16, got "f16"/,
  );
  assert.throws(
    () =>
      setStorageFormat(tensor([1], { backend: createCpuBackend({ precision: "f64" }) }), "bf16"),
    /precision "f64" \(gradient checks\) keeps float64 storage/,
  );
});
