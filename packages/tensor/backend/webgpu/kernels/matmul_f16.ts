/**
 * A half-precision matmul for adapters with `shader-f16`: `c = a · b` with `a` (`[m, k]`) and `b`
 * (`[k, n]`) stored as IEEE f16, row-major, and `c` written as f32.
 *
 * This is not a catalogue kernel (tensors have no f16 dtype yet: half precision is a storage
 * format of checkpoints, see `io/half.ts`); it is the measured f16 path of `deno task
 * bench:gpu` and the first piece of f16 weight storage. It runs on raw `GPUBuffer`s through
 * {@link MatmulF16}.
 *
 * Design decisions:
 * - **Variant 2's tiling in f16**: 64×64 output tiles, 256 invocations with a 4×4 micro-tile
 *   each, k-tiles of 16 staged in workgroup memory as `vec4<f16>` (half of variant 2's 8 KiB), so
 *   a GPU can issue packed half-precision multiply-adds (two per instruction on NVIDIA).
 * - **Mixed accumulation**: products are summed in f16 over one k-tile (16 terms), and each
 *   tile's partial sum is added into f32 accumulators. A pure-f16 sum over k = 4096 would lose
 *   about 6 bits; this way the error is that of a 16-term f16 sum, bounded by
 *   `32 · 2⁻¹¹ · Σ|aᵢₖ·bₖⱼ|` (16 products and 16 additions, each rounded once), which the test
 *   checks against a float64 reference on random shapes.
 * - **Edges**: `vec4` loads when `k` (for `a`) and `n` (for `b`, `c`) are multiples of 4, else
 *   guarded scalar loads; out-of-range tile entries load as 0, so any `m, n, k ≥ 1` is valid.
 *   Unlike the catalogue's kernels there is no `0 · ∞` skip: half precision overflows at 65504,
 *   and callers of a bench or a weight matmul pass finite values.
 *
 * @module
 */

import { f32ToF16 } from "../../../io/half.ts";

const BM = 64;
const BN = 64;
const BK = 16;

/**
 * WGSL of the kernel for the given vector-load flags (`vecA`: `k % 4 == 0`; `vecB`:
 * `n % 4 == 0`).
 *
 * @param vecA Load `a` as `vec4<f16>`.
 * @param vecB Load `b` and store `c` as 4-vectors.
 * @returns The shader source.
 *
 * @example Usage
 * ```ts
 * import { matmulF16Wgsl } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.match(matmulF16Wgsl(true, true), /^enable f16;/);
 * ```
 */
export function matmulF16Wgsl(vecA: boolean, vecB: boolean): string {
  const aType = vecA ? "vec4<f16>" : "f16";
  const bType = vecB ? "vec4<f16>" : "f16";
  const cType = vecB ? "vec4<f32>" : "f32";
  // a is [m, k]: invocation li reads row r = li / 4, k-offsets kq..kq+3 (contiguous along k).
  const loadA = vecA ? `if (i < m && kk < k) { v = A[(i * k + kk) / 4u]; }` : `if (i < m) {
      let base = i * k;
      if (kk < k) { v.x = A[base + kk]; }
      if (kk + 1u < k) { v.y = A[base + kk + 1u]; }
      if (kk + 2u < k) { v.z = A[base + kk + 2u]; }
      if (kk + 3u < k) { v.w = A[base + kk + 3u]; }
    }`;
  // b is [k, n]: invocation li reads k-row kr = li / 16, columns c4..c4+3 (contiguous along n).
  const loadB = vecB ? `if (kk < k && j < n) { v = B[(kk * n + j) / 4u]; }` : `if (kk < k) {
      let base = kk * n;
      if (j < n) { v.x = B[base + j]; }
      if (j + 1u < n) { v.y = B[base + j + 1u]; }
      if (j + 2u < n) { v.z = B[base + j + 2u]; }
      if (j + 3u < n) { v.w = B[base + j + 3u]; }
    }`;
  const store = (r: number) => {
    const body = vecB ? `if (j < n) { C[(i * n + j) / 4u] = acc${r}; }` : `let base = i * n;
      if (j < n) { C[base + j] = acc${r}.x; }
      if (j + 1u < n) { C[base + j + 1u] = acc${r}.y; }
      if (j + 2u < n) { C[base + j + 2u] = acc${r}.z; }
      if (j + 3u < n) { C[base + j + 3u] = acc${r}.w; }`;
    return `  {
    let i = row0 + ty * 4u + ${r}u;
    if (i < m) {
      ${body}
    }
  }`;
  };
  return `enable f16;

@group(0) @binding(0) var<storage, read> A: array<${aType}>;
@group(0) @binding(1) var<storage, read> B: array<${bType}>;
@group(0) @binding(2) var<storage, read_write> C: array<${cType}>;
@group(0) @binding(3) var<uniform> P: vec4<u32>;

var<workgroup> As: array<vec4<f16>, ${(BK * BM) / 4}>;
var<workgroup> Bs: array<vec4<f16>, ${(BK * BN) / 4}>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let m = P.x;
  let n = P.y;
  let k = P.z;
  let row0 = wg.y * ${BM}u;
  let col0 = wg.x * ${BN}u;
  let ty = li / 16u;
  let tx = li % 16u;
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  let nTiles = (k + ${BK - 1}u) / ${BK}u;
  for (var tile = 0u; tile < nTiles; tile++) {
    let k0 = tile * ${BK}u;
    {
      let r = li / 4u;
      let kq = (li % 4u) * 4u;
      let i = row0 + r;
      let kk = k0 + kq;
      var v = vec4<f16>();
      ${loadA}
      let s = kq * 16u + r / 4u;
      let c = r % 4u;
      As[s][c] = v.x;
      As[s + 16u][c] = v.y;
      As[s + 32u][c] = v.z;
      As[s + 48u][c] = v.w;
    }
    {
      let kr = li / 16u;
      let c4 = (li % 16u) * 4u;
      let kk = k0 + kr;
      let j = col0 + c4;
      var v = vec4<f16>();
      ${loadB}
      Bs[kr * 16u + c4 / 4u] = v;
    }
    workgroupBarrier();
    var h0 = vec4<f16>();
    var h1 = vec4<f16>();
    var h2 = vec4<f16>();
    var h3 = vec4<f16>();
    for (var kk = 0u; kk < ${BK}u; kk++) {
      let a = As[kk * 16u + ty];
      let b = Bs[kk * 16u + tx];
      h0 += a.x * b;
      h1 += a.y * b;
      h2 += a.z * b;
      h3 += a.w * b;
    }
    acc0 += vec4<f32>(h0);
    acc1 += vec4<f32>(h1);
    acc2 += vec4<f32>(h2);
    acc3 += vec4<f32>(h3);
    workgroupBarrier();
  }
  let j = col0 + tx * 4u;
${[0, 1, 2, 3].map(store).join("\n")}
}
`;
}

/**
 * Byte size of an f16 buffer of `n` elements, rounded up so that `vec4<f16>` bindings fit.
 *
 * @param n Elements.
 * @returns Bytes, a multiple of 8.
 *
 * @example Usage
 * ```ts
 * import { f16BufferBytes } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(f16BufferBytes(5), 16);
 * ```
 */
export function f16BufferBytes(n: number): number {
  return Math.max(8, Math.ceil(n / 4) * 8);
}

/**
 * A new storage buffer holding `values` rounded to f16 ({@link f16BufferBytes} bytes, usable as
 * `a` or `b` of {@link MatmulF16.encode}; also a copy source).
 *
 * @param device The device.
 * @param values The values, in row-major order.
 * @returns The buffer.
 *
 * @example Usage
 * ```ts
 * import { uploadF16 } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const device = await (await navigator.gpu?.requestAdapter())?.requestDevice();
 * if (device) {
 *   assert.equal(uploadF16(device, [1, 2, 3]).size, 8);
 *   device.destroy();
 * }
 * ```
 */
export function uploadF16(device: GPUDevice, values: ArrayLike<number>): GPUBuffer {
  const bytes = f16BufferBytes(values.length);
  const buffer = device.createBuffer({ size: bytes, usage: 0x80 | 0x08 | 0x04 });
  const bits = new Uint16Array(bytes / 2);
  bits.set(f32ToF16(values));
  device.queue.writeBuffer(buffer, 0, bits);
  return buffer;
}

/** The worst entry of a {@link matmulF16ErrorRatio} check. */
export interface F16ErrorRatio {
  /** Largest `|c − ref| / bound` over all entries (≤ 1 passes). */
  ratio: number;
  /** Row of that entry. */
  i: number;
  /** Column of that entry. */
  j: number;
  /** The kernel's value there. */
  got: number;
  /** The float64 reference there. */
  ref: number;
}

/**
 * The reference check of the kernel: for every entry of `c` (`[m, n]`), its distance from the
 * float64 product of `a` (`[m, k]`) and `b` (`[k, n]`) over the bound of the kernel's
 * accumulation, `32 · 2⁻¹¹ · Σₖ|aᵢₖ·bₖⱼ| + 1e-6` (16-term f16 partial sums, each product and
 * addition rounded once, added into f32). Pass `a` and `b` already rounded to f16, as the kernel
 * sees them.
 *
 * @param a `[m, k]`, f16-representable values.
 * @param b `[k, n]`, f16-representable values.
 * @param c `[m, n]`, the kernel's result.
 * @param m Rows.
 * @param n Columns.
 * @param k Inner dimension.
 * @returns The largest ratio and where it is.
 *
 * @example Usage
 * ```ts
 * import { matmulF16ErrorRatio } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(matmulF16ErrorRatio([1, 2], [3, 4], [11], 1, 1, 2).ratio, 0);
 * assert.ok(matmulF16ErrorRatio([1, 2], [3, 4], [12], 1, 1, 2).ratio > 1);
 * ```
 */
export function matmulF16ErrorRatio(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  c: ArrayLike<number>,
  m: number,
  n: number,
  k: number,
): F16ErrorRatio {
  const worst: F16ErrorRatio = { ratio: 0, i: 0, j: 0, got: c[0] ?? 0, ref: 0 };
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let ref = 0;
      let mag = 0;
      for (let kk = 0; kk < k; kk++) {
        const p = a[i * k + kk]! * b[kk * n + j]!;
        ref += p;
        mag += Math.abs(p);
      }
      const got = c[i * n + j]!;
      const ratio = Math.abs(got - ref) / (32 * 2 ** -11 * mag + 1e-6);
      // `!(ratio <= worst)` also catches NaN.
      if (!(ratio <= worst.ratio)) Object.assign(worst, { ratio, i, j, got, ref });
    }
  }
  return worst;
}

/**
 * Runs {@link matmulF16Wgsl} on a device that has the `shader-f16` feature enabled.
 *
 * @example Usage
 * ```ts
 * import { f16ToF32, f32ToF16, MatmulF16 } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const adapter = await navigator.gpu?.requestAdapter();
 * if (adapter?.features.has("shader-f16")) {
 *   const device = await adapter.requestDevice({ requiredFeatures: ["shader-f16"] });
 *   const mm = new MatmulF16(device);
 *   // [[1, 2], [3, 4]] · [[5, 6], [7, 8]]
 *   const c = await mm.multiply([1, 2, 3, 4], [5, 6, 7, 8], 2, 2, 2);
 *   assert.deepEqual([...c], [19, 22, 43, 50]);
 *   assert.equal(f16ToF32(f32ToF16([0.1]))[0]!.toFixed(4), "0.1000");
 *   device.destroy();
 * }
 * ```
 */
export class MatmulF16 {
  readonly #pipelines = new Map<string, GPUComputePipeline>();
  readonly #params = new Map<string, GPUBuffer>();
  readonly #layout: GPUBindGroupLayout;

  /** The device the kernel runs on. */
  readonly device: GPUDevice;

  /**
   * Compiles nothing yet (pipelines are built on first use per vector-load layout).
   *
   * @param device A device created with `requiredFeatures: ["shader-f16"]`.
   */
  constructor(device: GPUDevice) {
    this.device = device;
    if (!device.features.has("shader-f16")) {
      throw new Error(
        `MatmulF16: the device lacks the "shader-f16" feature; request it with ` +
          `requiredFeatures: ["shader-f16"] on an adapter that offers it`,
      );
    }
    const storage = (type: GPUBufferBindingType): GPUBufferBindingLayout => ({ type });
    this.#layout = device.createBindGroupLayout({
      label: "matmul_f16",
      entries: [
        { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: storage("read-only-storage") },
        { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: storage("read-only-storage") },
        { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: storage("storage") },
        { binding: 3, visibility: GPUShaderStage.COMPUTE, buffer: storage("uniform") },
      ],
    });
  }

  /**
   * Records `c = a · b` into `encoder` (its own compute pass).
   *
   * @param encoder The command encoder.
   * @param a `[m, k]` f16, at least {@link f16BufferBytes}`(m·k)` bytes.
   * @param b `[k, n]` f16, at least {@link f16BufferBytes}`(k·n)` bytes.
   * @param c `[m, n]` f32 output.
   * @param m Rows of `a` and `c`.
   * @param n Columns of `b` and `c`.
   * @param k Columns of `a`, rows of `b`.
   */
  encode(
    encoder: GPUCommandEncoder,
    a: GPUBuffer,
    b: GPUBuffer,
    c: GPUBuffer,
    m: number,
    n: number,
    k: number,
  ): void {
    for (const [name, v] of [["m", m], ["n", n], ["k", k]] as const) {
      if (!(Number.isInteger(v) && v >= 1 && v < 2 ** 31)) {
        throw new RangeError(`MatmulF16.encode: ${name} must be an integer >= 1, got ${v}`);
      }
    }
    const vecA = k % 4 === 0;
    const vecB = n % 4 === 0;
    const key = `${vecA}${vecB}`;
    let pipeline = this.#pipelines.get(key);
    if (pipeline === undefined) {
      const module = this.device.createShaderModule({
        label: `matmul_f16_${key}`,
        code: matmulF16Wgsl(vecA, vecB),
      });
      pipeline = this.device.createComputePipeline({
        label: `matmul_f16_${key}`,
        layout: this.device.createPipelineLayout({ bindGroupLayouts: [this.#layout] }),
        compute: { module, entryPoint: "main" },
      });
      this.#pipelines.set(key, pipeline);
    }
    // One immutable params buffer per shape: a timing loop then creates no buffers.
    const shape = `${m},${n},${k}`;
    let params = this.#params.get(shape);
    if (params === undefined) {
      if (this.#params.size >= 256) this.#params.clear();
      params = this.device.createBuffer({ size: 16, usage: 0x40 | 0x08 });
      this.device.queue.writeBuffer(params, 0, new Uint32Array([m, n, k, 0]));
      this.#params.set(shape, params);
    }
    const bindGroup = this.device.createBindGroup({
      layout: this.#layout,
      entries: [
        { binding: 0, resource: { buffer: a, size: f16BufferBytes(m * k) } },
        { binding: 1, resource: { buffer: b, size: f16BufferBytes(k * n) } },
        { binding: 2, resource: { buffer: c, size: m * n * 4 } },
        { binding: 3, resource: { buffer: params } },
      ],
    });
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(Math.ceil(n / BN), Math.ceil(m / BM));
    pass.end();
  }

  /**
   * `a · b` for host arrays: rounds them to f16, runs {@link MatmulF16.encode} on new buffers,
   * reads `c` back and frees the buffers (for checks and tests; {@link MatmulF16.encode} is the
   * fast path).
   *
   * @param a `[m, k]`, row-major.
   * @param b `[k, n]`, row-major.
   * @param m Rows of `a`.
   * @param n Columns of `b`.
   * @param k Columns of `a`, rows of `b`.
   * @returns `c`, `[m, n]`.
   */
  async multiply(
    a: ArrayLike<number>,
    b: ArrayLike<number>,
    m: number,
    n: number,
    k: number,
  ): Promise<Float32Array> {
    const device = this.device;
    const cBytes = Math.max(16, m * n * 4);
    const ga = uploadF16(device, a);
    const gb = uploadF16(device, b);
    const gc = device.createBuffer({ size: cBytes, usage: 0x80 | 0x04 });
    const out = device.createBuffer({ size: cBytes, usage: 0x01 | 0x08 });
    try {
      const encoder = device.createCommandEncoder();
      this.encode(encoder, ga, gb, gc, m, n, k);
      encoder.copyBufferToBuffer(gc, 0, out, 0, cBytes);
      device.queue.submit([encoder.finish()]);
      await out.mapAsync(1);
      const c = new Float32Array(out.getMappedRange().slice(0, m * n * 4));
      out.unmap();
      return c;
    } finally {
      for (const x of [ga, gb, gc, out]) x.destroy();
    }
  }
}
