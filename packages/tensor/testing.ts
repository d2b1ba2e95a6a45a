/**
 * Test helpers: `assertClose` for numbers and arrays with a report of the worst element,
 * `gradcheck`, which compares autograd gradients with central finite differences, and
 * `webgpuSuite`, which registers tests on a WebGPU backend that are skipped without an adapter,
 * except under `CI=true`, where they fail (so CI cannot lose its GPU coverage silently).
 *
 * Run gradient checks on `createCpuBackend({ precision: "f64" })`: with float64 arithmetic a
 * step of 1e-6 gives about 1e-8 relative error, so tolerances can stay tight (1e-5) and a wrong
 * backward cannot hide behind rounding.
 *
 * @module
 */

import type { Backend } from "./backend/types.ts";
import { selectBackend } from "./backend/select.ts";
import { keep, noGrad, tidy } from "./runtime.ts";
import { tensor } from "./creation.ts";
import { Rng } from "./random.ts";
import type { Tensor } from "./tensor.ts";

export type { Backend, Tensor };

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
