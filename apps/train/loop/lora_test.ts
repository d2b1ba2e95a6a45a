import assert from "node:assert/strict";
import { join } from "node:path";
import { attachLora, attachValueHead, type CausalLM, type LoraAdapters } from "@rlvr/policy";
import { AdamW, noGrad, type Tensor, tensor } from "@rlvr/tensor";
import { arithmeticTask } from "@rlvr/rewards";
import { loadConfig } from "../config/load.ts";
import { loadPolicy } from "./policy.ts";
import { attachRunLora, LORA_FILES, loraParamNames, withoutAdapters } from "./lora.ts";
import { saveMergedModel } from "./lora_files.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { collectRollout } from "./rollout.ts";
import { loadTrainState, saveTrainState, STATE_FILES } from "./state.ts";
import { trainStep } from "./trainer.ts";

// The shipped tiny model (Llama-shaped, 2 layers, hidden 64): big enough to have every target
// module, small enough that a step takes well under a second on the CPU.
const LORA = { rank: 4, alpha: 8, targetModules: ["v_proj", "q_proj", "down_proj"] };
const IDS = [[1, 20, 30, 12, 22, 30]];

async function hostParams(params: Map<string, Tensor>): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  for (const [n, t] of params) out.set(n, (await t.data()) as Float32Array);
  return out;
}

async function logits(model: CausalLM): Promise<Float32Array> {
  const x = tensor(IDS, { dtype: "i32" });
  const y = noGrad(() => model.forward(x));
  const out = (await y.data()) as Float32Array;
  x.dispose();
  y.dispose();
  return out;
}

/** Adapters with B != 0 (fresh ones have B = 0 and change nothing). */
async function trainedLikeWeights(model: CausalLM): Promise<Map<string, Tensor>> {
  const fresh = attachLora(model, { ...LORA, seed: 3 });
  const weights = new Map<string, Tensor>();
  let i = 0;
  for (const [name, t] of fresh.params) {
    const v = (await t.data()) as Float32Array;
    weights.set(name, tensor(v.map((x) => x + 0.05 * Math.sin(++i)), { shape: t.shape }));
  }
  fresh.detach();
  fresh.dispose();
  return weights;
}

Deno.test("loraParamNames: the order attachLora creates the adapters in, whatever the order of targetModules", async () => {
  const { model } = await loadPolicy("builtin:tiny");
  try {
    const lora = attachLora(model, { ...LORA, seed: 0 });
    assert.deepEqual(
      loraParamNames(model.config.numLayers, LORA.targetModules),
      [...lora.params.keys()],
    );
  } finally {
    model.dispose();
  }
});

Deno.test("withoutAdapters: the policy without its adapters is the base exactly; extensions come back in order", async () => {
  const { model } = await loadPolicy("builtin:tiny");
  try {
    const base = await logits(model);
    const weights = await trainedLikeWeights(model);
    // Handed over in file order (sorted by name), put back in attachLora's order.
    const shuffled = new Map([...weights].sort(([a], [b]) => a < b ? -1 : 1));
    const lora = attachRunLora(model, LORA, { seed: 0, weights: shuffled });
    assert.deepEqual([...lora.params.keys()], loraParamNames(2, LORA.targetModules));
    attachValueHead(model, { seed: 1 });
    const order = model.parameters();
    const adapted = await logits(model);
    assert.notDeepEqual(adapted, base);
    const x = tensor(IDS, { dtype: "i32" });
    const y = withoutAdapters(model, () => noGrad(() => model.forward(x)));
    const off = (await y.data()) as Float32Array;
    x.dispose();
    y.dispose();
    assert.throws(() => withoutAdapters(model, async () => {}), /fn must be synchronous/);
    assert.deepEqual(off, base); // bit for bit: the adapters only add a term
    const now = model.parameters();
    assert.ok(now.length === order.length && now.every((p, i) => p === order[i]), "order kept");
    assert.deepEqual(await logits(model), adapted);
  } finally {
    model.dispose();
  }
});

Deno.test("trainStep with LoRA: only the adapters are in the optimizer and change; the base weights are bit-identical after two steps; the reference is the base", async () => {
  const { config } = await loadConfig({
    set: [
      "rollout.batchSize=8",
      "rollout.groupSize=4",
      "algorithm.microBatchSize=8",
      "algorithm.kl.beta=0.04",
      "optimizer.lr=1e-2",
    ],
  });
  const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  const base = await hostParams(model.params);
  const lora = attachRunLora(model, LORA, { seed: 0 });
  const optimizer = new AdamW(model.parameters(), { lr: 1e-2 });
  try {
    assert.deepEqual(model.parameters(), [...lora.params.values()]);
    const adapters0 = await hostParams(lora.params);
    const stream = new TrainStream(task, 0, heldOutProblems(task, 8));
    const kls: (number | null)[] = [];
    for (let step = 1; step <= 2; step++) {
      const r = await collectRollout(model, tokenizer, task, stream, {
        step,
        seed: 0,
        batchSize: 8,
        groupSize: 4,
        maxNewTokens: 6,
        sampling: { temperature: 1 },
        dynamicRetries: null,
        overlong: null,
      });
      const m = await trainStep({ config, model, ref: "base", optimizer }, r.items);
      assert.ok(m.gradNorm !== null && m.gradNorm > 0, `step ${step}: gradient ${m.gradNorm}`);
      kls.push(m.kl);
    }
    // Step 1 scores the reference before any update: policy = base, so the KL is exactly 0;
    // after one update the adapters have moved the policy away from the base.
    assert.equal(kls[0], 0);
    assert.ok(kls[1] !== null && kls[1] !== 0, `kl after one update: ${kls[1]}`);
    assert.equal(optimizer.stepCount, 2);
    for (const [name, values] of await hostParams(model.params)) {
      assert.deepEqual(values, base.get(name), `${name} changed`);
    }
    let moved = 0;
    for (const [name, values] of await hostParams(lora.params)) {
      if (values.some((v, i) => v !== adapters0.get(name)![i])) moved++;
    }
    assert.equal(moved, lora.params.size, "every adapter tensor moved");
  } finally {
    optimizer.dispose();
    model.dispose();
  }
});

Deno.test("LoRA checkpoint: a PEFT adapter folder (no base weights) that loads back in attachLora's order with the optimizer state", async () => {
  const dir = await Deno.makeTempDir();
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  const weights = await trainedLikeWeights(model);
  attachRunLora(model, LORA, { seed: 0, weights });
  const optimizer = new AdamW(model.parameters(), { lr: 1e-3 });
  let back: Awaited<ReturnType<typeof loadTrainState>> | null = null;
  try {
    await saveTrainState(dir, model, tokenizer, optimizer, {
      step: 3,
      seed: 1,
      dataPosition: 12,
    }, { baseModel: "builtin:tiny" });
    const files = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(
      files,
      [LORA_FILES.config, LORA_FILES.adapters, "tokenizer.json", "tokenizer_config.json"]
        .concat(Object.values(STATE_FILES)).sort(),
    );
    const peft = JSON.parse(await Deno.readTextFile(join(dir, LORA_FILES.config)));
    assert.deepEqual(
      [peft.peft_type, peft.r, peft.lora_alpha, peft.target_modules, peft.base_model_name_or_path],
      ["LORA", 4, 8, ["q_proj", "v_proj", "down_proj"], "builtin:tiny"],
    );
    back = await loadTrainState(dir);
    assert.equal(back.config, null);
    assert.equal(back.params.size, 0);
    assert.deepEqual(back.state, { step: 3, seed: 1, dataPosition: 12 });
    const { model: again } = await loadPolicy("builtin:tiny");
    try {
      const lora = attachRunLora(again, LORA, { seed: 9, weights: back.lora!.weights });
      const mine = model.extension("lora") as LoraAdapters;
      assert.deepEqual([...lora.params.keys()], [...mine.params.keys()]);
      assert.deepEqual(await hostParams(lora.params), await hostParams(mine.params));
      const opt = new AdamW(again.parameters(), { lr: 1e-3 });
      opt.loadState(back.optimizer); // same count, order and shapes
      opt.dispose();
    } finally {
      again.dispose();
    }
  } finally {
    optimizer.dispose();
    model.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("saveMergedModel: a plain HF folder with W + (alpha/r)·B·A that computes what the adapted model computes; the live base is untouched", async () => {
  const dir = await Deno.makeTempDir();
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const base = await hostParams(model.params);
    const lora = attachRunLora(model, LORA, { seed: 0, weights: await trainedLikeWeights(model) });
    await saveMergedModel(join(dir, "merged"), model, tokenizer, { eos_token_id: [2] });
    for (const [name, values] of await hostParams(model.params)) {
      assert.deepEqual(values, base.get(name), `${name} changed`);
    }
    const merged = await loadPolicy(join(dir, "merged"));
    try {
      assert.equal(merged.model.extension("lora"), undefined);
      assert.deepEqual(merged.eosTokenIds, [2]);
      const m = await hostParams(merged.model.params);
      const adapted = loraParamNames(2, LORA.targetModules)
        .filter((n) => n.endsWith("lora_A.weight"))
        .map((n) => n.slice("base_model.model.".length, -".lora_A.weight".length) + ".weight");
      for (const [name, values] of m) {
        if (adapted.includes(name)) {
          assert.notDeepEqual(values, base.get(name), `${name} has the adapter folded in`);
        } else {
          assert.deepEqual(values, base.get(name), `${name} is the base`);
        }
      }
      // Same function: logits agree to f32 rounding (the merged path sums in another order).
      const [a, b] = [await logits(model), await logits(merged.model)];
      let worst = 0;
      for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
      assert.ok(worst < 1e-4, `worst |adapted - merged| logit ${worst}`);
      assert.ok(lora.merged === false);
    } finally {
      merged.model.dispose();
    }
  } finally {
    model.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});
