/**
 * Checks shared by this package's configs and models (private): a config error naming the
 * source, field, value and what is accepted, and the one report of every missing, unexpected
 * and mis-shaped tensor when a model is built over existing tensors.
 *
 * @module
 */

import { fmtShape, type Tensor } from "@rlvr/tensor";

/** Throws a RangeError `${source}: ${field} must be ${want}, got ${value}`. */
export function fail(source: string, field: string, value: unknown, want: string): never {
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  throw new RangeError(`${source}: ${field} must be ${want}, got ${shown}`);
}

/** `value` if it is an integer >= `min`, else a {@link fail}. */
export function int(source: string, field: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    fail(source, field, value, `an integer >= ${min}`);
  }
  return value;
}

/**
 * Every way `params` misses the names and shapes of `want`: names missing, names not wanted,
 * and tensors disposed, mis-shaped, not f32, not leaves or on another backend than the first.
 * Empty when they fit.
 */
export function paramProblems(
  want: ReadonlyMap<string, readonly number[]>,
  params: ReadonlyMap<string, Tensor>,
): { missing: string[]; unexpected: string[]; wrong: string[] } {
  const missing = [...want.keys()].filter((n) => !params.has(n));
  const unexpected = [...params.keys()].filter((n) => !want.has(n));
  const wrong: string[] = [];
  let backend: Tensor["backend"] | null = null;
  for (const [name, t] of params) {
    const shape = want.get(name);
    if (shape === undefined) continue;
    if (t.isDisposed) {
      wrong.push(`${name} is disposed`);
      continue;
    }
    if (t.shape.length !== shape.length || t.shape.some((n, i) => n !== shape[i])) {
      wrong.push(`${name} is ${fmtShape(t.shape)}, want ${fmtShape(shape)}`);
    }
    if (t.dtype !== "f32") wrong.push(`${name} is ${t.dtype}, want f32`);
    if (t.gradFn !== null) wrong.push(`${name} is the output of an op, want a leaf (detach it)`);
    backend ??= t.backend;
    if (t.backend !== backend) {
      wrong.push(`${name} lives on ${t.backend.name}, the others on ${backend.name}`);
    }
  }
  return { missing, unexpected, wrong };
}

/** The problems of {@link paramProblems} as one message part, `missing: … | unexpected: … | mis-shaped: …`. */
export function describeProblems(
  p: { missing: string[]; unexpected: string[]; wrong: string[] },
): string {
  const parts: string[] = [];
  if (p.missing.length > 0) parts.push(`missing: ${p.missing.join(", ")}`);
  if (p.unexpected.length > 0) parts.push(`unexpected: ${p.unexpected.join(", ")}`);
  if (p.wrong.length > 0) parts.push(`mis-shaped: ${p.wrong.join("; ")}`);
  return parts.join(" | ");
}
