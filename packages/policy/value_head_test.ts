import assert from "node:assert/strict";
import { getBackend, noGrad, type Tensor, tensor, zeros } from "@rlvr/tensor";
import { assertClose } from "@rlvr/tensor/testing";
import {
  attachLora,
  attachValueHead,
  CausalLM,
  KVCache,
  modelConfig,
  ValueHead,
  values,
} from "@rlvr/policy";

const CONFIG = modelConfig({
  modelType: "qwen3",
  vocabSize: 15,
  hiddenSize: 8,
  intermediateSize: 16,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
});

function ids(): Tensor {
  return tensor([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], { dtype: "i32" });
}

Deno.test("values: hidden · wᵀ + b per token, [batch, t], from TRL-named tensors", async () => {
  const model = CausalLM.random(CONFIG, { seed: 1, std: 0.3 });
  const w = tensor([[0.5, -1, 0.25, 2, -0.75, 1.5, 0.1, -0.2]]);
  const b = tensor([0.3]);
  const head = attachValueHead(model, {
    weights: new Map([["v_head.summary.weight", w], ["v_head.summary.bias", b]]),
  });
  assert.equal(head.weight, w);
  const x = ids();
  const v = noGrad(() => values(model, x));
  assert.deepEqual(v.shape, [3, 4]);
  const hidden = noGrad(() => model.hidden(x));
  const h = await hidden.toArray() as number[][][];
  const wv = [0.5, -1, 0.25, 2, -0.75, 1.5, 0.1, -0.2];
  const want = h.map((row) => row.map((r) => r.reduce((s, hi, i) => s + hi * wv[i]!, 0.3)));
  // rtol/atol 1e-6: one f32 dot product of 8 terms against float64.
  assertClose(await v.data(), want.flat(), { rtol: 1e-6, atol: 1e-6 });
  // The same head applied to hidden states from one trunk pass gives the same values exactly.
  const again = noGrad(() => head.values(hidden));
  assert.deepEqual(await again.data(), await v.data());
  for (const t of [x, v, hidden, again]) t.dispose();
  model.dispose();
});

Deno.test("attachValueHead: seeded N(0, std²) weight, zero bias, TRL names, reproducible", async () => {
  const model = CausalLM.random(CONFIG);
  const head = attachValueHead(model, { seed: 3 });
  assert.deepEqual(head.weight.shape, [1, 8]);
  assert.deepEqual(await head.bias.toArray(), [0]);
  assert.deepEqual([...head.namedParameters().keys()], [
    "v_head.summary.weight",
    "v_head.summary.bias",
  ]);
  const wv = [...await head.weight.data()];
  assert.ok(wv.some((v) => v !== 0));
  // Default std 0.2: 8 draws of N(0, 0.04) stay within 5σ = 1.
  assert.ok(wv.every((v) => Math.abs(v) < 1));
  const other = CausalLM.random(CONFIG);
  const same = attachValueHead(other, { seed: 3 });
  assert.deepEqual([...await same.weight.data()], wv);
  const third = CausalLM.random(CONFIG);
  const wide = attachValueHead(third, { seed: 3, std: 0.4 });
  assertClose(await wide.weight.data(), wv.map((v) => 2 * v), { rtol: 1e-6, atol: 0 });
  model.dispose();
  other.dispose();
  third.dispose();
});

Deno.test("values: gradients reach the head and the base, or the head and LoRA only", async () => {
  const model = CausalLM.random(CONFIG, { seed: 4, std: 0.3 });
  const head = attachValueHead(model, { seed: 4 });
  const x = ids();
  const v = values(model, x);
  const s = v.sum();
  s.backward();
  // d(Σ values)/d bias = number of positions.
  assert.deepEqual(await head.bias.grad!.toArray(), [12]);
  assert.ok(head.weight.grad !== null);
  for (const [name, p] of model.params) {
    // The untied LM head is not on the value path.
    if (name === "lm_head.weight") assert.equal(p.grad, null);
    else assert.ok(p.grad !== null, `${name} has no gradient`);
  }
  for (const t of [v, s]) t.dispose();
  for (const p of model.namedParameters().values()) {
    p.grad?.dispose();
    p.grad = null;
  }
  const lora = attachLora(model, { rank: 2, alpha: 2, targetModules: ["q_proj", "down_proj"] });
  const v2 = values(model, x);
  const s2 = v2.sum();
  s2.backward();
  for (const [name, p] of model.params) assert.equal(p.grad, null, `${name} got a gradient`);
  for (const [name, p] of lora.params) assert.ok(p.grad !== null, `${name} has no gradient`);
  assert.ok(head.weight.grad !== null && head.bias.grad !== null);
  for (const t of [v2, s2, x]) t.dispose();
  model.dispose();
});

Deno.test("values: with a KV cache, step by step, equal the full pass bit for bit on the CPU", async () => {
  const model = CausalLM.random(CONFIG, { seed: 5, std: 0.3 });
  attachValueHead(model, { seed: 5 });
  const x = ids();
  const full = noGrad(() => values(model, x));
  const cache = new KVCache(CONFIG, 3);
  const parts: number[][] = [[], [], []];
  for (const [from, len] of [[0, 2], [2, 1], [3, 1]] as const) {
    const chunk = x.narrow(1, from, len);
    const v = noGrad(() => values(model, chunk, { cache }));
    (await v.toArray() as number[][]).forEach((r, i) => parts[i]!.push(...r));
    chunk.dispose();
    v.dispose();
  }
  assert.deepEqual(parts, await full.toArray());
  for (const t of [x, full]) t.dispose();
  cache.dispose();
  model.dispose();
});

Deno.test("value head: detach, dispose and no leaks", () => {
  const be = getBackend();
  const start = be.memory().liveBuffers;
  const model = CausalLM.random(CONFIG, { seed: 6 });
  const head = attachValueHead(model);
  const x = ids();
  for (let i = 0; i < 5; i++) {
    const v = values(model, x);
    const s = v.sum();
    s.backward();
    for (const t of [v, s]) t.dispose();
  }
  head.detach();
  assert.equal(model.extension("valueHead"), undefined);
  assert.equal(model.namedParameters().has("v_head.summary.weight"), false);
  model.dispose();
  // A detached head is not the model's to dispose.
  assert.equal(head.weight.isDisposed, false);
  head.dispose();
  x.dispose();
  assert.equal(be.memory().liveBuffers, start);
});

Deno.test("value head: bad use names the problem and the fix", () => {
  const model = CausalLM.random(CONFIG);
  const x = ids();
  assert.throws(
    () => values(model, x),
    /values: the model has no value head; call attachValueHead\(model\) first/,
  );
  assert.throws(
    () => attachValueHead(model, { std: -1 }),
    /attachValueHead: std must be a finite number >= 0, got -1/,
  );
  assert.throws(
    () =>
      attachValueHead(model, {
        weights: new Map([["v_head.summary.weight", zeros([1, 4])], ["extra", zeros([1])]]),
      }),
    /weights do not fit hiddenSize 8; missing v_head\.summary\.bias; v_head\.summary\.weight is \[1,4\], want \[1,8\]; unexpected: extra/,
  );
  const head = attachValueHead(model);
  assert.ok(head instanceof ValueHead);
  assert.throws(() => attachValueHead(model), /already has a value head; detach it first/);
  assert.throws(
    () => head.values(zeros([2, 3])),
    /ValueHead\.values: hidden must be \[\.\.\., hiddenSize=8\], got \[2,3\]/,
  );
  head.detach();
  assert.throws(() => head.detach(), /ValueHead\.detach: the head is not attached to a model/);
  head.dispose();
  x.dispose();
  model.dispose();
});
