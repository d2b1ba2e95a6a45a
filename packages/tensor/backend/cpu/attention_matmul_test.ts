import assert from "node:assert/strict";
import fc from "fast-check";
import { attention, attentionBackward } from "./attention.ts";
import { attentionBackwardViaMatmul, attentionViaMatmul } from "./attention_matmul.ts";
import { createCpuMatmul, detectWasmMatmul } from "../wasm/matmul_wasm.ts";
import type { KernelParams } from "../types.ts";

// Tolerance against the float64 oracle: every score and output element here is an f32 sum of at
// most 40 products of values in [−1, 1] (error below 40·2⁻²⁴ ≈ 2.4e-6 of the sum of magnitudes),
// and an exponential turns an absolute score error into the same relative error. The test allows
// 2e-4·(1 + |reference|), about fifty times that bound; decode rows are compared bit for bit.

const ignore = detectWasmMatmul() === null;
const wasm = ignore ? null : createCpuMatmul("wasm");

type Params = KernelParams["attention"];

function draw(seed: number, length: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32) * 2 - 1;
  }
  return out;
}

function close(got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  assert.equal(got.length, want.length, what);
  for (let i = 0; i < got.length; i++) {
    const g = got[i]!, w = want[i]!;
    if (Object.is(g, w)) continue;
    if (!(Math.abs(g - w) <= 2e-4 * (1 + Math.abs(w)))) {
      assert.fail(`${what}: element ${i}: ${g} vs oracle ${w}`);
    }
  }
}

const shapes = fc.record({
  batch: fc.integer({ min: 1, max: 2 }),
  kvHeads: fc.integer({ min: 1, max: 2 }),
  group: fc.integer({ min: 1, max: 3 }),
  tq: fc.integer({ min: 0, max: 9 }),
  tk: fc.integer({ min: 0, max: 13 }),
  d: fc.integer({ min: 1, max: 40 }),
  causal: fc.boolean(),
  hasMask: fc.boolean(),
  seed: fc.integer(),
});

function setup(s: {
  batch: number;
  kvHeads: number;
  group: number;
  tq: number;
  tk: number;
  d: number;
  causal: boolean;
  hasMask: boolean;
  seed: number;
}) {
  const heads = s.kvHeads * s.group;
  const p: Params = {
    batch: s.batch,
    heads,
    kvHeads: s.kvHeads,
    tq: s.tq,
    tk: s.tk,
    d: s.d,
    scale: 1 / Math.sqrt(s.d),
    causal: s.causal,
    hasMask: s.hasMask,
  };
  const q = draw(s.seed, s.batch * heads * s.tq * s.d);
  const k = draw(s.seed ^ 1, s.batch * s.kvHeads * s.tk * s.d);
  const v = draw(s.seed ^ 2, s.batch * s.kvHeads * s.tk * s.d);
  const mask = Uint8Array.from(draw(s.seed ^ 3, s.batch * s.tk), (x) => (x < 0.5 ? 1 : 0));
  const dout = draw(s.seed ^ 4, q.length);
  return { p, q, k, v, mask, dout };
}

Deno.test({
  name: "attention via matmul: output, lse and gradients match the oracle on random shapes " +
    "(GQA groups, causal prefixes, padding masks, rows that see nothing)",
  ignore,
  fn() {
    const fwd = attentionViaMatmul(wasm!.direct!);
    const bwd = attentionBackwardViaMatmul(wasm!.kernel);
    fc.assert(
      fc.property(shapes, (s) => {
        const { p, q, k, v, mask, dout } = setup(s);
        const ins = p.hasMask ? [q, k, v, mask] : [q, k, v];
        const rows = p.batch * p.heads * p.tq;
        const o = new Float32Array(q.length).fill(NaN), lse = new Float32Array(rows).fill(NaN);
        const oRef = new Float64Array(q.length), lseRef = new Float64Array(rows);
        fwd(ins, [o, lse], p);
        attention(ins, [oRef, lseRef], p);
        close(o, oRef, `o ${JSON.stringify(s)}`);
        close(lse, lseRef, `lse ${JSON.stringify(s)}`);
        // The backward from the oracle's own o and lse (f32-rounded), so only it differs.
        const o32 = Float32Array.from(oRef), lse32 = Float32Array.from(lseRef);
        const bIns = [q, k, v, o32, lse32, dout, ...(p.hasMask ? [mask] : [])];
        const grads = [q.length, k.length, v.length].map((n) => new Float32Array(n).fill(NaN));
        const refs = [q.length, k.length, v.length].map((n) => new Float64Array(n));
        bwd(bIns, grads, p);
        attentionBackward(bIns, refs, p);
        for (const [i, name] of ["dq", "dk", "dv"].entries()) {
          close(grads[i]!, refs[i]!, `${name} ${JSON.stringify(s)}`);
        }
      }),
      { numRuns: 250 },
    );
  },
});

Deno.test({
  name: "attention via matmul: each causal row equals, bit for bit, one decode step over its " +
    "key prefix (KV-cache decoding stays exact)",
  ignore,
  fn() {
    const fwd = attentionViaMatmul(wasm!.direct!);
    fc.assert(
      // Head size 64 and up to 29 keys: a row's product crosses the size where the default
      // matmul kernel switches from TypeScript to wasm, which the direct kernel must not do.
      fc.property(shapes, fc.nat(20), fc.boolean(), (s, prefix, wide) => {
        const tq = Math.max(1, s.tq);
        const { p, q, k, v, mask } = setup({
          ...s,
          tq,
          tk: tq + prefix,
          d: wide ? 64 : s.d,
          causal: true,
        });
        const { batch, heads, kvHeads, d, tk } = p;
        const ins = p.hasMask ? [q, k, v, mask] : [q, k, v];
        const o = new Float32Array(q.length), lse = new Float32Array(batch * heads * tq);
        fwd(ins, [o, lse], p);
        for (let i = 0; i < tq; i++) {
          const seen = prefix + i + 1; // keys row i may see
          const pick = (x: Float32Array, per: number, len: number, hs: number) =>
            Float32Array.from({ length: batch * hs * len * d }, (_, e) => {
              const c = e % d, t = Math.floor(e / d) % len, bh = Math.floor(e / (d * len));
              return x[(bh * per + t) * d + c]!;
            });
          const q1 = Float32Array.from({ length: batch * heads * d }, (_, e) => {
            const c = e % d, bh = Math.floor(e / d);
            return q[(bh * tq + i) * d + c]!;
          });
          const k1 = pick(k, tk, seen, kvHeads), v1 = pick(v, tk, seen, kvHeads);
          const m1 = Uint8Array.from(
            { length: batch * seen },
            (_, e) => mask[Math.floor(e / seen) * tk + (e % seen)]!,
          );
          const o1 = new Float32Array(batch * heads * d), l1 = new Float32Array(batch * heads);
          fwd(p.hasMask ? [q1, k1, v1, m1] : [q1, k1, v1], [o1, l1], { ...p, tq: 1, tk: seen });
          for (let bh = 0; bh < batch * heads; bh++) {
            assert.ok(Object.is(l1[bh], lse[bh * tq + i]), `lse row ${i} head ${bh}`);
            for (let c = 0; c < d; c++) {
              const want = o[(bh * tq + i) * d + c]!, got = o1[bh * d + c]!;
              if (!Object.is(got, want)) {
                assert.fail(`o row ${i} head ${bh} [${c}]: ${got} != ${want}`);
              }
            }
          }
        }
      }),
      { numRuns: 120 },
    );
  },
});
