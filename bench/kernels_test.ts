/**
 * The kernel bench: its flags, byte formulas, iteration rule and file names, and real runs of
 * the script in a child process (CPU always; WebGPU when an adapter exists) whose JSON is read
 * back and checked.
 */

import assert from "node:assert/strict";
import { createCpuBackend, loadNativeBlas } from "@rlvr/tensor";
import {
  type BackendReport,
  bandwidthBytes,
  benchPlan,
  formatReport,
  parseBenchArgs,
  pickIterations,
  resultFileName,
} from "./kernels.ts";
import { hasWebGpuAdapter } from "./_adapter.ts";

Deno.test("parseBenchArgs: defaults, every flag, and errors that name the flag", () => {
  const d = parseBenchArgs([]);
  assert.equal(d.quick, false);
  assert.equal(d.sizes, null);
  assert.equal(d.backends, null);
  assert.equal(d.variants, null);
  assert.equal(d.peakGflops, null);
  assert.equal(d.targetSeconds, 1);
  assert.equal(d.maxCallSeconds, 45);
  assert.equal(d.json, true);
  assert.match(d.outDir, /bench\/results\/$/);
  const a = parseBenchArgs([
    "--sizes=128, 4096",
    "--backend",
    "webgpu",
    "--backend",
    "cpu,webgpu",
    "--variants",
    "2,3",
    "--peak-gflops",
    "51.2",
    "--target-seconds",
    "0.5",
    "--max-call-seconds",
    "3",
    "--out",
    "/tmp/x",
    "--no-json",
  ]);
  assert.deepEqual(a.sizes, [128, 4096]);
  assert.deepEqual(a.backends, ["webgpu", "cpu"]);
  assert.deepEqual(a.variants, [2, 3]);
  assert.equal(a.peakGflops, 51.2);
  assert.equal(a.targetSeconds, 0.5);
  assert.equal(a.maxCallSeconds, 3);
  assert.equal(a.outDir, "/tmp/x");
  assert.equal(a.json, false);
  assert.throws(() => parseBenchArgs(["--sizes", "256,abc"]), /--sizes must be a comma-separated/);
  assert.throws(
    () => parseBenchArgs(["--sizes", "0"]),
    /--sizes must be .* integers >= 1, got "0"/,
  );
  assert.throws(() => parseBenchArgs(["--variants", "4"]), /--variants .* among 1, 2, 3, got 4/);
  assert.throws(() => parseBenchArgs(["--peak-gflops=-1"]), /--peak-gflops must be a number > 0/);
  assert.throws(() => parseBenchArgs(["--backend", "gpu"]), /--backend must be cpu or webgpu/);
  assert.throws(() => parseBenchArgs(["--fast"]), /Unknown option '--fast'/);
});

Deno.test("pickIterations: fills the target time, within [2, max], or 1 for slow calls", () => {
  assert.equal(pickIterations(0.001, 1), 1000);
  assert.equal(pickIterations(0.3, 1), 4);
  assert.equal(pickIterations(0.49, 1), 3);
  assert.equal(pickIterations(0.5, 1), 1);
  assert.equal(pickIterations(3, 1), 1);
  assert.equal(pickIterations(0, 1, 50), 50);
});

Deno.test("bandwidthBytes: compulsory traffic of each kernel, 4 bytes per element", () => {
  // softmax [3, 5]: read x, write y.
  assert.equal(bandwidthBytes({ op: "softmax", dims: [3, 5] }).bytes, 4 * (15 + 15));
  // rms_norm [3, 5]: read x and w, write y and rstd.
  assert.equal(bandwidthBytes({ op: "rms_norm", dims: [3, 5] }).bytes, 4 * (15 + 5 + 15 + 3));
  // adamw over 10 params: read grad, param, m, v; write param, m, v.
  assert.equal(bandwidthBytes({ op: "adamw", dims: [10] }).bytes, 4 * 70);
  // logprobs [3, 7]: read logits and tokens, write logprob and lse.
  assert.equal(bandwidthBytes({ op: "logprobs", dims: [3, 7] }).bytes, 4 * (21 + 3 + 3 + 3));
  // gemv, W [n = 6, k = 4]: read x (k) and W, write y (n).
  assert.equal(bandwidthBytes({ op: "gemv", dims: [6, 4] }).bytes, 4 * (4 + 24 + 6));
  for (const op of ["softmax", "rms_norm", "adamw", "logprobs", "gemv"] as const) {
    assert.match(bandwidthBytes({ op, dims: [2, 2] }).formula, /^4·\(.*read.*write/);
  }
});

Deno.test("resultFileName and benchPlan: names and sizes", () => {
  assert.equal(
    resultFileName("cpu", "AMD EPYC 7B13 64-Core Processor", new Date("2025-03-04T05:06:07.891Z")),
    "cpu-amd-epyc-7b13-64-core-processor-2025-03-04T05-06-07Z.json",
  );
  assert.equal(
    resultFileName("webgpu", "", new Date(0)),
    "webgpu-unknown-1970-01-01T00-00-00Z.json",
  );
  const quick = benchPlan(parseBenchArgs(["--quick"]), true);
  assert.deepEqual(quick.sizes, [256, 512]);
  const full = benchPlan(parseBenchArgs([]), false);
  assert.deepEqual(
    full.bandwidth.map((b) => [b.op, ...b.dims]),
    [
      ["softmax", 4096, 1024],
      ["rms_norm", 4096, 2048],
      ["adamw", 2 ** 24],
      ["logprobs", 128, 151936],
      ["gemv", 2048, 2048],
    ],
  );
  // Every quick case is smaller than its full-size counterpart.
  quick.bandwidth.forEach((b, i) => {
    assert.ok(bandwidthBytes(b).bytes < bandwidthBytes(full.bandwidth[i]!).bytes, b.op);
  });
});

Deno.test("formatReport: matmul pivot by variant, skipped cells, % of peak of the best", () => {
  const base = {
    op: "matmul",
    dims: [64, 64, 64],
    label: "64×64×64",
    flops: 2 * 64 ** 3,
    bytes: null,
    bytesFormula: null,
  };
  const text = formatReport({
    schema: "rlvr-kernel-bench/1",
    date: "2025-01-01T00:00:00.000Z",
    backend: "webgpu",
    adapter: { description: "llvmpipe (LLVM 15.0.6, 256 bits)", software: true },
    machine: { deno: "2.9.6", v8: "x", os: "linux x86_64", cpuModel: "AMD EPYC", cores: 2 },
    argv: [],
    peakGflops: 10,
    method: "",
    results: [
      {
        ...base,
        variant: 1,
        secondsPerCall: 0.001,
        iterations: 5,
        gflops: 0.5,
        gbps: null,
        pctOfPeak: 5,
        skipped: null,
      },
      {
        ...base,
        variant: 2,
        secondsPerCall: null,
        iterations: 0,
        gflops: null,
        gbps: null,
        pctOfPeak: null,
        skipped: "estimated 99.0 s per call",
      },
    ],
  });
  assert.match(text, /SOFTWARE adapter: runs on the CPU, speed meaningless/);
  assert.match(text, /v1 GFLOP\/s +v2 GFLOP\/s +best % of 10 peak/);
  assert.match(text, /64×64×64 +0\.50 +skipped +5\.0/);
  assert.match(text, /skipped: matmul v2 64×64×64: estimated 99\.0 s per call/);
});

async function runBench(args: string[]): Promise<{ stdout: string; reports: BackendReport[] }> {
  const out = await Deno.makeTempDir({ prefix: "rlvr-bench-" });
  try {
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./kernels.ts", import.meta.url).pathname, ...args, "--out", out],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(stdout);
    assert.equal(
      code,
      0,
      `bench exited with ${code}:\n${text}\n${new TextDecoder().decode(stderr)}`,
    );
    const reports: BackendReport[] = [];
    for await (const f of Deno.readDir(out)) {
      reports.push(JSON.parse(await Deno.readTextFile(`${out}/${f.name}`)));
    }
    return { stdout: text, reports };
  } finally {
    await Deno.remove(out, { recursive: true });
  }
}

Deno.test("bench on the CPU backend: table on stdout, the same numbers in JSON", async () => {
  const { stdout, reports } = await runBench([
    "--backend=cpu",
    "--quick",
    "--sizes=32,64",
    "--target-seconds=0.02",
    "--peak-gflops=100",
  ]);
  assert.equal(reports.length, 1);
  const r = reports[0]!;
  assert.equal(r.schema, "rlvr-kernel-bench/1");
  assert.equal(r.backend, "cpu");
  assert.equal(r.adapter, null);
  assert.equal(r.machine.cores, navigator.hardwareConcurrency);
  assert.equal(r.machine.deno, Deno.version.deno);
  // Matmul on the backend's own kernel (wasm where the engine has SIMD, on every core), then on
  // one thread, then on the native BLAS where it loads, then on the TypeScript oracle.
  const cpu = createCpuBackend();
  const path = cpu.matmulPath === "ts" ? "ts" : `${cpu.matmulPath} ${cpu.matmulThreads}T`;
  const more = [
    ...(cpu.matmulThreads > 1 ? [`${cpu.matmulPath} 1T`] : []),
    ...(cpu.matmulPath === "openblas" || loadNativeBlas().lib === null ? [] : ["openblas"]),
    ...(cpu.matmulPath === "ts" ? [] : ["ts"]),
  ];
  assert.deepEqual(
    r.results.map((x) =>
      `${x.op}${x.kernel === undefined || x.op !== "matmul" ? "" : ` ${x.kernel}`} ${x.label}`
    ),
    [
      `matmul ${path} 32×32×32`,
      `matmul ${path} 64×64×64`,
      ...more.flatMap((k) => [`matmul ${k} 32×32×32`, `matmul ${k} 64×64×64`]),
      "softmax 1024×512",
      "rms_norm 1024×1024",
      "adamw 2097152",
      "logprobs 16×151936",
      "gemv 1×1024 · (1024×1024)ᵀ",
    ],
  );
  for (const x of r.results) {
    assert.equal(x.skipped, null, `${x.op}: ${x.skipped}`);
    assert.ok(x.secondsPerCall! > 0 && x.iterations >= 1, x.op);
    if (x.flops !== null) assert.ok(Math.abs(x.gflops! - x.flops / x.secondsPerCall! / 1e9) < 1e-9);
    if (x.bytes !== null) assert.ok(Math.abs(x.gbps! - x.bytes / x.secondsPerCall! / 1e9) < 1e-9);
    if (x.op === "matmul") assert.ok(Math.abs(x.pctOfPeak! - x.gflops!) < 1e-9); // peak 100
  }
  // The printed table carries the JSON's numbers (rounded to 2 decimals).
  const mm64 = r.results[1]!;
  assert.match(stdout, new RegExp(`64×64×64 +${mm64.gflops!.toFixed(2)}`));
  assert.match(stdout, /^== cpu: CPU backend/m);
  assert.match(stdout, new RegExp([path, ...more].map((k) => `${k} GFLOP/s`).join(" +")));
});

Deno.test("bench: a case estimated over --max-call-seconds is skipped with the estimate", async () => {
  const { reports } = await runBench([
    "--backend=cpu",
    "--quick",
    "--sizes=16,256",
    "--target-seconds=0.01",
    "--max-call-seconds=0.0001",
  ]);
  const mm = reports[0]!.results.filter((x) => x.op === "matmul");
  assert.equal(mm[0]!.skipped, null);
  assert.match(mm[1]!.skipped!, /^estimated [\d.]+ s per call .* > --max-call-seconds 0\.0001$/);
  assert.equal(mm[1]!.secondsPerCall, null);
});

const hasAdapter = await hasWebGpuAdapter();

Deno.test({
  name: "bench on WebGPU: every requested variant, adapter named and classified",
  ignore: !hasAdapter,
  fn: async () => {
    const { stdout, reports } = await runBench([
      "--backend=webgpu",
      "--quick",
      "--sizes=64",
      "--variants=2,3",
      "--target-seconds=0.02",
    ]);
    const r = reports[0]!;
    assert.equal(r.backend, "webgpu");
    assert.equal(typeof r.adapter?.description, "string");
    assert.equal(typeof r.adapter?.software, "boolean");
    const mm = r.results.filter((x) => x.op === "matmul");
    assert.deepEqual(mm.map((x) => x.variant), [2, 3]);
    const gemv = r.results.filter((x) => x.op === "gemv");
    assert.deepEqual(gemv.map((x) => x.variant), [2, 3]);
    for (const x of r.results) assert.equal(x.skipped, null, `${x.op}: ${x.skipped}`);
    assert.match(stdout, /^== webgpu: adapter "/m);
  },
});
