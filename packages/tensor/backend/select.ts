/**
 * Choosing the execution backend: WebGPU on a hardware adapter, the CPU otherwise.
 *
 * Design: `auto` (the default) picks WebGPU only for a hardware adapter. A software adapter
 * (Mesa's llvmpipe/lavapipe, SwiftShader, WARP, anything flagged `isFallbackAdapter`) runs the
 * same WGSL on the CPU through a shader JIT and is slower than the plain CPU backend, so `auto`
 * takes the CPU there; `webgpu` forces WebGPU even on a software adapter (the WebGPU tests do
 * this, which is how CI checks every kernel without a GPU) and fails when there is no adapter;
 * `cpu` never touches WebGPU. The choice comes from the `device` option, else the environment
 * variable `RLVR_DEVICE`, else `auto`, and the decision is logged as one line on stderr (pass
 * `quiet: true` to suppress it) so that a run's log says where it ran and why.
 *
 * @module
 */

import { createCpuBackend } from "./cpu/cpu_backend.ts";
import type { Backend } from "./types.ts";
import { describeAdapter, isSoftwareAdapter } from "./webgpu/device.ts";
import { createWebGpuBackend, type WebGpuBackendOptions } from "./webgpu/webgpu_backend.ts";

/**
 * Where to run: `auto` (WebGPU on a hardware adapter, else CPU), `webgpu` or `cpu`.
 *
 * @example Usage
 * ```ts
 * import { type DeviceChoice, selectBackend } from "@rlvr/tensor";
 * const device: DeviceChoice = "cpu";
 * const backend = await selectBackend({ device, quiet: true });
 * console.log(backend.name);
 * ```
 */
export type DeviceChoice = "auto" | "webgpu" | "cpu";

/**
 * The valid values of {@link DeviceChoice}, in the order error messages list them.
 *
 * @example Usage
 * ```ts
 * import { DEVICE_CHOICES } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(DEVICE_CHOICES, ["auto", "webgpu", "cpu"]);
 * ```
 */
export const DEVICE_CHOICES: readonly DeviceChoice[] = Object.freeze(["auto", "webgpu", "cpu"]);

/**
 * Options of {@link selectBackend}.
 *
 * @example Usage
 * ```ts
 * import { selectBackend, type SelectBackendOptions } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const options: SelectBackendOptions = { device: "cpu", log: (l) => lines.push(l) };
 * await selectBackend(options);
 * assert.deepEqual(lines, ["[rlvr] device: cpu (cpu via options.device: requested)"]);
 * ```
 */
export interface SelectBackendOptions {
  /** The choice (default: env `RLVR_DEVICE`, else `"auto"`). */
  device?: DeviceChoice | string;
  /** Suppress the one-line log of the decision (default false). */
  quiet?: boolean;
  /** Where the decision line goes (default `console.error`, i.e. stderr). */
  log?: (line: string) => void;
  /** Options for the WebGPU backend when it is chosen. */
  webgpu?: WebGpuBackendOptions;
}

/**
 * What {@link chooseDevice} decided.
 *
 * @example Usage
 * ```ts
 * import { chooseDevice, type DeviceDecision } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const d: DeviceDecision = chooseDevice("cpu", null);
 * assert.deepEqual(d, { device: "cpu", reason: "requested" });
 * ```
 */
export interface DeviceDecision {
  /** The backend to create. */
  device: "webgpu" | "cpu";
  /** Why, for the log line. */
  reason: string;
}

function envDevice(): string | undefined {
  try {
    const v = (globalThis as { Deno?: typeof Deno }).Deno?.env.get("RLVR_DEVICE");
    return v === "" ? undefined : v;
  } catch {
    return undefined; // no env permission: behave as if unset
  }
}

/**
 * Validates a device choice; `source` names where it came from in the error message.
 *
 * @param value The requested device.
 * @param source Where it came from (e.g. `"RLVR_DEVICE"`).
 * @returns The value as a {@link DeviceChoice}.
 *
 * @example Usage
 * ```ts
 * import { parseDeviceChoice } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(parseDeviceChoice("cpu"), "cpu");
 * assert.throws(() => parseDeviceChoice("gpu", "RLVR_DEVICE"), /got "gpu" \(from RLVR_DEVICE\)/);
 * ```
 */
export function parseDeviceChoice(value: string, source = "options.device"): DeviceChoice {
  if ((DEVICE_CHOICES as readonly string[]).includes(value)) return value as DeviceChoice;
  throw new RangeError(
    `selectBackend: device must be one of ${DEVICE_CHOICES.map((c) => `"${c}"`).join(", ")}, ` +
      `got ${JSON.stringify(value)} (from ${source})`,
  );
}

/**
 * The pure decision behind {@link selectBackend}: which backend a choice gives with this
 * adapter (`null` when `navigator.gpu` found none). Throws for `webgpu` without an adapter.
 *
 * @param choice The requested device.
 * @param adapter The default adapter, or null.
 * @returns The backend to create and why.
 *
 * @example Usage
 * ```ts
 * import { chooseDevice } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(chooseDevice("auto", null).device, "cpu");
 * const gpu = await navigator.gpu?.requestAdapter();
 * if (gpu) assert.equal(chooseDevice("webgpu", gpu).device, "webgpu");
 * ```
 */
export function chooseDevice(choice: DeviceChoice, adapter: GPUAdapter | null): DeviceDecision {
  if (choice === "cpu") return { device: "cpu", reason: "requested" };
  if (adapter === null) {
    if (choice === "webgpu") {
      throw new Error(
        'selectBackend: device "webgpu" was requested but navigator.gpu found no adapter; ' +
          'use "auto" or "cpu", or install a WebGPU driver (Mesa lavapipe provides a software one)',
      );
    }
    return { device: "cpu", reason: "navigator.gpu found no WebGPU adapter" };
  }
  const name = describeAdapter(adapter);
  if (choice === "webgpu") {
    const kind = isSoftwareAdapter(adapter) ? "software" : "hardware";
    return { device: "webgpu", reason: `requested; ${kind} adapter ${name}` };
  }
  if (isSoftwareAdapter(adapter)) {
    return {
      device: "cpu",
      reason: `the only WebGPU adapter is a software one (${name}), slower than the CPU ` +
        `backend; set RLVR_DEVICE=webgpu to use it anyway`,
    };
  }
  return { device: "webgpu", reason: `hardware adapter ${name}` };
}

/**
 * Creates the backend to run on: WebGPU on a hardware adapter, the CPU otherwise (see
 * {@link chooseDevice}), from `options.device`, else env `RLVR_DEVICE`, else `"auto"`. Logs
 * one line such as `[rlvr] device: cpu (navigator.gpu found no WebGPU adapter)` on stderr unless
 * `quiet`. Pass the result to `setBackend` or to creation functions' `backend` option.
 *
 * @param options The choice, logging and WebGPU options.
 * @returns The backend (a `WebGpuBackend` when WebGPU was chosen).
 *
 * @example Usage
 * ```ts
 * import { selectBackend, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const backend = await selectBackend({ device: "cpu", quiet: true });
 * assert.equal(backend.name, "cpu");
 * assert.deepEqual(await tensor([1, 2], { backend }).mul(2).toArray(), [2, 4]);
 * ```
 */
export async function selectBackend(options: SelectBackendOptions = {}): Promise<Backend> {
  const fromEnv = options.device === undefined ? envDevice() : undefined;
  const raw = options.device ?? fromEnv ?? "auto";
  const source = options.device !== undefined
    ? "options.device"
    : fromEnv !== undefined
    ? "RLVR_DEVICE"
    : "default";
  const choice = parseDeviceChoice(raw, source);
  const adapter = choice === "cpu"
    ? null
    : (await globalThis.navigator?.gpu?.requestAdapter()) ?? null;
  const decision = chooseDevice(choice, adapter);
  if (!options.quiet) {
    const via = source === "default" ? "" : ` via ${source}`;
    (options.log ?? console.error)(
      `[rlvr] device: ${decision.device} (${choice}${via}: ${decision.reason})`,
    );
  }
  if (decision.device === "cpu") return createCpuBackend();
  return await createWebGpuBackend({ ...options.webgpu, adapter: adapter! });
}
