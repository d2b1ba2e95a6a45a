/**
 * Device selection: the pure decision on fake adapters (hardware, software, none), validation of
 * the choice from options and from `RLVR_DEVICE`, the log line, and forcing WebGPU on the real
 * adapter.
 */

import assert from "node:assert/strict";
import { chooseDevice, DEVICE_CHOICES, parseDeviceChoice, selectBackend } from "./select.ts";
import { gpuTest } from "./webgpu/_test_utils.ts";
import { runWithEnv } from "./_env_test_util.ts";

/** A stand-in adapter with just the fields the decision reads. */
function fakeAdapter(description: string, isFallbackAdapter = false): GPUAdapter {
  return {
    info: { description, vendor: "", architecture: "", isFallbackAdapter },
  } as unknown as GPUAdapter;
}

Deno.test("chooseDevice: auto picks WebGPU for hardware adapters and the CPU for software ones", () => {
  const h100 = fakeAdapter("NVIDIA H100 80GB HBM3");
  assert.deepEqual(chooseDevice("auto", h100), {
    device: "webgpu",
    reason: "hardware adapter NVIDIA H100 80GB HBM3",
  });
  for (
    const soft of [
      fakeAdapter("llvmpipe (LLVM 15.0.6, 256 bits)"),
      fakeAdapter("SwiftShader Device (Subzero)"),
      fakeAdapter("Some GPU", true),
    ]
  ) {
    const d = chooseDevice("auto", soft);
    assert.equal(d.device, "cpu");
    assert.match(d.reason, /software one .* set RLVR_DEVICE=webgpu to use it anyway/);
  }
  assert.deepEqual(chooseDevice("auto", null), {
    device: "cpu",
    reason: "navigator.gpu found no WebGPU adapter",
  });
  assert.equal(chooseDevice("webgpu", fakeAdapter("llvmpipe")).device, "webgpu");
  assert.equal(chooseDevice("cpu", fakeAdapter("NVIDIA H100")).device, "cpu");
  assert.throws(
    () => chooseDevice("webgpu", null),
    /device "webgpu" was requested but navigator.gpu found no adapter/,
  );
});

Deno.test("selectBackend: invalid choices name the value, its source and the valid ones", async () => {
  assert.deepEqual(DEVICE_CHOICES, ["auto", "webgpu", "cpu"]);
  assert.equal(parseDeviceChoice("webgpu"), "webgpu");
  await assert.rejects(
    selectBackend({ device: "cuda", quiet: true }),
    /selectBackend: device must be one of "auto", "webgpu", "cpu", got "cuda" \(from options.device\)/,
  );
  // RLVR_DEVICE in child processes (see _env_test_util.ts for why).
  const head = `import assert from "node:assert/strict";
import { selectBackend } from "${new URL("./select.ts", import.meta.url).href}";
`;
  await runWithEnv(
    head +
      `await assert.rejects(selectBackend({ quiet: true }), /got "gpu" \\(from RLVR_DEVICE\\)/);`,
    { RLVR_DEVICE: "gpu" },
  );
  await runWithEnv(
    head + `const lines = [];
const b = await selectBackend({ log: (l) => lines.push(l) });
assert.equal(b.name, "cpu");
assert.deepEqual(lines, ["[rlvr] device: cpu (cpu via RLVR_DEVICE: requested)"]);
// The option wins over the environment.
const quiet = [];
assert.equal((await selectBackend({ device: "cpu", log: (l) => quiet.push(l), quiet: true })).name, "cpu");
assert.deepEqual(quiet, []);`,
    { RLVR_DEVICE: "cpu" },
  );
});

gpuTest(
  "selectBackend: webgpu is forced even on a software adapter; auto logs its reason",
  async () => {
    const lines: string[] = [];
    const b = await selectBackend({ device: "webgpu", log: (l) => lines.push(l) });
    assert.equal(b.name, "webgpu");
    assert.match(
      lines[0]!,
      /^\[rlvr\] device: webgpu \(webgpu via options.device: requested; (software|hardware) adapter /,
    );
    (b as unknown as { destroy(): void }).destroy();
    const auto: string[] = [];
    const a = await selectBackend({ device: "auto", log: (l) => auto.push(l) });
    const adapter = await navigator.gpu.requestAdapter();
    const soft =
      (adapter!.info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter;
    assert.equal(a.name, soft ? "cpu" : "webgpu");
    assert.match(auto[0]!, /^\[rlvr\] device: (cpu|webgpu) \(auto via options.device: /);
    if (a.name === "webgpu") (a as unknown as { destroy(): void }).destroy();
  },
);
