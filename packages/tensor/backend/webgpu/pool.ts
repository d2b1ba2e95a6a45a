/**
 * A pool of GPU buffers by size class, so that a training step that requests the same sizes
 * every time stops creating buffers after its first steps.
 *
 * Design: a request is rounded up to its size class (at least 16 bytes, then the next value
 * with at most three significant bits: 16, 20, 24, 28, 32, 40, ... so at most 25% is wasted) and
 * served from that class's free list (LIFO) or by a new buffer. The pool never decides *when*
 * a buffer may be reused: the backend returns a buffer here only after the command buffer that
 * last used it was submitted (`queue.writeBuffer` runs ahead of unsubmitted work, so earlier
 * reuse could overwrite data a pending dispatch still reads). Beyond `maxPooledBytes` of idle
 * buffers, released buffers are destroyed instead of kept. Reused buffers hold stale data; the
 * backend clears them (`encoder.clearBuffer`) before first use.
 *
 * @module
 */

/** Counters of a {@link BufferPool}. */
export interface PoolStats {
  /** Idle buffers in the free lists. */
  pooledBuffers: number;
  /** Bytes of those buffers. */
  pooledBytes: number;
  /** Buffers created and not destroyed (idle or in use). */
  allocatedBuffers: number;
  /** Bytes of those buffers. */
  allocatedBytes: number;
}

/**
 * Bytes held by several pools together and their high-water mark, shared by the pools of one
 * backend so that its peak counts tensors, staging and params buffers at the same moment.
 */
export class MemoryMeter {
  /** Bytes of GPU buffers that exist now. */
  bytes = 0;
  /** The most `bytes` has been since creation or the last {@link MemoryMeter.resetPeak}. */
  peak = 0;

  /** Counts `n` bytes created (negative: destroyed). */
  add(n: number): void {
    this.bytes += n;
    if (this.bytes > this.peak) this.peak = this.bytes;
  }

  /** Starts a new high-water mark at the current bytes. */
  resetPeak(): void {
    this.peak = this.bytes;
  }
}

/** The size class of a request of `bytes`: >= 16, at most three significant bits. */
export function sizeClass(bytes: number): number {
  if (bytes <= 16) return 16;
  const top = 2 ** Math.floor(Math.log2(bytes));
  const step = top / 4;
  return Math.ceil(bytes / step) * step;
}

/** A buffer handed out by a {@link BufferPool}. */
export interface PooledBuffer {
  /** The GPU buffer. */
  readonly buffer: GPUBuffer;
  /** Its size in bytes (the size class). */
  readonly capacity: number;
  /** True when newly created (WebGPU zero-initialises new buffers). */
  readonly fresh: boolean;
}

/** Free lists of GPU buffers of one usage, by size class. */
export class BufferPool {
  readonly #free = new Map<number, GPUBuffer[]>();
  #pooledBuffers = 0;
  #pooledBytes = 0;
  #allocatedBuffers = 0;
  #allocatedBytes = 0;

  constructor(
    readonly device: GPUDevice,
    readonly usage: GPUBufferUsageFlags,
    readonly label: string,
    readonly maxPooledBytes: number,
    readonly maxBufferSize: number,
    readonly meter: MemoryMeter = new MemoryMeter(),
  ) {}

  /** A buffer of at least `bytes`, from the free list of its class or new. */
  acquire(bytes: number): PooledBuffer {
    const cls = Math.min(sizeClass(bytes), Math.floor(this.maxBufferSize / 4) * 4);
    const list = this.#free.get(cls);
    const reused = list?.pop();
    if (reused !== undefined) {
      this.#pooledBuffers--;
      this.#pooledBytes -= cls;
      return { buffer: reused, capacity: cls, fresh: false };
    }
    const buffer = this.device.createBuffer({ size: cls, usage: this.usage, label: this.label });
    this.#allocatedBuffers++;
    this.#allocatedBytes += cls;
    this.meter.add(cls);
    return { buffer, capacity: cls, fresh: true };
  }

  /** Returns a buffer (no longer used by unsubmitted work) to its free list. */
  release(b: PooledBuffer): void {
    if (this.#pooledBytes + b.capacity > this.maxPooledBytes) {
      b.buffer.destroy();
      this.#allocatedBuffers--;
      this.#allocatedBytes -= b.capacity;
      this.meter.add(-b.capacity);
      return;
    }
    let list = this.#free.get(b.capacity);
    if (list === undefined) this.#free.set(b.capacity, list = []);
    list.push(b.buffer);
    this.#pooledBuffers++;
    this.#pooledBytes += b.capacity;
  }

  /** Destroys the idle buffers. */
  trim(): void {
    for (const [cls, list] of this.#free) {
      for (const b of list) b.destroy();
      this.#allocatedBuffers -= list.length;
      this.#allocatedBytes -= cls * list.length;
      this.meter.add(-cls * list.length);
    }
    this.#free.clear();
    this.#pooledBuffers = 0;
    this.#pooledBytes = 0;
  }

  /** Current counters. */
  stats(): PoolStats {
    return {
      pooledBuffers: this.#pooledBuffers,
      pooledBytes: this.#pooledBytes,
      allocatedBuffers: this.#allocatedBuffers,
      allocatedBytes: this.#allocatedBytes,
    };
  }
}
