/**
 * The `matmul` kernel: numbered variants (in the style of llm.c) and the choice between them.
 *
 * Design: variant 1 (`matmul_v1.ts`, plain 16×16 tiling) is the reference and stays as simple as
 * it is; faster variants are added beside it, never in place of it, and every variant must match
 * the CPU oracle on every shape, so a test can force any of them. Variant 2 (`matmul_v2.ts`) is
 * register-blocked with `vec4` loads, for large matrices; variant 3 (`matmul_v3.ts`) is a GEMV
 * for a tiny `m` (decoding). {@link pickMatmulVariant} chooses by shape unless a backend forces
 * a variant (option `matmulVariant`, env `RLVR_MATMUL_VARIANT`, or the `matmulVariant`
 * property). The shape thresholds are first guesses that were only checked for correctness (no
 * GPU was available when they were written); `deno task bench` prints the per-variant numbers to
 * tune them with.
 *
 * @module
 */

import type { KernelParams } from "../../types.ts";
import type { GpuKernel } from "./_wgsl.ts";
import { matmulV1 } from "./matmul_v1.ts";
import { matmulV2 } from "./matmul_v2.ts";
import { matmulV3 } from "./matmul_v3.ts";

/**
 * A numbered matmul kernel of the WebGPU backend: 1 = 16×16 shared-memory tiles (the reference),
 * 2 = register-blocked 64×64 tiles with `vec4` loads, 3 = GEMV for tiny `m`.
 *
 * @example Usage
 * ```ts
 * import { MATMUL_VARIANTS, type MatmulVariant } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const v: MatmulVariant = 2;
 * assert.ok(MATMUL_VARIANTS.includes(v));
 * ```
 */
export type MatmulVariant = 1 | 2 | 3;

/**
 * Every {@link MatmulVariant}, in order.
 *
 * @example Usage
 * ```ts
 * import { MATMUL_VARIANTS } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(MATMUL_VARIANTS, [1, 2, 3]);
 * ```
 */
export const MATMUL_VARIANTS: readonly MatmulVariant[] = Object.freeze([1, 2, 3]);

/**
 * The variant the WebGPU backend runs for a matmul of this shape when none is forced: 3 (GEMV)
 * for `m <= 4`, 2 (register-blocked) when `m` and `n` are at least 64 and `k` at least 16 (the
 * 64×64 tiles are then mostly full), else 1.
 *
 * @param p The kernel params of the matmul (only `m`, `n` and `k` matter).
 * @returns The variant.
 *
 * @example Usage
 * ```ts
 * import { pickMatmulVariant } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const shape = { batch: 1, transA: false, transB: true, aBatchStride: 0, bBatchStride: 0 };
 * assert.equal(pickMatmulVariant({ ...shape, m: 1, n: 4096, k: 4096 }), 3);
 * assert.equal(pickMatmulVariant({ ...shape, m: 1024, n: 1024, k: 1024 }), 2);
 * assert.equal(pickMatmulVariant({ ...shape, m: 33, n: 17, k: 5 }), 1);
 * ```
 */
export function pickMatmulVariant(
  p: Pick<KernelParams["matmul"], "m" | "n" | "k">,
): MatmulVariant {
  if (p.m <= 4) return 3;
  if (p.m >= 64 && p.n >= 64 && p.k >= 16) return 2;
  return 1;
}

/**
 * Parses a matmul variant setting: `"auto"` (or empty/undefined) or one of
 * {@link MATMUL_VARIANTS} as a number or string. Throws naming `where`, the value and the
 * accepted ones.
 *
 * @param value The setting, e.g. the value of env `RLVR_MATMUL_VARIANT`.
 * @param where What the value came from, for the error message.
 * @returns The variant, or `"auto"`.
 *
 * @example Usage
 * ```ts
 * import { parseMatmulVariant } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(parseMatmulVariant("2", "RLVR_MATMUL_VARIANT"), 2);
 * assert.equal(parseMatmulVariant(undefined, "RLVR_MATMUL_VARIANT"), "auto");
 * assert.throws(() => parseMatmulVariant("fast", "RLVR_MATMUL_VARIANT"), /got "fast"/);
 * ```
 */
export function parseMatmulVariant(
  value: string | number | undefined,
  where: string,
): MatmulVariant | "auto" {
  if (value === undefined || value === "" || value === "auto") return "auto";
  const v = typeof value === "number" ? value : Number(value.trim());
  if ((MATMUL_VARIANTS as readonly number[]).includes(v)) return v as MatmulVariant;
  throw new RangeError(
    `${where}: the matmul variant must be "auto" or one of ${MATMUL_VARIANTS.join(", ")}, ` +
      `got ${JSON.stringify(value)}`,
  );
}

/** `matmul`: `c[bt] = op(a[bt]) · op(b[bt])`, by the forced or the shape-picked variant. */
export const matmul: GpuKernel<"matmul"> = ([a, b], [c], p, ctx) => {
  const forced = ctx?.matmulVariant ?? "auto";
  const variant = forced === "auto" ? pickMatmulVariant(p) : forced;
  const run = variant === 3 ? matmulV3 : variant === 2 ? matmulV2 : matmulV1;
  return [run(a!, b!, c!, p)];
};
