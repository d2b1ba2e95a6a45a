/**
 * Internal helpers shared by the loss files: argument checks that name the argument and the
 * value, mask handling, and masked reductions that stay on the device (no host reads).
 *
 * @module
 */

import { fmtShape, logicalAnd, type Tensor, where } from "@rlvr/tensor";

/** Throws a RangeError unless `value` is a finite number in the given range. */
export function checkNumber(
  where: string,
  name: string,
  value: unknown,
  range: { min?: number; max?: number; minExclusive?: boolean; allowInfinity?: boolean } = {},
): number {
  const { min, max, minExclusive = false, allowInfinity = false } = range;
  const bad = typeof value !== "number" || Number.isNaN(value) ||
    (!allowInfinity && !Number.isFinite(value)) ||
    (min !== undefined && (minExclusive ? value <= min : value < min)) ||
    (max !== undefined && value > max);
  if (bad) {
    const lo = min === undefined ? "" : `${minExclusive ? ">" : ">="} ${min}`;
    const hi = max === undefined ? "" : `<= ${max}`;
    const want = [lo, hi].filter((s) => s !== "").join(" and ");
    throw new RangeError(
      `${where}: ${name} must be a ${allowInfinity ? "" : "finite "}number${
        want ? ` ${want}` : ""
      }, got ${typeof value === "number" ? value : JSON.stringify(value)}`,
    );
  }
  return value as number;
}

/** Throws unless `t` is a 2-D floating tensor; returns `[B, T]`. */
export function check2d(where: string, name: string, t: unknown): [number, number] {
  if (typeof t !== "object" || t === null || !("shape" in t) || !("dtype" in t)) {
    throw new TypeError(`${where}: ${name} must be a Tensor, got ${String(t)}`);
  }
  const x = t as Tensor;
  if (x.ndim !== 2) {
    throw new RangeError(
      `${where}: ${name} must be a 2-D [B, T] tensor, got shape ${fmtShape(x.shape)}`,
    );
  }
  return [x.shape[0]!, x.shape[1]!];
}

/** Throws unless `t` has exactly `shape` (named after `ref`). */
export function checkSameShape(
  where: string,
  name: string,
  t: Tensor | undefined,
  ref: Tensor,
  refName: string,
): void {
  if (t === undefined) return;
  if (typeof t !== "object" || t === null || !("shape" in t)) {
    throw new TypeError(`${where}: ${name} must be a Tensor, got ${String(t)}`);
  }
  const same = t.shape.length === ref.shape.length && t.shape.every((d, i) => d === ref.shape[i]);
  if (!same) {
    throw new RangeError(
      `${where}: ${name} shape ${fmtShape(t.shape)} must equal ${refName} shape ${
        fmtShape(ref.shape)
      }`,
    );
  }
}

/** Throws unless `t` is a float tensor (dtype f32). */
export function checkFloat(where: string, name: string, t: Tensor | undefined): void {
  if (t !== undefined && t.dtype !== "f32") {
    throw new TypeError(`${where}: ${name} must be a float (f32) tensor, got dtype ${t.dtype}`);
  }
}

/** The mask as bool (valid positions true): bool stays, numbers are valid where > 0. */
export function validOf(mask: Tensor): Tensor {
  return mask.dtype === "bool" ? mask.share() : mask.gt(0);
}

/** `x` with masked positions replaced by 0 (keeps gradients on valid positions only). */
export function zeroMasked(x: Tensor, valid: Tensor): Tensor {
  return where(valid, x, 0);
}

/** Masked mean of `x` over all valid positions (0 when there are none). */
export function maskedMean(x: Tensor, maskF: Tensor): Tensor {
  return x.mul(maskF).sum().div(maskF.sum().clamp(1));
}

/** Masked mean of a boolean indicator over valid positions. */
export function maskedFraction(indicator: Tensor, maskF: Tensor): Tensor {
  return maskedMean(indicator.cast("f32"), maskF);
}

/** Minimum of `x` over valid positions (+Infinity when there are none). */
export function maskedMin(x: Tensor, valid: Tensor): Tensor {
  return where(valid, x, Infinity).min();
}

/** Maximum of `x` over valid positions (−Infinity when there are none). */
export function maskedMax(x: Tensor, valid: Tensor): Tensor {
  return where(valid, x, -Infinity).max();
}

/** Per-row masked mean `[B]` (0 for empty rows; veRL clamps the count to ≥ 1 the same way). */
export function rowMean(x: Tensor, maskF: Tensor): Tensor {
  return x.mul(maskF).sum(1).div(maskF.sum(1).clamp(1));
}

/** Logical and of two bool tensors. */
export function and(a: Tensor, b: Tensor): Tensor {
  return logicalAnd(a, b);
}

/** Throws when `options` has a key outside `known`, listing the known keys. */
export function checkKnownKeys(
  where: string,
  what: string,
  options: object,
  known: readonly string[],
): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new RangeError(
        `${where}: unknown ${what} ${JSON.stringify(key)}; valid ${what}s: ${known.join(", ")}`,
      );
    }
  }
}
