/**
 * Running the parity checks (`checks.ts`): each check on the oracle and on every backend
 * present, outputs and leaf gradients compared, one result row per comparison.
 *
 * A run of a check on one backend is `runParityCase` of `@rlvr/tensor/testing`, the runner of
 * that package's WebGPU parity tests: the leaves are built from seeded host values, the
 * computation runs in a `tidy` scope, `Σ_k sum(out_k · w_k)` with seeded weights `w_k` in
 * [−1, 1) is back-propagated, the outputs and gradients are read back, and the backend must end
 * with as many live buffers as it started with.
 *
 * @module
 */

import { type Backend, type HostArray, Rng } from "@rlvr/tensor";
import { type ParityRun, runParityCase } from "@rlvr/tensor/testing";
import type { CheckedBackend, Leaf, ParityCheck } from "./checks.ts";
import { compareValues, describeTolerance, type Tolerance } from "./compare.ts";
import { matmulLimits } from "./matmul_bound.ts";

/** One comparison of a parity run. */
export interface ParityResult {
  /** The check's name. */
  check: string;
  /** The backend compared with the oracle (`oracle` for a bit-identity row of the oracle). */
  backend: CheckedBackend | "oracle";
  /** What was compared: `out <name>`, `grad <leaf>`, `identical: ...` or `error`. */
  what: string;
  /** The check's shapes in words. */
  shape: string;
  /** Max absolute error (null when not finite). */
  maxAbs: number | null;
  /** Max relative error over elements not near zero (see `compare.ts`). */
  maxRel: number | null;
  /** Max error / allowed (at most 1 passes). */
  ratio: number | null;
  /** The tolerance, in words, with its source. */
  tolerance: string;
  /** Whether it passed. */
  pass: boolean;
  /** Why it failed ("" when it passed). */
  detail: string;
  /** Wall time of the check on this backend (ms; forward, backward and read-back). */
  ms: number;
}

/** The backends of a run; `wasm` and `webgpu` are skipped when null. */
export interface ParityBackends {
  /** The oracle (the CPU backend on its TypeScript kernels). */
  oracle: Backend;
  /** The CPU backend with the WebAssembly SIMD matmul, or null. */
  wasm: Backend | null;
  /** The WebGPU backend, or null. */
  webgpu: Backend | null;
}

/** A check's run on one backend, with its wall time (ms). */
interface Values extends ParityRun {
  ms: number;
}

function leafValues(leaf: Leaf, rng: Rng): number[] {
  if (leaf.values !== undefined) return [...leaf.values];
  const map = leaf.map ?? ((v: number) => v);
  const size = leaf.shape.reduce((a, b) => a * b, 1);
  return Array.from({ length: size }, () => map(rng.normal()));
}

/** The leaf values of a check (the same on every backend). */
function hostLeaves(check: ParityCheck): number[][] {
  const rng = new Rng(check.seed);
  return check.leaves.map((l) => leafValues(l, rng));
}

async function runOn(backend: Backend, check: ParityCheck): Promise<Values> {
  const t0 = performance.now();
  const values = hostLeaves(check);
  const run = await runParityCase(backend, {
    name: check.name,
    leaves: check.leaves.map((l, i) => ({
      values: values[i]!,
      shape: l.shape,
      dtype: l.dtype ?? "f32",
      requiresGrad: check.grads && (l.dtype ?? "f32") === "f32" && l.grad !== false,
    })),
    fn: check.fn,
    seed: check.seed,
  });
  return { ...run, ms: performance.now() - t0 };
}

/** Per-element limits of a `bound` tolerance: [outputs..., gradients...]. */
function limitsOf(check: ParityCheck, weights: number[][]): {
  outs: Float64Array[];
  grads: (Float64Array | null)[];
} {
  if (check.matmul === undefined) {
    throw new Error(`${check.name}: a "bound" tolerance needs the check's matmul geometry`);
  }
  const leaves = hostLeaves(check);
  const g = weights[0] ?? new Array(check.matmul.m * check.matmul.n).fill(0);
  const lim = matmulLimits(check.matmul, leaves[0]!, leaves[1]!, g);
  return { outs: [lim.out], grads: [lim.gradA, lim.gradB] };
}

function identical(a: HostArray, b: HostArray): { pass: boolean; maxAbs: number; detail: string } {
  if (a.length !== b.length) {
    return { pass: false, maxAbs: NaN, detail: `lengths differ: ${a.length} vs ${b.length}` };
  }
  let maxAbs = 0;
  let first = -1;
  for (let i = 0; i < a.length; i++) {
    if (!Object.is(a[i], b[i])) {
      maxAbs = Math.max(maxAbs, Math.abs(a[i]! - b[i]!));
      if (first < 0) first = i;
    }
  }
  return first < 0 ? { pass: true, maxAbs: 0, detail: "" } : {
    pass: false,
    maxAbs,
    detail: `first difference at flat index ${first}: ${a[first]} vs ${b[first]}`,
  };
}

/**
 * Runs `checks` on the oracle and on each backend present and compares. Never throws for a
 * failing check: an error becomes a failing `error` row naming it.
 *
 * @param checks The checks (`parityChecks(seed)`).
 * @param backends The oracle and the backends to compare with it.
 * @param onResult Called with each row as soon as it exists (for live display).
 * @returns Every row, in order.
 *
 * @example Usage
 * ```ts
 * import { createCpuBackend } from "@rlvr/tensor";
 * import { parityChecks } from "./checks.ts";
 * import { runParity } from "./run.ts";
 * import assert from "node:assert/strict";
 * const oracle = createCpuBackend({ kernels: "ts" });
 * const wasm = createCpuBackend({ kernels: "auto", blas: "wasm", threads: 1 });
 * const softmax = parityChecks(1).filter((c) => c.name === "softmax");
 * const rows = await runParity(softmax, { oracle, wasm, webgpu: null });
 * assert.ok(rows.length > 0 && rows.every((r) => r.pass));
 * ```
 */
export async function runParity(
  checks: readonly ParityCheck[],
  backends: ParityBackends,
  onResult: (row: ParityResult) => void = () => {},
): Promise<ParityResult[]> {
  const rows: ParityResult[] = [];
  const emit = (row: ParityResult) => {
    rows.push(row);
    onResult(row);
  };
  for (const check of checks) {
    const base = { check: check.name, shape: check.shape };
    let want: Values;
    try {
      want = await runOn(backends.oracle, check);
    } catch (e) {
      emit({
        ...base,
        backend: "oracle",
        what: "error",
        maxAbs: null,
        maxRel: null,
        ratio: null,
        tolerance: "",
        pass: false,
        detail: `the oracle failed: ${(e as Error).stack ?? e}`,
        ms: 0,
      });
      continue;
    }
    const identity = (backend: "oracle" | CheckedBackend, v: Values) => {
      if (check.identical === undefined || !check.identical.backends.includes(backend)) return;
      const [i, j] = check.identical.outputs;
      const r = identical(v.outs[i]!, v.outs[j]!);
      emit({
        ...base,
        backend,
        what: `identical: ${check.outputs[i]} = ${check.outputs[j]}`,
        maxAbs: Number.isFinite(r.maxAbs) ? r.maxAbs : null,
        maxRel: null,
        ratio: r.pass ? 0 : null,
        tolerance: `bit for bit (${check.identical.why})`,
        pass: r.pass,
        detail: r.detail,
        ms: v.ms,
      });
    };
    identity("oracle", want);
    for (const name of ["wasm", "webgpu"] as const) {
      const backend = backends[name];
      if (backend === null) continue;
      const tol: Tolerance = check.tol[name];
      let got: Values;
      try {
        got = await runOn(backend, check);
      } catch (e) {
        emit({
          ...base,
          backend: name,
          what: "error",
          maxAbs: null,
          maxRel: null,
          ratio: null,
          tolerance: describeTolerance(tol),
          pass: false,
          detail: (e as Error).stack ?? String(e),
          ms: 0,
        });
        continue;
      }
      const limits = tol.kind === "bound" ? limitsOf(check, want.weights) : null;
      const row = (what: string, a: HostArray, e: HostArray, allowed?: Float64Array) => {
        const typeOk = a.constructor === e.constructor;
        const c = compareValues(a, e, tol, allowed, `${check.name} ${name} ${what}`);
        emit({
          ...base,
          backend: name,
          what,
          maxAbs: c.maxAbs,
          maxRel: c.maxRel,
          ratio: c.ratio,
          tolerance: describeTolerance(tol),
          pass: c.pass && typeOk,
          detail: typeOk
            ? c.detail
            : `${what} is a ${a.constructor.name} on ${name}, a ${e.constructor.name} on the oracle`,
          ms: got.ms,
        });
      };
      want.outs.forEach((e, k) => {
        row(`out ${check.outputs[k] ?? k}`, got.outs[k]!, e, limits?.outs[k] ?? undefined);
      });
      want.grads.forEach((e, k) => {
        const g = got.grads[k] ?? null;
        const leaf = check.leaves[k]!.name;
        if ((e === null) !== (g === null)) {
          emit({
            ...base,
            backend: name,
            what: `grad ${leaf}`,
            maxAbs: null,
            maxRel: null,
            ratio: null,
            tolerance: describeTolerance(tol),
            pass: false,
            detail: `leaf ${leaf} has a gradient on only one of ${name} and the oracle`,
            ms: got.ms,
          });
        } else if (e !== null) row(`grad ${leaf}`, g!, e, limits?.grads[k] ?? undefined);
      });
      identity(name, got);
    }
  }
  return rows;
}
