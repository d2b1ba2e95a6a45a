/**
 * Getting a WebGPU device: the adapter's own limits, the optional features worth having, and
 * telling a hardware adapter from a software one.
 *
 * Design: the WebGPU default limits are far below what real adapters offer (128 MiB storage
 * bindings by default against 2–4 GiB on datacenter GPUs), so the device is requested with the
 * adapter's values for every limit a kernel can hit. `shader-f16`, `timestamp-query` and
 * `subgroups` are enabled when the adapter has them (no kernel requires them yet). Software
 * adapters (Mesa's llvmpipe/lavapipe, SwiftShader, WARP, or any adapter flagged
 * `isFallbackAdapter`) run WGSL correctly but slower than the CPU backend, so device selection
 * (`backend/select.ts`) uses them only when asked to.
 *
 * @module
 */

/** Limits requested at the adapter's values (the WebGPU defaults are lower). */
export const REQUESTED_LIMITS = [
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeWorkgroupsPerDimension",
  "maxStorageBuffersPerShaderStage",
  "maxUniformBufferBindingSize",
] as const;

/** Optional features enabled when the adapter offers them. */
export const OPTIONAL_FEATURES = ["shader-f16", "timestamp-query", "subgroups"] as const;

const SOFTWARE = /llvmpipe|lavapipe|swiftshader|software|microsoft basic render|\bwarp\b/i;

/**
 * True for an adapter that runs on the CPU: flagged `isFallbackAdapter`, or named like Mesa's
 * llvmpipe/lavapipe, SwiftShader or WARP. Such adapters are correct but slow.
 *
 * @param adapter The adapter to classify.
 * @returns Whether it is a software adapter.
 *
 * @example Usage
 * ```ts
 * import { isSoftwareAdapter } from "@rlvr/tensor";
 * const gpu = await navigator.gpu?.requestAdapter();
 * if (gpu) console.log(isSoftwareAdapter(gpu) ? "software adapter" : "hardware adapter");
 * ```
 */
export function isSoftwareAdapter(adapter: GPUAdapter): boolean {
  const info = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean };
  const legacy = (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter;
  if (info?.isFallbackAdapter === true || legacy === true) return true;
  return SOFTWARE.test(describeAdapter(adapter));
}

/**
 * A one-line description of an adapter from its `info` (description, vendor, architecture).
 *
 * @param adapter The adapter.
 * @returns Text such as `"llvmpipe (LLVM 15.0.6, 256 bits)"`.
 *
 * @example Usage
 * ```ts
 * import { describeAdapter } from "@rlvr/tensor";
 * const gpu = await navigator.gpu?.requestAdapter();
 * if (gpu) console.log(describeAdapter(gpu));
 * ```
 */
export function describeAdapter(adapter: GPUAdapter): string {
  const info = adapter.info;
  const parts = [info?.description, info?.vendor && `vendor ${info.vendor}`, info?.architecture]
    .filter((s): s is string => typeof s === "string" && s.length > 0);
  return parts.length > 0 ? parts.join(", ") : "unnamed adapter";
}

/** What {@link requestGpuDevice} returns. */
export interface GpuDeviceContext {
  /** The adapter the device came from. */
  readonly adapter: GPUAdapter;
  /** The device. */
  readonly device: GPUDevice;
  /** {@link describeAdapter} of the adapter. */
  readonly description: string;
  /** {@link isSoftwareAdapter} of the adapter. */
  readonly isSoftware: boolean;
}

/**
 * Requests the adapter (unless given) and a device with the adapter's limits and the optional
 * features it offers. Throws when `navigator.gpu` finds no adapter.
 */
export async function requestGpuDevice(
  options: { adapter?: GPUAdapter; powerPreference?: GPUPowerPreference } = {},
): Promise<GpuDeviceContext> {
  let adapter = options.adapter ?? null;
  if (adapter === null) {
    if (typeof navigator === "undefined" || navigator.gpu === undefined) {
      throw new Error("createWebGpuBackend: navigator.gpu is not available in this runtime");
    }
    adapter = await navigator.gpu.requestAdapter(
      options.powerPreference === undefined ? {} : { powerPreference: options.powerPreference },
    );
    if (adapter === null) {
      throw new Error(
        "createWebGpuBackend: navigator.gpu found no adapter (no GPU driver, or no Vulkan/GL/Metal/" +
          "D3D12 loader; on Linux, Mesa's llvmpipe provides a software adapter)",
      );
    }
  }
  const requiredLimits: Record<string, number> = {};
  const limits = adapter.limits as unknown as Record<string, number | undefined>;
  for (const name of REQUESTED_LIMITS) {
    const v = limits[name];
    if (typeof v === "number") requiredLimits[name] = v;
  }
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({
    requiredLimits,
    requiredFeatures: requiredFeatures as GPUFeatureName[],
  });
  return {
    adapter,
    device,
    description: describeAdapter(adapter),
    isSoftware: isSoftwareAdapter(adapter),
  };
}
