/**
 * Compiled compute pipelines, cached by WGSL source.
 *
 * Design: kernels are specialised only on op and dtypes (geometry is in the params uniform), so
 * a training run compiles a few dozen pipelines once and then only looks them up. Each pipeline
 * gets an explicit bind-group layout (storage bindings as declared, then the params uniform)
 * rather than `layout: "auto"`, which would drop bindings a shader variant does not use and make
 * bind-group creation fail. With debugging on (`RLVR_WEBGPU_DEBUG=1`) every kernel's WGSL is
 * printed once, when it is compiled.
 *
 * @module
 */

import type { ShaderSpec } from "./kernels/_wgsl.ts";

/** A compiled kernel. */
export interface CompiledKernel {
  /** The pipeline. */
  readonly pipeline: GPUComputePipeline;
  /** Its bind-group layout. */
  readonly layout: GPUBindGroupLayout;
}

/** Pipelines by WGSL source. */
export class PipelineCache {
  readonly #cache = new Map<string, CompiledKernel>();

  constructor(
    readonly device: GPUDevice,
    readonly log: ((line: string) => void) | null,
  ) {}

  /** Number of compiled pipelines. */
  get size(): number {
    return this.#cache.size;
  }

  /** The pipeline of `spec`, compiled on first use. */
  get(spec: ShaderSpec): CompiledKernel {
    const hit = this.#cache.get(spec.code);
    if (hit !== undefined) return hit;
    this.log?.(`[webgpu] compiling ${spec.label}:\n${spec.code}`);
    const entries: GPUBindGroupLayoutEntry[] = spec.access.map((a, i) => ({
      binding: i,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: a === "read" ? "read-only-storage" : "storage" },
    }));
    entries.push({
      binding: spec.access.length,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: "uniform" },
    });
    const layout = this.device.createBindGroupLayout({ label: spec.label, entries });
    const module = this.device.createShaderModule({ label: spec.label, code: spec.code });
    const pipeline = this.device.createComputePipeline({
      label: spec.label,
      layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: "main" },
    });
    const compiled = { pipeline, layout };
    this.#cache.set(spec.code, compiled);
    return compiled;
  }
}
