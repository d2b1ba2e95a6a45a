/**
 * Where a playground tab computes: the CPU backend of `@rlvr/tensor` on its WebAssembly matmul,
 * or WebGPU, chosen from the page's backend knob, with a status line that says which runs and
 * why.
 *
 * Design decisions:
 * - **The tensor package decides `auto`**: `chooseDevice` is the decision `selectTrainDevice`
 *   (`apps/train/loop/device.ts`) makes for `deno task train`: WebGPU on a hardware adapter, the
 *   CPU when there is none or only a software one (SwiftShader, lavapipe: slower than the CPU
 *   backend). That file touches Deno (the Wayland probe, `device.json`), so its platform-neutral
 *   part is repeated here around the same function.
 * - **WebAssembly is `trainer.blas: wasm`**: the CPU backend with `blas: "wasm"`, on one thread
 *   (a page's matmul does not start workers), which computes the same bits as
 *   `deno task train --set trainer.blas=wasm` (the thread count never changes a bit).
 * - **A WebGPU request that cannot be met falls back to WebAssembly** instead of failing the
 *   page, and the status line says why: no `navigator.gpu` (the browser has WebGPU off, or the
 *   page is not a secure context: served over http from a host other than localhost), no
 *   adapter, or a device that failed to start.
 *
 * @module
 */

import {
  type Backend,
  chooseDevice,
  createCpuBackend,
  createWebGpuBackend,
  describeAdapter,
  isSoftwareAdapter,
} from "@rlvr/tensor";
import type { BackendChoice } from "./knobs.ts";

/** The config keys of a WebAssembly run: `deno task train --set` these to compute the same. */
export const WASM_OVERRIDES: readonly (readonly [string, string])[] = Object.freeze([
  ["trainer.device", "cpu"],
  ["trainer.blas", "wasm"],
]);

/** The config keys of a WebGPU run. */
export const WEBGPU_OVERRIDES: readonly (readonly [string, string])[] = Object.freeze([
  ["trainer.device", "webgpu"],
]);

/** The backend a tab runs on, and why. */
export interface PlaygroundBackend {
  /** The backend: every tensor of the run is created on it. */
  backend: Backend;
  /** What runs: `webgpu` or `wasm` (the CPU backend's WebAssembly matmul). */
  device: "webgpu" | "wasm";
  /** The knob's value. */
  choice: BackendChoice;
  /** The adapter (description, vendor, architecture), or null. */
  adapter: string | null;
  /** Why this backend (and, for a fallback, why not WebGPU). */
  reason: string;
  /** The status line: `WebGPU (adapter ...)` or `WebAssembly (wasm-relaxed matmul, ...)`. */
  line: string;
  /** The config keys of what ran (`trainer.device`, `trainer.blas`), for the reference run. */
  overrides: readonly (readonly [string, string])[];
  /** Releases the backend (destroys a WebGPU device; a no-op for the CPU). */
  release(): void;
}

/** Where to look for WebGPU: `navigator.gpu` and whether the page is a secure context. */
export interface GpuEnvironment {
  /** `navigator.gpu`, or undefined where the browser has none. */
  gpu: GPU | undefined;
  /** `isSecureContext` (WebGPU is exposed in secure contexts only). */
  secure: boolean;
}

/**
 * The environment of this page (or Deno): `navigator.gpu` and `isSecureContext`.
 *
 * @returns The environment.
 *
 * @example Usage
 * ```ts
 * import { gpuEnvironment } from "./backend.ts";
 * import assert from "node:assert/strict";
 * assert.equal(typeof gpuEnvironment().secure, "boolean");
 * ```
 */
export function gpuEnvironment(): GpuEnvironment {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  const secure = (globalThis as { isSecureContext?: boolean }).isSecureContext ?? true;
  return { gpu: nav?.gpu, secure };
}

/**
 * The CPU backend of a tab: WebAssembly matmul (`blas: "wasm"`), on the cores' threads where
 * it runs in a worker of a cross-origin isolated page, else one.
 *
 * @param choice The knob's value (recorded).
 * @param reason Why the CPU.
 * @returns The backend.
 * @throws Error when the engine has no WebAssembly SIMD, naming it.
 *
 * @example Usage
 * ```ts
 * import { wasmBackend } from "./backend.ts";
 * import assert from "node:assert/strict";
 * const b = wasmBackend("wasm", "requested");
 * assert.match(b.line, /^WebAssembly \(wasm-(relaxed|simd) matmul, \d+ threads?\): requested$/);
 * assert.deepEqual(b.overrides, [["trainer.device", "cpu"], ["trainer.blas", "wasm"]]);
 * ```
 */
export function wasmBackend(choice: BackendChoice, reason: string): PlaygroundBackend {
  let backend;
  try {
    // The matmul's default threads (the cores): helpers start where the caller may block (the
    // training worker of a cross-origin isolated page), else it runs on one.
    backend = createCpuBackend({ blas: "wasm" });
  } catch (e) {
    throw new Error(
      `WebAssembly backend: ${(e as Error).message}; this browser lacks WebAssembly SIMD ` +
        `(use a current Chromium, Firefox or Safari)`,
    );
  }
  return {
    backend,
    device: "wasm",
    choice,
    adapter: null,
    reason,
    line: `WebAssembly (${backend.matmulPath} matmul, ${backend.matmulThreads} thread${
      backend.matmulThreads === 1 ? "" : "s"
    }): ${reason}`,
    overrides: WASM_OVERRIDES,
    release: () => {},
  };
}

/** Why there is no adapter to ask for, or null when `navigator.gpu` exists. */
function noGpuReason(env: GpuEnvironment): string | null {
  if (env.gpu !== undefined) return null;
  return env.secure
    ? "this browser exposes no navigator.gpu (WebGPU is off or unsupported; Chromium: " +
      "--enable-unsafe-webgpu, or chrome://flags)"
    : "the page is not a secure context, and browsers expose WebGPU only to secure ones; open " +
      "it on http://localhost or http://127.0.0.1 (or https)";
}

/**
 * Picks and creates the backend of a knob's choice (see the module doc).
 *
 * @param choice `auto`, `webgpu` or `wasm`.
 * @param env Where WebGPU is looked for (default: this page's, {@link gpuEnvironment}).
 * @returns The backend and the status line.
 *
 * @example Usage
 * ```ts
 * import { pickBackend } from "./backend.ts";
 * import assert from "node:assert/strict";
 * const b = await pickBackend("webgpu", { gpu: undefined, secure: false });
 * assert.equal(b.device, "wasm"); // fell back, saying why
 * assert.match(b.reason, /^WebGPU was requested but the page is not a secure context/);
 * b.release();
 * ```
 */
export async function pickBackend(
  choice: BackendChoice,
  env: GpuEnvironment = gpuEnvironment(),
): Promise<PlaygroundBackend> {
  if (choice === "wasm") return wasmBackend(choice, "requested");
  const missing = noGpuReason(env);
  let adapter: GPUAdapter | null = null;
  let why = missing;
  if (why === null) {
    try {
      adapter = await env.gpu!.requestAdapter();
      if (adapter === null) why = "navigator.gpu found no adapter";
    } catch (e) {
      why = `requestAdapter failed: ${(e as Error).message}`;
    }
  }
  if (adapter === null) {
    return wasmBackend(
      choice,
      choice === "webgpu" ? `WebGPU was requested but ${why}` : `no WebGPU: ${why}`,
    );
  }
  const name = describeAdapter(adapter);
  const software = isSoftwareAdapter(adapter);
  if (choice === "auto") {
    const decision = chooseDevice("auto", adapter);
    if (decision.device === "cpu") {
      return wasmBackend(
        choice,
        decision.reason.replace(
          "set RLVR_DEVICE=webgpu to use it anyway",
          "choose WebGPU to use it anyway",
        ),
      );
    }
  }
  let gpu;
  try {
    gpu = await createWebGpuBackend({ adapter });
  } catch (e) {
    return wasmBackend(
      choice,
      `WebGPU was requested but the adapter ${name} gave no device: ${(e as Error).message}`,
    );
  }
  const kind = software ? "software" : "hardware";
  const reason = choice === "webgpu" ? `requested; ${kind} adapter` : `${kind} adapter`;
  return {
    backend: gpu,
    device: "webgpu",
    choice,
    adapter: name,
    reason,
    line: `WebGPU (${name}): ${reason}`,
    overrides: WEBGPU_OVERRIDES,
    release: () => gpu.destroy(),
  };
}
