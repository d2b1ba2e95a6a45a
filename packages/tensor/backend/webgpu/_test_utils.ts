/**
 * Test-only helpers of the WebGPU backend: one shared backend per test process, a `gpuTest`
 * registrar that skips without an adapter (and fails under `CI=true`), and the CPU-vs-WebGPU
 * parity harness. Private to the package's tests.
 *
 * Parity: a case is a list of host-side leaves and a function of tensors written against the
 * public ops. The same function runs on the CPU backend (f32 storage, the oracle) and on WebGPU
 * through `runParityCase` of `testing.ts` (the runner the playground's parity page uses too);
 * every output is compared, then `Σ_k sum(out_k · w_k)` with seeded random weights `w_k` is
 * back-propagated on both and every leaf gradient is compared. Both backends must also end with
 * the live-buffer counters they started with.
 *
 * @module
 */

import { createCpuBackend } from "../cpu/cpu_backend.ts";
import type { Backend } from "../types.ts";
import type { DType } from "../../dtype.ts";
import { Rng } from "../../random.ts";
import { sizeOf } from "../../shape.ts";
import type { Tensor } from "../../tensor.ts";
import { assertClose, type ParityRun, runParityCase } from "../../testing.ts";
import { createWebGpuBackend, type WebGpuBackend } from "./webgpu_backend.ts";

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

const inCi = env("CI") === "true" || env("CI") === "1";
const adapter = await navigator.gpu?.requestAdapter() ?? null;

/** The shared WebGPU backend, or null when `navigator.gpu` found no adapter. */
export const gpu: WebGpuBackend | null = adapter === null
  ? null
  : await createWebGpuBackend({ adapter });

if (gpu === null && !inCi) {
  console.warn(
    "webgpu tests skipped: navigator.gpu found no adapter (Mesa's llvmpipe provides a software " +
      "one: Debian packages libegl-mesa0 and libgl1-mesa-dri for wgpu's GL backend, or " +
      "mesa-vulkan-drivers and libvulkan1 for lavapipe)",
  );
}

/** The CPU oracle (f32 storage, rounding like the GPU). */
export const cpu: Backend = createCpuBackend();

/**
 * Registers a WebGPU test: skipped when there is no adapter, failing instead under `CI=true`.
 */
export function gpuTest(name: string, fn: (gpu: WebGpuBackend) => Promise<void> | void): void {
  Deno.test({
    name: `webgpu: ${name}`,
    ignore: gpu === null && !inCi,
    // The shared device lives across tests; its `lost` promise is a pending op by design.
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      if (gpu === null) {
        throw new Error(
          "CI=true but navigator.gpu found no adapter: the WebGPU tests must run in CI " +
            "(install Mesa: libegl-mesa0 and libgl1-mesa-dri, or mesa-vulkan-drivers and libvulkan1)",
        );
      }
      await fn(gpu);
    },
  });
}

/** A leaf tensor of a parity case, built from host values on each backend. */
export interface Leaf {
  /** Shape. */
  shape: readonly number[];
  /** Values (default: seeded normals through `map`). */
  values?: readonly number[];
  /** Element type (default f32). */
  dtype?: DType;
  /** Whether gradients are compared for it (default: true for f32). */
  grad?: boolean;
  /** Maps each seeded normal (to keep values inside an op's domain). */
  map?: (v: number) => number;
}

/** Tolerances of one comparison. */
export interface Tol {
  /** Relative tolerance. */
  rtol: number;
  /** Absolute tolerance. */
  atol: number;
}

/** Default f32 tolerances: rtol 1e-4, atol 1e-5. */
export const F32: Tol = { rtol: 1e-4, atol: 1e-5 };

/** A parity case. */
export interface ParityCase {
  /** Name in failure messages. */
  name: string;
  /** Leaves, created on each backend. */
  leaves: readonly Leaf[];
  /** The computation, in public ops. */
  fn: (...xs: Tensor[]) => Tensor | Tensor[];
  /** Seed of the leaf values and the upstream weights (default 0). */
  seed?: number;
  /** Forward tolerance (default {@link F32}). */
  tol?: Tol;
  /** Gradient tolerance (default: the forward one). */
  gradTol?: Tol;
}

function leafValues(leaf: Leaf, rng: Rng): number[] {
  if (leaf.values !== undefined) return [...leaf.values];
  const map = leaf.map ?? ((v: number) => v);
  return Array.from({ length: sizeOf(leaf.shape) }, () => map(rng.normal()));
}

/** Runs `c` on `backend` through the package's shared parity runner. */
function runOn(backend: Backend, c: ParityCase): Promise<ParityRun> {
  const seed = c.seed ?? 0;
  const rng = new Rng(seed);
  return runParityCase(backend, {
    name: c.name,
    leaves: c.leaves.map((l) => ({
      values: leafValues(l, rng),
      shape: l.shape,
      dtype: l.dtype ?? "f32",
      requiresGrad: (l.dtype ?? "f32") === "f32" && l.grad !== false,
    })),
    fn: c.fn,
    seed,
  });
}

/** Runs `c` on the CPU oracle and on `gpu` and compares outputs and leaf gradients. */
export async function assertParity(gpu: WebGpuBackend, c: ParityCase): Promise<void> {
  const want = await runOn(cpu, c);
  const got = await runOn(gpu, c);
  const tol = c.tol ?? F32;
  const gradTol = c.gradTol ?? tol;
  want.outs.forEach((w, k) => {
    const g = got.outs[k]!;
    if (g.constructor !== w.constructor) {
      throw new Error(
        `${c.name}: output ${k} is a ${g.constructor.name} on WebGPU, ${w.constructor.name} on CPU`,
      );
    }
    assertClose(g, w, { ...tol, msg: `${c.name}: output ${k}` });
  });
  want.grads.forEach((w, k) => {
    const g = got.grads[k]!;
    if ((w === null) !== (g === null)) {
      throw new Error(`${c.name}: leaf ${k} has a gradient on only one backend`);
    }
    if (w !== null) assertClose(g!, w, { ...gradTol, msg: `${c.name}: grad of leaf ${k}` });
  });
}

/** Ragged sizes: not multiples of the 16-wide matmul tile, the 64-lane rows or vector widths. */
export const RAGGED = [1, 3, 5, 17, 33] as const;
