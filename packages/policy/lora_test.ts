import assert from "node:assert/strict";
import {
  AdamW,
  getBackend,
  logprobsOf,
  noGrad,
  Rng,
  type Tensor,
  tensor,
  tidy,
} from "@rlvr/tensor";
import { assertClose } from "@rlvr/tensor/testing";
import {
  attachLora,
  attachValueHead,
  CausalLM,
  LORA_TARGETS,
  type LoraAdapters,
  modelConfig,
  parameterShapes,
} from "@rlvr/policy";

const CONFIG = modelConfig({
  modelType: "qwen2",
  vocabSize: 21,
  hiddenSize: 16,
  intermediateSize: 20,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
});
const ALL = [...LORA_TARGETS];

function ids(): Tensor {
  return tensor([[1, 5, 9, 2, 7, 3], [4, 4, 8, 0, 20, 6]], { dtype: "i32" });
}

async function logitsOf(model: CausalLM, x: Tensor): Promise<Float32Array> {
  const out = noGrad(() => model.forward(x));
  const data = await out.data() as Float32Array;
  out.dispose();
  return data;
}

function loss(model: CausalLM, x: Tensor): Tensor {
  return tidy(() => {
    const t = x.shape[1]!;
    return logprobsOf(model.forward(x).narrow(1, 0, t - 1), x.narrow(1, 1, t - 1)).mean().neg();
  });
}

/** Random A and B (B ~ N(0, 0.2²), A ~ N(0, 0.3²)) for adapters shaped like `lora`'s. */
function randomWeights(lora: LoraAdapters, seed: number): Map<string, Tensor> {
  const rng = new Rng(seed);
  const out = new Map<string, Tensor>();
  for (const [name, t] of lora.params) {
    const std = name.includes("lora_B") ? 0.2 : 0.3;
    out.set(
      name,
      tensor(Array.from({ length: t.size }, () => rng.normal() * std), { shape: t.shape }),
    );
  }
  return out;
}

Deno.test("attachLora: fresh adapters leave the logits bit-identical, with PEFT names, shapes and init", async () => {
  const model = CausalLM.random(CONFIG, { seed: 1, std: 0.3 });
  const x = ids();
  const base = await logitsOf(model, x);
  const lora = attachLora(model, { rank: 3, alpha: 6, targetModules: ALL, seed: 7 });
  // Tolerance: none. B = 0 makes the adapter term an exact zero.
  assert.deepEqual(await logitsOf(model, x), base);
  assert.equal(lora.scale, 2);
  assert.equal(lora.params.size, CONFIG.numLayers * ALL.length * 2);
  const shapes = parameterShapes(CONFIG);
  for (let l = 0; l < CONFIG.numLayers; l++) {
    for (const target of ALL) {
      const block = ["gate_proj", "up_proj", "down_proj"].includes(target) ? "mlp" : "self_attn";
      const path = `model.layers.${l}.${block}.${target}`;
      const [out, inp] = shapes.get(`${path}.weight`)! as [number, number];
      const a = lora.params.get(`base_model.model.${path}.lora_A.weight`)!;
      const b = lora.params.get(`base_model.model.${path}.lora_B.weight`)!;
      assert.deepEqual(a.shape, [3, inp]);
      assert.deepEqual(b.shape, [out, 3]);
      const av = await a.data();
      // kaiming_uniform_(a=√5): uniform in ±1/√in.
      assert.ok(av.every((v) => Math.abs(v) <= 1 / Math.sqrt(inp)), `${path}: A out of bounds`);
      assert.ok(new Set(av).size > av.length / 2, `${path}: A is not random`);
      assert.ok((await b.data()).every((v) => v === 0), `${path}: B is not zero`);
    }
  }
  // Only the adapters train; the base is frozen.
  assert.deepEqual(new Set(model.parameters()), new Set(lora.params.values()));
  assert.ok([...model.params.values()].every((p) => !p.requiresGrad));
  // Same seed, same A; another seed, another A.
  const name = "base_model.model.model.layers.1.mlp.down_proj.lora_A.weight";
  const other = CausalLM.random(CONFIG, { seed: 1, std: 0.3 });
  const same = attachLora(other, { rank: 3, alpha: 6, targetModules: ALL, seed: 7 });
  assert.deepEqual(await same.params.get(name)!.data(), await lora.params.get(name)!.data());
  same.detach();
  same.dispose();
  const diff = attachLora(other, { rank: 3, alpha: 6, targetModules: ALL, seed: 8 });
  assert.notDeepEqual(await diff.params.get(name)!.data(), await lora.params.get(name)!.data());
  x.dispose();
  model.dispose();
  other.dispose();
});

Deno.test("attachLora: only adapter tensors receive gradients; base .grad stays null", async () => {
  const model = CausalLM.random(CONFIG, { seed: 2, std: 0.3 });
  const lora = attachLora(model, {
    rank: 2,
    alpha: 4,
    targetModules: ["q_proj", "v_proj", "down_proj"],
  });
  const x = ids();
  const l = loss(model, x);
  l.backward();
  for (const [name, p] of model.params) assert.equal(p.grad, null, `${name} got a gradient`);
  for (const [name, p] of lora.params) {
    assert.ok(p.grad !== null, `${name} has no gradient`);
    const g = await p.grad.data();
    assert.ok(g.every(Number.isFinite), `${name}: non-finite gradient`);
    // With B = 0, dL/dA = 0 exactly; dL/dB = scale·(x·Aᵀ)ᵀ·dy is not.
    if (name.includes("lora_B")) assert.ok(g.some((v) => v !== 0), `${name}: zero gradient`);
  }
  l.dispose();
  x.dispose();
  model.dispose();
});

Deno.test("LoRA after a training step: adapter output equals W + scale·B·A, merge matches it, unmerge restores the base", async () => {
  const model = CausalLM.random(CONFIG, { seed: 3, std: 0.3 });
  const baseWeights = new Map<string, Float32Array>();
  for (const [n, p] of model.params) baseWeights.set(n, Float32Array.from(await p.data()));
  const shapeOnly = attachLora(model, { rank: 4, alpha: 8, targetModules: ALL });
  const weights = randomWeights(shapeOnly, 11);
  shapeOnly.detach();
  shapeOnly.dispose();
  const lora = attachLora(model, { rank: 4, alpha: 8, targetModules: ALL, weights });
  const x = ids();
  // One real optimisation step on the adapters.
  const opt = new AdamW(model.parameters(), { lr: 1e-2 });
  const l = loss(model, x);
  l.backward();
  opt.step();
  opt.zeroGrad();
  l.dispose();
  const adapted = await logitsOf(model, x);

  // An independent model whose weights are W + scale·B·A, computed on the host in float64.
  const effective = new Map<string, Tensor>();
  for (const [n, w] of baseWeights) {
    const shape = parameterShapes(CONFIG).get(n)!;
    const v = Float64Array.from(w);
    const a = lora.params.get(`base_model.model.${n.replace(/\.weight$/, "")}.lora_A.weight`);
    const b = lora.params.get(`base_model.model.${n.replace(/\.weight$/, "")}.lora_B.weight`);
    if (a !== undefined && b !== undefined) {
      const [out, inp] = shape as [number, number];
      const av = await a.data();
      const bv = await b.data();
      for (let o = 0; o < out; o++) {
        for (let i = 0; i < inp; i++) {
          let s = 0;
          for (let r = 0; r < 4; r++) s += bv[o * 4 + r]! * av[r * inp + i]!;
          v[o * inp + i]! += 2 * s;
        }
      }
    }
    effective.set(n, tensor(v, { shape }));
  }
  const reference = CausalLM.fromParams(CONFIG, effective);
  // Tolerance rtol/atol 1e-5: f32 rounding of two different but equivalent computations.
  assertClose(adapted, await logitsOf(reference, x), {
    rtol: 1e-5,
    atol: 1e-5,
    msg: "adapter vs W + sBA",
  });
  reference.dispose();

  const qName = "model.layers.0.self_attn.q_proj.weight";
  const q = model.params.get(qName)!;
  lora.merge();
  assert.equal(model.params.get(qName), q, "merge must work in place");
  assert.notDeepEqual(await q.data(), baseWeights.get(qName));
  assertClose(await logitsOf(model, x), adapted, {
    rtol: 1e-5,
    atol: 1e-5,
    msg: "merged vs unmerged",
  });
  lora.unmerge();
  // Tolerance atol 1e-6: (W + Δ) − Δ in f32 is W up to one rounding of W + Δ.
  for (const [n, p] of model.params) {
    assertClose(await p.data(), baseWeights.get(n)!, { rtol: 0, atol: 1e-6, msg: `unmerged ${n}` });
  }
  assertClose(await logitsOf(model, x), adapted, { rtol: 1e-5, atol: 1e-5, msg: "unmerged again" });
  opt.dispose();
  x.dispose();
  model.dispose();
});

Deno.test("LoraAdapters.detach: the base trains again and the output is the base's", async () => {
  const model = CausalLM.random(CONFIG, { seed: 4, std: 0.3 });
  const x = ids();
  const base = await logitsOf(model, x);
  const shapeOnly = attachLora(model, { rank: 2, alpha: 2, targetModules: ["o_proj", "up_proj"] });
  const weights = randomWeights(shapeOnly, 12);
  shapeOnly.detach();
  shapeOnly.dispose();
  const lora = attachLora(model, {
    rank: 2,
    alpha: 2,
    targetModules: ["o_proj", "up_proj"],
    weights,
  });
  assert.notDeepEqual(await logitsOf(model, x), base);
  lora.detach();
  assert.deepEqual(await logitsOf(model, x), base);
  assert.ok([...model.params.values()].every((p) => p.requiresGrad));
  assert.equal(model.parameters().length, parameterShapes(CONFIG).size);
  assert.throws(
    () => lora.merge(),
    /LoraAdapters\.merge: the adapters were detached from their model/,
  );
  // Detaching a merged adapter unmerges it first.
  const again = attachLora(model, {
    rank: 2,
    alpha: 2,
    targetModules: ["o_proj", "up_proj"],
    weights: randomWeights(lora, 13),
  });
  again.merge();
  again.detach();
  assertClose(await logitsOf(model, x), base, {
    rtol: 1e-5,
    atol: 1e-5,
    msg: "after detaching a merged adapter",
  });
  lora.dispose();
  again.dispose();
  x.dispose();
  model.dispose();
});

Deno.test("attachLora with a value head: parameters() lists the adapters and the head", () => {
  const model = CausalLM.random(CONFIG, { seed: 5 });
  const lora = attachLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] });
  const head = attachValueHead(model);
  const names = [...model.namedParameters().keys()];
  assert.deepEqual(names.filter((n) => n.startsWith("v_head")), [
    "v_head.summary.weight",
    "v_head.summary.bias",
  ]);
  assert.equal(names.length, lora.params.size + 2);
  assert.ok(head.weight.requiresGrad);
  model.dispose();
});

Deno.test("attachLora: bad options name the option, the value and the choices", () => {
  const model = CausalLM.random(CONFIG, { seed: 6 });
  assert.throws(
    () => attachLora(model, { rank: 0, alpha: 1, targetModules: ["q_proj"] }),
    /attachLora: rank must be an integer >= 1, got 0/,
  );
  assert.throws(
    () => attachLora(model, { rank: 2, alpha: 0, targetModules: ["q_proj"] }),
    /attachLora: alpha must be a finite number > 0, got 0/,
  );
  assert.throws(
    () => attachLora(model, { rank: 2, alpha: 1, targetModules: [] }),
    /targetModules must list at least one of q_proj, k_proj/,
  );
  assert.throws(
    () => attachLora(model, { rank: 2, alpha: 1, targetModules: ["q_proj", "lm_head"] }),
    /targetModules\[1\] must be one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, got "lm_head"/,
  );
  assert.throws(
    () => attachLora(model, { rank: 2, alpha: 1, targetModules: ["v_proj", "v_proj"] }),
    /lists "v_proj" twice/,
  );
  const lora = attachLora(model, { rank: 2, alpha: 1, targetModules: ["v_proj"] });
  assert.throws(
    () => attachLora(model, { rank: 2, alpha: 1, targetModules: ["q_proj"] }),
    /already has LoRA adapters/,
  );
  assert.throws(() => lora.unmerge(), /not merged; call merge\(\) first/);
  lora.merge();
  assert.throws(() => lora.merge(), /already merged; call unmerge\(\) first/);
  lora.detach();
  const weights = randomWeights(lora, 1);
  weights.delete("base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight");
  weights.set("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", tensor([0]));
  weights.get("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight")!.dispose();
  weights.set(
    "base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight",
    tensor(new Float32Array(6), { shape: [2, 3] }),
  );
  let message = "";
  try {
    attachLora(model, { rank: 2, alpha: 1, targetModules: ["v_proj"], weights });
  } catch (e) {
    message = (e as Error).message;
  }
  assert.match(
    message,
    /missing: base_model\.model\.model\.layers\.0\.self_attn\.v_proj\.lora_A\.weight/,
  );
  assert.match(
    message,
    /unexpected: base_model\.model\.model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight/,
  );
  assert.match(
    message,
    /mis-shaped: base_model\.model\.model\.layers\.1\.self_attn\.v_proj\.lora_B\.weight is \[2,3\], want \[8,2\]/,
  );
  for (const t of weights.values()) t.dispose();
  lora.dispose();
  model.dispose();
});

Deno.test("LoRA: attach, 20 training steps, merge, unmerge, detach and dispose leak no buffers", () => {
  const be = getBackend();
  const start = be.memory().liveBuffers;
  const model = CausalLM.random(CONFIG, { seed: 7, std: 0.3 });
  const lora = attachLora(model, { rank: 2, alpha: 4, targetModules: ALL });
  const x = ids();
  const opt = new AdamW(model.parameters(), { lr: 1e-3 });
  const counts: number[] = [];
  for (let step = 0; step < 20; step++) {
    const l = loss(model, x);
    l.backward();
    opt.step();
    opt.zeroGrad();
    l.dispose();
    counts.push(be.memory().liveBuffers);
  }
  assert.deepEqual(counts.slice(1), new Array(19).fill(counts[1]));
  const before = be.memory().liveBuffers;
  lora.merge();
  lora.unmerge();
  assert.equal(be.memory().liveBuffers, before);
  lora.detach();
  lora.dispose();
  opt.dispose();
  x.dispose();
  model.dispose();
  assert.equal(be.memory().liveBuffers, start);
});
