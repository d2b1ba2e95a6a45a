import assert from "node:assert/strict";
import { pickBackend } from "./backend.ts";

/** A fake adapter: `info` as browsers report it; requesting a device is never reached. */
function fakeAdapter(info: Partial<GPUAdapterInfo> & { isFallbackAdapter?: boolean }): GPUAdapter {
  return { info } as unknown as GPUAdapter;
}

function fakeGpu(adapter: GPUAdapter | null | Error): GPU {
  return {
    requestAdapter: () =>
      adapter instanceof Error ? Promise.reject(adapter) : Promise.resolve(adapter),
  } as unknown as GPU;
}

Deno.test("pickBackend: wasm is the CPU backend's WebAssembly matmul on one thread, trainer.blas wasm", async () => {
  const b = await pickBackend("wasm", { gpu: undefined, secure: true });
  assert.equal(b.device, "wasm");
  assert.equal(b.backend.name, "cpu");
  assert.match(b.line, /^WebAssembly \(wasm-(relaxed|simd) matmul, \d+ threads?\): requested$/);
  assert.deepEqual(b.overrides, [["trainer.device", "cpu"], ["trainer.blas", "wasm"]]);
  b.release();
});

Deno.test("pickBackend: a WebGPU request that cannot be met falls back to WebAssembly, saying why", async () => {
  const cases: [Parameters<typeof pickBackend>[1], RegExp][] = [
    [{ gpu: undefined, secure: false }, /not a secure context.*http:\/\/localhost/],
    [{ gpu: undefined, secure: true }, /exposes no navigator\.gpu/],
    [{ gpu: fakeGpu(null), secure: true }, /navigator\.gpu found no adapter/],
    [{ gpu: fakeGpu(new Error("lost")), secure: true }, /requestAdapter failed: lost/],
  ];
  for (const [env, why] of cases) {
    const b = await pickBackend("webgpu", env);
    assert.equal(b.device, "wasm");
    assert.match(b.reason, /^WebGPU was requested but /);
    assert.match(b.reason, why);
    assert.match(b.line, /^WebAssembly .*: WebGPU was requested but /);
    const auto = await pickBackend("auto", env);
    assert.match(auto.reason, /^no WebGPU: /);
  }
});

Deno.test("pickBackend: auto keeps the CPU on a software adapter (SwiftShader), as deno task train does", async () => {
  const swiftshader = fakeAdapter({
    vendor: "google",
    architecture: "swiftshader",
    isFallbackAdapter: true,
  });
  const b = await pickBackend("auto", { gpu: fakeGpu(swiftshader), secure: true });
  assert.equal(b.device, "wasm");
  assert.match(
    b.reason,
    /the only WebGPU adapter is a software one \(vendor google, swiftshader\).*choose WebGPU to use it anyway/,
  );
});

Deno.test("pickBackend: webgpu on this machine's adapter when there is one (Deno's navigator.gpu)", async () => {
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  const adapter = await gpu?.requestAdapter();
  if (!adapter) {
    console.warn("skipping: no WebGPU adapter in this Deno");
    return;
  }
  const b = await pickBackend("webgpu", { gpu: gpu!, secure: true });
  try {
    assert.equal(b.device, "webgpu");
    assert.equal(b.backend.name, "webgpu");
    assert.match(b.line, /^WebGPU \(.+\): requested; (software|hardware) adapter$/);
    assert.deepEqual(b.overrides, [["trainer.device", "webgpu"]]);
  } finally {
    b.release();
  }
});
