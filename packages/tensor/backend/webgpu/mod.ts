/**
 * The WebGPU backend: every kernel of the catalogue in WGSL, runnable on any WebGPU adapter
 * (including Mesa's lavapipe software adapter, which is how CI checks it against the CPU
 * oracle).
 *
 * @module
 */

export {
  createWebGpuBackend,
  type WebGpuBackend,
  type WebGpuBackendOptions,
  type WebGpuPoolStats,
} from "./webgpu_backend.ts";
export { describeAdapter, isSoftwareAdapter } from "./device.ts";
export {
  MATMUL_VARIANTS,
  type MatmulVariant,
  parseMatmulVariant,
  pickMatmulVariant,
} from "./kernels/matmul.ts";
export {
  f16BufferBytes,
  type F16ErrorRatio,
  MatmulF16,
  matmulF16ErrorRatio,
  matmulF16Wgsl,
  uploadF16,
} from "./kernels/matmul_f16.ts";
export type { DispatchCacheStats } from "./dispatch_cache.ts";
