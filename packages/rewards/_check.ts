/**
 * Argument checks shared by this package (private). Every check names the function that was
 * called, the field, the offending value and what would be accepted, e.g.
 * `dapoOverlong: cacheLength must be a finite number in [0, 100], got 200`.
 *
 * @module
 */

/** The accepted range of a number. */
export interface NumberRule {
  /** Lower bound (inclusive unless `minExclusive`). */
  min?: number;
  /** Upper bound (inclusive unless `maxExclusive`). */
  max?: number;
  /** Excludes `min` itself. */
  minExclusive?: boolean;
  /** Excludes `max` itself. */
  maxExclusive?: boolean;
  /** Requires an integer. */
  integer?: boolean;
  /** Also accepts `Infinity` (e.g. "no time limit"). */
  allowInfinity?: boolean;
}

function describe(rule: NumberRule): string {
  const kind = rule.integer ? "an integer" : "a finite number";
  const { min, max } = rule;
  let s: string;
  if (min !== undefined && max !== undefined) {
    s = `${kind} in ${rule.minExclusive ? "(" : "["}${min}, ${max}${rule.maxExclusive ? ")" : "]"}`;
  } else if (min !== undefined) s = `${kind} ${rule.minExclusive ? ">" : ">="} ${min}`;
  else if (max !== undefined) s = `${kind} ${rule.maxExclusive ? "<" : "<="} ${max}`;
  else s = kind;
  return rule.allowInfinity ? `${s} (or Infinity)` : s;
}

/** Formats a value for an error message. */
export function show(value: unknown): string {
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (value === undefined) return "undefined";
  if (typeof value === "function") return `a function${value.name ? ` (${value.name})` : ""}`;
  if (value instanceof RegExp) return String(value);
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Returns `value` if it is a number obeying `rule`, else throws a RangeError naming `field`. */
export function checkNumber(
  owner: string,
  field: string,
  value: unknown,
  rule: NumberRule = {},
): number {
  const isNum = typeof value === "number" &&
    (Number.isFinite(value) || (rule.allowInfinity === true && value === Infinity));
  const ok = isNum &&
    (!rule.integer || Number.isInteger(value) || value === Infinity) &&
    (rule.min === undefined || (rule.minExclusive ? value > rule.min : value >= rule.min)) &&
    (rule.max === undefined || (rule.maxExclusive ? value < rule.max : value <= rule.max));
  if (!ok) throw new RangeError(`${owner}: ${field} must be ${describe(rule)}, got ${show(value)}`);
  return value as number;
}

/** Returns `value` if it is one of `choices`, else throws a TypeError naming `field`. */
export function checkChoice<T extends string>(
  owner: string,
  field: string,
  value: unknown,
  choices: readonly T[],
): T {
  if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
    throw new TypeError(
      `${owner}: ${field} must be one of ${choices.map((c) => JSON.stringify(c)).join(", ")}, got ${
        show(value)
      }`,
    );
  }
  return value as T;
}

/** Returns `value` if it is a function, else throws a TypeError naming `field` and `what`. */
export function checkFunction<F>(owner: string, field: string, value: unknown, what: string): F {
  if (typeof value !== "function") {
    throw new TypeError(`${owner}: ${field} must be ${what}, got ${show(value)}`);
  }
  return value as F;
}

/** Returns `value` if it is a non-empty string, else throws a TypeError naming `field`. */
export function checkName(owner: string, field: string, value: unknown): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw new TypeError(
      `${owner}: ${field} must be a non-empty string (it is the metric key), got ${show(value)}`,
    );
  }
  return value;
}

/** Returns `value` if it is a plain object (or undefined → `{}`), else throws naming `what`. */
export function checkOptions<T extends object>(owner: string, value: unknown, what: string): T {
  if (value === undefined) return {} as T;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${owner}: options must be an object ${what}, got ${show(value)}`);
  }
  return value as T;
}

/** The message of a thrown value. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return typeof e === "string" ? e : show(e);
}
