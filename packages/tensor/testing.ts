/**
 * Test helpers: `assertClose` for numbers and arrays with a report of the worst element,
 * `gradcheck`, which compares autograd gradients with central finite differences,
 * `runParityCase`, which runs one backend-vs-oracle case on one backend (outputs and leaf
 * gradients read back, buffer leaks refused), and `webgpuSuite`, which registers tests on a
 * WebGPU backend that are skipped without an adapter, except under `CI=true`, where they fail (so
 * CI cannot lose its GPU coverage silently).
 *
 * Run gradient checks on `createCpuBackend({ precision: "f64" })`: with float64 arithmetic a
 * step of 1e-6 gives about 1e-8 relative error, so tolerances can stay tight (1e-5) and a wrong
 * backward cannot hide behind rounding.
 *
 * @module
 */

import type { Backend, HostArray } from "./backend/types.ts";
import { selectBackend } from "./backend/select.ts";
import { keep, noGrad, tidy, withBackend } from "./runtime.ts";
import { tensor } from "./creation.ts";
import type { DType } from "./dtype.ts";
import { Rng } from "./random.ts";
import type { Tensor } from "./tensor.ts";

export type { Backend, DType, HostArray, Tensor };

/** Tolerances: `|a − e| <= atol + rtol·|e|` per element. */
export interface CloseOptions {
  /** Relative tolerance (default 1e-5). */
  rtol?: number;
  /** Absolute tolerance (default 1e-8). */
  atol?: number;
  /** Prefix for the failure message. */
  msg?: string;
}

/** Values {@link assertClose} compares: numbers, booleans, (typed) arrays, nested arrays. */
export type Numeric = number | boolean | ArrayLike<number> | readonly Numeric[];

function flat(
  x: Numeric,
  out: number[] = [],
  shape: number[] = [],
  depth = 0,
): { values: number[]; shape: number[] } {
  if (typeof x === "number" || typeof x === "boolean") {
    out.push(Number(x));
  } else {
    const arr = x as ArrayLike<Numeric>;
    if (shape.length === depth) shape.push(arr.length);
    for (let i = 0; i < arr.length; i++) flat(arr[i]!, out, shape, depth + 1);
  }
  return { values: out, shape };
}

/**
 * Asserts that two numbers or (nested / typed) arrays agree elementwise within tolerances.
 * NaN matches NaN and infinities must match exactly. On failure the message names the worst
 * element, both values, its error and the count of failing elements.
 *
 * @example Usage
 * ```ts
 * import { assertClose } from "@rlvr/tensor/testing";
 * assertClose([1, 2.0000001], [1, 2], { rtol: 1e-6 });
 * ```
 */
export function assertClose(actual: Numeric, expected: Numeric, options: CloseOptions = {}): void {
  const rtol = options.rtol ?? 1e-5;
  const atol = options.atol ?? 1e-8;
  const prefix = options.msg ? `${options.msg}: ` : "";
  const a = flat(actual);
  const e = flat(expected);
  if (a.values.length !== e.values.length) {
    throw new Error(
      `${prefix}assertClose: sizes differ: actual has ${a.values.length} elements [${a.shape}], expected ${e.values.length} [${e.shape}]`,
    );
  }
  let worst = -1;
  let worstExcess = 0;
  let failures = 0;
  for (let i = 0; i < a.values.length; i++) {
    const x = a.values[i]!;
    const y = e.values[i]!;
    let excess: number;
    if (Number.isNaN(x) || Number.isNaN(y)) {
      excess = Number.isNaN(x) && Number.isNaN(y) ? 0 : Infinity;
    } else if (!Number.isFinite(x) || !Number.isFinite(y)) excess = x === y ? 0 : Infinity;
    else excess = Math.abs(x - y) - (atol + rtol * Math.abs(y));
    if (excess > 0) {
      failures++;
      if (worst < 0 || excess > worstExcess) {
        worst = i;
        worstExcess = excess;
      }
    }
  }
  if (failures > 0) {
    const x = a.values[worst]!;
    const y = e.values[worst]!;
    throw new Error(
      `${prefix}assertClose: ${failures} of ${a.values.length} elements differ (rtol=${rtol}, atol=${atol}); ` +
        `worst at flat index ${worst}: actual ${x}, expected ${y}, |diff| ${Math.abs(x - y)}`,
    );
  }
}

/** Options of {@link gradcheck}. */
export interface GradcheckOptions extends CloseOptions {
  /** Finite-difference step (default 1e-6; use an f64 backend). */
  eps?: number;
  /** Seed of the random upstream gradient (default 0). */
  seed?: number;
}

/**
 * Checks the gradients of `fn` at `inputs` against central finite differences.
 *
 * The scalar checked is `Σ fn(...inputs) · w` with a seeded random `w`, so every output element
 * and every input element is exercised. Only inputs with `requiresGrad` are perturbed; others
 * (index tensors, masks) are passed through unchanged.
 *
 * @example Usage
 * ```ts
 * import { createCpuBackend, tensor, withBackend } from "@rlvr/tensor";
 * import { gradcheck } from "@rlvr/tensor/testing";
 * await withBackend(createCpuBackend({ precision: "f64" }), () =>
 *   gradcheck((x) => x.mul(x).exp(), [tensor([0.3, -0.2], { requiresGrad: true })])
 * );
 * ```
 */
export async function gradcheck(
  fn: (...xs: Tensor[]) => Tensor,
  inputs: readonly Tensor[],
  options: GradcheckOptions = {},
): Promise<void> {
  const eps = options.eps ?? 1e-6;
  const rng = new Rng(options.seed ?? 0);
  for (const x of inputs) {
    x.grad?.dispose();
    x.grad = null;
  }
  // One tidy scope frees fn's intermediates and the y0·w product; backward holds what it
  // saved by reference. w is kept for the finite differences below.
  let w: Tensor | undefined;
  const loss = tidy(() => {
    const y0 = fn(...inputs);
    w = keep(
      tensor(Array.from({ length: y0.size }, () => rng.uniform() * 2 - 1), {
        shape: y0.shape,
        backend: y0.backend,
      }),
    );
    return y0.mul(w).sum();
  });
  loss.backward();
  loss.dispose();
  const weights = w!;
  const objective = (xs: Tensor[]): Promise<number> => {
    const l = noGrad(() => tidy(() => fn(...xs).mul(weights).sum()));
    return l.item().finally(() => l.dispose());
  };
  for (let i = 0; i < inputs.length; i++) {
    const x = inputs[i]!;
    if (!x.requiresGrad) continue;
    const base = Float64Array.from(await x.data());
    const numeric = new Float64Array(base.length);
    for (let j = 0; j < base.length; j++) {
      const shifted = async (delta: number) => {
        const v = base.slice();
        v[j] = v[j]! + delta;
        const xj = tensor(v, { shape: x.shape, backend: x.backend });
        const xs = inputs.map((t, k) => (k === i ? xj : t));
        try {
          return await objective(xs);
        } finally {
          xj.dispose();
        }
      };
      numeric[j] = ((await shifted(eps)) - (await shifted(-eps))) / (2 * eps);
    }
    const analytic = x.grad === null ? new Float64Array(base.length) : await x.grad.data();
    assertClose(analytic, numeric, {
      rtol: options.rtol ?? 1e-5,
      atol: options.atol ?? 1e-6,
      msg: `${options.msg ?? "gradcheck"} input ${i} ${x}`,
    });
  }
  weights.dispose();
}

/** A leaf of a {@link ParityCase}: host values and the tensor built from them. */
export interface ParityLeaf {
  /** The values, row-major. */
  values: readonly number[];
  /** The shape. */
  shape: readonly number[];
  /** The element type (default f32). */
  dtype?: DType;
  /** Whether the leaf records a gradient (default false). */
  requiresGrad?: boolean;
}

/** One computation run by {@link runParityCase}: the same on the oracle and on each backend. */
export interface ParityCase {
  /** Names the case in the leak error. */
  name: string;
  /** The leaves, built on the backend in this order and passed to `fn`. */
  leaves: readonly ParityLeaf[];
  /** The computation, written against the public ops. */
  fn: (...xs: Tensor[]) => Tensor | Tensor[];
  /**
   * The case's seed: the upstream weights are drawn from `new Rng(seed + 7919)`, an offset that
   * keeps them apart from leaf values a caller draws from `new Rng(seed)`.
   */
  seed: number;
}

/** What {@link runParityCase} read back from one backend. */
export interface ParityRun {
  /** Every output of `fn`, in order. */
  outs: HostArray[];
  /** Each leaf's gradient, or null for a leaf without one. */
  grads: (HostArray | null)[];
  /** The upstream weights drawn, one array per differentiable output (empty without backward). */
  weights: number[][];
}

/**
 * Runs one parity case on `backend`: builds the leaves, runs `fn` in a `tidy` scope (its
 * intermediates die with the scope; what backward needs is kept alive by the graph), and, when
 * some leaf requires a gradient and some f32 output is differentiable, back-propagates
 * `Σ_k sum(out_k · w_k)` with seeded weights `w_k` in [−1, 1), so every output element reaches
 * the gradients. The outputs and leaf gradients are copied to the host, everything is disposed,
 * and the backend must end with as many live buffers as it started with. Run the same case on an
 * oracle and on the backend under test and compare the results (with {@link assertClose}): the
 * weights are the same on both.
 *
 * @param backend The backend to run on (made current for the run).
 * @param c The leaves, the computation and the seed.
 * @returns The outputs, the leaf gradients and the weights drawn.
 * @throws Error naming the case and the backend when a buffer is left alive.
 *
 * @example Usage
 * ```ts
 * import { createCpuBackend } from "@rlvr/tensor";
 * import { assertClose, type ParityCase, runParityCase } from "@rlvr/tensor/testing";
 * import assert from "node:assert/strict";
 * const square: ParityCase = {
 *   name: "square",
 *   leaves: [{ values: [1, 2, 3], shape: [3], requiresGrad: true }],
 *   fn: (x) => x.mul(x),
 *   seed: 1,
 * };
 * const want = await runParityCase(createCpuBackend({ precision: "f64" }), square);
 * const got = await runParityCase(createCpuBackend(), square);
 * assertClose(got.outs[0]!, want.outs[0]!);
 * assertClose(got.grads[0]!, want.grads[0]!); // 2·w·x, the same w on both
 * assert.deepEqual(got.weights, want.weights);
 * ```
 */
export async function runParityCase(backend: Backend, c: ParityCase): Promise<ParityRun> {
  const before = backend.memory().liveBuffers;
  const weights: number[][] = [];
  const result = await withBackend(backend, async () => {
    const leaves = c.leaves.map((l) =>
      tensor(l.values, {
        shape: l.shape,
        dtype: l.dtype ?? "f32",
        backend,
        requiresGrad: l.requiresGrad ?? false,
      })
    );
    const raw = tidy(() => c.fn(...leaves));
    const outs = Array.isArray(raw) ? raw : [raw];
    const wrng = new Rng(c.seed + 7919);
    const diff = outs.filter((o) => o.dtype === "f32" && o.requiresGrad);
    if (diff.length > 0 && leaves.some((l) => l.requiresGrad)) {
      let loss: Tensor | null = null;
      for (const o of diff) {
        const wv = Array.from({ length: o.size }, () => wrng.uniform() * 2 - 1);
        weights.push(wv);
        const w = tensor(wv, { shape: o.shape, backend });
        const prod = o.mul(w);
        const s = prod.sum();
        prod.dispose();
        w.dispose();
        if (loss === null) loss = s;
        else {
          const next: Tensor = loss.add(s);
          loss.dispose();
          s.dispose();
          loss = next;
        }
      }
      loss!.backward();
      loss!.dispose();
    }
    const hostOuts: HostArray[] = [];
    for (const o of outs) hostOuts.push(await o.data());
    const grads: (HostArray | null)[] = [];
    for (const l of leaves) grads.push(l.grad === null ? null : await l.grad.data());
    for (const o of outs) o.dispose();
    for (const l of leaves) l.dispose();
    return { outs: hostOuts, grads };
  });
  const after = backend.memory().liveBuffers;
  if (after !== before) {
    throw new Error(
      `${c.name}: ${backend.name} leaked ${after - before} buffers (live before ${before}, ` +
        `after ${after}); some tensor of the case is not disposed`,
    );
  }
  return { ...result, weights };
}

/** What {@link webgpuSuite} returns. */
export interface WebGpuSuite {
  /** The shared WebGPU backend, or null when none could be created. */
  backend: Backend | null;
  /** Why there is no backend ("" when there is one). */
  reason: string;
  /** Whether `CI` is `true` or `1` (then a missing backend fails the suite's tests). */
  inCi: boolean;
  /**
   * Registers `Deno.test` `webgpu: <name>`, run with the backend; ignored without one, except
   * under CI, where it fails with {@link WebGpuSuite.reason}.
   */
  test(name: string, fn: (gpu: Backend) => Promise<void> | void): void;
}

function envFlag(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env: treat as unset
  }
}

/**
 * Creates one WebGPU backend for a test module (call it with top-level `await`, so only modules
 * with GPU tests touch `navigator.gpu`) and a `test` function that registers tests on it. Without
 * an adapter the tests are ignored with one warning naming `label`, except under `CI=true`, where
 * they fail. The backend lives for the whole module, so its tests turn Deno's op and resource
 * sanitizers off (the device's `lost` promise is pending by design).
 *
 * @example Usage
 * ```ts
 * import { webgpuSuite } from "@rlvr/tensor/testing";
 * import assert from "node:assert/strict";
 * const suite = await webgpuSuite("example");
 * assert.equal(suite.backend === null, suite.reason !== "");
 * ```
 *
 * @param label Names the module in the skip warning.
 * @returns The backend (or the reason there is none) and the test registrar.
 */
export async function webgpuSuite(label: string): Promise<WebGpuSuite> {
  const inCi = envFlag("CI") === "true" || envFlag("CI") === "1";
  let backend: Backend | null = null;
  let reason = "";
  try {
    backend = await selectBackend({ device: "webgpu", quiet: true });
  } catch (e) {
    reason = e instanceof Error ? e.message : String(e);
    if (!inCi) console.warn(`${label}: WebGPU tests skipped: ${reason}`);
  }
  return {
    backend,
    reason,
    inCi,
    test(name, fn) {
      Deno.test({
        name: `webgpu: ${name}`,
        ignore: backend === null && !inCi,
        sanitizeOps: false,
        sanitizeResources: false,
        fn: async () => {
          if (backend === null) throw new Error(`CI=true but no WebGPU backend: ${reason}`);
          await fn(backend);
        },
      });
    },
  };
}
