/**
 * The backend seam: the only things an execution backend implements.
 *
 * A backend allocates, frees, writes and reads flat buffers, and runs named kernels from the
 * catalogue {@link KernelParams}. Ops (`ops/*.ts`) are written once against this interface and never
 * ask which backend they run on; the CPU backend is the numerical oracle, the WebGPU backend
 * (a later issue) implements the same catalogue in WGSL. Kernels see only flat buffers plus the
 * integer geometry in their params: all shapes are resolved by the op layer.
 *
 * @module
 */

import type { DType } from "../dtype.ts";

/** An opaque buffer owned by one backend: `size` elements of `dtype`. */
export interface BufferHandle {
  /** Number of elements. */
  readonly size: number;
  /** Element type. */
  readonly dtype: DType;
}

/** The typed array a backend returns from {@link Backend.read}. */
export type HostArray = Float32Array | Float64Array | Int32Array | Uint8Array;

/** Elementwise unary kernels. `not` is for bool tensors; the rest take and give f32. */
export type UnaryOp =
  | "neg"
  | "exp"
  | "log"
  | "sqrt"
  | "rsqrt"
  | "abs"
  | "sign"
  | "tanh"
  | "sigmoid"
  | "relu"
  | "silu"
  | "gelu"
  | "square"
  | "reciprocal"
  | "not";

/**
 * Elementwise binary kernels with broadcasting. Comparisons and `and`/`or` write bool; the
 * `*_backward` ops are fused derivatives `(x or y, dy) -> dx` that keep backward passes at one
 * kernel per op.
 */
export type BinaryOp =
  | "add"
  | "sub"
  | "mul"
  | "div"
  | "pow"
  | "minimum"
  | "maximum"
  | "eq"
  | "ne"
  | "lt"
  | "le"
  | "gt"
  | "ge"
  | "and"
  | "or"
  | "relu_backward"
  | "silu_backward"
  | "gelu_backward"
  | "tanh_backward"
  | "sigmoid_backward";

/** Reductions over the last axis of an `[outer, inner]` view. `argmax`/`argmin` write i32. */
export type ReduceOp = "sum" | "max" | "min" | "argmax" | "argmin";

/**
 * Parameters of every kernel in the catalogue, by kernel name. Input and output buffers are
 * listed in the doc of each entry as `inputs -> outputs`.
 */
export interface KernelParams {
  /** `[] -> [out]`: every element set to `value`. */
  fill: { value: number };
  /** `[x] -> [y]`: converts between dtypes (f32 -> i32 truncates toward zero; bool is 0/1). */
  cast: Record<string, never>;
  /** `[x] -> [y]`: same-size elementwise op. */
  unary: { op: UnaryOp };
  /** `[a, b] -> [out]`: out is contiguous of `shape`; strides of 0 broadcast. */
  binary: {
    op: BinaryOp;
    shape: readonly number[];
    aStrides: readonly number[];
    bStrides: readonly number[];
  };
  /** `[cond(bool), a, b] -> [out]`: `cond ? a : b` with broadcasting strides. */
  where: {
    shape: readonly number[];
    condStrides: readonly number[];
    aStrides: readonly number[];
    bStrides: readonly number[];
  };
  /**
   * `[x] -> [y]` (y read-modify-write): for every index of `shape`,
   * `y[outOffset + idx·outStrides] = x[inOffset + idx·inStrides]`. Covers permute, slice,
   * broadcast-expand and writing a part of a concatenation.
   */
  copy: {
    shape: readonly number[];
    inStrides: readonly number[];
    inOffset: number;
    outStrides: readonly number[];
    outOffset: number;
  };
  /**
   * `[src] -> [y]` (y read-modify-write): `y[i] += src[i]` for `i < n`, both f32. Autograd adds a
   * gradient into the one it already holds with it, so no third buffer is allocated.
   */
  accumulate: { n: number };
  /** `[x] -> [y]`: reduces each row of the `[outer, inner]` view to one value. */
  reduce: { op: ReduceOp; outer: number; inner: number };
  /**
   * `[a, b] -> [c]`: `c[bt] = op(a[bt]) · op(b[bt])` with `c[bt]` of `[m, n]`; `a[bt]` is `[m, k]`
   * (stored `[k, m]` when `transA`), `b[bt]` is `[k, n]` (stored `[n, k]` when `transB`). Batch
   * strides of 0 broadcast one matrix over the batch.
   */
  matmul: {
    batch: number;
    m: number;
    n: number;
    k: number;
    transA: boolean;
    transB: boolean;
    aBatchStride: number;
    bBatchStride: number;
    /**
     * A product of `matmul`'s backward pass: its bits feed only the optimizer, never another
     * product they must equal, so a backend may run it on a kernel whose rounding depends on
     * `m` (the CPU backend's native BLAS). Default false.
     */
    gradient?: boolean;
  };
  /** `[x] -> [y]`: row-wise softmax (or log-softmax when `log`) of `[rows, cols]`. */
  softmax: { rows: number; cols: number; log: boolean };
  /** `[y, dy] -> [dx]`: backward of {@link KernelParams.softmax} from its output `y`. */
  softmax_backward: { rows: number; cols: number; log: boolean };
  /** `[x] -> [lse]`: row-wise log-sum-exp of `[rows, cols]`, computed with the max shift. */
  logsumexp: { rows: number; cols: number };
  /** `[x] -> [y]`: inclusive prefix sum along the last axis of `[outer, inner]`, optionally reversed. */
  cumsum: { outer: number; inner: number; reverse: boolean };
  /** `[x, idx(i32)] -> [y]`: `y[o, j] = x[o, idx[o, j]]` with x `[outer, n]`, idx and y `[outer, m]`. */
  gather: { outer: number; n: number; m: number };
  /** `[idx(i32), src] -> [y]` (y read-modify-write): `y[o, idx[o, j]] += src[o, j]`. */
  scatter_add: { outer: number; n: number; m: number };
  /** `[x, idx(i32)] -> [y]`: `y[o, j, i] = x[o, idx[j], i]`, x `[outer, n, inner]`, y `[outer, m, inner]`. */
  index_select: { outer: number; n: number; inner: number; m: number };
  /** `[idx(i32), src] -> [y]` (y read-modify-write): `y[o, idx[j], i] += src[o, j, i]`. */
  index_add: { outer: number; n: number; inner: number; m: number };
  /** `[x, w] -> [y, rstd]`: `y = x · rsqrt(mean(x²) + eps) · w` per row of `[rows, cols]`. */
  rms_norm: { rows: number; cols: number; eps: number };
  /** `[x, w, rstd, dy] -> [dx, dw]`: backward of {@link KernelParams.rms_norm}. */
  rms_norm_backward: { rows: number; cols: number };
  /** `[x, w, b] -> [y, mean, rstd]`: `y = (x − mean) · rstd · w + b` per row. */
  layer_norm: { rows: number; cols: number; eps: number };
  /** `[x, w, mean, rstd, dy] -> [dx, dw, db]`: backward of {@link KernelParams.layer_norm}. */
  layer_norm_backward: { rows: number; cols: number };
  /**
   * `[x, cos, sin] -> [y]`: rotate-half rotary embedding of x `[batch, heads, t, d]` with tables
   * `[tableBatch, t, rot/2]` (tableBatch 1 or batch) applied to the first `rot` features;
   * `inverse` rotates by the negative angle (the backward pass).
   */
  rope: {
    batch: number;
    heads: number;
    t: number;
    d: number;
    rot: number;
    tableBatch: number;
    inverse: boolean;
  };
  /**
   * `[q, k, v, (mask)] -> [o, lse]`: scaled dot-product attention. q `[batch, heads, tq, d]`,
   * k and v `[batch, kvHeads, tk, d]` (heads a multiple of kvHeads: grouped-query attention);
   * with `causal`, query i attends keys j <= (tk − tq) + i, so a KV prefix of tk − tq cached
   * positions comes first. The optional u8 mask `[batch, tk]` drops keys where it is 0 (padding).
   * lse `[batch, heads, tq]` is saved for the backward pass (−Infinity for a row that sees nothing).
   */
  attention: {
    batch: number;
    heads: number;
    kvHeads: number;
    tq: number;
    tk: number;
    d: number;
    scale: number;
    causal: boolean;
    hasMask: boolean;
  };
  /** `[q, k, v, o, lse, do, (mask)] -> [dq, dk, dv]`: backward of {@link KernelParams.attention}. */
  attention_backward: KernelParams["attention"];
  /**
   * `[logits, tokens(i32)] -> [logprob, lse]`: `logprob[r] = logits[r, tokens[r]] − lse[r]` over
   * rows of `[rows, vocab]`, without materialising the softmax.
   */
  logprobs: { rows: number; vocab: number };
  /** `[logits, tokens, lse, dlogprob] -> [dlogits]`: `dlogits = dlp · (onehot − softmax)`. */
  logprobs_backward: { rows: number; vocab: number };
  /** `[logits] -> [entropy, lse]`: `H[r] = lse − Σ p·z`, the entropy of softmax(logits[r]). */
  entropy: { rows: number; vocab: number };
  /** `[logits, lse, entropy, dH] -> [dlogits]`: `dlogits = −dH · p · (log p + H)`. */
  entropy_backward: { rows: number; vocab: number };
  /**
   * `[grad] -> [param, m, v]` (all three read-modify-write): one AdamW step with decoupled weight
   * decay, `lrT = lr` and bias corrections `bc1 = 1 − β1^t`, `bc2 = 1 − β2^t` computed by the caller.
   */
  adamw: {
    lr: number;
    beta1: number;
    beta2: number;
    eps: number;
    weightDecay: number;
    bc1: number;
    bc2: number;
  };
}

/** The name of a kernel in the catalogue. */
export type KernelName = keyof KernelParams;

/** Memory a backend holds right now. */
export interface MemoryInfo {
  /** Buffers allocated and not yet freed. */
  liveBuffers: number;
  /** Bytes in those buffers. */
  liveBytes: number;
}

/** An execution backend: the narrow interface every op is written against. */
export interface Backend {
  /** Short name, e.g. `"cpu"` or `"webgpu"`. */
  readonly name: string;
  /** Allocates a zero-filled buffer of `size` elements. */
  alloc(size: number, dtype: DType): BufferHandle;
  /** Releases a buffer; using it afterwards is an error. */
  free(buffer: BufferHandle): void;
  /** Copies host values into a buffer (lengths must match). */
  write(buffer: BufferHandle, data: ArrayLike<number>): void;
  /** Copies a buffer back to the host. */
  read(buffer: BufferHandle): Promise<HostArray>;
  /**
   * Runs one kernel of the catalogue. Outputs must not alias inputs: a buffer the kernel both
   * reads and writes is passed once, as an output marked read-modify-write (AdamW's param, m, v).
   */
  run<K extends KernelName>(
    kernel: K,
    inputs: readonly BufferHandle[],
    outputs: readonly BufferHandle[],
    params: KernelParams[K],
  ): void;
  /** Live buffer counters, for leak tests. */
  memory(): MemoryInfo;
  /**
   * How an f32 buffer stores its values (see `setStorageFormat`); absent where a backend has
   * only f32 storage.
   */
  storageFormat?(buffer: BufferHandle): StorageFormat;
  /**
   * Re-stores an f32 buffer's values in `format`, in place: `"bf16"` rounds each value to the
   * nearest bfloat16 (ties to even) and halves the bytes held; `"f32"` widens back (exact).
   * Kernels still see f32 values. Absent where a backend has only f32 storage.
   */
  setStorageFormat?(buffer: BufferHandle, format: StorageFormat): void;
}

/**
 * How a backend stores an f32 tensor's values: `"f32"`, or `"bf16"` (bfloat16 bit patterns, half
 * the bytes; values are rounded once when stored, and widened exactly when read).
 */
export type StorageFormat = "f32" | "bf16";
