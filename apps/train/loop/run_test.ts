import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../config/load.ts";
import { REQUIRED_METRICS } from "../run/records.ts";
import { readJsonl } from "../run/jsonl.ts";
import { runTraining } from "./run.ts";
import { STATE_FILES } from "./state.ts";

// Small enough for a 2-core machine, large enough to exercise every part of a step: groups,
// two micro-batches, two PPO epochs, the reference model (β > 0), evaluation, samples.
const SMALL = [
  "rollout.batchSize=8",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=4",
  "algorithm.ppoEpochs=2",
  "algorithm.kl.beta=0.04",
  "optimizer.lr=1e-3",
  "rollout.maxNewTokens=6",
  "trainer.evalEvery=2",
  "trainer.evalProblems=4",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.samplesEvery=1",
  "trainer.samplesCount=2",
  "trainer.saveEvery=0",
];
const quiet = { log: () => {}, progress: () => {}, report: false, handleSignals: false };
// Timing is the only thing allowed to differ between two runs of one config.
const TIMING = /^(time\/|tokens_per_s$)/;

function withoutTiming(records: Record<string, unknown>[]): Record<string, unknown>[] {
  return records.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !TIMING.test(k))));
}

async function records(dir: string, file: string): Promise<Record<string, unknown>[]> {
  return (await readJsonl<Record<string, unknown>>(join(dir, file))).records;
}

Deno.test("runTraining: stopping after step 2 and resuming gives the metrics, evaluations, samples and weights of an uninterrupted run", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = (name: string) => ({
      out: root,
      steps: "4",
      seed: "5",
      set: [...SMALL, `output.name=${name}`],
    });
    const full = await runTraining(await loadConfig(opts("full")), quiet);
    assert.equal(full.step, 4);
    assert.equal(full.interrupted, false);

    const first = await runTraining(await loadConfig(opts("split")), { ...quiet, stopAfter: 2 });
    assert.equal(first.step, 2);
    assert.equal(first.interrupted, true);
    const second = await runTraining(await loadConfig({ resume: first.dir }), quiet);
    assert.equal(second.step, 4);
    assert.equal(second.before, null); // resumed past the step-0 evaluation

    for (const file of ["metrics.jsonl", "eval.jsonl", "samples.jsonl"]) {
      const a = withoutTiming(await records(full.dir, file));
      const b = withoutTiming(await records(second.dir, file));
      assert.ok(a.length > 0, file);
      assert.deepEqual(b, a, file);
    }
    // The final weights and optimizer state are the same bytes.
    for (const f of ["model.safetensors", STATE_FILES.optimizerBin, STATE_FILES.data]) {
      assert.deepEqual(
        await Deno.readFile(join(second.dir, "checkpoints/step-4", f)),
        await Deno.readFile(join(full.dir, "checkpoints/step-4", f)),
        f,
      );
    }
    // Every record has every required key, no NaN, and the KL is reported (β > 0).
    const metrics = await records(full.dir, "metrics.jsonl");
    assert.deepEqual(metrics.map((m) => m.step), [1, 2, 3, 4]);
    for (const m of metrics) {
      for (const key of REQUIRED_METRICS) assert.ok(key in m, `metrics lacks ${key}`);
      for (const [k, v] of Object.entries(m)) {
        assert.ok(v === null || Number.isFinite(v), `${k} = ${v}`);
      }
      assert.equal(typeof m.kl, "number");
    }
    assert.deepEqual((await records(full.dir, "eval.jsonl")).map((e) => e.step), [0, 2, 4]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining: with β = 0 no KL is reported; a checkpoint holds model, optimizer, RNG, data and tokenizer", async () => {
  const root = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      out: root,
      steps: "1",
      set: [...SMALL.filter((s) => !s.startsWith("algorithm.kl.beta")), "algorithm.kl.beta=0"],
    });
    const r = await runTraining(loaded, quiet);
    const [m] = await records(r.dir, "metrics.jsonl");
    assert.equal(m!.kl, null);
    const files = [];
    for await (const e of Deno.readDir(join(r.dir, "checkpoints/step-1"))) files.push(e.name);
    for (
      const f of [
        "COMPLETE",
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        ...Object.values(STATE_FILES),
      ]
    ) {
      assert.ok(files.includes(f), `checkpoint lacks ${f}: ${files.join(", ")}`);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
