/**
 * The GPU suite: its flags, its Markdown, and a real `--quick` run in a child process on
 * whatever adapter `navigator.gpu` finds (Mesa's llvmpipe here and in CI, where a missing adapter
 * fails the test instead of skipping it).
 */

import assert from "node:assert/strict";
import {
  formatGpuReport,
  gpuBenchPlan,
  type GpuBenchReport,
  parseGpuBenchArgs,
  QWEN25_05B,
} from "./gpu.ts";
import { hasWebGpuAdapter } from "./_adapter.ts";

Deno.test("parseGpuBenchArgs: defaults, flags, and errors that name the flag", () => {
  const d = parseGpuBenchArgs([]);
  assert.equal(d.quick, false);
  assert.equal(d.peakGflops, null);
  assert.equal(d.targetSeconds, 1);
  assert.equal(d.torch, null);
  assert.match(d.outDir, /bench\/results\/$/);
  const a = parseGpuBenchArgs([
    "--quick",
    "--peak-gflops=67000",
    "--peak-f16-gflops",
    "133800",
    "--target-seconds",
    "0.5",
    "--torch",
    "python3",
    "--out",
    "/tmp/x",
    "--no-json",
  ]);
  assert.deepEqual(
    [a.quick, a.peakGflops, a.peakF16Gflops, a.targetSeconds, a.torch, a.outDir, a.json],
    [true, 67000, 133800, 0.5, "python3", "/tmp/x", false],
  );
  assert.throws(
    () => parseGpuBenchArgs(["--peak-gflops", "0"]),
    /--peak-gflops must be .* got "0"/,
  );
  assert.throws(() => parseGpuBenchArgs(["--target-seconds", "x"]), /--target-seconds/);
  assert.throws(() => parseGpuBenchArgs(["--bogus"]), /bogus/);
});

Deno.test("gpuBenchPlan: the full run uses the issue's sizes and the Qwen2.5-0.5B shape", () => {
  const p = gpuBenchPlan(false);
  assert.equal(p.matmul, 4096);
  assert.deepEqual(p.decodeBatches, [1, 16, 64]);
  assert.equal(p.model, QWEN25_05B);
  const c = QWEN25_05B;
  assert.deepEqual(
    [c.hiddenSize, c.numLayers, c.numHeads, c.numKvHeads, c.intermediateSize, c.vocabSize],
    [896, 24, 14, 2, 4864, 151936],
  );
  assert.equal(c.tieWordEmbeddings, true);
});

function fakeReport(): GpuBenchReport {
  return {
    adapter: "NVIDIA X",
    software: false,
    quick: false,
    date: "2026-11-26T00:00:00.000Z",
    host: "Deno",
    plan: { ...(({ model: _, ...rest }) => rest)(gpuBenchPlan(false)), modelParams: 494032768 },
    matmul: [{ dtype: "f32", size: 4096, ms: 6.4, gflops: 21475, pctOfPeak: 32.06 }],
    f16Skipped: "the adapter does not offer shader-f16",
    attention: [{ path: "fused", ms: 1, gflops: 2 }, { path: "unfused", ms: 3, gflops: 0.7 }],
    initSeconds: 9.5,
    decode: [{
      loop: "host",
      batch: 1,
      newTokens: 32,
      recordMs: 50,
      readMs: 20,
      sampleMs: 3,
      decodeTokensPerS: 12.5,
      tokensPerS: 11,
      msPerStep: 80,
      prefillS: 0.1,
    }],
    grpoError: null,
    grpoStep: {
      rows: 32,
      seconds: 10,
      generateS: 6,
      trainS: 4,
      tokens: 4096,
      tokensPerS: 409.6,
      gflop: 12000,
      mfu: 0.0179,
      loss: 0.1,
    },
    peakGpuBytes: 9 * 2 ** 30,
    deviceProfile: [
      { kernel: "decode.gemv.set.151936x896", dispatches: 1, ms: 0.3 },
      { kernel: "decode.attention", dispatches: 24, ms: 0.1 },
    ],
    torch: { skipped: "no CUDA" },
    dispatchCache: { hits: 10, misses: 2, uniforms: 1, bindGroups: 2 },
    checks: [
      { name: "a | b", ok: true, error: 1e-7, tolerance: "|Δ| ≤ 1e-4" },
      { name: "broken", ok: false, error: 3, tolerance: "≤ 1" },
    ],
    totalSeconds: 100,
  };
}

Deno.test("formatGpuReport: every section, failed checks in bold, pipes escaped in cells", () => {
  const md = formatGpuReport(fakeReport());
  assert.match(md, /\| f32 \| 4096³ \| 6\.400 \| 21475\.0 \| 32\.1 \|/);
  assert.match(md, /f16 matmul not run: the adapter does not offer shader-f16/);
  assert.match(md, /\| fused \| 1\.000 \| 2\.0 \|/);
  assert.match(
    md,
    /\| host \| 1 \| 32 \| 12\.5 \| 80\.00 \| 0\.100 \| 11\.0 \| - \| 50\.00 \/ 20\.00 \/ 3\.00 \|/,
  );
  assert.match(md, /Dispatch cache: 10 hits, 2 misses/);
  assert.match(md, /\| 4 × 8 \| 32 \| 10\.00 \| 6\.00 \| 4\.00 \| 409\.6 \| 12000\.0 \| 1\.79% \|/);
  assert.match(md, /Peak GPU memory \(the backend's buffers\): 9\.00 GiB/);
  assert.match(md, /\| decode\.gemv\.set\.151936x896 \| 1 \| 0\.300 \| 75\.0% \|/);
  assert.match(md, /\| all \(each dispatch in its own pass\) \| 25 \| 0\.400 \| \|/);
  assert.match(md, /PyTorch side not run: no CUDA/);
  assert.match(md, /\| a \\\| b \| yes \| 1\.00e-7 \| \\\|Δ\\\| ≤ 1e-4 \|/);
  assert.match(md, /\| broken \| \*\*NO\*\* \|/);
});

const inCi = Deno.env.get("CI") === "true";
const hasAdapter = await hasWebGpuAdapter();

Deno.test({
  name: "bench:gpu --quick: every path runs, every check passes, JSON and Markdown written",
  ignore: !hasAdapter && !inCi,
  fn: async () => {
    const out = await Deno.makeTempDir({ prefix: "rlvr-bench-gpu-" });
    try {
      const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", new URL("./gpu.ts", import.meta.url).pathname, "--quick", "--out", out],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(stdout);
      assert.equal(
        code,
        0,
        `bench:gpu exited with ${code}:\n${text}\n${new TextDecoder().decode(stderr)}`,
      );
      const files = [];
      for await (const f of Deno.readDir(out)) files.push(f.name);
      const json = files.find((f) => f.endsWith(".json"));
      assert.ok(json !== undefined && files.some((f) => f.endsWith(".md")), `files: ${files}`);
      const r: GpuBenchReport = JSON.parse(await Deno.readTextFile(`${out}/${json}`));
      assert.equal(r.quick, true);
      assert.ok(r.checks.length >= 4, JSON.stringify(r.checks));
      for (const c of r.checks) assert.ok(c.ok, `${c.name}: error ${c.error} (${c.tolerance})`);
      assert.ok(r.matmul.some((m) => m.dtype === "f32" && m.gflops > 0));
      if (r.f16Skipped === null) assert.ok(r.matmul.some((m) => m.dtype === "f16" && m.gflops > 0));
      assert.deepEqual(r.attention.map((a) => a.path), ["fused", "unfused"]);
      assert.deepEqual(r.decode.map((d) => `${d.loop} ${d.batch}×${d.newTokens}`), [
        "host 1×4",
        "device 1×4",
        "host 4×4",
        "device 4×4",
        "device 1×8",
        "device, top-k 50 top-p 0.9 1×4",
        "device, top-k 50 top-p 0.9 4×4",
      ]);
      assert.ok(r.checks.some((c) => c.name.startsWith("device decode loop")));
      const prof = r.deviceProfile!;
      if ("skipped" in prof) assert.match(prof.skipped, /timestamp-query/);
      else assert.ok(prof.some((p) => p.kernel === "decode.sampler" && p.dispatches === 1));
      for (const d of r.decode) assert.ok(d.decodeTokensPerS > 0 && d.msPerStep > 0);
      const g = r.grpoStep;
      assert.ok(g !== null, `GRPO step failed: ${r.grpoError}`);
      assert.ok(g.tokens > 0 && g.tokensPerS > 0 && Number.isFinite(g.loss));
      assert.ok(r.peakGpuBytes > 0);
      assert.match(text, /\| check \| ok \| error \| tolerance \|/);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});
