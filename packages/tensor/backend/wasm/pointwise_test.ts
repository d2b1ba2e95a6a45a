import assert from "node:assert/strict";
import fc from "fast-check";
import { adamw } from "../cpu/adamw.ts";
import { POINTWISE_BLOCK, WasmPointwise } from "./pointwise.ts";
import { createCpuBackend } from "../cpu/cpu_backend.ts";

const wp = WasmPointwise.create();
const ignore = wp === null;

/**
 * `n` f32 values of every kind AdamW meets, from a seed: mostly values of one of many magnitudes
 * (so sums round differently everywhere), some zeros of both signs, subnormals and huge values.
 */
function draw(seed: number, n: number): Float32Array {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const special = [0, -0, 1e-45, -1e-45, 1e-40, 3.4e38, -3.4e38];
  return Float32Array.from({ length: n }, () => {
    const u = next();
    if (u < 0.02) return special[Math.floor(next() * special.length)]!;
    return (next() - 0.5) * 2 ** Math.floor(next() * 40 - 30);
  });
}

const adamwParams = fc.record({
  lr: fc.oneof(fc.double({ min: 1e-8, max: 1, noNaN: true }), fc.constant(0)),
  beta1: fc.double({ min: 0, max: 0.999999, noNaN: true }),
  beta2: fc.double({ min: 0, max: 0.999999, noNaN: true }),
  eps: fc.oneof(fc.double({ min: 1e-12, max: 1e-3, noNaN: true }), fc.constant(0)),
  weightDecay: fc.double({ min: 0, max: 0.5, noNaN: true }),
  bc1: fc.double({ min: 1e-6, max: 1, noNaN: true }),
  bc2: fc.double({ min: 1e-6, max: 1, noNaN: true }),
});

function bits(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

// What this can see: a wrong operation, constant or order at the f32 level fails at once. A
// reassociation inside the float64 arithmetic (e.g. c2·(g·g) for (c2·g)·g) changes an f32 output
// only when it moves a value across an f32 rounding boundary, about once in 2^29 elements, so the
// WAT keeps the TypeScript kernel's order by construction (see pointwise.wat) rather than by test.
Deno.test({
  name: "wasm adamw: param, m and v equal the TypeScript kernel's bit for bit on random values, " +
    "lengths (odd, past a block) and hyperparameters",
  ignore,
  fn() {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 * POINTWISE_BLOCK + 3 }),
        fc.integer(),
        adamwParams,
        (n, seed, p) => {
          const g = draw(seed, n), param = draw(seed + 1, n), m = draw(seed + 2, n);
          // v is a running mean of squares: never negative.
          const v = draw(seed + 3, n).map(Math.abs);
          const ref = [param.slice(), m.slice(), v.slice()];
          const got = [param.slice(), m.slice(), v.slice()];
          adamw([g], ref, p);
          wp!.adamw([g], got, p);
          for (const [i, name] of ["param", "m", "v"].entries()) {
            const a = bits(got[i]!), b = bits(ref[i]!);
            for (let j = 0; j < n; j++) {
              if (a[j] !== b[j] && !(Number.isNaN(got[i]![j]) && Number.isNaN(ref[i]![j]))) {
                assert.fail(
                  `${name}[${j}] of ${n}: wasm ${got[i]![j]} vs TypeScript ${ref[i]![j]} ` +
                    `(${JSON.stringify(p)})`,
                );
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  },
});

Deno.test({
  name: "wasm adamw: arrays that are not all Float32Array run the TypeScript kernel",
  ignore,
  fn() {
    const p = { lr: 0.1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, bc1: 1, bc2: 1 };
    const g = new Float64Array([0.3, -0.7]);
    const got = [new Float64Array([1, 2]), new Float64Array(2), new Float64Array(2)];
    const ref = got.map((a) => a.slice());
    wp!.adamw([g], got, p);
    adamw([g], ref, p);
    assert.deepEqual(got, ref);
  },
});

Deno.test({
  name: "cpu backend: the adamw kernel takes the wasm path with wasm kernels and keeps the " +
    "oracle's bits",
  ignore,
  fn() {
    const p = {
      lr: 1e-3,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0.1,
      bc1: 0.19,
      bc2: 2e-3,
    };
    const n = 3 * POINTWISE_BLOCK + 5;
    const g = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 1e-2);
    const start = Float32Array.from({ length: n }, (_, i) => Math.cos(i));
    const results = (["wasm", "ts"] as const).map((kernels) => {
      const cpu = createCpuBackend({ kernels, blas: kernels === "ts" ? "ts" : "wasm" });
      const [gb, pb, mb, vb] = [g, start, new Float32Array(n), new Float32Array(n)].map((a) => {
        const b = cpu.alloc(n, "f32");
        cpu.write(b, a);
        return b;
      });
      cpu.run("adamw", [gb!], [pb!, mb!, vb!], p);
      cpu.run("adamw", [gb!], [pb!, mb!, vb!], p);
      return Promise.all([pb!, mb!, vb!].map((b) => cpu.read(b)));
    });
    return Promise.all(results).then(([wasm, ts]) => {
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(bits(wasm![i] as Float32Array), bits(ts![i] as Float32Array));
      }
    });
  },
});
