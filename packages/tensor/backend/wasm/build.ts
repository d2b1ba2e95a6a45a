/**
 * `deno task build:wasm`: compiles `matmul.wat` and `pointwise.wat` with wabt (npm, pinned in the
 * root deno.json) and writes `matmul_wasm_bytes.ts` and `pointwise_wasm_bytes.ts`, the binaries
 * as base64 strings.
 *
 * Design decision: the bytes are committed as a TypeScript module so that importing
 * `@rlvr/tensor` needs no build step, no file read and no permission; `build_test.ts` rebuilds
 * from the source and fails when the committed module is stale. One source gives four binaries,
 * so they cannot drift apart: the text as written (relaxed SIMD, `f32x4.relaxed_madd`), a
 * plain-SIMD128 rewrite of it (each multiply-add becomes `f32x4.add(f32x4.mul(x, y), z)`), and
 * both again importing a shared memory (`(memory 1 65536 shared)`, for worker threads).
 *
 * @module
 */

import wabtInit from "wabt";

/** The compiled binaries of `matmul.wat`. */
export interface WasmBinaries {
  /** Plain SIMD128 (multiply, then add): runs on every engine with WebAssembly SIMD. */
  simd: Uint8Array<ArrayBuffer>;
  /** Relaxed SIMD (`f32x4.relaxed_madd`): used where `WebAssembly.validate` accepts it. */
  relaxed: Uint8Array<ArrayBuffer>;
  /** {@link WasmBinaries.simd} importing a shared memory. */
  simdShared: Uint8Array<ArrayBuffer>;
  /** {@link WasmBinaries.relaxed} importing a shared memory. */
  relaxedShared: Uint8Array<ArrayBuffer>;
}

const MEMORY_IMPORT = '(import "env" "memory" (memory 1))';

/**
 * Makes the memory import of `wat` shared (maximum 4 GiB), for instances on several threads.
 * Throws unless `wat` has exactly one `(import "env" "memory" (memory 1))`.
 *
 * @param wat Module text.
 * @returns The text with a shared memory import.
 *
 * @example Usage
 * ```ts
 * import { toSharedMemory } from "./build.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   toSharedMemory('(module (import "env" "memory" (memory 1)))'),
 *   '(module (import "env" "memory" (memory 1 65536 shared)))',
 * );
 * ```
 */
export function toSharedMemory(wat: string): string {
  if (wat.split(MEMORY_IMPORT).length !== 2) {
    throw new Error(`toSharedMemory: expected exactly one ${MEMORY_IMPORT}`);
  }
  return wat.replace(MEMORY_IMPORT, '(import "env" "memory" (memory 1 65536 shared))');
}

const MADD =
  /\(f32x4\.relaxed_madd (\(local\.get \$\w+\)) (\(local\.get \$\w+\)) (\(local\.get \$\w+\))\)/g;

/**
 * Rewrites every `(f32x4.relaxed_madd (local.get $x) (local.get $y) (local.get $z))` of `wat` to
 * plain SIMD128 `(f32x4.add (f32x4.mul (local.get $x) (local.get $y)) (local.get $z))`. Throws
 * when a relaxed instruction is left in another form.
 *
 * @param wat Module text using relaxed multiply-adds.
 * @returns The plain SIMD128 text.
 *
 * @example Usage
 * ```ts
 * import { toPlainSimd } from "./build.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   toPlainSimd("(f32x4.relaxed_madd (local.get $a) (local.get $b) (local.get $c))"),
 *   "(f32x4.add (f32x4.mul (local.get $a) (local.get $b)) (local.get $c))",
 * );
 * ```
 */
export function toPlainSimd(wat: string): string {
  const out = wat.replace(MADD, "(f32x4.add (f32x4.mul $1 $2) $3)");
  const code = out.split("\n").map((l) => l.replace(/;;.*$/, "")).join("\n");
  if (code.includes("relaxed")) {
    throw new Error("toPlainSimd: a relaxed-SIMD instruction is not in the rewritable form");
  }
  return out;
}

/**
 * Compiles a module text with wabt (SIMD, relaxed SIMD and threads enabled) and validates the
 * binary with wabt and with this engine's `WebAssembly.validate`. (wabt 1.0.39's JS `validate`
 * ignores the feature flags and rejects shared memories, so a module importing one is checked by
 * the engine only.)
 *
 * @param name File name for error messages.
 * @param wat Module text.
 * @returns The binary.
 *
 * @example Usage
 * ```ts
 * import { compileWat } from "./build.ts";
 * import assert from "node:assert/strict";
 * const bytes = await compileWat("empty.wat", "(module)");
 * assert.ok(WebAssembly.validate(bytes));
 * ```
 */
export async function compileWat(name: string, wat: string): Promise<Uint8Array<ArrayBuffer>> {
  const wabt = await wabtInit();
  const features = { simd: true, relaxed_simd: true, threads: true };
  const mod = wabt.parseWat(name, wat, features);
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    mod.resolveNames();
    if (!/\(memory [^)]*shared\)/.test(wat)) mod.validate();
    bytes = Uint8Array.from(mod.toBinary({ log: false }).buffer);
  } finally {
    mod.destroy();
  }
  if (!WebAssembly.validate(bytes)) {
    throw new Error(`compileWat: ${name}: WebAssembly.validate rejects the binary`);
  }
  return bytes;
}

/**
 * Builds the four binaries from the text of `matmul.wat`.
 *
 * @param wat The source text (read from `matmul.wat` by default).
 * @returns The plain-SIMD and relaxed-SIMD binaries, each with a private and a shared memory.
 *
 * @example Usage
 * ```ts
 * import { buildMatmulWasm } from "./build.ts";
 * import assert from "node:assert/strict";
 * const { simd, relaxed } = await buildMatmulWasm();
 * assert.ok(WebAssembly.validate(simd));
 * assert.notDeepEqual(simd, relaxed);
 * ```
 */
export async function buildMatmulWasm(wat?: string): Promise<WasmBinaries> {
  const text = wat ?? await Deno.readTextFile(new URL("./matmul.wat", import.meta.url));
  const plain = toPlainSimd(text);
  return {
    relaxed: await compileWat("matmul.wat", text),
    simd: await compileWat("matmul.wat (plain SIMD128)", plain),
    relaxedShared: await compileWat("matmul.wat (shared)", toSharedMemory(text)),
    simdShared: await compileWat("matmul.wat (plain SIMD128, shared)", toSharedMemory(plain)),
  };
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/**
 * The text of the generated `matmul_wasm_bytes.ts` for the given binaries.
 *
 * @param bins The binaries.
 * @returns A formatted TypeScript module.
 *
 * @example Usage
 * ```ts
 * import { renderBytesModule } from "./build.ts";
 * import assert from "node:assert/strict";
 * const one = new Uint8Array([0]);
 * const text = renderBytesModule({ simd: one, relaxed: one, simdShared: one, relaxedShared: one });
 * assert.match(text, /export const MATMUL_WASM_SIMD: string = "AA==";/);
 * ```
 */
export function renderBytesModule(bins: WasmBinaries): string {
  const wrap = (s: string) => s.match(/.{1,96}/g)?.map((l) => `  "${l}"`).join(" +\n") ?? '""';
  const value = (b: Uint8Array) => {
    const s = base64(b);
    return s.length <= 60 ? ` "${s}"` : `\n${wrap(s)}`;
  };
  const entries: [string, string, Uint8Array][] = [
    ["MATMUL_WASM_SIMD", "Plain SIMD128 build", bins.simd],
    ["MATMUL_WASM_RELAXED", "Relaxed-SIMD build", bins.relaxed],
    ["MATMUL_WASM_SIMD_SHARED", "Plain SIMD128 build, shared memory,", bins.simdShared],
    ["MATMUL_WASM_RELAXED_SHARED", "Relaxed-SIMD build, shared memory,", bins.relaxedShared],
  ];
  const consts = entries.map(([name, what, bytes]) => `
/**
 * ${what} of \`matmul.wat\` (base64).
 *
 * @example Usage
 * \`\`\`ts
 * import { ${name} } from "./matmul_wasm_bytes.ts";
 * import assert from "node:assert/strict";
 * assert.ok(${name}.length > 0);
 * \`\`\`
 */
export const ${name}: string =${value(bytes)};
`);
  return `// Generated by \`deno task build:wasm\` from matmul.wat: do not edit.
/**
 * The binaries of \`matmul.wat\` as base64, so that importing the package needs no file read.
 * Regenerate with \`deno task build:wasm\`; \`build_test.ts\` fails when this file is stale.
 *
 * @module
 */
${consts.join("")}`;
}

/** Where the generated module lives. */
export const BYTES_MODULE_URL: URL = new URL("./matmul_wasm_bytes.ts", import.meta.url);

/** Where the generated module of `pointwise.wat` lives. */
export const POINTWISE_BYTES_MODULE_URL: URL = new URL(
  "./pointwise_wasm_bytes.ts",
  import.meta.url,
);

/**
 * The text of the generated `pointwise_wasm_bytes.ts`: the one binary of `pointwise.wat` (plain
 * SIMD128 with float64 lanes; no relaxed instruction, no shared memory).
 *
 * @param wat The source text (read from `pointwise.wat` by default).
 * @returns A formatted TypeScript module.
 *
 * @example Usage
 * ```ts
 * import { renderPointwiseModule } from "./build.ts";
 * import assert from "node:assert/strict";
 * const text = await renderPointwiseModule();
 * assert.match(text, /export const POINTWISE_WASM: string =/);
 * ```
 */
export async function renderPointwiseModule(wat?: string): Promise<string> {
  const text = wat ?? await Deno.readTextFile(new URL("./pointwise.wat", import.meta.url));
  if (text.replace(/;;.*$/gm, "").includes("relaxed")) {
    throw new Error("renderPointwiseModule: pointwise.wat must not use relaxed-SIMD instructions");
  }
  const b64 = base64(await compileWat("pointwise.wat", text));
  const body = b64.match(/.{1,96}/g)!.map((l) => `  "${l}"`).join(" +\n");
  return `// Generated by \`deno task build:wasm\` from pointwise.wat: do not edit.
/**
 * The binary of \`pointwise.wat\` as base64, so that importing the package needs no file read.
 * Regenerate with \`deno task build:wasm\`; \`build_test.ts\` fails when this file is stale.
 *
 * @module
 */

/**
 * The plain SIMD128 build of \`pointwise.wat\` (base64).
 *
 * @example Usage
 * \`\`\`ts
 * import { POINTWISE_WASM } from "./pointwise_wasm_bytes.ts";
 * import assert from "node:assert/strict";
 * assert.ok(POINTWISE_WASM.length > 0);
 * \`\`\`
 */
export const POINTWISE_WASM: string =
${body};
`;
}

if (import.meta.main) {
  const text = renderBytesModule(await buildMatmulWasm());
  await Deno.writeTextFile(BYTES_MODULE_URL, text);
  console.log(`wrote ${BYTES_MODULE_URL.pathname}`);
  await Deno.writeTextFile(POINTWISE_BYTES_MODULE_URL, await renderPointwiseModule());
  console.log(`wrote ${POINTWISE_BYTES_MODULE_URL.pathname}`);
}
