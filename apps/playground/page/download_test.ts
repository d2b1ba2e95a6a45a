import assert from "node:assert/strict";
import { unzipSync } from "fflate";
import { getBackend, setBackend } from "@rlvr/tensor";
import { loadConfig } from "../../train/config/load.ts";
import { loadLearner } from "../../train/loop/learner.ts";
import { loadPolicy } from "../../train/loop/policy.ts";
import { policyFromFiles } from "../../train/loop/policy_files.ts";
import { wasmBackend } from "./backend.ts";
import { modelFiles, zipFiles } from "./download.ts";
import { jsonl } from "./view.ts";
import { PlaygroundRun } from "./playground_run.ts";
import { tinyCheckpointFiles } from "../_test_utils.ts";

const files = await tinyCheckpointFiles();

Deno.test("modelFiles + zipFiles: the trained model unzipped loads as the trained policy (weights, value head, tokenizer)", async () => {
  const previous = getBackend();
  for (const recipe of ["grpo", "ppo"]) {
    const { config } = await loadConfig({
      config: recipe,
      set: [
        "trainer.steps=1",
        "trainer.evalProblems=0",
        "rollout.batchSize=8",
        "rollout.groupSize=" + (recipe === "ppo" ? 1 : 4),
        "algorithm.microBatchSize=8",
      ],
    });
    const run = await PlaygroundRun.create({
      config,
      files,
      backend: wasmBackend("wasm", "x").backend,
    });
    try {
      await run.run();
      const zip = zipFiles(await modelFiles(run.learner, files), "tiny-trained");
      assert.deepEqual(
        zipFiles(await modelFiles(run.learner, files), "tiny-trained"),
        zip,
        "deterministic",
      );
      const unzipped = unzipSync(zip);
      const back = new Map(
        Object.entries(unzipped).map((
          [name, bytes],
        ) => [name.replace(/^tiny-trained\//, ""), bytes]),
      );
      assert.deepEqual([...back.keys()].sort(), [
        "config.json",
        "generation_config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
      ]);
      assert.deepEqual(back.get("tokenizer.json"), files.get("tokenizer.json"));
      const policy = await policyFromFiles(back, "download");
      try {
        for (const [name, t] of run.learner.model.params) {
          assert.deepEqual(await policy.model.params.get(name)!.toArray(), await t.toArray(), name);
        }
        assert.notDeepEqual(
          await policy.model.params.get("model.norm.weight")!.toArray(),
          await (await loadPolicy("builtin:tiny")).model.params.get("model.norm.weight")!.toArray(),
          "one step changed the weights",
        );
        assert.deepEqual(policy.eosTokenIds, [2]);
        assert.deepEqual(
          [...policy.extra.keys()].every((n) => n.startsWith("v_head.")) && policy.extra.size > 0,
          recipe === "ppo",
          `${recipe}: value head tensors as extras`,
        );
      } finally {
        policy.model.dispose();
      }
    } finally {
      await run.close();
      setBackend(previous);
    }
  }
});

Deno.test("modelFiles refuses a LoRA learner (its checkpoint is the adapters)", async () => {
  const { config } = await loadConfig({
    config: "grpo",
    set: ["model.lora={rank: 2, alpha: 4, targetModules: [q_proj]}"],
  });
  const learner = await loadLearner(config, null);
  try {
    await assert.rejects(modelFiles(learner, files), /trains LoRA adapters/);
  } finally {
    learner.dispose();
  }
});

Deno.test("jsonl: one JSON object per line, as metrics.jsonl", () => {
  assert.equal(jsonl([]), "");
  assert.equal(
    jsonl([{ step: 1, x: null }, { step: 2, x: 0.5 }]),
    '{"step":1,"x":null}\n{"step":2,"x":0.5}\n',
  );
});
