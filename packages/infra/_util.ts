/**
 * Argument checks shared by the modules of this package (internal, not exported from `mod.ts`).
 *
 * @module
 */

/** Throws a RangeError unless `version` is a non-negative safe integer; returns it. */
export function checkVersion(version: unknown, what = "version"): number {
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) {
    throw new RangeError(
      `${what} must be a non-negative integer (0, 1, 2, ...), got ${String(version)}; ` +
        `use the trainer's optimizer step count`,
    );
  }
  return version;
}

/** Throws a RangeError unless `value` is an integer >= `min`; returns it. */
export function checkInt(value: unknown, what: string, min: number, fix: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`${what} must be an integer >= ${min}, got ${String(value)}; ${fix}`);
  }
  return value;
}

/** Throws a RangeError unless `value` is a finite number > 0; returns it. */
export function checkPositive(value: unknown, what: string, fix: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${what} must be a finite number > 0, got ${String(value)}; ${fix}`);
  }
  return value;
}
