/**
 * The policy bench: its flags, its model's size, and real (tiny) runs of the measurement and of
 * the entry point, whose JSON is read back and checked.
 */

import assert from "node:assert/strict";
import { createCpuBackend } from "@rlvr/tensor";
import { modelConfig, parameterCount } from "@rlvr/policy";
import {
  BENCH_CONFIG,
  benchPlan,
  main,
  measurePolicy,
  parsePolicyBenchArgs,
  type PolicyBenchReport,
} from "./policy_bench.ts";

const TINY = modelConfig({
  modelType: "qwen2",
  vocabSize: 64,
  hiddenSize: 16,
  intermediateSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
});
const TINY_PLAN = {
  generateBatches: [2, 3],
  promptTokens: 4,
  newTokens: 3,
  scoreBatch: 2,
  repeats: 1,
};

Deno.test("parsePolicyBenchArgs: defaults, flags, and errors naming the flag", () => {
  const d = parsePolicyBenchArgs([]);
  assert.equal(d.quick, false);
  assert.equal(d.backends, null);
  assert.equal(d.json, true);
  assert.match(d.outDir, /\/bench\/results\/$/);
  const a = parsePolicyBenchArgs(["--quick", "--backend", "webgpu", "--backend=cpu,webgpu"]);
  assert.equal(a.quick, true);
  assert.deepEqual(a.backends, ["webgpu", "cpu"]);
  assert.equal(parsePolicyBenchArgs(["--no-json", "--out", "/tmp/x"]).outDir, "/tmp/x");
  assert.throws(
    () => parsePolicyBenchArgs(["--backend", "gpu"]),
    /--backend must be cpu or webgpu, got "gpu"/,
  );
  assert.throws(() => parsePolicyBenchArgs(["--fast"]));
  assert.equal(benchPlan(false).repeats, 3);
  assert.deepEqual(benchPlan(false).generateBatches, [8, 32]);
  assert.equal(benchPlan(false).promptTokens, 32);
  assert.equal(benchPlan(false).newTokens, 64);
});

Deno.test("BENCH_CONFIG: the Qwen2 shape of the brief, counted by hand", () => {
  const { vocabSize: V, hiddenSize: H, intermediateSize: F, numLayers: L } = BENCH_CONFIG;
  const kv = BENCH_CONFIG.numKvHeads * BENCH_CONFIG.headDim;
  const perLayer = (H * H + H) + 2 * (kv * H + kv) + H * H + 2 * H + 3 * H * F;
  assert.equal(parameterCount(BENCH_CONFIG), 2 * V * H + L * perLayer + H);
  assert.deepEqual([V, H, L, BENCH_CONFIG.numHeads, BENCH_CONFIG.numKvHeads, F], [
    4096,
    256,
    12,
    8,
    2,
    688,
  ]);
});

Deno.test("measurePolicy: every case reports consistent, positive rates", async () => {
  const r = await measurePolicy(createCpuBackend(), TINY_PLAN, TINY);
  assert.deepEqual(r.generation.map((g) => g.batch), [2, 3]);
  for (const g of r.generation) {
    assert.ok(g.prefillS > 0 && g.decodeS > 0);
    // Every sequence runs all newTokens (no EOS), so the rate is batch · newTokens / time.
    assert.ok(Math.abs(g.tokensPerS - (g.batch * 3) / g.totalS) < 1e-9 * g.tokensPerS);
    assert.ok(
      Math.abs(g.prefillTokensPerS - (g.batch * 4) / g.prefillS) < 1e-9 * g.prefillTokensPerS,
    );
  }
  assert.deepEqual(r.scoring.map((s) => s.mode), ["forward", "forward+backward"]);
  for (const s of r.scoring) {
    assert.equal(s.seqTokens, 7);
    assert.ok(Math.abs(s.tokensPerS - (2 * 7) / s.seconds) < 1e-9 * s.tokensPerS);
  }
});

Deno.test("main: prints the table and writes policy-cpu-<date>.json", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const log: string[] = [];
    const orig = console.log;
    console.log = (...a: unknown[]) => log.push(a.join(" "));
    let code: number;
    try {
      code = await main(["--backend", "cpu", "--out", dir], { config: TINY, plan: TINY_PLAN });
    } finally {
      console.log = orig;
    }
    assert.equal(code, 0);
    const files = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.equal(files.length, 1);
    assert.match(files[0]!, /^policy-cpu-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.json$/);
    const report = JSON.parse(await Deno.readTextFile(`${dir}/${files[0]}`)) as PolicyBenchReport;
    assert.equal(report.schema, "rlvr-policy-bench/1");
    assert.equal(report.parameterCount, parameterCount(TINY));
    assert.equal(report.config.vocab_size, 64);
    assert.equal(report.generation.length, 2);
    const text = log.join("\n");
    assert.match(text, /policy bench on cpu/);
    assert.match(text, /generate\s+3\s+4\s+3\s+\d+\.\d/);
    assert.match(text, /score forward\+backward\s+2\s+7\s+\d+\.\d/);
    assert.equal(await main(["--backend", "tpu"]), 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
