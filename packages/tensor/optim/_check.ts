/**
 * Validation shared by the optimizer files (private to `optim/`): every hyperparameter is
 * checked where it enters, and the error names the owner, the field, the value and the range
 * that would be accepted, e.g. `AdamW: lr must be a finite number >= 0, got -1`.
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
}

function describe(rule: NumberRule): string {
  const kind = rule.integer ? "an integer" : "a finite number";
  const { min, max } = rule;
  if (min !== undefined && max !== undefined) {
    return `${kind} in ${rule.minExclusive ? "(" : "["}${min}, ${max}${
      rule.maxExclusive ? ")" : "]"
    }`;
  }
  if (min !== undefined) return `${kind} ${rule.minExclusive ? ">" : ">="} ${min}`;
  if (max !== undefined) return `${kind} ${rule.maxExclusive ? "<" : "<="} ${max}`;
  return kind;
}

/** Formats a value for an error message. */
export function show(value: unknown): string {
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (value === undefined) return "undefined";
  if (
    typeof value === "object" && value !== null && !Array.isArray(value) &&
    value.toString !== Object.prototype.toString
  ) {
    return String(value); // e.g. a Tensor: "Tensor([2, 3], f32, cpu)"
  }
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
  const ok = typeof value === "number" && Number.isFinite(value) &&
    (!rule.integer || Number.isInteger(value)) &&
    (rule.min === undefined || (rule.minExclusive ? value > rule.min : value >= rule.min)) &&
    (rule.max === undefined || (rule.maxExclusive ? value < rule.max : value <= rule.max));
  if (!ok) throw new RangeError(`${owner}: ${field} must be ${describe(rule)}, got ${show(value)}`);
  return value as number;
}

/** Returns `value` if it is a boolean, else throws a TypeError naming `field`. */
export function checkBoolean(owner: string, field: string, value: unknown): boolean {
  if (typeof value !== "boolean") {
    throw new TypeError(`${owner}: ${field} must be true or false, got ${show(value)}`);
  }
  return value;
}

/**
 * `defaults` overridden by the defined fields of `options`; an unknown field (e.g. a snake_case
 * `weight_decay`) is an error listing the known ones, so a typo never silently falls back.
 */
export function mergeOptions<H extends object>(kind: string, defaults: H, options: object): H {
  const merged = { ...defaults };
  for (const [key, value] of Object.entries(options ?? {})) {
    if (!(key in defaults)) {
      throw new TypeError(
        `${kind}: unknown option ${JSON.stringify(key)}; known options: ${
          Object.keys(defaults).join(", ")
        }`,
      );
    }
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  return merged;
}
