/**
 * Bring-your-own model: `--model <folder>` with a Hugging Face checkpoint (a tiny random
 * Qwen2-shaped model with the real Qwen3 tokenizer and chat template, `_qwen_fixture.ts`) trains
 * end to end on the arithmetic task.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { parseCli } from "../cli.ts";
import { loadConfig } from "../config/load.ts";
import { readJsonl } from "../run/jsonl.ts";
import { REQUIRED_METRICS } from "../run/records.ts";
import { loadPolicy } from "./policy.ts";
import { QWEN_EOS_IDS, writeTinyQwen } from "./_qwen_fixture.ts";
import { runTraining } from "./run.ts";

const quiet = { progress: () => {}, report: false, handleSignals: false };

Deno.test("--model <HF folder>: a Qwen2-shaped checkpoint with a chat template trains 2 steps; prompts use the template, generation stops on both EOS ids", async () => {
  const root = await Deno.makeTempDir();
  try {
    const folder = join(root, "tiny-qwen");
    await writeTinyQwen(folder);
    const policy = await loadPolicy(folder);
    // The tokenizer's EOS (<|im_end|>) and generation_config.json's second id (<|endoftext|>).
    assert.deepEqual(policy.eosTokenIds, [...QWEN_EOS_IDS]);
    policy.model.dispose();

    // Sizes: 4 responses (2 prompts x 2), 4 new tokens, 2 held-out problems x 2 samples: every
    // part of a step runs, and a step costs about a second on the CPU despite the 151,669-word
    // vocabulary (the LM head and the sampler are what scale with it). A random model earns
    // reward 0, so every group has zero advantage; the entropy bonus gives the update a
    // gradient anyway, so the steps really change the weights through the whole backward pass.
    const cli = parseCli([
      "--model",
      folder,
      "--device",
      "cpu",
      "--steps",
      "2",
      "--out",
      root,
      ...[
        "rollout.batchSize=4",
        "rollout.groupSize=2",
        "algorithm.microBatchSize=4",
        "rollout.maxNewTokens=4",
        "algorithm.entropyCoef=0.01",
        "trainer.evalProblems=2",
        "trainer.evalSamples=2",
        "trainer.evalK=2",
        "trainer.samplesEvery=1",
        "trainer.samplesCount=2",
        "output.name=byo",
      ].flatMap((s) => ["--set", s]),
    ]);
    assert.equal(cli.kind, "run");
    if (cli.kind !== "run") return;
    const loaded = await loadConfig(cli.options);
    assert.equal(loaded.config.model.checkpoint, folder);
    assert.equal(loaded.provenance.get("model.checkpoint"), `--model ${folder}`);
    const lines: string[] = [];
    const started = performance.now();
    const r = await runTraining(loaded, { ...quiet, log: (l) => lines.push(l) });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `2 steps of the tiny Qwen2 model with the Qwen3 tokenizer: ${seconds.toFixed(1)} s`,
    );
    assert.equal(r.step, 2);
    const header = lines.find((l) => l.startsWith("model: "));
    assert.match(
      header ?? "",
      /\(qwen2, .* chat prompts; stops on token ids 151645, 151643; on cpu\)/,
    );

    // The run directory is complete.
    for (
      const f of ["config.yaml", "metrics.jsonl", "eval.jsonl", "samples.jsonl", "device.json"]
    ) {
      assert.ok((await Deno.stat(join(r.dir, f))).isFile, f);
    }
    const ckpt = join(r.dir, "checkpoints/step-2");
    for (
      const f of [
        "COMPLETE",
        "config.json",
        "model.safetensors",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
      ]
    ) {
      assert.ok((await Deno.stat(join(ckpt, f))).isFile, `checkpoint lacks ${f}`);
    }
    // The checkpoint loads as a policy with the same tokenizer, template and stop ids.
    const back = await loadPolicy(ckpt);
    assert.deepEqual(back.eosTokenIds, [...QWEN_EOS_IDS]);
    back.model.dispose();

    const metrics = (await readJsonl<Record<string, unknown>>(join(r.dir, "metrics.jsonl")))
      .records;
    assert.deepEqual(metrics.map((m) => m.step), [1, 2]);
    for (const m of metrics) {
      for (const key of REQUIRED_METRICS) assert.ok(key in m, `metrics lacks ${key}`);
      for (const [k, v] of Object.entries(m)) {
        assert.ok(v === null || Number.isFinite(v), `${k} = ${v}`);
      }
      assert.ok((m.grad_norm as number) > 0, `grad_norm ${m.grad_norm}`);
    }
    // Prompts are the Qwen chat template around the task's full prompt, ready for the answer.
    const samples = (await readJsonl<{ prompt: string; completion: string }>(
      join(r.dir, "samples.jsonl"),
    )).records;
    assert.ok(samples.length > 0);
    for (const s of samples) {
      assert.match(
        s.prompt,
        /^<\|im_start\|>user\nCompute the exact value of the expression below\.[^]*\d+ \+ \d+<\|im_end\|>\n<\|im_start\|>assistant\n$/,
      );
    }
    const evals = (await readJsonl<Record<string, number>>(join(r.dir, "eval.jsonl"))).records;
    assert.deepEqual(evals.map((e) => e.step), [0, 2]);
    for (const e of evals) assert.ok(Number.isFinite(e["pass@1"]));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
