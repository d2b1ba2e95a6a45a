/**
 * Rotary position embeddings (RoPE) as Hugging Face Llama and Qwen2 apply them: cos/sin tables
 * built once per sequence, and a fused kernel that rotates the first `rot` features of each head
 * in the "rotate half" layout, passing the rest through (partial rotary, as Phi and GPT-NeoX).
 *
 * Design: the tables are computed on the host in float64, not with tensor ops, because the kernel
 * catalogue has no sin/cos and angles for long positions need more precision than f32 ops give.
 * By default the angles are first rounded the way Hugging Face computes them in float32
 * (`inv_freq` and `position · inv_freq` are f32 products), because pretrained checkpoints were
 * trained against those rounded angles: for a 128-wide head at position 30000 an f32 angle near
 * 2.4e4 is off by up to half an f32 ulp there, ~1e-3 radians, enough to move logits. Tables from
 * an i32 tensor of positions come back as a Promise, since the positions must be read to the host.
 * The backward pass is the same kernel with the angle negated; the tables receive no gradient.
 * Llama 3 rope scaling (`scaling`) rewrites `inv_freq` as transformers'
 * `_compute_llama3_parameters` does, each step rounded to float32 like PyTorch's CPU kernels in
 * the default `"float32"` mode, so long-context checkpoints see the frequencies they were trained
 * with.
 *
 * @module
 */

import { record } from "../autograd.ts";
import type { Backend } from "../backend/types.ts";
import { tensor } from "../creation.ts";
import { getBackend } from "../runtime.ts";
import { fmtShape } from "../shape.ts";
import type { Tensor } from "../tensor.ts";
import { backendOf, empty, requireFloat } from "./_util.ts";

/** The cos and sin tables of {@link ropeTables}, each `[t, dim/2]` or `[batch, t, dim/2]`. */
export interface RopeTables {
  /** `cos(position · inv_freq)`. */
  cos: Tensor;
  /** `sin(position · inv_freq)`. */
  sin: Tensor;
}

/**
 * Llama 3 rope scaling (`rope_scaling` with `rope_type: "llama3"` in a Hugging Face config):
 * frequencies whose wavelength exceeds `originalMaxPositions / lowFreqFactor` are divided by
 * `factor`, those shorter than `originalMaxPositions / highFreqFactor` are kept, and the band in
 * between is interpolated smoothly.
 */
export interface RopeScaling {
  /** `factor`: how much the low frequencies are slowed down (8 in Llama 3.1, 32 in 3.2). */
  factor: number;
  /** `low_freq_factor` (1 in Llama 3.1). */
  lowFreqFactor: number;
  /** `high_freq_factor` (4 in Llama 3.1); must exceed `lowFreqFactor`. */
  highFreqFactor: number;
  /** `original_max_position_embeddings` (8192 in Llama 3.1). */
  originalMaxPositions: number;
}

/** Options of {@link ropeTables}. */
export interface RopeTablesOptions {
  /** Number of rotated features per head (even); the tables get `dim / 2` columns. */
  dim: number;
  /** Base of the frequencies, `inv_freq_i = theta^(−2i/dim)` (default 10000; Qwen2 uses 1e6). */
  theta?: number;
  /** Backend for the tables (default: that of a tensor `positions`, else `getBackend()`). */
  backend?: Backend;
  /**
   * `"float32"` (default) rounds `inv_freq` and `position · inv_freq` to float32 as Hugging Face
   * does, to match pretrained checkpoints; `"exact"` keeps the float64 angles.
   */
  angles?: "float32" | "exact";
  /** Llama 3 rope scaling of the frequencies (default none). */
  scaling?: RopeScaling;
}

/** Host positions for {@link ropeTables}: `[t]` shared by the batch, or one row `[t]` per sequence. */
export type RopePositions = readonly number[] | readonly (readonly number[])[];

/**
 * Cos/sin tables for {@link rope} at the given positions: `angle[.., t, i] = positions[.., t] ·
 * theta^(−2i/dim)` for `i < dim/2`. A 1-D `positions` `[t]` gives tables `[t, dim/2]` shared by
 * the batch; 2-D positions `[batch, t]` (left padding, packed sequences) give `[batch, t, dim/2]`.
 *
 * @param positions Token positions on the host (sync result), or an i32 tensor (read back, so the
 * result is a Promise).
 * @param options Rotary dimension, base and precision of the angles.
 * @returns The `cos` and `sin` tables; dispose both when done.
 *
 * @example Usage
 * ```ts
 * import { ropeTables } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { cos, sin } = ropeTables([0, 1], { dim: 4 });
 * assert.deepEqual(cos.shape, [2, 2]);
 * // Position 0 has angle 0; position 1 turns the first pair by 1 radian and the second by 0.01.
 * assert.deepEqual(await cos.toArray().then((r) => (r as number[][])[0]), [1, 1]);
 * assert.ok(Math.abs((await sin.toArray() as number[][])[1]![0]! - Math.sin(1)) < 1e-7);
 * ```
 *
 * @example Llama 3 rope scaling
 * ```ts
 * import { ropeTables } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const scaling = { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 64 };
 * const plain = await ropeTables([1], { dim: 8, theta: 1e4 }).sin.data();
 * const scaled = await ropeTables([1], { dim: 8, theta: 1e4, scaling }).sin.data();
 * // The fastest frequency (wavelength 2π < 64 / 4) is kept; the slowest (1e4^-0.75, wavelength
 * // ~6283 > 64) is divided by 8.
 * assert.equal(scaled[0], plain[0]);
 * assert.ok(Math.abs(scaled[3]! - Math.sin(1e4 ** -0.75 / 8)) < 1e-9);
 * ```
 */
export function ropeTables(positions: RopePositions, options: RopeTablesOptions): RopeTables;
/**
 * Cos/sin tables for {@link rope} from an i32 tensor of positions `[t]` or `[batch, t]`; the
 * positions are read back to the host, hence the Promise.
 *
 * @param positions i32 positions `[t]` or `[batch, t]`.
 * @param options Rotary dimension, base and precision of the angles.
 * @returns The `cos` and `sin` tables on the backend of `positions` unless `options.backend`.
 *
 * @example Usage
 * ```ts
 * import { arange, ropeTables } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { cos, sin } = await ropeTables(arange(3), { dim: 8, theta: 1e6 });
 * assert.deepEqual(sin.shape, [3, 4]);
 * cos.dispose();
 * sin.dispose();
 * ```
 */
export function ropeTables(positions: Tensor, options: RopeTablesOptions): Promise<RopeTables>;
export function ropeTables(
  positions: RopePositions | Tensor,
  options: RopeTablesOptions,
): RopeTables | Promise<RopeTables> {
  const dim = options.dim;
  if (!Number.isInteger(dim) || dim < 2 || dim % 2 !== 0) {
    throw new RangeError(
      `ropeTables: dim must be an even integer >= 2 (the rotary dimension), got ${dim}`,
    );
  }
  const theta = options.theta ?? 10000;
  if (!(Number.isFinite(theta) && theta > 0)) {
    throw new RangeError(`ropeTables: theta must be a finite number > 0, got ${theta}`);
  }
  const angles = options.angles ?? "float32";
  if (angles !== "float32" && angles !== "exact") {
    throw new RangeError(
      `ropeTables: angles must be "float32" or "exact", got ${JSON.stringify(angles)}`,
    );
  }
  const invFreq = inverseFrequencies(dim, theta, angles === "float32", options.scaling);
  if (Array.isArray(positions)) {
    const { values, lead } = hostPositions(positions as RopePositions);
    return buildTables(values, lead, invFreq, angles, options.backend ?? getBackend());
  }
  const t = positions as Tensor;
  if (t.dtype !== "i32" || (t.ndim !== 1 && t.ndim !== 2)) {
    const got = `${t.dtype} ${fmtShape(t.shape)}`;
    throw new TypeError(
      `ropeTables: a positions tensor must be i32 of shape [t] or [batch, t], got ${got}`,
    );
  }
  const backend = options.backend ?? t.backend;
  return t.data().then((values) => buildTables(values, t.shape, invFreq, angles, backend));
}

function hostPositions(positions: RopePositions): { values: number[]; lead: number[] } {
  if (positions.length > 0 && Array.isArray(positions[0])) {
    const rows = positions as readonly (readonly number[])[];
    const t = rows[0]!.length;
    rows.forEach((r, i) => {
      if (!Array.isArray(r) || r.length !== t) {
        const has = Array.isArray(r) ? r.length : "no array";
        throw new RangeError(
          `ropeTables: 2-D positions must be rows of equal length; row 0 has ${t}, row ${i} has ${has}`,
        );
      }
    });
    return { values: rows.flat(), lead: [rows.length, t] };
  }
  return { values: [...(positions as readonly number[])], lead: [positions.length] };
}

function checkScaling(s: RopeScaling): void {
  const bad = (field: string, value: unknown, want: string): never => {
    throw new RangeError(`ropeTables: scaling.${field} must be ${want}, got ${value}`);
  };
  for (const f of ["factor", "lowFreqFactor", "highFreqFactor", "originalMaxPositions"] as const) {
    const v = s[f];
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) bad(f, v, "a finite number > 0");
  }
  if (s.highFreqFactor <= s.lowFreqFactor) {
    bad("highFreqFactor", s.highFreqFactor, `> lowFreqFactor (${s.lowFreqFactor})`);
  }
}

/**
 * `inv_freq` of Hugging Face, optionally with Llama 3 scaling. In float32 mode every tensor op of
 * transformers is one rounding here: a Python scalar meets an f32 tensor as an f32 value, and
 * `scalar / tensor` is `tensor.reciprocal() * scalar` in PyTorch.
 */
function inverseFrequencies(
  dim: number,
  theta: number,
  f32: boolean,
  scaling: RopeScaling | undefined,
): number[] {
  const r = f32 ? Math.fround : (v: number) => v;
  // Hugging Face: inv_freq = 1 / base ** (arange(0, dim, 2).float() / dim), every step in f32.
  const base = Array.from(
    { length: dim / 2 },
    (_, i) => (f32 ? r(1 / r(theta ** r((2 * i) / dim))) : theta ** ((-2 * i) / dim)),
  );
  if (scaling === undefined) return base;
  checkScaling(scaling);
  const { factor, lowFreqFactor: low, highFreqFactor: high, originalMaxPositions: old } = scaling;
  const lowWavelen = r(old / low);
  const highWavelen = r(old / high);
  return base.map((inv) => {
    const wavelen = r(r(1 / inv) * r(2 * Math.PI));
    const llama = wavelen > lowWavelen ? r(inv / r(factor)) : inv;
    if (wavelen < highWavelen || wavelen > lowWavelen) return llama;
    const smooth = r(r(r(r(1 / wavelen) * r(old)) - r(low)) / r(high - low));
    return r(r(r(r(1 - smooth) * llama) / r(factor)) + r(smooth * llama));
  });
}

function buildTables(
  positions: ArrayLike<number>,
  lead: readonly number[],
  invFreq: readonly number[],
  angles: "float32" | "exact",
  backend: Backend,
): RopeTables {
  const half = invFreq.length;
  const f32 = angles === "float32";
  const cos = new Float64Array(positions.length * half);
  const sin = new Float64Array(positions.length * half);
  for (let t = 0; t < positions.length; t++) {
    const p = positions[t]!;
    if (!Number.isFinite(p)) {
      throw new RangeError(`ropeTables: position ${p} at flat index ${t} is not a finite number`);
    }
    for (let i = 0; i < half; i++) {
      const a = f32 ? Math.fround(Math.fround(p) * invFreq[i]!) : p * invFreq[i]!;
      cos[t * half + i] = Math.cos(a);
      sin[t * half + i] = Math.sin(a);
    }
  }
  const shape = [...lead, half];
  return { cos: tensor(cos, { shape, backend }), sin: tensor(sin, { shape, backend }) };
}

/**
 * Applies rotary embeddings to `x` `[batch, heads, t, headDim]` with tables from
 * {@link ropeTables}, rotating the first `rot = 2 · cos.shape.at(-1)` features and passing the
 * rest through. With `x1 = x[..., :rot/2]` and `x2 = x[..., rot/2:rot]`:
 * `y1 = x1·cos − x2·sin`, `y2 = x2·cos + x1·sin` (Hugging Face `rotate_half`). Gradients flow to
 * `x` only.
 *
 * @param x Queries or keys `[batch, heads, t, headDim]` (f32).
 * @param cos Table `[t, rot/2]` or `[batch or 1, t, rot/2]`.
 * @param sin Table of the same shape as `cos`.
 * @returns The rotated tensor, shaped like `x`.
 *
 * @example Usage
 * ```ts
 * import { rope, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // A quarter turn (cos 0, sin 1) maps the pair (x1, x2) = (1, 2) to (-2, 1); feature 3 is not rotated.
 * const x = tensor([1, 2, 7], { shape: [1, 1, 1, 3] });
 * const y = rope(x, tensor([[0]]), tensor([[1]]));
 * assert.deepEqual(await y.toArray(), [[[[-2, 1, 7]]]]);
 * ```
 */
export function rope(x: Tensor, cos: Tensor, sin: Tensor): Tensor {
  requireFloat("rope", x, "x");
  requireFloat("rope", cos, "cos");
  requireFloat("rope", sin, "sin");
  backendOf("rope", x, cos, sin);
  const xs = fmtShape(x.shape);
  const cs = fmtShape(cos.shape);
  if (x.ndim !== 4) {
    throw new RangeError(
      `rope: x must be [batch, heads, t, headDim], got ${xs}; move the heads axis before t`,
    );
  }
  const [batch, heads, t, d] = x.shape as [number, number, number, number];
  if (cos.ndim !== sin.ndim || cos.shape.some((n, i) => n !== sin.shape[i])) {
    throw new RangeError(`rope: cos ${cs} and sin ${fmtShape(sin.shape)} must have the same shape`);
  }
  if (cos.ndim !== 2 && cos.ndim !== 3) {
    throw new RangeError(
      `rope: tables must be [t, rot/2] or [batch, t, rot/2], got ${cs}; build them with ropeTables`,
    );
  }
  const half = cos.shape[cos.ndim - 1]!;
  const tableT = cos.shape[cos.ndim - 2]!;
  const tableBatch = cos.ndim === 3 ? cos.shape[0]! : 1;
  if (tableT !== t) {
    throw new RangeError(
      `rope: tables ${cs} cover ${tableT} positions but x ${xs} has t = ${t}; ` +
        `build the tables for the positions of x`,
    );
  }
  if (tableBatch !== 1 && tableBatch !== batch) {
    throw new RangeError(
      `rope: tables ${cs} have batch ${tableBatch} but x ${xs} has batch ${batch}; use 1 or ${batch}`,
    );
  }
  const rot = 2 * half;
  if (rot > d) {
    throw new RangeError(
      `rope: tables ${cs} rotate ${rot} features but x ${xs} has headDim ${d}; ` +
        `build them with dim <= ${d}`,
    );
  }
  const params = { batch, heads, t, d, rot, tableBatch };
  const y = empty(x.backend, x.shape, "f32");
  x.backend.run("rope", [x.buffer, cos.buffer, sin.buffer], [y.buffer], {
    ...params,
    inverse: false,
  });
  return record("rope", y, [x], [cos, sin], (g, [sc, ss]) => {
    const dx = empty(g.backend, g.shape, "f32");
    g.backend.run("rope", [g.buffer, sc!.buffer, ss!.buffer], [dx.buffer], {
      ...params,
      inverse: true,
    });
    return [dx];
  });
}
