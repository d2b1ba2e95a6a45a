/**
 * The environment as the CPU backend reads it: a variable counts only where the `env` permission
 * for it is already granted, so reading a setting never prompts and never throws (outside Deno,
 * or without the permission, every variable is unset).
 *
 * @module
 */

/**
 * The value of env `variable`, or undefined when it is unset or not readable without asking.
 *
 * @param variable The variable's name.
 * @returns Its value, or undefined.
 *
 * @example Usage
 * ```ts
 * import { envVar } from "./env.ts";
 * import assert from "node:assert/strict";
 * assert.equal(envVar("RLVR_SURELY_UNSET_VARIABLE"), undefined);
 * ```
 */
export function envVar(variable: string): string | undefined {
  try {
    const state = Deno.permissions.querySync({ name: "env", variable }).state;
    return state === "granted" ? Deno.env.get(variable) : undefined;
  } catch {
    return undefined; // not Deno, or no permission API: treat as unset
  }
}
