/**
 * Params uniforms and bind groups reused across dispatches with the same content.
 *
 * Decoding runs the same kernels on the same pooled buffers with the same geometry step after
 * step, and on a real GPU the host time of a dispatch (write a params uniform, create a bind
 * group) is what bounds small-batch decoding. So:
 * - **A params uniform is immutable and keyed by its words**: written once when created, then
 *   bound by every dispatch with the same params. Evicted ones are destroyed after the next
 *   submit (WebGPU keeps a destroyed buffer alive for work already submitted).
 * - **A bind group is keyed by its layout and the identities and sizes of its buffers.** A
 *   buffer's identity is a number given on first sight and never reused, so a destroyed buffer's
 *   entries can never be hit again; they only wait for eviction.
 * - **Both maps are LRU-bounded** (a hit moves the entry to the back of the insertion order).
 *
 * @module
 */

/** Counters of a {@link DispatchCache}. */
export interface DispatchCacheStats {
  /** Params uniforms held. */
  uniforms: number;
  /** Bind groups held. */
  bindGroups: number;
  /** Lookups of either kind served from the cache. */
  hits: number;
  /** Lookups that created a uniform or a bind group. */
  misses: number;
}

/** One storage binding of a bind group. */
export interface CachedBinding {
  /** The buffer. */
  readonly buffer: GPUBuffer;
  /** Bytes bound from offset 0. */
  readonly bytes: number;
}

/** The LRU caches of one device. */
export class DispatchCache {
  readonly #ids = new WeakMap<object, number>();
  #nextId = 1;
  readonly #uniforms = new Map<string, GPUBuffer>();
  readonly #groups = new Map<string, GPUBindGroup>();
  #hits = 0;
  #misses = 0;

  /**
   * @param device The device.
   * @param uniformBytes Size of every params uniform.
   * @param retire Called with an evicted uniform: destroy it once pending work is submitted.
   * @param maxUniforms Most uniforms held.
   * @param maxGroups Most bind groups held.
   */
  constructor(
    readonly device: GPUDevice,
    readonly uniformBytes: number,
    readonly retire: (buffer: GPUBuffer) => void,
    readonly maxUniforms = 4096,
    readonly maxGroups = 8192,
  ) {}

  /** A number naming `o` for as long as it lives; never reused. */
  id(o: object): number {
    let id = this.#ids.get(o);
    if (id === undefined) {
      id = this.#nextId++;
      this.#ids.set(o, id);
    }
    return id;
  }

  /** The uniform holding exactly `words` (zeros after them), created on first use. */
  uniform(words: Uint32Array<ArrayBuffer>): GPUBuffer {
    const key = words.join(",");
    const hit = this.#lookup(this.#uniforms, key);
    if (hit !== undefined) return hit;
    const buffer = this.device.createBuffer({
      size: this.uniformBytes,
      usage: 0x40 | 0x08, // UNIFORM | COPY_DST
      label: "params",
    });
    this.device.queue.writeBuffer(buffer, 0, words);
    this.#uniforms.set(key, buffer);
    if (this.#uniforms.size > this.maxUniforms) {
      const [oldKey, old] = this.#uniforms.entries().next().value!;
      this.#uniforms.delete(oldKey);
      this.retire(old);
    }
    return buffer;
  }

  /** The bind group of `layout` over `bindings` then `uniform`, created on first use. */
  bindGroup(
    layout: GPUBindGroupLayout,
    bindings: readonly CachedBinding[],
    uniform: GPUBuffer,
  ): GPUBindGroup {
    let key = `${this.id(layout)}|${this.id(uniform)}`;
    for (const b of bindings) key += `|${this.id(b.buffer)}:${b.bytes}`;
    const hit = this.#lookup(this.#groups, key);
    if (hit !== undefined) return hit;
    const entries: GPUBindGroupEntry[] = bindings.map((b, i) => ({
      binding: i,
      resource: { buffer: b.buffer, offset: 0, size: b.bytes },
    }));
    entries.push({
      binding: bindings.length,
      resource: { buffer: uniform, offset: 0, size: this.uniformBytes },
    });
    const group = this.device.createBindGroup({ layout, entries });
    this.#groups.set(key, group);
    if (this.#groups.size > this.maxGroups) {
      this.#groups.delete(this.#groups.keys().next().value!);
    }
    return group;
  }

  /** A hit moves `key` to the back of the LRU order; either way the hit or miss is counted. */
  #lookup<T>(map: Map<string, T>, key: string): T | undefined {
    const hit = map.get(key);
    if (hit === undefined) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    map.delete(key);
    map.set(key, hit);
    return hit;
  }

  /** Current counters. */
  stats(): DispatchCacheStats {
    return {
      uniforms: this.#uniforms.size,
      bindGroups: this.#groups.size,
      hits: this.#hits,
      misses: this.#misses,
    };
  }

  /** Drops every entry, retiring the uniforms. */
  clear(): void {
    for (const u of this.#uniforms.values()) this.retire(u);
    this.#uniforms.clear();
    this.#groups.clear();
  }
}
