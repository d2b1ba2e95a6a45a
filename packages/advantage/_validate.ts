/**
 * Argument checks shared by every estimator (private to this package). Each check names the
 * function that was called, the argument, the offending value and what would be accepted, e.g.
 * `grpo: rewards[3] is NaN; rewards must be finite numbers`.
 *
 * Design: token matrices are validated only where the response mask is 1. Padding and
 * observation tokens are never read, so a caller may leave anything there (veRL's
 * `masked_sum` likewise ignores NaN outside the mask). Masks themselves are checked in full.
 *
 * @module
 */

import type { GroupIndex, TokenMatrix } from "./types.ts";

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
  if (typeof value === "string") return JSON.stringify(value);
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

function isArrayLike(value: unknown): value is ArrayLike<unknown> {
  return (Array.isArray(value) || ArrayBuffer.isView(value)) &&
    typeof (value as ArrayLike<unknown>).length === "number";
}

/** Throws unless `m` is a structurally valid {@link TokenMatrix}. */
export function checkMatrix(owner: string, field: string, m: unknown): TokenMatrix {
  const tm = m as TokenMatrix;
  if (
    typeof m !== "object" || m === null || !isArrayLike(tm.data) ||
    !Number.isInteger(tm.batch) || tm.batch < 0 || !Number.isInteger(tm.length) ||
    tm.length < 0
  ) {
    throw new TypeError(
      `${owner}: ${field} must be a TokenMatrix {data, batch, length} (dense row-major [batch, length], ` +
        `batch and length integers >= 0), got ${show(m)}`,
    );
  }
  if (tm.data.length !== tm.batch * tm.length) {
    throw new RangeError(
      `${owner}: ${field}.data has ${tm.data.length} entries but batch·length = ${tm.batch}·${tm.length} = ${
        tm.batch * tm.length
      }`,
    );
  }
  return tm;
}

/** Throws unless `mask` is a TokenMatrix holding only 0 and 1. */
export function checkMask(owner: string, field: string, mask: unknown): TokenMatrix {
  const m = checkMatrix(owner, field, mask);
  const { data, length } = m;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v !== 0 && v !== 1) {
      throw new RangeError(
        `${owner}: ${field}[${Math.floor(i / length)}, ${i % length}] is ${
          show(v)
        }; a mask must hold only 0 and 1`,
      );
    }
  }
  return m;
}

/**
 * Throws unless `m` is a TokenMatrix of the mask's shape whose entries are finite where the
 * mask is 1. Entries under a 0 are never read.
 */
export function checkTokens(
  owner: string,
  field: string,
  m: unknown,
  mask: TokenMatrix,
  maskField = "responseMask",
): TokenMatrix {
  const tm = checkMatrix(owner, field, m);
  if (tm.batch !== mask.batch || tm.length !== mask.length) {
    throw new RangeError(
      `${owner}: ${field} is [${tm.batch}, ${tm.length}] but ${maskField} is [${mask.batch}, ${mask.length}]; ` +
        `they must have the same shape`,
    );
  }
  const { data, length } = tm;
  const md = mask.data;
  for (let i = 0; i < data.length; i++) {
    if (md[i] === 0) continue;
    const v = data[i];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new RangeError(
        `${owner}: ${field}[${Math.floor(i / length)}, ${i % length}] is ${
          show(v)
        }; ${field} must be finite numbers where ${maskField} is 1`,
      );
    }
  }
  return tm;
}

/** Throws unless `values` has `batch` finite numbers. */
export function checkSequence(
  owner: string,
  field: string,
  values: unknown,
  batch: number,
  batchFrom = "responseMask",
): ArrayLike<number> {
  if (!isArrayLike(values)) {
    throw new TypeError(
      `${owner}: ${field} must be an array or typed array of ${batch} numbers, got ${show(values)}`,
    );
  }
  if (values.length !== batch) {
    throw new RangeError(
      `${owner}: ${field} has ${values.length} entries but ${batchFrom} has batch ${batch}; they must match`,
    );
  }
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new RangeError(
        `${owner}: ${field}[${i}] is ${show(v)}; ${field} must be finite numbers`,
      );
    }
  }
  return values as ArrayLike<number>;
}

/** Throws unless `index` holds `batch` group ids (strings or finite numbers). */
export function checkIndex(
  owner: string,
  field: string,
  index: unknown,
  batch: number,
): GroupIndex {
  if (!Array.isArray(index)) {
    throw new TypeError(
      `${owner}: ${field} must be an array of ${batch} group ids (strings or numbers, veRL's uid), got ${
        show(index)
      }`,
    );
  }
  if (index.length !== batch) {
    throw new RangeError(
      `${owner}: ${field} has ${index.length} entries but the batch is ${batch}; they must match`,
    );
  }
  for (let i = 0; i < index.length; i++) {
    const v: unknown = index[i];
    if (typeof v !== "string" && !(typeof v === "number" && Number.isFinite(v))) {
      throw new TypeError(
        `${owner}: ${field}[${i}] is ${show(v)}; group ids must be strings or finite numbers`,
      );
    }
  }
  return index as GroupIndex;
}

/** Throws a TypeError saying that `field` is required by `owner`. */
export function missing(owner: string, field: string, what: string): never {
  throw new TypeError(`${owner}: ${field} is required (${what}), got undefined`);
}

/** The checked fields of a group-relative outcome estimator's input. */
export interface CheckedOutcome {
  /** Sequence rewards, one per response. */
  rewards: ArrayLike<number>;
  /** The response mask. */
  mask: TokenMatrix;
  /** Group ids, one per response. */
  index: GroupIndex;
}

/** Checks `{rewards, responseMask, index}` of a group-relative outcome estimator. */
export function checkOutcome(
  owner: string,
  input: { rewards: unknown; responseMask: unknown; index: unknown },
): CheckedOutcome {
  checkObject(owner, input, "{rewards, responseMask, index, ...}");
  const mask = checkMask(owner, "responseMask", input.responseMask);
  const rewards = checkSequence(owner, "rewards", input.rewards, mask.batch);
  const index = checkIndex(owner, "index", input.index, mask.batch);
  return { rewards, mask, index };
}

/** Throws unless `input` is an object; `shape` describes the expected fields. */
export function checkObject(owner: string, input: unknown, shape: string): void {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new TypeError(`${owner}: input must be an object ${shape}, got ${show(input)}`);
  }
}
