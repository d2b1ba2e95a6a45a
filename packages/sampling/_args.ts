/**
 * Argument checks shared by every part of this package (private). Each check names the function
 * that was called, the argument, the offending value and what would be accepted, e.g.
 * `sampleToken: topP must be a finite number in (0, 1], got 1.5` or
 * `dynamicSample: groupSize must be an integer >= 2, got 1`.
 *
 * Design: checks run once per call on scalar options (cheap); per-element checks of logits rows
 * happen inside the samplers' own loops so a row is read only once.
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
  /** Accepts `Infinity` (only meaningful with `integer`, e.g. "no cap"). */
  allowInfinity?: boolean;
}

function describe(rule: NumberRule): string {
  const kind = rule.integer ? "an integer" : "a finite number";
  const inf = rule.allowInfinity ? " (or Infinity)" : "";
  const { min, max } = rule;
  if (min !== undefined && max !== undefined) {
    return `${kind} in ${rule.minExclusive ? "(" : "["}${min}, ${max}${
      rule.maxExclusive ? ")" : "]"
    }${inf}`;
  }
  if (min !== undefined) return `${kind} ${rule.minExclusive ? ">" : ">="} ${min}${inf}`;
  if (max !== undefined) return `${kind} ${rule.maxExclusive ? "<" : "<="} ${max}${inf}`;
  return kind + inf;
}

/** Formats a value for an error message (at most 80 characters). */
export function show(value: unknown): string {
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "a function";
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
  const isInf = rule.allowInfinity === true && value === Infinity;
  const ok = typeof value === "number" && (Number.isFinite(value) || isInf) &&
    (!rule.integer || isInf || Number.isInteger(value)) &&
    (rule.min === undefined || (rule.minExclusive ? value > rule.min : value >= rule.min)) &&
    (rule.max === undefined || (rule.maxExclusive ? value < rule.max : value <= rule.max));
  if (!ok) throw new RangeError(`${owner}: ${field} must be ${describe(rule)}, got ${show(value)}`);
  return value as number;
}

/** Returns `value` if it is a probability in [0, 1]. */
export function checkUnit(owner: string, field: string, value: unknown): number {
  return checkNumber(owner, field, value, { min: 0, max: 1 });
}

/** Returns `value` if it is a function, else throws a TypeError naming `field`. */
export function checkFunction<F>(owner: string, field: string, value: F): F {
  if (typeof value !== "function") {
    throw new TypeError(`${owner}: ${field} must be a function, got ${show(value)}`);
  }
  return value;
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
      `${owner}: ${field} must be one of ${choices.map((c) => `"${c}"`).join(", ")}, got ${
        show(value)
      }`,
    );
  }
  return value as T;
}

/** Throws unless `rewards` is an array of finite numbers. */
export function checkRewards(owner: string, field: string, rewards: unknown): readonly number[] {
  if (!Array.isArray(rewards) && !ArrayBuffer.isView(rewards)) {
    throw new TypeError(`${owner}: ${field} must be an array of numbers, got ${show(rewards)}`);
  }
  const arr = rewards as ArrayLike<unknown>;
  for (let i = 0; i < arr.length; i++) {
    const r = arr[i];
    if (typeof r !== "number" || !Number.isFinite(r)) {
      throw new RangeError(
        `${owner}: ${field}[${i}] must be a finite number, got ${show(r)}`,
      );
    }
  }
  return Array.from(arr as ArrayLike<number>);
}

/** Returns `value` if it is a boolean, else throws a TypeError naming `field`. */
export function checkBoolean(owner: string, field: string, value: unknown): boolean {
  if (typeof value !== "boolean") {
    throw new TypeError(`${owner}: ${field} must be true or false, got ${show(value)}`);
  }
  return value;
}

/** True for arrays and typed arrays (not DataView). */
export function isArrayLike(value: unknown): value is ArrayLike<unknown> {
  return (Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView))) &&
    typeof (value as ArrayLike<unknown>).length === "number";
}

/** Throws unless `values` is an array or typed array of finite numbers (length ≥ `minLength`). */
export function checkFiniteArray(
  owner: string,
  field: string,
  values: unknown,
  minLength = 0,
): ArrayLike<number> {
  if (!isArrayLike(values)) {
    throw new TypeError(
      `${owner}: ${field} must be an array or typed array of numbers, got ${show(values)}`,
    );
  }
  if (values.length < minLength) {
    throw new RangeError(
      `${owner}: ${field} has ${values.length} entries; it needs at least ${minLength}`,
    );
  }
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new RangeError(`${owner}: ${field}[${i}] is ${show(v)}; it must be a finite number`);
    }
  }
  return values as ArrayLike<number>;
}

/** Throws unless `input` is a plain object; `shape` describes the expected fields. */
export function checkObject(owner: string, field: string, input: unknown, shape: string): void {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new TypeError(`${owner}: ${field} must be an object ${shape}, got ${show(input)}`);
  }
}

/** Throws a TypeError listing the valid fields if `input` has a field outside `known`. */
export function checkKnownFields(
  owner: string,
  field: string,
  input: object,
  known: readonly string[],
): void {
  for (const key of Object.keys(input)) {
    if (!known.includes(key)) {
      throw new TypeError(
        `${owner}: unknown field ${JSON.stringify(key)} in ${field}; valid fields are ${
          known.join(", ")
        }`,
      );
    }
  }
}
