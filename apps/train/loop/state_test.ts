import assert from "node:assert/strict";
import { attachValueHead, CausalLM, modelConfig, scoreCompletions, values } from "@rlvr/policy";
import { AdamW, tensor } from "@rlvr/tensor";
import { join } from "node:path";
import { tinyTokenizer } from "../demo/format.ts";
import { attachRunLora, LORA_FILES } from "./lora.ts";
import { loadTrainState, saveTrainState, STATE_FILES } from "./state.ts";

Deno.test("saveTrainState/loadTrainState: weights, value head, AdamW moments and counters round-trip bit for bit", async () => {
  const tok = tinyTokenizer();
  const config = modelConfig({
    vocabSize: tok.vocabSize,
    hiddenSize: 16,
    intermediateSize: 32,
    numLayers: 1,
    numHeads: 2,
  });
  const model = CausalLM.random(config, { seed: 4, std: 0.1 });
  attachValueHead(model, { seed: 1 });
  const opt = new AdamW(model.parameters(), { lr: 1e-2 });
  // One real step so that the moments are non-zero.
  const s = scoreCompletions(model, [{ promptIds: [1, 10, 11], completionIds: [12, 2] }]);
  const v = values(model, tensor([[1, 10, 11]], { dtype: "i32" }));
  s.logprobs.sum().add(v.sum()).backward();
  opt.step();
  opt.zeroGrad();
  const dir = await Deno.makeTempDir();
  try {
    await saveTrainState(dir, model, tok, opt, { step: 7, seed: 3, dataPosition: 99 });
    for (const f of Object.values(STATE_FILES)) assert.ok((await Deno.stat(`${dir}/${f}`)).isFile);
    assert.ok((await Deno.stat(`${dir}/model.safetensors`)).isFile);
    assert.ok((await Deno.stat(`${dir}/tokenizer.json`)).isFile);
    const back = await loadTrainState(dir);
    assert.deepEqual(back.state, { step: 7, seed: 3, dataPosition: 99 });
    for (const [name, t] of model.params) {
      assert.deepEqual(await back.params.get(name)!.data(), await t.data(), name);
    }
    assert.deepEqual([...back.extra.keys()].sort(), [
      "v_head.summary.bias",
      "v_head.summary.weight",
    ]);
    const want = await opt.state();
    assert.equal(back.optimizer.stepCount, want.stepCount);
    assert.deepEqual(back.optimizer.groups, JSON.parse(JSON.stringify(want.groups)));
    assert.equal(back.optimizer.params.length, want.params.length);
    want.params.forEach((p, i) => {
      const q = back.optimizer.params[i]!;
      assert.equal(q.step, p!.step);
      for (const [name, arr] of Object.entries(p!.buffers)) {
        assert.deepEqual(q.buffers[name], arr, `param ${i} buffer ${name}`);
      }
    });
    // The state loads into a fresh optimizer over the same parameters.
    const opt2 = new AdamW(model.parameters(), { lr: 1 });
    opt2.loadState(back.optimizer);
    assert.equal(opt2.lr, 1e-2);
    opt2.dispose();
    back.params.forEach((t) => t.dispose());
    back.extra.forEach((t) => t.dispose());
  } finally {
    opt.dispose();
    model.dispose();
    for (const t of [s.logprobs, s.mask, s.entropies!, v]) t.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("saveTrainState: with LoRA the model part is the adapters and the value head; a full checkpoint gets the generation config", async () => {
  const tok = tinyTokenizer();
  const config = modelConfig({
    vocabSize: tok.vocabSize,
    hiddenSize: 16,
    intermediateSize: 32,
    numLayers: 1,
    numHeads: 2,
  });
  const dir = await Deno.makeTempDir();
  const model = CausalLM.random(config, { seed: 4, std: 0.1 });
  try {
    const full = join(dir, "full");
    await Deno.mkdir(full);
    const opt = new AdamW(model.parameters(), { lr: 1e-2 });
    await saveTrainState(full, model, tok, opt, { step: 1, seed: 0, dataPosition: 0 }, {
      generationConfig: { eos_token_id: [2] },
    });
    opt.dispose();
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(full, "generation_config.json"))).eos_token_id,
      [2],
    );
    const fullBack = await loadTrainState(full);
    assert.equal(fullBack.lora, null);
    fullBack.params.forEach((t) => t.dispose());

    attachRunLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] }, { seed: 0 });
    attachValueHead(model, { seed: 1 });
    const loraOpt = new AdamW(model.parameters(), { lr: 1e-2 });
    const lora = join(dir, "lora");
    await Deno.mkdir(lora);
    await saveTrainState(lora, model, tok, loraOpt, { step: 2, seed: 0, dataPosition: 8 }, {
      generationConfig: { eos_token_id: [2] },
      baseModel: "base/folder",
    });
    loraOpt.dispose();
    const names = [...Deno.readDirSync(lora)].map((e) => e.name);
    for (const f of [LORA_FILES.adapters, LORA_FILES.config, LORA_FILES.valueHead]) {
      assert.ok(names.includes(f), `${f} in ${names}`);
    }
    assert.ok(!names.includes("model.safetensors") && !names.includes("config.json"));
    const back = await loadTrainState(lora);
    assert.equal(back.config, null);
    assert.deepEqual([back.lora!.rank, back.lora!.alpha, back.lora!.targetModules], [2, 4, [
      "q_proj",
    ]]);
    assert.deepEqual([...back.extra.keys()].sort(), [
      "v_head.summary.bias",
      "v_head.summary.weight",
    ]);
    assert.equal(back.optimizer.params.length, 2 + 2); // A, B, and the head's weight and bias
    back.lora!.weights.forEach((t) => t.dispose());
    back.extra.forEach((t) => t.dispose());
  } finally {
    model.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});
