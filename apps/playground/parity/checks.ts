/**
 * The kernel parity checks the playground runs in a browser: a representative subset of the
 * `@rlvr/tensor` backend-vs-oracle tests, on shapes drawn from a seeded generator, with the
 * tolerances those tests state.
 *
 * Backends: `oracle` is the CPU backend on its TypeScript kernels (`kernels: "ts"`: float64
 * sums rounded once to f32); `wasm` is the CPU backend with the WebAssembly SIMD matmul
 * (`kernels: "wasm"`, which also runs attention through it); `webgpu` is the WGSL backend.
 *
 * Tolerances, and where they come from:
 * - WebGPU: `backend/webgpu/parity_test.ts`: kernels that sum (matmul, softmax, log-softmax and
 *   gather/log-probs, RMSNorm, attention, reductions) at rtol 1e-4 / atol 1e-4 (`SUMS`);
 *   elementwise kernels and RoPE at rtol 1e-4 / atol 1e-5 (`F32`, `_test_utils.ts`). Gradients
 *   at the forward tolerance, as there.
 * - WebAssembly: only matmul and attention have wasm kernels; every other op runs the oracle's
 *   TypeScript kernel on the same f32 storage, so it must match exactly. Matmul (product and
 *   gradients): `(K + 1)·2⁻²³·Σ|a·b|` per element (`backend/wasm/matmul_wasm_test.ts`, see
 *   `matmul_bound.ts`). Attention (output and gradients): `2e-4·(1 + |oracle|)`, i.e. rtol 2e-4
 *   / atol 2e-4 (`backend/cpu/attention_matmul_test.ts`), and a decode step over the KV prefix
 *   equals the last row of the full causal product bit for bit (the KV-cache contract of the
 *   same test).
 * - The wasm matmul runs products with `n·k >= 1024` (`WASM_MIN_NK`), so the matmul shapes are
 *   drawn with n, k >= 33.
 *
 * @module
 */

import {
  gather,
  logprobsOf,
  logSoftmax,
  matmul,
  rmsNorm,
  Rng,
  rope,
  scaledDotProductAttention,
  softmax,
  type Tensor,
} from "@rlvr/tensor";
import type { Tolerance } from "./compare.ts";
import { MATMUL_BOUND_FORMULA, type MatmulGeometry } from "./matmul_bound.ts";

/** The backends a check compares with the oracle. */
export type CheckedBackend = "wasm" | "webgpu";

/** A leaf tensor of a check, created from host values on each backend. */
export interface Leaf {
  /** Name in reports (`grad <name>`). */
  name: string;
  /** Shape. */
  shape: readonly number[];
  /** Values (default: seeded standard normals, through `map`). */
  values?: readonly number[];
  /** Element type (default f32). */
  dtype?: "f32" | "i32" | "bool";
  /** Whether its gradient is compared (default: true for f32 leaves of a `grads` check). */
  grad?: boolean;
  /** Maps each seeded normal (to keep values in an op's domain). */
  map?: (v: number) => number;
}

/** One check: a computation in public ops, run on the oracle and on each backend. */
export interface ParityCheck {
  /** Name, e.g. `matmul transposed`. */
  name: string;
  /** The shapes in words, e.g. `[17,40]ᵀ·[45,40]ᵀ`. */
  shape: string;
  /** The leaves. */
  leaves: readonly Leaf[];
  /** The computation. */
  fn: (...xs: Tensor[]) => Tensor | Tensor[];
  /** Names of the outputs, in order. */
  outputs: readonly string[];
  /** Whether leaf gradients are compared. */
  grads: boolean;
  /** Seed of the leaf values and of the upstream gradient weights. */
  seed: number;
  /** Tolerance per backend (outputs and gradients). */
  tol: Readonly<Record<CheckedBackend, Tolerance>>;
  /** For a `bound` tolerance: the matmul geometry it is computed from (leaves 0 and 1). */
  matmul?: MatmulGeometry;
  /**
   * Outputs that must be equal bit for bit on the named backends (and the oracle), e.g. a
   * decode step and the matching row of the full product.
   */
  identical?: {
    outputs: [number, number];
    backends: readonly ("oracle" | CheckedBackend)[];
    why: string;
  };
}

/** `backend/webgpu/parity_test.ts`: kernels that sum. */
export const SUMS: Tolerance = {
  kind: "close",
  rtol: 1e-4,
  atol: 1e-4,
  source: "webgpu/parity_test.ts SUMS",
};
/** `backend/webgpu/_test_utils.ts`: f32 elementwise kernels (the parity default). */
export const F32: Tolerance = {
  kind: "close",
  rtol: 1e-4,
  atol: 1e-5,
  source: "webgpu/_test_utils.ts F32",
};
/** Ops without a wasm kernel: the oracle's own TypeScript kernel on the same storage. */
export const SAME_KERNEL: Tolerance = {
  kind: "close",
  rtol: 0,
  atol: 0,
  source: "no wasm kernel: the oracle's TypeScript kernel",
};
/** `backend/cpu/attention_matmul_test.ts`: attention through the wasm matmul. */
export const WASM_ATTENTION: Tolerance = {
  kind: "close",
  rtol: 2e-4,
  atol: 2e-4,
  source: "cpu/attention_matmul_test.ts",
};
/** `backend/wasm/matmul_wasm_test.ts`: the wasm matmul's error bound. */
export const WASM_MATMUL: Tolerance = {
  kind: "bound",
  formula: MATMUL_BOUND_FORMULA,
  source: "wasm/matmul_wasm_test.ts",
};

function fmt(shape: readonly number[]): string {
  return `[${shape.join(",")}]`;
}

/**
 * The checks for `seed`: the same seed gives the same shapes and values everywhere (page and
 * Deno alike).
 *
 * @param seed Any integer.
 * @returns The checks, in the order they run.
 *
 * @example Usage
 * ```ts
 * import { parityChecks } from "./checks.ts";
 * import assert from "node:assert/strict";
 * const checks = parityChecks(25);
 * assert.deepEqual(checks.map((c) => c.shape), parityChecks(25).map((c) => c.shape));
 * assert.ok(checks.some((c) => c.name.startsWith("attention")));
 * ```
 */
export function parityChecks(seed: number): ParityCheck[] {
  const rng = new Rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng.uniform() * xs.length)]!;
  const checkSeed = (i: number) => seed * 1000 + i;
  const checks: ParityCheck[] = [];

  // Matmul: plain, both operands transposed, batched with b broadcast (n, k >= 33: wasm path).
  const ragged = [1, 3, 5, 17, 33];
  const wide = [33, 40, 57, 70];
  // "matmul transposed" takes m >= 33 so that its gradient products (n·m) run wasm too.
  const matmuls: [string, number, boolean, boolean, readonly number[]][] = [
    ["matmul", 0, false, false, ragged],
    ["matmul transposed", 0, true, true, [33, 40]],
    ["matmul batched", 3, false, pick([false, true]), ragged],
  ];
  for (const [name, batch, transA, transB, rows] of matmuls) {
    const m = pick(rows), n = pick([33, 37, 45]), k = pick(wide);
    const aShape = [...(batch ? [batch] : []), ...(transA ? [k, m] : [m, k])];
    const bShape = transB ? [n, k] : [k, n];
    checks.push({
      name,
      shape: `${fmt(aShape)}${transA ? "ᵀ" : ""}·${fmt(bShape)}${transB ? "ᵀ" : ""}`,
      leaves: [{ name: "a", shape: aShape }, { name: "b", shape: bShape }],
      fn: (a, b) => matmul(a, b, { transA, transB }),
      outputs: ["op(a)·op(b)"],
      grads: true,
      seed: checkSeed(checks.length),
      tol: { webgpu: SUMS, wasm: WASM_MATMUL },
      matmul: { batchA: batch || 1, batchB: 1, m, n, k, transA, transB },
    });
  }

  {
    const rows = pick([1, 3, 17, 33]), cols = pick([17, 33, 100, 257]);
    checks.push({
      name: "softmax",
      shape: fmt([rows, cols]),
      leaves: [{ name: "x", shape: [rows, cols], map: (v) => v * 3 }],
      fn: (x) => [softmax(x, -1), softmax(x, 0)],
      outputs: ["softmax(x, -1)", "softmax(x, 0)"],
      grads: true,
      seed: checkSeed(checks.length),
      tol: { webgpu: SUMS, wasm: SAME_KERNEL },
    });
  }

  {
    const rows = pick([3, 5, 17]), vocab = pick([33, 100, 300]);
    const s = checkSeed(checks.length);
    const tokens = Array.from({ length: rows }, (_, i) => (i * 13 + s) % vocab);
    checks.push({
      name: "log-softmax + gather",
      shape: `${fmt([rows, vocab])} → ${fmt([rows])}`,
      leaves: [
        { name: "logits", shape: [rows, vocab], map: (v) => v * 3 },
        { name: "index", shape: [rows, 1], values: tokens, dtype: "i32" },
        { name: "tokens", shape: [rows], values: tokens, dtype: "i32" },
      ],
      fn: (z, idx, t) => [gather(logSoftmax(z, -1), idx, -1), logprobsOf(z, t)],
      outputs: ["logSoftmax(z).gather(idx)", "logprobsOf(z, tokens)"],
      grads: true,
      seed: s,
      tol: { webgpu: SUMS, wasm: SAME_KERNEL },
    });
  }

  {
    const rows = pick([3, 17, 33]), cols = pick([17, 33, 64, 70]);
    checks.push({
      name: "rmsNorm",
      shape: `${fmt([rows, cols])}, weight ${fmt([cols])}`,
      leaves: [
        { name: "x", shape: [rows, cols], map: (v) => v * 2 + 1 },
        { name: "weight", shape: [cols] },
      ],
      fn: (x, w) => rmsNorm(x, w, 1e-6),
      outputs: ["rmsNorm(x, w)"],
      grads: true,
      seed: checkSeed(checks.length),
      tol: { webgpu: SUMS, wasm: SAME_KERNEL },
    });
  }

  {
    const b = pick([1, 2]), h = pick([2, 3]), t = pick([5, 17]), d = pick([8, 16]);
    const rot = pick([d, d - 4]); // full or partial rotation
    const half = rot / 2;
    const start = pick([0, 100]);
    // Hugging Face tables: angle = position · theta^(−2i/rot), theta 1e4.
    const angles = Array.from({ length: t * half }, (_, e) => {
      const pos = start + Math.floor(e / half), i = e % half;
      return pos * 10000 ** (-(2 * i) / rot);
    });
    checks.push({
      name: "rope",
      shape: `${fmt([b, h, t, d])}, rot ${rot}, positions ${start}..${start + t - 1}`,
      leaves: [
        { name: "x", shape: [b, h, t, d] },
        { name: "cos", shape: [t, half], values: angles.map(Math.cos), grad: false },
        { name: "sin", shape: [t, half], values: angles.map(Math.sin), grad: false },
      ],
      fn: (x, c, sn) => rope(x, c, sn),
      outputs: ["rope(x)"],
      grads: true,
      seed: checkSeed(checks.length),
      tol: { webgpu: F32, wasm: SAME_KERNEL },
    });
  }

  {
    const batch = pick([1, 2]);
    const [heads, kvHeads] = pick([[4, 2], [2, 1], [6, 2]] as const);
    const tq = pick([5, 17, 33]), d = pick([8, 16, 64]);
    const masked = pick([false, true]);
    const s = checkSeed(checks.length);
    const mask = Array.from(
      { length: batch * tq },
      (_, i) => (i % tq === 0 || (i * 3 + s) % 4 !== 0 ? 1 : 0),
    );
    checks.push({
      name: "attention causal GQA",
      shape: `q ${fmt([batch, heads, tq, d])}, kv ${fmt([batch, kvHeads, tq, d])}` +
        (masked ? ", key padding" : ""),
      leaves: [
        { name: "q", shape: [batch, heads, tq, d] },
        { name: "k", shape: [batch, kvHeads, tq, d] },
        { name: "v", shape: [batch, kvHeads, tq, d] },
        { name: "mask", shape: [batch, tq], values: mask, dtype: "bool" },
      ],
      fn: (q, k, v, mk) =>
        scaledDotProductAttention(q, k, v, { causal: true, ...(masked ? { mask: mk } : {}) }),
      outputs: ["attention(q, k, v)"],
      grads: true,
      seed: s,
      tol: { webgpu: SUMS, wasm: WASM_ATTENTION },
    });
  }

  {
    const batch = pick([1, 2]);
    const [heads, kvHeads] = pick([[4, 2], [2, 1]] as const);
    const tk = pick([17, 33, 70]), d = pick([16, 64]);
    checks.push({
      name: "attention decode (KV prefix)",
      shape: `q ${fmt([batch, heads, 1, d])} over ${tk} cached keys ${
        fmt([batch, kvHeads, tk, d])
      }`,
      leaves: [
        { name: "q", shape: [batch, heads, tk, d], grad: false },
        { name: "k", shape: [batch, kvHeads, tk, d], grad: false },
        { name: "v", shape: [batch, kvHeads, tk, d], grad: false },
      ],
      // The decode step's query is the last query of the full causal product over the same keys.
      fn: (q, k, v) => [
        scaledDotProductAttention(q.narrow(2, tk - 1, 1), k, v, { causal: true }),
        scaledDotProductAttention(q, k, v, { causal: true }).narrow(2, tk - 1, 1),
      ],
      outputs: ["decode step", "last row of the full product"],
      grads: false,
      seed: checkSeed(checks.length),
      tol: { webgpu: SUMS, wasm: WASM_ATTENTION },
      identical: {
        outputs: [0, 1],
        backends: ["oracle", "wasm"],
        why: "KV-cache contract: a decode step equals its row of the full product bit for bit " +
          "(cpu/attention_matmul_test.ts)",
      },
    });
  }

  {
    const rows = pick([3, 17, 33]), cols = pick([5, 17, 100]);
    checks.push({
      name: "elementwise (gelu, sigmoid, silu, broadcast mul/add)",
      shape: `${fmt([rows, cols])} with ${fmt([cols])}`,
      leaves: [
        { name: "x", shape: [rows, cols], map: (v) => v * 3 },
        { name: "y", shape: [cols] },
      ],
      fn: (x, y) => [x.gelu().mul(y).add(x.sigmoid()), x.silu()],
      outputs: ["gelu(x)·y + sigmoid(x)", "silu(x)"],
      grads: true,
      seed: checkSeed(checks.length),
      tol: { webgpu: F32, wasm: SAME_KERNEL },
    });
  }

  {
    const shape = [pick([2, 3, 5]), pick([1, 17, 33]), pick([5, 17, 70])];
    checks.push({
      name: "reductions (sum, mean, max, var)",
      shape: fmt(shape),
      leaves: [{ name: "x", shape }],
      fn: (x) => [x.sum(1), x.mean(-1, true), x.max(0), x.var(-1), x.sum()],
      outputs: ["sum(x, 1)", "mean(x, -1, keepdim)", "max(x, 0)", "var(x, -1)", "sum(x)"],
      grads: true,
      seed: checkSeed(checks.length),
      tol: { webgpu: SUMS, wasm: SAME_KERNEL },
    });
  }
  return checks;
}
