/**
 * CPU-vs-WebGPU parity of every kernel of the catalogue, through the public ops, forward and
 * gradients, on fast-check drawn shapes that include ragged sizes (1, 3, 5, 17, 33: not multiples
 * of the 16-wide matmul tile, the 64-lane row workgroups or the 256-wide elementwise workgroups).
 *
 * Tolerances (see `_test_utils.ts`): f32 elementwise kernels compare at rtol 1e-4 / atol 1e-5.
 * Kernels that sum (reductions, matmul, softmax, norms, attention, log-probs) accumulate in f32 in
 * a different order from the CPU oracle, which accumulates in float64 and rounds once, so they
 * compare at rtol 1e-4 / atol 1e-4: the absolute term covers results that cancel to near zero,
 * where f32 rounding of the O(1) terms (about 1e-7 each, over at most a few hundred terms) is
 * the whole error. Integer, bool, index and copy kernels must match exactly.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import type { Tensor } from "../../tensor.ts";
import { tensor } from "../../creation.ts";
import { tidy } from "../../runtime.ts";
import * as ops from "../../mod.ts";
import { AdamW } from "../../optim/adamw.ts";
import { assertClose } from "../../testing.ts";
import { assertParity, cpu, F32, gpuTest, type Leaf, RAGGED, type Tol } from "./_test_utils.ts";
import type { WebGpuBackend } from "./webgpu_backend.ts";

const SUMS: Tol = { rtol: 1e-4, atol: 1e-4 };
const EXACT: Tol = { rtol: 0, atol: 0 };
const RUNS = { numRuns: 6 };

const dim: fc.Arbitrary<number> = fc.constantFrom(1, 2, 3, 5, 17, 33);
const small = fc.constantFrom(1, 2, 3, 5);
const arbShape = (maxRank = 3, d: fc.Arbitrary<number> = dim) =>
  fc.array(d, { minLength: 1, maxLength: maxRank });
const seed = fc.integer({ min: 0, max: 1 << 20 });

/** Two shapes that broadcast: the second drops leading axes and sets some to 1 (maybe swapped). */
const arbPair = arbShape(3, fc.constantFrom(1, 2, 3, 5, 17)).chain((full) =>
  fc.tuple(
    fc.integer({ min: 0, max: full.length - 1 }),
    fc.array(fc.boolean(), { minLength: full.length, maxLength: full.length }),
    fc.boolean(),
  ).map(([drop, ones, swap]) => {
    const other = full.slice(drop).map((d, i) => (ones[i + drop] ? 1 : d));
    return (swap ? [other, full] : [full, other]) as [number[], number[]];
  })
);

const awayFromZero = (v: number) => (v >= 0 ? v + 0.3 : v - 0.3);
const positive = (v: number) => Math.abs(v) + 0.3;

/** Checks `check` on `RUNS` drawn values plus the given `examples`, which always run. */
function property<T>(
  arb: fc.Arbitrary<T>,
  check: (gpu: WebGpuBackend, v: T) => Promise<void>,
  gpu: WebGpuBackend,
  examples: NoInfer<T>[] = [],
): Promise<void> {
  return fc.assert(
    fc.asyncProperty(arb, (v) => check(gpu, v)),
    { ...RUNS, examples: examples.map((e) => [e] as [T]) },
  );
}

gpuTest("fill and cast: constants and conversions between f32, i32 and bool", async (gpu) => {
  await assertParity(gpu, {
    name: "constants",
    leaves: [],
    fn: () => [
      ops.full([3, 5], 2.5),
      ops.zeros([17]),
      ops.ones([2, 33]),
      ops.full([4], -7, { dtype: "i32" }),
      ops.full([3], 1, { dtype: "bool" }),
      ops.full([0], 3),
    ],
    tol: EXACT,
  });
  const special = [-2.7, 2.7, -0.5, 0, -0, 1e10, -1e10, 3e9, NaN, Infinity, -Infinity, 7];
  await assertParity(gpu, {
    name: "casts",
    leaves: [{ shape: [special.length], values: special, grad: false }],
    fn: (x) => {
      const i = x.cast("i32");
      const b = x.cast("bool");
      return [i, b, i.cast("f32"), b.cast("f32"), b.cast("i32"), i.cast("bool")];
    },
    tol: EXACT,
  });
  await property(arbShape(), async (g, shape) => {
    await assertParity(g, {
      name: `cast ${shape}`,
      leaves: [{ shape, map: (v) => v * 5 }],
      fn: (x) => [x.cast("i32"), x.cast("bool"), x.cast("i32").cast("f32").mul(x)],
    });
  }, gpu);
});

const UNARY: [string, (x: Tensor) => Tensor, ((v: number) => number)?][] = [
  ["neg", ops.neg],
  ["exp", ops.exp],
  ["log", ops.log, positive],
  ["sqrt", ops.sqrt, positive],
  ["rsqrt", ops.rsqrt, positive],
  ["abs", ops.abs, awayFromZero],
  ["sign", ops.sign, awayFromZero],
  ["tanh", ops.tanh, (v) => v * 3],
  ["sigmoid", ops.sigmoid, (v) => v * 4],
  ["relu", ops.relu, awayFromZero],
  ["silu", ops.silu, (v) => v * 3],
  ["gelu", ops.gelu, (v) => v * 3],
  ["square", ops.square],
  ["reciprocal", ops.reciprocal, awayFromZero],
];

gpuTest(
  "unary ops: every UnaryOp forward, and gradients through the fused *_backward ops",
  async (gpu) => {
    await property(fc.tuple(arbShape(), seed), async (g, [shape, s]) => {
      for (const [name, f, map] of UNARY) {
        await assertParity(g, {
          name: `${name} ${shape}`,
          seed: s,
          leaves: [{ shape, ...(map ? { map } : {}) }],
          fn: (x) => f(x),
        });
      }
    }, gpu);
    // NaN, ±Infinity and ±0 follow the CPU oracle's JavaScript semantics (denormals are left
    // out: GPUs may flush them to zero).
    const special = [NaN, Infinity, -Infinity, 0, -0, -1, 0.5, 100];
    await assertParity(gpu, {
      name: "unary special values",
      leaves: [{ shape: [special.length], values: special, grad: false }],
      fn: (x) => UNARY.map(([, f]) => f(x)),
    });
    await assertParity(gpu, {
      name: "binary special values",
      leaves: [
        { shape: [special.length], values: special, grad: false },
        { shape: [special.length], values: [1, 2, -1, 0, 3, NaN, -0, 0.5], grad: false },
      ],
      fn: (a, b) => ARITH.map(([, f]) => f(a, b)),
    });
    // tanh/sigmoid/gelu saturate without NaN; values near 0 keep their relative precision.
    await assertParity(gpu, {
      name: "saturation",
      leaves: [{ shape: [8], values: [-100, -30, -1e-4, 1e-6, 0, 1e-4, 30, 100] }],
      fn: (x) => [ops.tanh(x), ops.sigmoid(x), ops.gelu(x), ops.silu(x)],
      tol: { rtol: 1e-4, atol: 1e-7 },
    });
  },
);

gpuTest("unary ops on i32 (neg, abs, sign, square) and logicalNot", async (gpu) => {
  await assertParity(gpu, {
    name: "i32 unary",
    leaves: [{ shape: [7], values: [-5, -1, 0, 1, 3, 46340, -2147483648], dtype: "i32" }],
    fn: (x) => [ops.neg(x), ops.abs(x), ops.sign(x), ops.square(x), ops.logicalNot(x)],
    tol: EXACT,
  });
});

type Map = ((v: number) => number) | undefined;
const ARITH: [string, (a: Tensor, b: Tensor) => Tensor, Map?, Map?][] = [
  ["add", ops.add],
  ["sub", ops.sub],
  ["mul", ops.mul],
  ["div", ops.div, undefined, awayFromZero],
  ["pow", ops.pow, positive, (v) => v * 1.5],
  ["minimum", ops.minimum],
  ["maximum", ops.maximum],
];

gpuTest("binary ops with broadcasting: arithmetic forward and gradients", async (gpu) => {
  await property(fc.tuple(arbPair, seed), async (g, [[sa, sb], s]) => {
    for (const [name, f, ma, mb] of ARITH) {
      await assertParity(g, {
        name: `${name} ${sa} ${sb}`,
        seed: s,
        leaves: [{ shape: sa, ...(ma ? { map: ma } : {}) }, {
          shape: sb,
          ...(mb ? { map: mb } : {}),
        }],
        fn: f,
      });
    }
  }, gpu);
  // Ties split the gradient; NaN propagates through minimum/maximum; pow of negative bases.
  await assertParity(gpu, {
    name: "ties and NaN",
    leaves: [{ shape: [4], values: [1, 2, NaN, -3] }, { shape: [4], values: [1, 3, 0, -3] }],
    fn: (a, b) => [ops.minimum(a, b), ops.maximum(a, b)],
  });
  await assertParity(gpu, {
    name: "pow special",
    leaves: [
      { shape: [8], values: [-2, -2, -8, 0, 0, 0, NaN, 1.5], grad: false },
      { shape: [8], values: [3, 2, 1 / 3, 2, 0, -1, 0, 2], grad: false },
    ],
    fn: (a, b) => ops.pow(a, b),
  });
});

gpuTest("binary ops: comparisons, logical and/or, i32 arithmetic", async (gpu) => {
  await property(fc.tuple(arbPair, seed), async (g, [[sa, sb], s]) => {
    await assertParity(g, {
      name: `compare ${sa} ${sb}`,
      seed: s,
      leaves: [{ shape: sa, map: Math.round }, { shape: sb, map: Math.round }],
      fn: (a, b) => [
        ops.eq(a, b),
        ops.ne(a, b),
        ops.lt(a, b),
        ops.le(a, b),
        ops.gt(a, b),
        ops.ge(a, b),
        ops.logicalAnd(a.gt(0), b.gt(0)),
        ops.logicalOr(a.gt(0), b.gt(0)),
      ],
      tol: EXACT,
    });
    await assertParity(g, {
      name: `i32 arith ${sa} ${sb}`,
      seed: s,
      leaves: [
        { shape: sa, map: (v) => Math.round(v * 1000), dtype: "i32" },
        { shape: sb, map: (v) => Math.round(v * 1000), dtype: "i32" },
      ],
      fn: (a, b) => [a.add(b), a.sub(b), a.mul(b), a.minimum(b), a.maximum(b), a.eq(b), a.lt(b)],
      tol: EXACT,
    });
  }, gpu);
  await assertParity(gpu, {
    name: "NaN comparisons",
    leaves: [{ shape: [3], values: [NaN, 1, NaN] }, { shape: [3], values: [NaN, NaN, 2] }],
    fn: (a, b) => [ops.eq(a, b), ops.ne(a, b), ops.lt(a, b), ops.ge(a, b), a.cast("bool")],
    tol: EXACT,
  });
});

gpuTest("where, maskedFill and clamp with broadcasting and gradients", async (gpu) => {
  await property(fc.tuple(arbPair, seed), async (g, [[sa, sb], s]) => {
    await assertParity(g, {
      name: `where ${sa} ${sb}`,
      seed: s,
      leaves: [{ shape: sa }, { shape: sb }, { shape: sb, grad: false }],
      fn: (a, b, c) => [
        ops.where(c.gt(0), a, b),
        ops.maskedFill(a, c.lt(0), -1),
        ops.clamp(a, -0.5, 0.5),
        ops.where(c.gt(0), 1, 2),
      ],
    });
  }, gpu);
});

gpuTest(
  "copy: permute, transpose, narrow, slice, concat, stack, expand, with gradients",
  async (gpu) => {
    const arb = fc.tuple(fc.array(dim, { minLength: 3, maxLength: 3 }), seed);
    await property(arb, async (g, [shape, s]) => {
      const [a, b, c] = shape as [number, number, number];
      await assertParity(g, {
        name: `copies ${shape}`,
        seed: s,
        leaves: [{ shape }, { shape }],
        fn: (x, y) => [
          x.permute(2, 0, 1),
          x.transpose(0, 2),
          x.narrow(1, Math.floor(b / 2), b - Math.floor(b / 2)),
          x.slice(null, null, [0, Math.ceil(c / 2)]),
          ops.concat([x, y], 1),
          ops.stack([x, y], 2),
          x.narrow(0, 0, 1).expand(2, b, c),
          x.permute(1, 2, 0).reshape(b * c, a).transpose(),
        ],
        tol: EXACT,
        gradTol: F32,
      });
    }, gpu);
    // Ranks above 8 work when contiguous dimensions merge.
    await assertParity(gpu, {
      name: "rank 10",
      leaves: [{ shape: [2, 1, 3, 1, 2, 1, 2, 1, 3, 2] }],
      fn: (x) => x.transpose(0, 9).add(1),
      tol: EXACT,
    });
  },
);

gpuTest(
  "reduce: sum/mean/max/min/var/argmax/argmin over drawn axes, with gradients",
  async (gpu) => {
    const arb = arbShape(3).chain((shape) =>
      fc.tuple(
        fc.constant(shape),
        fc.subarray([...shape.keys()], { minLength: 1 }),
        fc.boolean(),
        seed,
      )
    );
    await property(arb, async (g, [shape, axes, keep, s]) => {
      await assertParity(g, {
        name: `reduce ${shape} over ${axes} keepdim=${keep}`,
        seed: s,
        leaves: [{ shape }],
        fn: (x) => [
          x.sum(axes, keep),
          x.mean(axes, keep),
          x.max(axes, keep),
          x.min(axes, keep),
          x.var(axes),
          x.sum(),
        ],
        tol: SUMS,
      });
      await assertParity(g, {
        name: `arg ${shape}`,
        seed: s,
        leaves: [{ shape, map: (v) => Math.round(v * 2) }],
        fn: (x) => [ops.argmax(x, -1), ops.argmin(x, 0), x.max(-1), x.cast("i32").sum(-1)],
        tol: EXACT,
      });
    }, gpu);
    // NaN propagates through max/min; argmax returns the first NaN, else the first maximum.
    await assertParity(gpu, {
      name: "reduce NaN and ties",
      leaves: [{
        shape: [4, 4],
        values: [
          1,
          NaN,
          3,
          NaN,
          2,
          2,
          1,
          0,
          -Infinity,
          -Infinity,
          -Infinity,
          -Infinity,
          5,
          5,
          5,
          5,
        ],
        grad: false,
      }],
      fn: (x) => [x.max(1), x.min(1), ops.argmax(x, 1), ops.argmin(x, 1), x.sum(1)],
      tol: EXACT,
    });
    await assertParity(gpu, {
      name: "bool and i32 sums, empty axis",
      leaves: [{ shape: [3, 70], map: Math.round, grad: false }, { shape: [2, 0] }],
      fn: (x, e) => [x.gt(0).sum(1), x.cast("i32").sum(0), e.sum(1)],
      tol: EXACT,
    });
  },
);

gpuTest(
  "matmul: transA/transB, batch broadcasting and ragged sizes, with gradients",
  async (gpu) => {
    const mnk: fc.Arbitrary<number> = fc.constantFrom<number>(...RAGGED, 16, 32);
    const arb = fc.tuple(mnk, mnk, mnk, fc.constantFrom(0, 1, 3), fc.boolean(), fc.boolean(), seed);
    await property(
      arb,
      async (g, [m, n, k, batch, ta, tb, s]) => {
        const aShape = ta ? [k, m] : [m, k];
        const bShape = tb ? [n, k] : [k, n];
        // batch 0: plain 2-D; otherwise a is batched and b broadcast (or batched when batch is 3).
        const aFull = batch === 0 ? aShape : [batch, ...aShape];
        const bFull = batch === 3 ? [batch, ...bShape] : bShape;
        await assertParity(g, {
          name: `matmul ${aFull}${ta ? "ᵀ" : ""} · ${bFull}${tb ? "ᵀ" : ""}`,
          seed: s,
          leaves: [{ shape: aFull }, { shape: bFull }],
          fn: (a, b) => ops.matmul(a, b, { transA: ta, transB: tb }),
          tol: SUMS,
        });
      },
      gpu,
      [[33, 17, 33, 3, true, true, 5], [17, 33, 5, 1, false, true, 6], [
        1,
        1,
        1,
        0,
        false,
        false,
        7,
      ]],
    );
    // A zero in op(a) skips an infinite entry of op(b), as in the CPU oracle; k = 0 gives zeros.
    await assertParity(gpu, {
      name: "matmul zero skip and k=0",
      leaves: [
        { shape: [1, 2], values: [0, 1], grad: false },
        { shape: [2, 1], values: [Infinity, 2], grad: false },
        { shape: [2, 0] },
        { shape: [0, 3] },
      ],
      fn: (a, b, c, d) => [a.matmul(b), c.matmul(d)],
      tol: EXACT,
    });
  },
);

gpuTest("softmax, logSoftmax, logsumexp and cumsum, with gradients", async (gpu) => {
  const arb = fc.tuple(arbShape(3, fc.constantFrom(1, 3, 5, 17, 33, 100)), seed);
  await property(
    arb,
    async (g, [shape, s]) => {
      await assertParity(g, {
        name: `softmax ${shape}`,
        seed: s,
        leaves: [{ shape, map: (v) => v * 3 }],
        fn: (x) => [
          ops.softmax(x, -1),
          ops.logSoftmax(x, -1),
          ops.logsumexp(x, -1),
          ops.softmax(x, 0),
          ops.cumsum(x, -1),
          ops.cumsum(x, 0),
        ],
        tol: SUMS,
      });
    },
    gpu,
    [[[33, 100], 3], [[2, 3, 70], 4]],
  );
  await assertParity(gpu, {
    name: "softmax with -inf",
    leaves: [{
      shape: [3, 3],
      values: [-Infinity, 0, 1, -Infinity, -Infinity, -Infinity, 1e30, 1, 2],
      grad: false,
    }],
    fn: (x) => [ops.softmax(x), ops.logSoftmax(x), ops.logsumexp(x)],
    tol: SUMS,
  });
});

gpuTest("gather/scatter_add and indexSelect/embedding/index_add, repeated indices", async (gpu) => {
  const arb = fc.tuple(fc.constantFrom(...RAGGED), fc.constantFrom(...RAGGED), small, seed);
  await property(arb, async (g, [rows, n, m, s]) => {
    const idx = Array.from({ length: rows * m }, (_, i) => (i * 7 + s) % n);
    const sel = Array.from({ length: m + 2 }, (_, i) => (i * 5 + s) % n);
    await assertParity(g, {
      name: `gather ${rows}x${n} m=${m}`,
      seed: s,
      leaves: [
        { shape: [rows, n] },
        { shape: [rows, m], values: idx, dtype: "i32" },
        { shape: [sel.length], values: sel, dtype: "i32" },
        { shape: [n, 3] },
      ],
      fn: (x, i, j, w) => [
        x.gather(i, 1),
        x.transpose().gather(i.transpose(), 0),
        x.indexSelect(1, j),
        ops.embedding(w, i),
      ],
    });
  }, gpu);
});

gpuTest("rmsNorm and layerNorm with gradients", async (gpu) => {
  const arb = fc.tuple(fc.constantFrom(...RAGGED, 100), fc.constantFrom(...RAGGED, 70), seed);
  await property(arb, async (g, [rows, cols, s]) => {
    await assertParity(g, {
      name: `norms ${rows}x${cols}`,
      seed: s,
      leaves: [{ shape: [rows, cols], map: (v) => v * 2 + 1 }, { shape: [cols] }, {
        shape: [cols],
      }],
      fn: (x, w, b) => [ops.rmsNorm(x, w, 1e-6), ops.layerNorm(x, w, b, 1e-5), ops.layerNorm(x)],
      tol: SUMS,
    });
  }, gpu);
});

gpuTest(
  "rope with shared and per-batch tables and partial rotation, with gradients",
  async (gpu) => {
    const arb = fc.tuple(small, small, fc.constantFrom(...RAGGED), fc.constantFrom(2, 4, 6), seed);
    await property(arb, async (g, [batch, heads, t, extra, s]) => {
      const d = 4 + extra;
      const half = 2;
      await assertParity(g, {
        name: `rope ${batch}x${heads}x${t}x${d}`,
        seed: s,
        leaves: [
          { shape: [batch, heads, t, d] },
          { shape: [t, half], grad: false },
          { shape: [t, half], grad: false },
          { shape: [batch, t, d / 2], grad: false },
          { shape: [batch, t, d / 2], grad: false },
        ],
        fn: (x, c, sn, cb, sb) => [ops.rope(x, c, sn), ops.rope(x, cb, sb)],
      });
    }, gpu);
  },
);

gpuTest("attention: causal, KV prefix, GQA and key padding, with gradients", async (gpu) => {
  const arb = fc.tuple(
    fc.constantFrom(1, 2),
    fc.constantFrom([1, 1], [2, 1], [4, 2], [3, 3]),
    fc.constantFrom(1, 3, 5, 17, 65),
    fc.constantFrom(0, 2, 70),
    fc.constantFrom(1, 3, 8, 65),
    fc.boolean(),
    fc.boolean(),
    seed,
  );
  await property(
    arb,
    async (g, [batch, [heads, kvHeads], tq, prefix, d, causal, masked, s]) => {
      const tk = tq + prefix;
      const mask = Array.from(
        { length: batch * tk },
        (_, i) => (i % tk === 0 || (i * 3 + s) % 4 !== 0 ? 1 : 0),
      );
      const leaves: Leaf[] = [
        { shape: [batch, heads, tq, d] },
        { shape: [batch, kvHeads, tk, d] },
        { shape: [batch, kvHeads, tk, d] },
        { shape: [batch, tk], values: mask, dtype: "bool" },
      ];
      await assertParity(g, {
        name:
          `attention b${batch} h${heads}/${kvHeads} tq${tq} tk${tk} d${d} causal=${causal} mask=${masked}`,
        seed: s,
        leaves,
        fn: (q, k, v, m) =>
          ops.scaledDotProductAttention(q, k, v, { causal, ...(masked ? { mask: m } : {}) }),
        tol: SUMS,
      });
    },
    gpu,
    [
      // Two key blocks and two query blocks of 64, GQA, KV prefix, padding: always checked.
      [2, [4, 2], 65, 70, 65, true, true, 1],
      [1, [2, 1], 65, 0, 8, false, false, 2],
    ],
  );
  // Causal with fewer keys than queries: the first rows see no key (zero output and gradients).
  await assertParity(gpu, {
    name: "attention tk < tq",
    leaves: [{ shape: [1, 2, 5, 3] }, { shape: [1, 1, 3, 3] }, { shape: [1, 1, 3, 3] }],
    fn: (q, k, v) => ops.scaledDotProductAttention(q, k, v),
    tol: SUMS,
  });
  // A row that sees no key outputs zeros and gets zero gradients.
  await assertParity(gpu, {
    name: "attention fully masked row",
    leaves: [
      { shape: [1, 1, 2, 3] },
      { shape: [1, 1, 2, 3] },
      { shape: [1, 1, 2, 3] },
      { shape: [1, 2], values: [0, 1], dtype: "bool" },
    ],
    fn: (q, k, v, m) => ops.scaledDotProductAttention(q, k, v, { mask: m }),
    tol: SUMS,
  });
  // A NaN score propagates as on the CPU (only exact zeros of p are skipped): a NaN in q's second
  // row makes that row's probabilities NaN, which a `p != 0.0` test would drop.
  await assertParity(gpu, {
    name: "attention NaN propagation",
    leaves: [
      { shape: [1, 1, 2, 2], values: [0.5, -1, NaN, 2], grad: false },
      { shape: [1, 1, 2, 2], grad: false },
      { shape: [1, 1, 2, 2], grad: false },
    ],
    fn: (q, k, v) => ops.scaledDotProductAttention(q, k, v),
    tol: SUMS,
  });
});

gpuTest("logprobsOf, entropyFromLogits and crossEntropy, with gradients", async (gpu) => {
  const arb = fc.tuple(fc.constantFrom(...RAGGED), fc.constantFrom(...RAGGED, 100, 300), seed);
  await property(arb, async (g, [rows, vocab, s]) => {
    const tokens = Array.from({ length: rows }, (_, i) => (i * 13 + s) % vocab);
    const targets = tokens.map((t, i) => (i % 4 === 3 ? -100 : t));
    await assertParity(g, {
      name: `losses ${rows}x${vocab}`,
      seed: s,
      leaves: [
        { shape: [rows, vocab], map: (v) => v * 3 },
        { shape: [rows], values: tokens, dtype: "i32" },
        { shape: [rows], values: targets, dtype: "i32" },
      ],
      fn: (z, t, y) => [ops.logprobsOf(z, t), ops.entropyFromLogits(z), ops.crossEntropy(z, y)],
      tol: SUMS,
    });
  }, gpu);
  // Masked vocabulary entries (−Infinity) contribute nothing and get zero gradient.
  await assertParity(gpu, {
    name: "losses with masked vocabulary",
    leaves: [
      { shape: [2, 4], values: [0, -Infinity, 1, 2, -Infinity, -Infinity, 3, 3] },
      { shape: [2], values: [2, 3], dtype: "i32" },
    ],
    fn: (z, t) => [ops.logprobsOf(z, t), ops.entropyFromLogits(z)],
    tol: SUMS,
  });
  // A NaN logit makes its row's entropy NaN on both backends (not dropped by a `p != 0.0` test).
  await assertParity(gpu, {
    name: "entropy NaN propagation",
    leaves: [{ shape: [2, 3], values: [0, 1, 2, NaN, 1, 2], grad: false }],
    fn: (z) => [ops.entropyFromLogits(z)],
    tol: SUMS,
  });
});

gpuTest(
  "accumulate: y += src in place, bit for bit the CPU's (one f32 add per element)",
  async (gpu) => {
    await property(fc.tuple(fc.integer({ min: 1, max: 700 }), seed), async (g, [n, s]) => {
      const y0 = Array.from({ length: n }, (_, i) => Math.sin(s + i) * 10 ** ((i % 7) - 3));
      const src = Array.from({ length: n }, (_, i) => Math.cos(s * 3 + i) * 10 ** ((i % 5) - 2));
      const out: Float32Array[] = [];
      for (const backend of [cpu, g]) {
        const y = tensor(y0, { backend }), x = tensor(src, { backend });
        backend.run("accumulate", [x.buffer], [y.buffer], { n });
        out.push(await y.data() as Float32Array);
        y.dispose();
        x.dispose();
      }
      assert.deepEqual([...out[1]!], [...out[0]!], `n ${n}, seed ${s}`);
    }, gpu);
  },
);

gpuTest("adamw: 5 optimizer steps update param, m and v like the CPU oracle", async (gpu) => {
  const run = async (backend: typeof cpu) => {
    const w = tensor(Array.from({ length: 37 }, (_, i) => Math.sin(i)), {
      backend,
      requiresGrad: true,
    });
    const opt = new AdamW([w], { lr: 0.05, weightDecay: 0.1 });
    for (let step = 0; step < 5; step++) {
      const loss = tidy(() => w.mul(w).mul(w).sum());
      loss.backward();
      opt.step();
      opt.zeroGrad();
      loss.dispose();
    }
    const out = await w.data();
    opt.dispose();
    w.dispose();
    return out;
  };
  const live = gpu.memory().liveBuffers;
  const want = await run(cpu);
  const got = await run(gpu);
  assertClose(got, want, { rtol: 1e-5, atol: 1e-6, msg: "adamw params" });
  assert.equal(gpu.memory().liveBuffers, live);
});
