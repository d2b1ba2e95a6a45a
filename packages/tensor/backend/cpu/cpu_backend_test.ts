import assert from "node:assert/strict";
import { createCpuBackend } from "./cpu_backend.ts";

Deno.test("cpu backend: zero-filled buffers, exact round trip, counters track live memory", async () => {
  const cpu = createCpuBackend();
  const a = cpu.alloc(3, "f32");
  const b = cpu.alloc(2, "bool");
  assert.deepEqual([...await cpu.read(a)], [0, 0, 0]);
  cpu.write(a, [1.5, -2, 3]);
  assert.deepEqual([...await cpu.read(a)], [1.5, -2, 3]);
  assert.deepEqual(cpu.memory(), { liveBuffers: 2, liveBytes: 14 });
  cpu.free(a);
  cpu.free(b);
  assert.deepEqual(cpu.memory(), { liveBuffers: 0, liveBytes: 0 });
});

Deno.test("cpu backend: f32 storage rounds like a GPU, f64 storage does not", async () => {
  const f32 = createCpuBackend();
  const f64 = createCpuBackend({ precision: "f64" });
  const a = f32.alloc(1, "f32");
  const b = f64.alloc(1, "f32");
  f32.write(a, [0.1]);
  f64.write(b, [0.1]);
  assert.equal((await f32.read(a))[0], Math.fround(0.1));
  assert.equal((await f64.read(b))[0], 0.1);
});

Deno.test("cpu backend: misuse fails with what went wrong", () => {
  const cpu = createCpuBackend();
  const other = createCpuBackend();
  const a = cpu.alloc(2, "i32");
  assert.throws(
    () => cpu.write(a, [1, 2, 3]),
    /cpu.write: buffer holds 2 elements but 3 values were given/,
  );
  assert.throws(() => other.free(a), /cpu.free: the buffer belongs to another backend/);
  cpu.free(a);
  assert.throws(() => cpu.read(a), /cpu.read: the buffer was already freed/);
  assert.throws(() => cpu.alloc(-1, "f32"), /cpu.alloc: size must be an integer >= 0, got -1/);
  assert.throws(
    () => createCpuBackend({ precision: "f16" as never }),
    /createCpuBackend: precision must be "f32" or "f64", got "f16"/,
  );
});

Deno.test("cpu backend: attention runs through the wasm matmul unless the oracle is asked for", async () => {
  const { detectWasmMatmul } = await import("../wasm/matmul_wasm.ts");
  const fast = detectWasmMatmul() === null ? "ts" : "matmul";
  assert.equal(createCpuBackend({ blas: "wasm" }).attentionPath, fast);
  assert.equal(createCpuBackend({ blas: "wasm", attention: "ts" }).attentionPath, "ts");
  assert.equal(createCpuBackend({ kernels: "ts" }).attentionPath, "ts");
  assert.equal(createCpuBackend({ precision: "f64" }).attentionPath, "ts");
  assert.throws(
    () => createCpuBackend({ attention: "wasm" as never }),
    /createCpuBackend: attention must be "auto" or "ts", got "wasm"/,
  );
});
