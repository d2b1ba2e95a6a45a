import assert from "node:assert/strict";
import {
  buildMatmulWasm,
  BYTES_MODULE_URL,
  POINTWISE_BYTES_MODULE_URL,
  renderBytesModule,
  renderPointwiseModule,
  toPlainSimd,
} from "./build.ts";
import { MATMUL_WASM_RELAXED, MATMUL_WASM_SIMD } from "./matmul_wasm_bytes.ts";

Deno.test("build:wasm: the committed matmul_wasm_bytes.ts is what matmul.wat compiles to", async () => {
  const fresh = renderBytesModule(await buildMatmulWasm());
  const committed = await Deno.readTextFile(BYTES_MODULE_URL);
  assert.ok(
    fresh === committed,
    "packages/tensor/backend/wasm/matmul_wasm_bytes.ts is stale: run `deno task build:wasm`",
  );
});

Deno.test("build:wasm: the plain build has no relaxed-SIMD instruction; both binaries validate", async () => {
  const wat = await Deno.readTextFile(new URL("./matmul.wat", import.meta.url));
  const plain = toPlainSimd(wat);
  assert.match(wat, /f32x4\.relaxed_madd/);
  assert.doesNotMatch(plain.replace(/;;.*$/gm, ""), /relaxed/);
  assert.throws(
    () =>
      toPlainSimd("(f32x4.relaxed_madd (f32x4.splat (f32.const 1)) (local.get $b) (local.get $c))"),
    /not in the rewritable form/,
  );
  const bytes = (b64: string) => Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
  assert.ok(WebAssembly.validate(bytes(MATMUL_WASM_SIMD)));
  assert.ok(WebAssembly.validate(bytes(MATMUL_WASM_RELAXED)));
});

Deno.test("build:wasm: the committed pointwise_wasm_bytes.ts is what pointwise.wat compiles to", async () => {
  const fresh = await renderPointwiseModule();
  const committed = await Deno.readTextFile(POINTWISE_BYTES_MODULE_URL);
  assert.ok(
    fresh === committed,
    "packages/tensor/backend/wasm/pointwise_wasm_bytes.ts is stale: run `deno task build:wasm`",
  );
  await assert.rejects(
    () => renderPointwiseModule("(module) ;; f32x4.relaxed_madd\n(f32x4.relaxed_madd)"),
    /must not use relaxed-SIMD/,
  );
});
