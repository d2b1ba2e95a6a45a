/**
 * Where a training run computes (`trainer.device`, `--device`): the backend of `@rlvr/tensor`
 * that the policy, the reference, the value head, the rollout, the scoring, the update and AdamW
 * all run on, and the record of that choice in the run directory (`device.json`).
 *
 * Design decisions:
 * - **The tensor package decides**: the choice goes through `chooseDevice`, the same pure
 *   decision `selectBackend` makes (`auto` takes WebGPU only on a hardware adapter and the CPU
 *   on a software one such as Mesa's lavapipe, which runs WGSL on the CPU slower than the CPU
 *   backend; `webgpu` forces WebGPU and fails without an adapter; `cpu` never touches WebGPU),
 *   so the run can print the decision and its reason in its header and store them.
 * - **`trainer.device` alone decides**, not `RLVR_DEVICE`: the config is written to
 *   `config.yaml`, so what a run was asked to do is in the run directory; an environment variable
 *   would not be.
 * - **The CPU is the process's default CPU backend** when it is a plain f32 CPU backend made with
 *   the same `trainer.blas`, so a run on the CPU computes exactly what it computed before the
 *   device was selectable (the resume tests and the byte-identical default run rely on it).
 * - **`trainer.blas`** (`auto`, `openblas`, `wasm`, `ts`) picks the CPU's native BLAS like
 *   `trainer.device` picks the device: from the config, not from `RLVR_BLAS`; what each kind of
 *   product ran (`cpuMatmul`: forward and gradient paths, the library) is in `device.json`.
 * - **`device.json` lists one entry per process** (the step it started from, the choice, the
 *   device, the reason, the adapter), because `--resume` may change `trainer.device`; it is
 *   rewritten atomically and is not part of the step records, so `metrics.jsonl` keeps its
 *   bytes.
 *
 * @module
 */

import { join } from "node:path";
import {
  type Backend,
  type BlasChoice,
  chooseDevice,
  type CpuBackend,
  createCpuBackend,
  createWebGpuBackend,
  describeAdapter,
  type DeviceChoice,
  getBackend,
  isSoftwareAdapter,
  parseDeviceChoice,
} from "@rlvr/tensor";
import { writeFileAtomic } from "../run/atomic.ts";

/** The file in a run directory that records where each process of the run computed. */
export const DEVICE_FILE = "device.json";

/** The backend a run computes on, and why. */
export interface TrainDevice {
  /** The backend: every tensor of the run is created on it. */
  backend: Backend;
  /** What `trainer.device` asked for. */
  choice: DeviceChoice;
  /** What was chosen. */
  device: "cpu" | "webgpu";
  /** Why (the tensor package's reason, e.g. "the only WebGPU adapter is a software one ..."). */
  reason: string;
  /** The WebGPU adapter that was found (`describeAdapter`), or null when none was looked for or found. */
  adapter: string | null;
  /** Whether that adapter is a software one (lavapipe, SwiftShader, WARP), or null. */
  softwareAdapter: boolean | null;
  /** On the CPU, what its matmuls run (see {@link CpuMatmulRecord}); null on WebGPU. */
  cpuMatmul: CpuMatmulRecord | null;
  /** Releases the backend when the run created one (a WebGPU device); a no-op for the CPU. */
  release(): void;
}

/** What a CPU run's matmuls ran. */
export interface CpuMatmulRecord {
  /** `trainer.blas`. */
  blas: BlasChoice;
  /** What forward products run (`wasm-relaxed`, `wasm-simd`, `ts` or `openblas`). */
  forward: string;
  /** What the backward pass's products run. */
  gradient: string;
  /** The native BLAS library, or null. */
  library: string | null;
  /** What attention runs: `matmul` (through the wasm matmul) or `ts` (the float64 oracle). */
  attention: "matmul" | "ts";
}

/**
 * On Linux without `XDG_RUNTIME_DIR` (a root shell, a container, CI), asking for a WebGPU adapter
 * makes the Vulkan loader's Wayland probe print `error: XDG_RUNTIME_DIR is invalid or not set in
 * the environment.` twice, although nothing is wrong (there is no display to find). A private,
 * empty runtime directory makes that probe fail quietly; it is set only for this process, only
 * when the variable is unset, and never changes which adapter is found.
 */
function quietWaylandProbe(): void {
  try {
    if (Deno.build.os !== "linux" || Deno.env.get("XDG_RUNTIME_DIR") !== undefined) return;
    const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/rlvr-runtime-${Deno.uid() ?? "user"}`;
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    Deno.chmodSync(dir, 0o700);
    Deno.env.set("XDG_RUNTIME_DIR", dir);
  } catch {
    // No permission to read or set the environment, or no temp dir: the probe just stays noisy.
  }
}

/**
 * Selects the backend of `trainer.device` (see the module doc).
 *
 * @param choice `auto`, `webgpu` or `cpu`.
 * @param blas `trainer.blas`: the CPU's native BLAS (default `auto`; ignored on WebGPU).
 * @returns The backend and the decision; call `release()` when the run is done.
 * @throws {RangeError} for an unknown choice; `Error` for `webgpu` without an adapter.
 *
 * @example Usage
 * ```ts
 * import { selectTrainDevice } from "./device.ts";
 * import assert from "node:assert/strict";
 * const d = await selectTrainDevice("cpu");
 * assert.equal(d.device, "cpu");
 * assert.equal(d.reason, "requested");
 * assert.equal(d.adapter, null);
 * d.release();
 * ```
 */
export async function selectTrainDevice(
  choice: DeviceChoice | string,
  blas: BlasChoice = "auto",
): Promise<TrainDevice> {
  const parsed = parseDeviceChoice(choice, "trainer.device");
  if (parsed !== "cpu") quietWaylandProbe();
  const adapter = parsed === "cpu"
    ? null
    : (await globalThis.navigator?.gpu?.requestAdapter()) ?? null;
  let decision;
  try {
    decision = chooseDevice(parsed, adapter);
  } catch (e) {
    throw new Error(
      `train: trainer.device is "webgpu" but ${
        (e as Error).message.replace(/^selectBackend: /, "")
      }`,
      { cause: e },
    );
  }
  // The tensor package's hint names its environment variable; here the config decides.
  const reason = decision.reason.replace("set RLVR_DEVICE=webgpu", "pass --device webgpu");
  const adapterName = adapter === null ? null : describeAdapter(adapter);
  const software = adapter === null ? null : isSoftwareAdapter(adapter);
  if (decision.device === "cpu") {
    const current = getBackend();
    const backend = current.name === "cpu" && (current as CpuBackend).blas === blas
      ? current as CpuBackend
      : createCpuBackend({ blas });
    return {
      backend,
      choice: parsed,
      device: "cpu",
      reason,
      adapter: adapterName,
      softwareAdapter: software,
      cpuMatmul: {
        blas,
        forward: backend.matmulPath,
        gradient: backend.gradientMatmulPath,
        library: backend.blasLibrary,
        attention: backend.attentionPath,
      },
      release: () => {},
    };
  }
  const gpu = await createWebGpuBackend({ adapter: adapter! });
  return {
    backend: gpu,
    choice: parsed,
    device: "webgpu",
    reason: decision.reason,
    adapter: adapterName,
    softwareAdapter: software,
    cpuMatmul: null,
    release: () => gpu.destroy(),
  };
}

/**
 * The run header's device line: the device, then the choice and the reason.
 *
 * @example Usage
 * ```ts
 * import { deviceLine, selectTrainDevice } from "./device.ts";
 * import assert from "node:assert/strict";
 * const d = await selectTrainDevice("cpu");
 * assert.equal(deviceLine(d), "device: cpu (trainer.device cpu: requested)");
 * ```
 */
export function deviceLine(d: Pick<TrainDevice, "device" | "choice" | "reason">): string {
  return `device: ${d.device} (trainer.device ${d.choice}: ${d.reason})`;
}

/**
 * The run header's CPU matmul line (null on WebGPU): what forward and gradient products run.
 *
 * @example Usage
 * ```ts
 * import { cpuMatmulLine, selectTrainDevice } from "./device.ts";
 * import assert from "node:assert/strict";
 * const d = await selectTrainDevice("cpu", "wasm");
 * assert.match(cpuMatmulLine(d)!, /^cpu matmul \(trainer\.blas wasm\): forward wasm-\w+, gradients wasm-\w+; attention through it$/);
 * ```
 */
export function cpuMatmulLine(d: Pick<TrainDevice, "cpuMatmul">): string | null {
  const m = d.cpuMatmul;
  if (m === null) return null;
  return `cpu matmul (trainer.blas ${m.blas}): forward ${m.forward}, gradients ${m.gradient}` +
    (m.library === null ? "" : ` (${m.library})`) +
    (m.attention === "matmul" ? "; attention through it" : "; attention float64 loops");
}

/** One entry of `device.json`. */
export interface DeviceRecord {
  /** Steps completed when the process started (0 for a new run, N when resumed from step N). */
  startStep: number;
  /** `trainer.device`. */
  choice: DeviceChoice;
  /** The device used. */
  device: "cpu" | "webgpu";
  /** Why. */
  reason: string;
  /** The WebGPU adapter found, or null. */
  adapter: string | null;
  /** Whether it is a software adapter, or null. */
  softwareAdapter: boolean | null;
  /** On the CPU, what its matmuls ran; null on WebGPU (absent in runs made before it was recorded). */
  cpuMatmul?: CpuMatmulRecord | null;
}

/**
 * Appends this process's device to `<runDir>/device.json` (`{"sessions": [...]}`), rewriting
 * it atomically; returns every entry.
 *
 * @example Usage
 * ```ts
 * import { readDeviceRecords, recordDevice, selectTrainDevice } from "./device.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await recordDevice(dir, await selectTrainDevice("cpu"), 0);
 * await recordDevice(dir, await selectTrainDevice("cpu"), 5);
 * assert.deepEqual((await readDeviceRecords(dir)).map((r) => r.startStep), [0, 5]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function recordDevice(
  runDir: string,
  d: TrainDevice,
  startStep: number,
): Promise<DeviceRecord[]> {
  const sessions = await readDeviceRecords(runDir);
  sessions.push({
    startStep,
    choice: d.choice,
    device: d.device,
    reason: d.reason,
    adapter: d.adapter,
    softwareAdapter: d.softwareAdapter,
    cpuMatmul: d.cpuMatmul,
  });
  await writeFileAtomic(
    join(runDir, DEVICE_FILE),
    JSON.stringify({ sessions }, null, 2) + "\n",
  );
  return sessions;
}

/**
 * The entries of `<runDir>/device.json` (empty when the file does not exist, e.g. a run made
 * before the device was recorded).
 *
 * @example Usage
 * ```ts
 * import { readDeviceRecords } from "./device.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await readDeviceRecords("/nonexistent"), []);
 * ```
 */
export async function readDeviceRecords(runDir: string): Promise<DeviceRecord[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(join(runDir, DEVICE_FILE));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  const parsed = JSON.parse(text) as { sessions?: unknown };
  if (!Array.isArray(parsed.sessions)) {
    throw new Error(
      `train: ${join(runDir, DEVICE_FILE)} has no "sessions" list; delete the file (it only ` +
        `records where the run computed)`,
    );
  }
  return parsed.sessions as DeviceRecord[];
}
