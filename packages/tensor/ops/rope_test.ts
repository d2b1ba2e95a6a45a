import assert from "node:assert/strict";
import fc from "fast-check";
import type { Backend } from "../backend/types.ts";
import { createCpuBackend } from "../backend/cpu/cpu_backend.ts";
import { tensor } from "../creation.ts";
import type { Tensor } from "../tensor.ts";
import { assertClose, gradcheck } from "../testing.ts";
import { rope, ropeTables } from "./rope.ts";

const F64 = createCpuBackend({ precision: "f64" });
const F32 = createCpuBackend();

const reals = (n: number) =>
  fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: n, maxLength: n });

/**
 * x `[b, h, t, d]` with odd head dims included, a rotary half of 0..d/2 (0 and d/2 < d/2 give
 * partial rotary), positions shared by the batch or per row, and a RoPE base.
 */
const ropeCase = fc
  .record({
    b: fc.integer({ min: 1, max: 2 }),
    h: fc.integer({ min: 1, max: 2 }),
    t: fc.integer({ min: 1, max: 3 }),
    d: fc.integer({ min: 1, max: 6 }),
    perBatch: fc.boolean(),
    theta: fc.constantFrom(10000, 1e6, 7.5),
  })
  .chain((c) =>
    fc.record({
      c: fc.constant(c),
      half: fc.integer({ min: 0, max: Math.floor(c.d / 2) }),
      x: reals(c.b * c.h * c.t * c.d),
      positions: fc.array(fc.integer({ min: 0, max: 4096 }), {
        minLength: c.b * c.t,
        maxLength: c.b * c.t,
      }),
    })
  );

type RopeCase = typeof ropeCase extends fc.Arbitrary<infer T> ? T : never;

/** The tables of a case; a rotary half of 0 needs hand-made empty tables (ropeTables wants dim >= 2). */
function tablesOf(
  { c, half, positions }: RopeCase,
  backend: Backend,
): { cos: Tensor; sin: Tensor } {
  const shape = c.perBatch ? [c.b, c.t, half] : [c.t, half];
  if (half === 0) {
    return { cos: tensor([], { shape, backend }), sin: tensor([], { shape, backend }) };
  }
  const pos = c.perBatch
    ? Array.from({ length: c.b }, (_, i) => positions.slice(i * c.t, (i + 1) * c.t))
    : positions.slice(0, c.t);
  return ropeTables(pos, { dim: 2 * half, theta: c.theta, backend });
}

/**
 * Hugging Face's formulation, written independently of the kernel:
 * `x · cat(cos, cos) + rotate_half(x) · cat(sin, sin)` on the first `rot` features.
 */
function ropeReference(
  x: ArrayLike<number>,
  cos: ArrayLike<number>,
  sin: ArrayLike<number>,
  [b, h, t, d]: number[],
  half: number,
  perBatch: boolean,
): number[] {
  const out: number[] = [];
  const rot = 2 * half;
  for (let bi = 0; bi < b!; bi++) {
    for (let hi = 0; hi < h!; hi++) {
      for (let ti = 0; ti < t!; ti++) {
        const row = Array.from({ length: d! }, (_, j) => x[((bi * h! + hi) * t! + ti) * d! + j]!);
        const tab = ((perBatch ? bi : 0) * t! + ti) * half;
        const cosFull = [...Array(rot).keys()].map((j) => cos[tab + (j % half)]!);
        const sinFull = [...Array(rot).keys()].map((j) => sin[tab + (j % half)]!);
        const rotateHalf = [...row.slice(half, rot).map((v) => -v), ...row.slice(0, half)];
        for (let j = 0; j < d!; j++) {
          out.push(j < rot ? row[j]! * cosFull[j]! + rotateHalf[j]! * sinFull[j]! : row[j]!);
        }
      }
    }
  }
  return out;
}

Deno.test("rope: the gradient of x matches central differences (f64)", async () => {
  // rtol 1e-5, atol 1e-6 (float64, step 1e-6); rope is linear in x, so only rounding limits this.
  await fc.assert(
    fc.asyncProperty(ropeCase, async (rc) => {
      const { c, x } = rc;
      const { cos, sin } = tablesOf(rc, F64);
      const xt = tensor(x, { shape: [c.b, c.h, c.t, c.d], backend: F64, requiresGrad: true });
      await gradcheck((a) => rope(a, cos, sin), [xt], { rtol: 1e-5, atol: 1e-6 });
      for (const t of [xt, cos, sin]) t.dispose();
    }),
    { numRuns: 20 },
  );
});

Deno.test("rope: forward equals the rotate_half reference, partial rotary passes the rest through", async () => {
  // f64: rtol/atol 1e-12; f32: rtol/atol 1e-6 (inputs and outputs rounded to f32).
  await fc.assert(
    fc.asyncProperty(ropeCase, async (rc) => {
      const { c, x, half } = rc;
      for (const [backend, tol] of [[F64, 1e-12], [F32, 1e-6]] as const) {
        const { cos, sin } = tablesOf(rc, backend);
        const xt = tensor(x, { shape: [c.b, c.h, c.t, c.d], backend });
        const y = rope(xt, cos, sin);
        const want = ropeReference(
          await xt.data(),
          await cos.data(),
          await sin.data(),
          [c.b, c.h, c.t, c.d],
          half,
          c.perBatch,
        );
        assertClose(await y.data(), want, { rtol: tol, atol: tol, msg: backend.name });
        for (const t of [xt, y, cos, sin]) t.dispose();
      }
    }),
    { numRuns: 40 },
  );
});

Deno.test("rope: the inverse rotation undoes rope and every rotated pair keeps its norm", async () => {
  // f64 tables satisfy cos² + sin² = 1 to ~1e-16, so both properties hold to rtol/atol 1e-12.
  await fc.assert(
    fc.asyncProperty(ropeCase.filter((rc) => rc.half > 0), async (rc) => {
      const { c, x, half } = rc;
      const { cos, sin } = tablesOf(rc, F64);
      const xt = tensor(x, { shape: [c.b, c.h, c.t, c.d], backend: F64 });
      const y = rope(xt, cos, sin);
      const negSin = sin.neg();
      const back = rope(y, cos, negSin);
      assertClose(await back.data(), x, { rtol: 1e-12, atol: 1e-12, msg: "inverse" });
      const yv = await y.data();
      const normsOf = (v: ArrayLike<number>) => {
        const out: number[] = [];
        for (let r = 0; r < v.length / c.d; r++) {
          for (let j = 0; j < half; j++) {
            out.push(Math.hypot(v[r * c.d + j]!, v[r * c.d + half + j]!));
          }
        }
        return out;
      };
      assertClose(normsOf(yv), normsOf(x), { rtol: 1e-12, atol: 1e-12, msg: "pair norms" });
      for (const t of [xt, y, negSin, back, cos, sin]) t.dispose();
    }),
    { numRuns: 30 },
  );
});

Deno.test("ropeTables: exact angles are position · theta^(-2i/dim); float32 angles stay within f32 rounding", async () => {
  const positions = [0, 1, 2, 17, 1000, 30000, 100000];
  const dim = 8;
  const theta = 1e6;
  const exact = ropeTables(positions, { dim, theta, angles: "exact", backend: F64 });
  const hf = ropeTables(positions, { dim, theta, backend: F64 });
  assert.deepEqual(exact.cos.shape, [7, 4]);
  const angle = (p: number, i: number) => p * theta ** ((-2 * i) / dim);
  const want = (f: (a: number) => number) =>
    positions.flatMap((p) => [0, 1, 2, 3].map((i) => f(angle(p, i))));
  // Exact mode: rtol/atol 1e-12 against Math.cos/Math.sin of the float64 angle.
  assertClose(await exact.cos.data(), want(Math.cos), { rtol: 1e-12, atol: 1e-12 });
  assertClose(await exact.sin.data(), want(Math.sin), { rtol: 1e-12, atol: 1e-12 });
  // float32 mode: the angle may move by two f32 roundings, |Δa| <= 2.5e-7·|a| (plus 1e-12).
  const hfCos = await hf.cos.data();
  positions.forEach((p, t) => {
    for (let i = 0; i < 4; i++) {
      const bound = 2.5e-7 * angle(p, i) + 1e-12;
      assert.ok(
        Math.abs(hfCos[t * 4 + i]! - Math.cos(angle(p, i))) <= bound,
        `position ${p}, pair ${i}`,
      );
    }
  });
  // At position 100000 the two conventions differ visibly (1.7e-4 here): why float32 is the default.
  assert.ok(Math.abs(hfCos[6 * 4 + 1]! - (await exact.cos.data())[6 * 4 + 1]!) > 1e-4);
  for (const t of [exact.cos, exact.sin, hf.cos, hf.sin]) t.dispose();
});

Deno.test("ropeTables: 2-D positions give per-row tables and a tensor of positions gives the same values", async () => {
  const pos = [[0, 1, 2], [5, 6, 7]];
  const fromHost = ropeTables(pos, { dim: 4, backend: F64 });
  const fromTensor = await ropeTables(tensor(pos, { dtype: "i32", backend: F64 }), { dim: 4 });
  assert.deepEqual(fromHost.cos.shape, [2, 3, 2]);
  assert.equal(fromTensor.cos.backend, F64);
  assert.deepEqual(await fromTensor.cos.toArray(), await fromHost.cos.toArray());
  assert.deepEqual(await fromTensor.sin.toArray(), await fromHost.sin.toArray());
  // Row 1 of the batched table equals the shared table of positions 5..7.
  const shared = ropeTables([5, 6, 7], { dim: 4, backend: F64 });
  assert.deepEqual((await fromHost.sin.toArray() as number[][][])[1], await shared.sin.toArray());
  for (
    const t of [fromHost.cos, fromHost.sin, fromTensor.cos, fromTensor.sin, shared.cos, shared.sin]
  ) t.dispose();
});

Deno.test("rope / ropeTables: bad arguments fail with the op, the shapes and the fix", () => {
  const x = tensor(new Array(2 * 3 * 4).fill(0), { shape: [1, 2, 3, 4] });
  const { cos, sin } = ropeTables([0, 1, 2], { dim: 4 });
  assert.throws(
    () => rope(x.reshape(2, 3, 4), cos, sin),
    /rope: x must be \[batch, heads, t, headDim\], got \[2,3,4\]/,
  );
  const two = ropeTables([0, 1], { dim: 4 });
  assert.throws(
    () => rope(x, two.cos, two.sin),
    /rope: tables \[2,2\] cover 2 positions but x \[1,2,3,4\] has t = 3/,
  );
  const wide = ropeTables([0, 1, 2], { dim: 6 });
  assert.throws(
    () => rope(x, wide.cos, wide.sin),
    /rope: tables \[3,3\] rotate 6 features but x \[1,2,3,4\] has headDim 4/,
  );
  const batched = ropeTables([[0, 1, 2], [0, 1, 2]], { dim: 4 });
  assert.throws(
    () => rope(x, batched.cos, batched.sin),
    /rope: tables \[2,3,2\] have batch 2 but x \[1,2,3,4\] has batch 1/,
  );
  assert.throws(
    () => rope(x, cos, two.sin),
    /rope: cos \[3,2\] and sin \[2,2\] must have the same shape/,
  );
  assert.throws(() => ropeTables([0], { dim: 3 }), /ropeTables: dim must be an even integer >= 2/);
  assert.throws(
    () => ropeTables([0], { dim: 4, theta: 0 }),
    /ropeTables: theta must be a finite number > 0/,
  );
  assert.throws(
    () => ropeTables([[0, 1], [2]], { dim: 4 }),
    /ropeTables: 2-D positions must be rows of equal length/,
  );
  assert.throws(() => ropeTables([NaN], { dim: 4 }), /ropeTables: position NaN at flat index 0/);
  assert.throws(
    () => ropeTables(tensor([0.5]), { dim: 4 }),
    /ropeTables: a positions tensor must be i32/,
  );
});

Deno.test("rope: forward and backward free every temporary buffer", () => {
  const be = createCpuBackend();
  const { cos, sin } = ropeTables([3, 4], { dim: 2, backend: be });
  const x = tensor([1, 2, 3, 4, 5, 6], { shape: [1, 1, 2, 3], backend: be, requiresGrad: true });
  const y = rope(x, cos, sin);
  const loss = y.sum();
  loss.backward();
  for (const t of [loss, y, x, cos, sin]) t.dispose();
  assert.deepEqual(be.memory(), { liveBuffers: 0, liveBytes: 0 });
});

/**
 * transformers' `_compute_llama3_parameters`, written out in float64 from its formula:
 * wavelengths above `old / low` are slowed by `factor`, below `old / high` kept, and the band in
 * between blended with `smooth = (old / wavelen − low) / (high − low)`.
 */
function llama3InvFreqReference(
  dim: number,
  theta: number,
  s: {
    factor: number;
    lowFreqFactor: number;
    highFreqFactor: number;
    originalMaxPositions: number;
  },
): number[] {
  return Array.from({ length: dim / 2 }, (_, i) => {
    const inv = theta ** ((-2 * i) / dim);
    const wavelen = (2 * Math.PI) / inv;
    if (wavelen < s.originalMaxPositions / s.highFreqFactor) return inv;
    if (wavelen > s.originalMaxPositions / s.lowFreqFactor) return inv / s.factor;
    const smooth = (s.originalMaxPositions / wavelen - s.lowFreqFactor) /
      (s.highFreqFactor - s.lowFreqFactor);
    return (1 - smooth) * inv / s.factor + smooth * inv;
  });
}

Deno.test("ropeTables: Llama 3 scaling matches the float64 formula of transformers in both angle modes", async () => {
  // Llama 3.1's constants with a short original context, so that a 32-wide head has frequencies
  // in all three bands (kept, blended, divided by the factor).
  const scaling = { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 256 };
  const dim = 32;
  const theta = 5e5;
  const inv = llama3InvFreqReference(dim, theta, scaling);
  const plainInv = Array.from({ length: dim / 2 }, (_, i) => theta ** ((-2 * i) / dim));
  const kinds = inv.map((v, i) =>
    v === plainInv[i] ? "kept" : v === plainInv[i]! / 8 ? "divided" : "blended"
  );
  for (const k of ["kept", "divided", "blended"] as const) {
    assert.ok(kinds.includes(k), `no ${k} band`);
  }
  const positions = [0, 1, 7, 300, 5000, 70000];
  const want = (f: (a: number) => number) => positions.flatMap((p) => inv.map((v) => f(p * v)));
  const exact = ropeTables(positions, { dim, theta, scaling, angles: "exact", backend: F64 });
  // Exact mode: rtol/atol 1e-12 against the float64 formula.
  assertClose(await exact.cos.data(), want(Math.cos), { rtol: 1e-12, atol: 1e-12 });
  assertClose(await exact.sin.data(), want(Math.sin), { rtol: 1e-12, atol: 1e-12 });
  // float32 mode: about ten f32 roundings on the way to the angle, |Δa| <= 1e-6·|a| + 1e-12.
  const hf = ropeTables(positions, { dim, theta, scaling, backend: F64 });
  const hfSin = await hf.sin.data();
  positions.forEach((p, t) => {
    inv.forEach((v, i) => {
      const a = p * v;
      assert.ok(
        Math.abs(hfSin[t * inv.length + i]! - Math.sin(a)) <= 1e-6 * a + 1e-12,
        `position ${p}, pair ${i} (${kinds[i]})`,
      );
    });
  });
  // Kept frequencies are bit-identical to the unscaled tables in float32 mode.
  const plainTables = ropeTables(positions, { dim, theta, backend: F64 });
  const plain = await plainTables.sin.data();
  positions.forEach((_, t) => {
    kinds.forEach((k, i) => {
      if (k === "kept") assert.equal(hfSin[t * inv.length + i], plain[t * inv.length + i]);
    });
  });
  for (const x of [exact.cos, exact.sin, hf.cos, hf.sin, plainTables.cos, plainTables.sin]) {
    x.dispose();
  }
});

Deno.test("ropeTables: bad Llama 3 scaling fields name the field and the value", () => {
  const ok = { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 };
  assert.throws(
    () => ropeTables([0], { dim: 4, scaling: { ...ok, factor: 0 } }),
    /ropeTables: scaling.factor must be a finite number > 0, got 0/,
  );
  assert.throws(
    () => ropeTables([0], { dim: 4, scaling: { ...ok, highFreqFactor: 1 } }),
    /ropeTables: scaling.highFreqFactor must be > lowFreqFactor \(1\), got 1/,
  );
});
