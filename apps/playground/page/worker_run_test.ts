// The page's training worker (run_worker.ts) driven through WorkerRun, in a Deno module Worker:
// the same records as PlaygroundRun on the page's thread, stop/resume, the download, errors.
import assert from "node:assert/strict";
import { getBackend, setBackend } from "@rlvr/tensor";
import { unzipSync } from "fflate";
import { loadConfig } from "../../train/config/load.ts";
import { withoutTiming } from "../../train/loop/_run_test_util.ts";
import { wasmBackend } from "./backend.ts";
import { PlaygroundRun } from "./playground_run.ts";
import { WorkerRun } from "./worker_run.ts";
import { tinyCheckpointFiles } from "../_test_utils.ts";

const files = await tinyCheckpointFiles();
const WORKER = new URL("./run_worker.ts", import.meta.url);

const { config } = await loadConfig({
  config: "grpo",
  set: [
    "trainer.device=cpu",
    "trainer.blas=wasm",
    "trainer.steps=3",
    "trainer.seed=5",
    "trainer.evalEvery=3",
    "trainer.evalProblems=4",
    "trainer.evalSamples=2",
    "trainer.evalK=2",
    "rollout.batchSize=8",
    "rollout.groupSize=4",
    "algorithm.microBatchSize=8",
  ],
});

Deno.test("WorkerRun: a run in the training worker, stopped after step 1 and resumed, has the records of a PlaygroundRun on this thread; the download is the model", async () => {
  const previous = getBackend();
  const here = await PlaygroundRun.create({
    config,
    files,
    backend: wasmBackend("wasm", "x").backend,
  });
  try {
    assert.equal(await here.run(), "done");
  } finally {
    await here.close();
    setBackend(previous);
  }

  const run = WorkerRun.start(WORKER);
  try {
    const info = await run.backend("wasm");
    assert.equal(info.device, "wasm");
    assert.deepEqual(info.overrides, [["trainer.device", "cpu"], ["trainer.blas", "wasm"]]);
    await run.create(config, files, "builtin:tiny");
    assert.equal(run.steps, 3);
    const seen: number[] = [];
    assert.equal(await run.run(() => seen.push(run.completed), 1), "stopped");
    assert.equal(run.completed, 1);
    // A stop asked from the page takes effect after the step in progress.
    const second = run.run(() => {
      seen.push(run.completed);
      if (run.completed === 2) {
        run.stop();
        assert.equal(run.status, "stopping");
      }
    });
    assert.ok(["stopped", "done"].includes(await second));
    if (run.status === "stopped") assert.equal(await run.run(), "done");
    assert.equal(run.completed, 3);
    assert.ok(seen.length >= 3, "progress after every step");
    assert.ok(run.elapsedMs > 0);
    assert.deepEqual(withoutTiming(run.metrics), withoutTiming(here.sink.metrics));
    assert.deepEqual(withoutTiming(run.evals), withoutTiming(here.sink.evals));
    assert.deepEqual(run.evalSamples, here.sink.evalSamples);
    const zip = unzipSync(await run.modelZip("tiny-grpo"));
    assert.ok(zip["tiny-grpo/model.safetensors"]!.length > 0);
    assert.deepEqual(zip["tiny-grpo/tokenizer.json"], files.get("tokenizer.json"));
  } finally {
    await run.close();
  }
});

Deno.test("WorkerRun: a failure in the worker rejects the request with its message; close is idempotent", async () => {
  const run = WorkerRun.start(WORKER);
  try {
    await run.backend("wasm");
    await assert.rejects(
      run.create(config, new Map([...files].filter(([n]) => n !== "model.safetensors")), "tiny"),
      /model\.safetensors/,
    );
  } finally {
    await run.close();
    await run.close();
  }
  await assert.rejects(run.backend("wasm"), /the run was closed/);
});
