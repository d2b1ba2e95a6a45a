/**
 * The command batch: many dispatches per command buffer, submitted on demand.
 *
 * Design: dispatches are recorded into one open command encoder (consecutive dispatches share a
 * compute pass; a buffer clear or copy ends it) and submitted when a read needs the results,
 * when a host write targets a buffer that pending work uses, when `flushEvery` dispatches have
 * accumulated, or on an explicit flush. The batch remembers which GPU buffers the pending work
 * uses, and holds callbacks to run right after the next submit: the backend uses them to return
 * freed buffers to the pool only once the work that used them is submitted.
 *
 * @module
 */

/** Pending GPU work and what must wait for its submission. */
export class CommandBatch {
  #encoder: GPUCommandEncoder | null = null;
  #pass: GPUComputePassEncoder | null = null;
  #dispatches = 0;
  readonly #used = new Set<GPUBuffer>();
  #afterSubmit: (() => void)[] = [];
  #submits = 0;

  constructor(readonly device: GPUDevice, readonly flushEvery: number) {}

  /** The open encoder, with no compute pass open (for clears and copies). */
  encoder(): GPUCommandEncoder {
    if (this.#pass !== null) {
      this.#pass.end();
      this.#pass = null;
    }
    this.#encoder ??= this.device.createCommandEncoder();
    return this.#encoder;
  }

  /** Marks `buffer` as used by pending work. */
  use(buffer: GPUBuffer): void {
    this.#used.add(buffer);
  }

  /** Whether pending (unsubmitted) work uses `buffer`. */
  uses(buffer: GPUBuffer): boolean {
    return this.#used.has(buffer);
  }

  /** Whether anything is recorded and not yet submitted. */
  get pending(): boolean {
    return this.#encoder !== null;
  }

  /** Number of submits so far. */
  get submits(): number {
    return this.#submits;
  }

  /** Runs `fn` right after the next submit (at once when nothing is pending). */
  afterSubmit(fn: () => void): void {
    if (this.#encoder === null) fn();
    else this.#afterSubmit.push(fn);
  }

  /** Records one dispatch; submits when `flushEvery` dispatches are pending. */
  dispatch(
    pipeline: GPUComputePipeline,
    bindGroup: GPUBindGroup,
    x: number,
    y: number,
    buffers: Iterable<GPUBuffer>,
  ): void {
    if (this.#pass === null) {
      this.#encoder ??= this.device.createCommandEncoder();
      this.#pass = this.#encoder.beginComputePass();
    }
    this.#pass.setPipeline(pipeline);
    this.#pass.setBindGroup(0, bindGroup);
    this.#pass.dispatchWorkgroups(x, y);
    for (const b of buffers) this.#used.add(b);
    if (++this.#dispatches >= this.flushEvery) this.flush();
  }

  /** Submits everything recorded, then runs the after-submit callbacks. */
  flush(): void {
    if (this.#encoder === null) return;
    if (this.#pass !== null) {
      this.#pass.end();
      this.#pass = null;
    }
    const commands = this.#encoder.finish();
    this.#encoder = null;
    this.#dispatches = 0;
    this.#used.clear();
    const callbacks = this.#afterSubmit;
    this.#afterSubmit = [];
    this.#submits++;
    try {
      this.device.queue.submit([commands]);
    } finally {
      for (const fn of callbacks) fn();
    }
  }
}
