import assert from "node:assert/strict";
import fc from "fast-check";
import type { Backend } from "../backend/types.ts";
import { createCpuBackend } from "../backend/cpu/cpu_backend.ts";
import { tensor } from "../creation.ts";
import { noGrad, tidy } from "../runtime.ts";
import type { Tensor } from "../tensor.ts";
import { assertClose, gradcheck } from "../testing.ts";
import { scaledDotProductAttention } from "./attention.ts";

const F64 = createCpuBackend({ precision: "f64" });
const F32 = createCpuBackend();

const reals = (n: number) =>
  fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: n, maxLength: n });

/**
 * Grouped-query shapes (kvHeads 1..2, 1..2 query heads per kv head), ragged head dims, decode-like
 * `tq < tk`, `tq > tk` (causal rows that see nothing), optional padding masks and scales.
 */
const attnCase = fc
  .record({
    b: fc.integer({ min: 1, max: 2 }),
    kvh: fc.integer({ min: 1, max: 2 }),
    group: fc.integer({ min: 1, max: 2 }),
    tq: fc.integer({ min: 1, max: 3 }),
    tk: fc.integer({ min: 1, max: 4 }),
    d: fc.integer({ min: 1, max: 4 }),
    causal: fc.boolean(),
    useMask: fc.boolean(),
    scale: fc.option(fc.constantFrom(0.5, 1.3), { nil: undefined }),
  })
  .chain((c) => {
    const h = c.kvh * c.group;
    return fc.record({
      c: fc.constant({ ...c, h }),
      q: reals(c.b * h * c.tq * c.d),
      k: reals(c.b * c.kvh * c.tk * c.d),
      v: reals(c.b * c.kvh * c.tk * c.d),
      up: reals(c.b * h * c.tq * c.d),
      mask: fc.array(fc.boolean(), { minLength: c.b * c.tk, maxLength: c.b * c.tk }),
    });
  });

type AttnCase = typeof attnCase extends fc.Arbitrary<infer T> ? T : never;

/** `blocked[b][i][j]`: query i of batch b may not see key j. */
function blockedOf({ c, mask }: AttnCase): boolean[][][] {
  return Array.from(
    { length: c.b },
    (_, b) =>
      Array.from(
        { length: c.tq },
        (_, i) =>
          Array.from({ length: c.tk }, (_, j) =>
            (c.useMask && !mask[b * c.tk + j]) || (c.causal && j > c.tk - c.tq + i)),
      ),
  );
}

const hasEmptyRow = (ac: AttnCase) =>
  blockedOf(ac).some((rows) => rows.some((r) => r.every(Boolean)));

function tensorsOf(ac: AttnCase, backend: Backend, requiresGrad: boolean) {
  const { c } = ac;
  return {
    q: tensor(ac.q, { shape: [c.b, c.h, c.tq, c.d], backend, requiresGrad }),
    k: tensor(ac.k, { shape: [c.b, c.kvh, c.tk, c.d], backend, requiresGrad }),
    v: tensor(ac.v, { shape: [c.b, c.kvh, c.tk, c.d], backend, requiresGrad }),
    mask: c.useMask ? tensor(ac.mask, { shape: [c.b, c.tk], backend, dtype: "bool" }) : undefined,
  };
}

function fused(ac: AttnCase, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | undefined): Tensor {
  const { c } = ac;
  return scaledDotProductAttention(q, k, v, {
    causal: c.causal,
    ...(c.scale === undefined ? {} : { scale: c.scale }),
    ...(mask === undefined ? {} : { mask }),
  });
}

/** The textbook composition: repeat kv heads with indexSelect, matmul, −Infinity fill, softmax, matmul. */
function reference(ac: AttnCase, q: Tensor, k: Tensor, v: Tensor): Tensor {
  const { c } = ac;
  const backend = q.backend;
  const heads = tensor(Array.from({ length: c.h }, (_, i) => Math.floor(i / c.group)), {
    dtype: "i32",
    backend,
  });
  const kr = k.indexSelect(1, heads);
  const vr = v.indexSelect(1, heads);
  const blocked = tensor(blockedOf(ac).map((rows) => [rows]), { backend });
  const scores = q.matmul(kr, { transB: true }).mul(c.scale ?? 1 / Math.sqrt(c.d));
  return scores.maskedFill(blocked, -Infinity).softmax(-1).matmul(vr);
}

/** Output and gradients of `Σ out·up` for q, k, v. */
async function valueAndGrads(
  ac: AttnCase,
  backend: Backend,
  fn: (q: Tensor, k: Tensor, v: Tensor, mask: Tensor | undefined) => Tensor,
): Promise<{ y: number[]; grads: number[][] }> {
  const { q, k, v, mask } = tensorsOf(ac, backend, true);
  // tidy frees the reference composition's intermediates; the graph keeps what it needs.
  const y = tidy(() => fn(q, k, v, mask));
  const u = tensor(ac.up, { shape: y.shape, backend });
  const loss = y.mul(u).sum();
  loss.backward();
  const out = { y: [...await y.data()], grads: [] as number[][] };
  for (const t of [q, k, v]) out.grads.push([...await t.grad!.data()]);
  for (const t of [q, k, v, y, u, loss, ...(mask ? [mask] : [])]) t.dispose();
  return out;
}

Deno.test("scaledDotProductAttention: gradients of q, k, v match central differences (f64)", async () => {
  // rtol 1e-5, atol 1e-6 (float64, step 1e-6). Cases include rows that see no key, whose
  // analytic and numeric gradients must both be exactly zero.
  await fc.assert(
    fc.asyncProperty(attnCase, async (ac) => {
      const { q, k, v, mask } = tensorsOf(ac, F64, true);
      await gradcheck((a, b, c) => fused(ac, a, b, c, mask), [q, k, v], { rtol: 1e-5, atol: 1e-6 });
      for (const t of [q, k, v, ...(mask ? [mask] : [])]) t.dispose();
    }),
    { numRuns: 20 },
  );
});

Deno.test("scaledDotProductAttention: value and gradients equal matmul + maskedFill + softmax + matmul", async () => {
  // Truth is the composition on f64; rows that see no key are excluded (the composition gives
  // NaN there, tested separately). f64 kernel: rtol/atol 1e-10; f32 kernel: rtol/atol 1e-5
  // (f32 storage of inputs, outputs and the saved lse).
  await fc.assert(
    fc.asyncProperty(attnCase, async (ac) => {
      fc.pre(!hasEmptyRow(ac));
      for (const [backend, tol] of [[F64, 1e-10], [F32, 1e-5]] as const) {
        // For f32 the truth starts from the same f32-rounded inputs the kernel sees.
        const input = backend === F32 ? rounded(ac) : ac;
        const truth = await valueAndGrads(input, F64, (q, k, v) => reference(ac, q, k, v));
        const got = await valueAndGrads(input, backend, (q, k, v, m) => fused(ac, q, k, v, m));
        const o = { rtol: tol, atol: tol };
        assertClose(got.y, truth.y, { ...o, msg: `${backend.name} output` });
        got.grads.forEach((g, i) =>
          assertClose(g, truth.grads[i]!, { ...o, msg: `${backend.name} grad ${"qkv"[i]}` })
        );
      }
    }),
    { numRuns: 40 },
  );
});

/** The case with every value rounded to f32, so f32 and f64 runs start from identical inputs. */
function rounded(ac: AttnCase): AttnCase {
  const r = (xs: number[]) => xs.map(Math.fround);
  return { ...ac, q: r(ac.q), k: r(ac.k), v: r(ac.v), up: r(ac.up) };
}

Deno.test("scaledDotProductAttention: each causal row equals one decode step over its key prefix", async () => {
  // Query i of a causal call with tq <= tk must equal a tq = 1 call on the first tk − tq + i + 1
  // keys (the KV-cache decode path). Both run the same arithmetic on f64: rtol/atol 1e-12.
  await fc.assert(
    fc.asyncProperty(attnCase.filter((ac) => ac.c.causal && ac.c.tq <= ac.c.tk), async (ac) => {
      const { c } = ac;
      const { q, k, v, mask } = tensorsOf(ac, F64, false);
      const full = fused(ac, q, k, v, mask);
      for (let i = 0; i < c.tq; i++) {
        const n = c.tk - c.tq + i + 1;
        const qi = q.narrow(2, i, 1);
        const [kn, vn] = [k.narrow(2, 0, n), v.narrow(2, 0, n)];
        const mn = mask?.narrow(1, 0, n);
        const step = fused(ac, qi, kn, vn, mn);
        const want = full.narrow(2, i, 1);
        assertClose(await step.data(), await want.data(), {
          rtol: 1e-12,
          atol: 1e-12,
          msg: `row ${i}`,
        });
        for (const t of [qi, kn, vn, step, want, ...(mn ? [mn] : [])]) t.dispose();
      }
      for (const t of [q, k, v, full, ...(mask ? [mask] : [])]) t.dispose();
    }),
    { numRuns: 30 },
  );
});

Deno.test("scaledDotProductAttention: rows that see no key give zeros and zero gradients, never NaN", async () => {
  const be = createCpuBackend();
  // Batch 1 is fully padded; with tq = 3 > tk = 2 the first causal row of batch 0 sees nothing too.
  const q = tensor(Array.from({ length: 2 * 2 * 3 * 2 }, (_, i) => Math.sin(i)), {
    shape: [2, 2, 3, 2],
    backend: be,
    requiresGrad: true,
  });
  const k = tensor(Array.from({ length: 2 * 1 * 2 * 2 }, (_, i) => Math.cos(i)), {
    shape: [2, 1, 2, 2],
    backend: be,
    requiresGrad: true,
  });
  const v = tensor(Array.from({ length: 2 * 1 * 2 * 2 }, (_, i) => i - 3), {
    shape: [2, 1, 2, 2],
    backend: be,
    requiresGrad: true,
  });
  const mask = tensor([[1, 1], [0, 0]], { dtype: "i32", backend: be });
  const o = scaledDotProductAttention(q, k, v, { mask });
  const loss = o.sum();
  loss.backward();
  const out = await o.toArray() as number[][][][];
  const dq = await q.grad!.toArray() as number[][][][];
  for (
    const arr of [await o.data(), await q.grad!.data(), await k.grad!.data(), await v.grad!.data()]
  ) {
    assert.ok(arr.every(Number.isFinite));
  }
  for (const h of [0, 1]) {
    assert.deepEqual(out[0]![h]![0], [0, 0]);
    assert.deepEqual(dq[0]![h]![0], [0, 0]);
    assert.notDeepEqual(out[0]![h]![1], [0, 0]);
    for (const i of [0, 1, 2]) {
      assert.deepEqual(out[1]![h]![i], [0, 0]);
      assert.deepEqual(dq[1]![h]![i], [0, 0]);
    }
  }
  assert.deepEqual((await k.grad!.toArray() as number[][][][])[1], [[[0, 0], [0, 0]]]);
  assert.deepEqual((await v.grad!.toArray() as number[][][][])[1], [[[0, 0], [0, 0]]]);
  for (const t of [q, k, v, mask, o, loss]) t.dispose();
  assert.deepEqual(be.memory(), { liveBuffers: 0, liveBytes: 0 });
});

Deno.test("scaledDotProductAttention: an i32 mask acts like the bool mask and is freed", async () => {
  const be = createCpuBackend();
  const q = tensor([1, 0, 0, 1], { shape: [1, 1, 2, 2], backend: be });
  const k = tensor([1, 2, 3, 4, 5, 6], { shape: [1, 1, 3, 2], backend: be });
  const asBool = tensor([[true, false, true]], { backend: be });
  const asInt = tensor([[1, 0, 1]], { dtype: "i32", backend: be });
  const a = scaledDotProductAttention(q, k, k, { mask: asBool, causal: false });
  const b = scaledDotProductAttention(q, k, k, { mask: asInt, causal: false });
  assert.deepEqual(await b.toArray(), await a.toArray());
  for (const t of [q, k, asBool, asInt, a, b]) t.dispose();
  assert.equal(be.memory().liveBuffers, 0);
});

Deno.test("scaledDotProductAttention: bad arguments fail with the op, the shapes and the fix", () => {
  const q = tensor(new Array(24).fill(0), { shape: [1, 3, 4, 2] });
  const k = tensor(new Array(16).fill(0), { shape: [1, 2, 4, 2] });
  assert.throws(
    () => scaledDotProductAttention(q, k, k),
    /scaledDotProductAttention: q has 3 heads, which is not a multiple of the 2 kv heads of k \[1,2,4,2\]/,
  );
  const k1 = k.narrow(1, 0, 1);
  assert.throws(
    () => scaledDotProductAttention(q.reshape(3, 4, 2), k1, k1),
    /q must be \[batch, heads, t, headDim\], got \[3,4,2\]/,
  );
  assert.throws(
    () => scaledDotProductAttention(q, k1, k),
    /k \[1,1,4,2\] and v \[1,2,4,2\] must have the same shape/,
  );
  const wide = tensor(new Array(12).fill(0), { shape: [1, 1, 4, 3] });
  assert.throws(
    () => scaledDotProductAttention(q, wide, wide),
    /must match q \[1,3,4,2\] in batch \(1\) and headDim \(2\)/,
  );
  assert.throws(
    () => scaledDotProductAttention(q, k1, k1, { mask: tensor([[true, true]]) }),
    /mask shape \[1,2\] must be \[batch, tk\] = \[1,4\]/,
  );
  assert.throws(
    () => scaledDotProductAttention(q, k1, k1, { mask: tensor([[1, 1, 1, 0.5]]) }),
    /mask must be bool or i32/,
  );
  assert.throws(() => scaledDotProductAttention(q, k1, k1, { scale: NaN }), /scale must be finite/);
});

Deno.test("scaledDotProductAttention: forward and backward free every temporary buffer", () => {
  const be = createCpuBackend();
  const q = tensor([1, 2, 3, 4, 5, 6, 7, 8], {
    shape: [1, 2, 2, 2],
    backend: be,
    requiresGrad: true,
  });
  const kv = tensor([1, -1, 0.5, 2], { shape: [1, 1, 2, 2], backend: be, requiresGrad: true });
  const mask = tensor([[true, true]], { backend: be });
  const o = scaledDotProductAttention(q, kv, kv, { mask });
  const loss = o.sum();
  loss.backward();
  noGrad(() => scaledDotProductAttention(q, kv, kv)).dispose();
  for (const t of [loss, o, q, kv, mask]) t.dispose();
  assert.deepEqual(be.memory(), { liveBuffers: 0, liveBytes: 0 });
});
