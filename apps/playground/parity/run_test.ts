import assert from "node:assert/strict";
import { type Backend, createCpuBackend } from "@rlvr/tensor";
import { parityChecks } from "./checks.ts";
import { runParity } from "./run.ts";

const oracle = createCpuBackend({ kernels: "ts" });
/** The wasm backend, or null where this Deno has no WebAssembly SIMD. */
function wasmBackend(): Backend | null {
  try {
    return createCpuBackend({ kernels: "wasm", blas: "wasm", threads: 1 });
  } catch {
    return null;
  }
}

Deno.test("runParity in Deno: every check passes for the WebAssembly backend (seeds 25, 7, 101)", async () => {
  const wasm = wasmBackend();
  if (wasm === null) {
    console.warn("skipping: this Deno has no WebAssembly SIMD");
    return;
  }
  for (const seed of [25, 7, 101]) {
    const rows = await runParity(parityChecks(seed), { oracle, wasm, webgpu: null });
    const failed = rows.filter((r) => !r.pass).map((r) => `${r.check} ${r.what}: ${r.detail}`);
    assert.deepEqual(failed, [], `seed ${seed}`);
    assert.ok(rows.some((r) => r.backend === "wasm" && r.what.startsWith("grad")));
    assert.ok(rows.some((r) => r.what.startsWith("identical")), "the KV-cache contract row");
    // The wasm matmul really ran: its products differ from the oracle's by rounding somewhere.
    const mm = rows.filter((r) => r.check.startsWith("matmul") && r.backend === "wasm");
    assert.ok(mm.some((r) => r.maxAbs !== null && r.maxAbs > 0), `seed ${seed}: wasm matmul ran`);
  }
});

Deno.test("runParity: a backend that computes differently fails, naming the check and the value", async () => {
  // The oracle with every f32 write nudged by 1e-3 relative: as if a kernel rounded its inputs.
  const base = createCpuBackend({ kernels: "ts" });
  const nudged: Backend = {
    name: "nudged",
    alloc: (size, dtype) => base.alloc(size, dtype),
    free: (b) => base.free(b),
    write: (b, data) =>
      base.write(b, b.dtype === "f32" ? Array.from(data, (v) => v * (1 + 1e-3)) : data),
    read: (b) => base.read(b),
    run: (kernel, inputs, outputs, params) => base.run(kernel, inputs, outputs, params),
    memory: () => base.memory(),
  };
  const checks = parityChecks(3).filter((c) => c.name === "matmul" || c.name === "softmax");
  const rows = await runParity(checks, { oracle, wasm: nudged, webgpu: null });
  const failed = rows.filter((r) => !r.pass);
  assert.ok(failed.some((r) => r.check === "matmul" && r.what === "out op(a)·op(b)"));
  assert.ok(failed.some((r) => r.check === "softmax" && r.what.startsWith("out")));
  for (const r of failed) {
    assert.ok(r.ratio === null || r.ratio > 1, `${r.check} ${r.what}: ratio ${r.ratio}`);
    assert.match(r.detail, /elements (differ|exceed)/);
  }
});

Deno.test("runParity: a leaking or throwing backend gives a failing error row, not an exception", async () => {
  const base = createCpuBackend({ kernels: "ts" });
  let extra = 0;
  const leaky: Backend = {
    name: "leaky",
    alloc: (size, dtype) => base.alloc(size, dtype),
    free: (b) => base.free(b),
    write: (b, data) => base.write(b, data),
    read: (b) => base.read(b),
    run: (kernel, inputs, outputs, params) => {
      if (kernel === "softmax") throw new Error("softmax is not implemented here");
      base.run(kernel, inputs, outputs, params);
    },
    memory: () => ({ ...base.memory(), liveBuffers: base.memory().liveBuffers + extra++ }),
  };
  const checks = parityChecks(3).filter((c) => c.name === "rmsNorm" || c.name === "softmax");
  const rows = await runParity(checks, { oracle, wasm: leaky, webgpu: null });
  assert.deepEqual(rows.map((r) => [r.check, r.what, r.pass]), [
    ["softmax", "error", false],
    ["rmsNorm", "error", false],
  ]);
  assert.match(rows[0]!.detail, /softmax is not implemented here/);
  assert.match(rows[1]!.detail, /rmsNorm: leaky leaked 1 buffers/);
});
