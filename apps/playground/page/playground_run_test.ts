import assert from "node:assert/strict";
import { getBackend, setBackend } from "@rlvr/tensor";
import { loadConfig } from "../../train/config/load.ts";
import type { Config } from "../../train/config/types.ts";
import { quiet, records, withoutTiming } from "../../train/loop/_run_test_util.ts";
import { runTraining } from "../../train/loop/run.ts";
import { wasmBackend } from "./backend.ts";
import { buildCatalog } from "./catalog_build.ts";
import { applyOverrides, setFlags } from "./knobs.ts";
import { PlaygroundRun } from "./playground_run.ts";
import { tinyCheckpointFiles } from "../_test_utils.ts";

const files = await tinyCheckpointFiles();

/** Runs `fn` and puts the default backend back (a run makes its backend the default). */
async function keepingBackend<T>(fn: () => Promise<T>): Promise<T> {
  const previous = getBackend();
  try {
    return await fn();
  } finally {
    setBackend(previous);
  }
}

/** `deno task train`'s records for the recipe with `set` (in-process, a temporary run dir). */
async function reference(recipe: string, set: readonly string[]) {
  const out = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({ config: recipe, out, set: [...set, "output.name=run"] });
    const r = await keepingBackend(() => runTraining(loaded, quiet));
    return {
      config: loaded.config,
      metrics: await records(r.dir, "metrics.jsonl"),
      evals: await records(r.dir, "eval.jsonl"),
      evalSamples: await records(r.dir, "eval_samples.jsonl"),
    };
  } finally {
    await Deno.remove(out, { recursive: true });
  }
}

/** The page's run of `config` on WebAssembly: evaluations and steps, stopping after `stopAt`. */
async function pageRun(config: Config, stopAt: number | null = null) {
  return await keepingBackend(async () => {
    const run = await PlaygroundRun.create({
      config,
      files,
      backend: wasmBackend("wasm", "requested").backend,
    });
    try {
      const seen: number[] = [];
      let status = await run.run({
        onStep: (s) => {
          seen.push(s.step);
          if (s.step === stopAt) run.stop();
        },
      });
      if (stopAt !== null) {
        assert.equal(status, "stopped");
        assert.equal(run.completed, stopAt);
        status = await run.run({ onStep: (s) => seen.push(s.step) });
      }
      assert.equal(status, "done");
      assert.deepEqual(seen, [...Array(config.trainer.steps).keys()].map((i) => i + 1));
      await assert.rejects(run.run(), /the run is done; start a new one/);
      return {
        metrics: run.sink.metrics,
        evals: run.sink.evals,
        evalSamples: run.sink.evalSamples,
        elapsedMs: run.elapsedMs,
      };
    } finally {
      await run.close();
    }
  });
}

const WASM_SET = ["trainer.device=cpu", "trainer.blas=wasm"];

Deno.test("PlaygroundRun: grpo stopped after 2 steps and resumed has every record of deno task train --set trainer.blas=wasm", async () => {
  const set = [
    ...WASM_SET,
    "trainer.steps=4",
    "trainer.seed=3",
    "trainer.evalEvery=2",
    "trainer.evalProblems=8",
    "trainer.evalSamples=4",
    "trainer.evalK=4",
    "trainer.samplesEvery=1",
  ];
  const ref = await reference("grpo", set);
  const page = await pageRun(ref.config, 2);
  assert.deepEqual(withoutTiming(page.metrics), withoutTiming(ref.metrics));
  assert.deepEqual(withoutTiming(page.evals), withoutTiming(ref.evals));
  assert.deepEqual(page.evalSamples, ref.evalSamples);
  assert.deepEqual(page.evals.map((e) => e.step), [0, 2, 4]);
  assert.ok(page.elapsedMs > 0);
});

Deno.test("PlaygroundRun: every recipe of the page runs in it, with deno task train's records (2 steps each)", async () => {
  const catalog = await buildCatalog();
  for (const recipe of catalog.recipes) {
    const overrides = [
      ["trainer.steps", 2],
      ["trainer.evalProblems", 4],
      ["trainer.evalSamples", 2],
      ["trainer.evalK", 2],
      ["trainer.device", "cpu"],
      ["trainer.blas", "wasm"],
    ] as const;
    const config = applyOverrides(recipe.config, overrides);
    const ref = await reference(recipe.name, setFlags(overrides));
    // The same config (the run directory's place aside).
    assert.deepEqual({ ...config, output: ref.config.output }, ref.config, recipe.name);
    const page = await pageRun(config);
    assert.deepEqual(withoutTiming(page.metrics), withoutTiming(ref.metrics), recipe.name);
    assert.deepEqual(withoutTiming(page.evals), withoutTiming(ref.evals), recipe.name);
  }
});

Deno.test("PlaygroundRun: run() while running is refused; stop() when not running is a no-op; closed runs refuse", async () => {
  const { config } = await loadConfig({
    config: "grpo",
    set: [
      ...WASM_SET,
      "trainer.steps=1",
      "trainer.evalProblems=0",
      "rollout.batchSize=8",
      "rollout.groupSize=4",
      "algorithm.microBatchSize=8",
    ],
  });
  await keepingBackend(async () => {
    const run = await PlaygroundRun.create({
      config,
      files,
      backend: wasmBackend("wasm", "x").backend,
    });
    run.stop();
    assert.equal(run.status, "ready");
    const first = run.run();
    await assert.rejects(run.run(), /already running; stop it first/);
    assert.equal(await first, "done");
    assert.deepEqual(run.sink.evals, [], "evalProblems 0: no evaluation");
    await run.close();
    await run.close();
    await assert.rejects(run.run(), /the run is closed/);
  });
});
