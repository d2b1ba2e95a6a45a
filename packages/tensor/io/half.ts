/**
 * Conversions between `f32` and the 16-bit float storage formats of checkpoints: IEEE 754
 * binary16 (`f16`) and bfloat16 (`bf16`).
 *
 * Design decisions:
 * - Halves are storage formats only. Tensors have no `f16`/`bf16` dtype: the safetensors reader
 *   widens halves to `f32` on load (exact: every f16 and bf16 value is an f32 value) and the writer
 *   narrows on save. Compute therefore never sees a half, and gradients and optimizer state keep
 *   full precision.
 * - Everything works on raw bit patterns in `Uint16Array`s, the way they lie in a file, so that
 *   NaN payloads, signed zeros and subnormals survive and the code does not depend on
 *   `Float16Array` (it is only used in tests as an independent oracle).
 * - Narrowing rounds to nearest, ties to even, like hardware and PyTorch. Overflow goes to ±Inf
 *   and NaN stays NaN (the quiet bit is set so that a NaN whose payload lived only in the dropped
 *   bits cannot turn into an infinity).
 * - Inputs that are JavaScript numbers (f64) are first rounded to f32. That double rounding is
 *   harmless: rounding to 24 bits and then to 11 (f16) or 8 (bf16) bits gives the same result as
 *   rounding once, because 24 ≥ 2·11 + 2.
 * - `f16ToF32` uses a 65536-entry table built on first use (256 KiB), so decoding a checkpoint is
 *   one table lookup per element.
 *
 * @module
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The f32 bit pattern of `x` (after rounding `x` to f32). */
function f32Bits(x: number): number {
  f32[0] = x;
  return u32[0]!;
}

/** Decodes one binary16 bit pattern to the f32 bit pattern of the same value. */
function f16BitsToF32Bits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exp = (h >>> 10) & 0x1f;
  let mant = h & 0x3ff;
  if (exp === 0x1f) return (sign | 0x7f800000 | (mant << 13)) >>> 0; // ±Inf, NaN (payload kept)
  if (exp !== 0) return (sign | ((exp + 112) << 23) | (mant << 13)) >>> 0; // normal: rebias 15 -> 127
  if (mant === 0) return sign >>> 0; // ±0
  // Subnormal: value = mant · 2^-24. Normalise so that the leading 1 becomes implicit.
  let e = 113; // f32 biased exponent of 2^-14, the f16 subnormal scale
  while ((mant & 0x400) === 0) {
    mant <<= 1;
    e--;
  }
  return (sign | (e << 23) | ((mant & 0x3ff) << 13)) >>> 0;
}

let f16Table: Uint32Array | null = null;

function table(): Uint32Array {
  if (f16Table === null) {
    f16Table = new Uint32Array(65536);
    for (let h = 0; h < 65536; h++) f16Table[h] = f16BitsToF32Bits(h);
  }
  return f16Table;
}

/** Encodes an f32 bit pattern as binary16, rounding to nearest with ties to even. */
function f32BitsToF16Bits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) {
    // Inf stays Inf; NaN keeps the top payload bits and gets the quiet bit so it stays NaN.
    return mant === 0 ? sign | 0x7c00 : sign | 0x7c00 | 0x200 | (mant >>> 13);
  }
  if (exp >= 143) return sign | 0x7c00; // |x| >= 2^16: beyond the f16 range even before rounding
  if (exp >= 113) {
    // Normal f16 range (2^-14 <= |x| < 2^16). A carry out of the mantissa correctly bumps the
    // exponent, and out of the largest exponent it gives 0x7c00 (Inf).
    let h = ((exp - 112) << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1)) h++;
    return sign | h;
  }
  if (exp < 102) return sign; // |x| < 2^-25: rounds to ±0 (2^-25 itself is the tie, handled below)
  // Subnormal f16: count units of 2^-24. The full 24-bit significand m is worth m · 2^(exp-150),
  // i.e. m >> (126 - exp) units, with the shifted-out bits deciding the rounding.
  const m = mant | 0x800000;
  const shift = 126 - exp; // 14 ..= 24
  let h = m >>> shift;
  const rest = m & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  if (rest > half || (rest === half && (h & 1) === 1)) h++; // may round up to the smallest normal
  return sign | h;
}

/**
 * Widens IEEE binary16 bit patterns to f32 values (exact; NaN payloads, signed zeros and
 * subnormals are preserved).
 *
 * @param bits One binary16 bit pattern per element, as stored in a file.
 * @returns The same values as f32.
 *
 * @example Usage
 * ```ts
 * import { f16ToF32 } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // 0x3c00 = 1, 0xc000 = -2, 0x7bff = 65504 (largest f16), 0x0001 = 2^-24 (smallest subnormal)
 * const out = f16ToF32(new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00]));
 * assert.deepEqual([...out], [1, -2, 65504, 2 ** -24, Infinity]);
 * ```
 */
export function f16ToF32(bits: Uint16Array): Float32Array {
  const t = table();
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = t[bits[i]!]!;
  return out;
}

/**
 * Narrows values to IEEE binary16 bit patterns, rounding to nearest with ties to even.
 * Values beyond ±65504 (after rounding) become ±Inf; NaN stays NaN; values below half the smallest
 * subnormal (2^-25) become ±0.
 *
 * @param values Values to narrow; plain numbers are first rounded to f32 (harmless, see module doc).
 * @returns One binary16 bit pattern per value.
 *
 * @example Usage
 * ```ts
 * import { f16ToF32, f32ToF16 } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const bits = f32ToF16([1, 1 + 2 ** -11, 1e6, 0.1]);
 * assert.equal(bits[0], 0x3c00);
 * assert.equal(bits[1], 0x3c00); // a tie: rounds to the even neighbour 1
 * assert.equal(bits[2], 0x7c00); // overflow: +Inf
 * assert.equal(f16ToF32(bits)[3], 0.0999755859375); // nearest f16 to 0.1
 * ```
 */
export function f32ToF16(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  if (values instanceof Float32Array) {
    const src = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < src.length; i++) out[i] = f32BitsToF16Bits(src[i]!);
  } else {
    for (let i = 0; i < values.length; i++) out[i] = f32BitsToF16Bits(f32Bits(values[i]!));
  }
  return out;
}

/**
 * Widens bfloat16 bit patterns to f32 values (exact: a bf16 is the top half of an f32, so the
 * f32 bits are `u16 << 16`).
 *
 * @param bits One bfloat16 bit pattern per element, as stored in a file.
 * @returns The same values as f32.
 *
 * @example Usage
 * ```ts
 * import { bf16ToF32 } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // 0x3f80 = 1, 0xc040 = -3, 0x3e20 = 0.15625, 0xff80 = -Inf
 * const out = bf16ToF32(new Uint16Array([0x3f80, 0xc040, 0x3e20, 0xff80]));
 * assert.deepEqual([...out], [1, -3, 0.15625, -Infinity]);
 * ```
 */
export function bf16ToF32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = bits[i]! << 16;
  return out;
}

/** Encodes an f32 bit pattern as bfloat16, rounding the dropped 16 bits to nearest, ties to even. */
function f32BitsToBf16Bits(x: number): number {
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) {
    return ((x >>> 16) | 0x40) & 0xffff; // NaN: keep sign and top payload, force the quiet bit
  }
  // Adding 0x7fff plus the lowest kept bit rounds to nearest with ties to even; a carry moves into
  // the exponent (and from the largest finite value into Inf), which is the correct result.
  // x + 0x8000 < 2^32 for every non-NaN pattern, so plain number arithmetic cannot overflow.
  return Math.floor((x + 0x7fff + ((x >>> 16) & 1)) / 65536) & 0xffff;
}

/**
 * Narrows values to bfloat16 bit patterns, rounding to nearest with ties to even (as PyTorch
 * does). NaN stays NaN; values that round beyond the largest bf16 become ±Inf.
 *
 * @param values Values to narrow; plain numbers are first rounded to f32 (harmless, see module doc).
 * @returns One bfloat16 bit pattern per value.
 *
 * @example Usage
 * ```ts
 * import { bf16ToF32, f32ToBf16 } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const bits = f32ToBf16([1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, NaN]);
 * assert.equal(bits[0], 0x3f80);
 * assert.equal(bits[1], 0x3f80); // tie between 1 and 1 + 2^-7: the even one, 1
 * assert.equal(bf16ToF32(bits)[2], 1 + 2 ** -6); // tie: rounds up to the even neighbour
 * assert.ok(Number.isNaN(bf16ToF32(bits)[3]));
 * ```
 */
export function f32ToBf16(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  if (values instanceof Float32Array) {
    const src = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < src.length; i++) out[i] = f32BitsToBf16Bits(src[i]!);
  } else {
    for (let i = 0; i < values.length; i++) out[i] = f32BitsToBf16Bits(f32Bits(values[i]!));
  }
  return out;
}
