import assert from "node:assert/strict";
import fc from "fast-check";
import { noGrad, Rng, storageFormat, tensor, ZigguratNormal } from "@rlvr/tensor";
import { CausalLM, modelConfig, parameterShapes } from "@rlvr/policy";

// Qwen2-shaped: q/k/v biases, GQA, untied head (so lm_head is drawn too).
const CONFIG = modelConfig({
  modelType: "qwen2",
  vocabSize: 50,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
});

/** Every parameter's values, in `parameterShapes` order. */
async function values(model: CausalLM): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  for (const name of parameterShapes(model.config).keys()) {
    out.set(name, (await model.params.get(name)!.data()) as Float32Array);
  }
  return out;
}

/** The values CausalLM.random must give: one stream across the drawn tensors in order. */
function expected(next: () => number, std: number): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const [name, shape] of parameterShapes(CONFIG)) {
    const v = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith("norm.weight")) v.fill(1);
    else if (!name.endsWith(".bias")) { for (let i = 0; i < v.length; i++) v[i] = next() * std; }
    out.set(name, v);
  }
  return out;
}

Deno.test("CausalLM.random: the default init is still Rng.normal() * std in parameterShapes order, bit for bit (and pinned)", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer(), fc.constantFrom(0.02, 0.3, 1), async (seed, std) => {
      const rng = new Rng(seed);
      const want = expected(() => rng.normal(), std);
      for (const init of [undefined, "box-muller"] as const) {
        const model = CausalLM.random(
          CONFIG,
          init === undefined ? { seed, std } : { seed, std, init },
        );
        assert.deepEqual(await values(model), want);
        model.dispose();
      }
    }),
    { numRuns: 10 },
  );
  const model = CausalLM.random(CONFIG, { seed: 0 });
  const embed = await model.params.get("model.embed_tokens.weight")!.data();
  assert.deepEqual([...embed.slice(0, 3)], [
    -0.0036572774406522512,
    0.041591886430978775,
    -0.0014699081657454371,
  ]);
  model.dispose();
});

Deno.test("CausalLM.random init ziggurat: one ZigguratNormal stream in parameterShapes order, norms 1, biases 0, deterministic per seed, pinned", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer(), fc.constantFrom(0.02, 0.3), async (seed, std) => {
      const z = new ZigguratNormal(seed);
      const want = expected(() => z.normal(), std);
      const a = CausalLM.random(CONFIG, { seed, std, init: "ziggurat" });
      const b = CausalLM.random(CONFIG, { seed, std, init: "ziggurat" });
      const got = await values(a);
      assert.deepEqual(got, want);
      assert.deepEqual(await values(b), got);
      for (const [name, v] of got) {
        if (name.endsWith("norm.weight")) assert.ok(v.every((x) => x === 1), name);
        if (name.endsWith(".bias")) assert.ok(v.every((x) => x === 0), name);
      }
      const def = CausalLM.random(CONFIG, { seed, std });
      assert.notDeepEqual(await values(def), got);
      for (const m of [a, b, def]) m.dispose();
    }),
    { numRuns: 10 },
  );
  const model = CausalLM.random(CONFIG, { seed: 0, init: "ziggurat" });
  const embed = await model.params.get("model.embed_tokens.weight")!.data();
  assert.deepEqual([...embed.slice(0, 3)], [
    0.0323253758251667,
    0.00413156533613801,
    -0.00034456702996976674,
  ]);
  model.dispose();
});

Deno.test("CausalLM.random init ziggurat: weights have std 0.02 and mean 0 (6 standard errors), and a forward pass runs", async () => {
  const model = CausalLM.random(CONFIG, { seed: 5, init: "ziggurat" });
  let n = 0, s1 = 0, s2 = 0;
  for (const [name, v] of await values(model)) {
    if (name.endsWith("norm.weight") || name.endsWith(".bias")) continue;
    for (const x of v) {
      n++;
      s1 += x;
      s2 += x * x;
    }
  }
  const mean = s1 / n, sd = Math.sqrt(s2 / n - mean * mean);
  // n ≈ 30k: the sample mean has sd 0.02/√n, the sample sd about 0.02/√(2n).
  assert.ok(Math.abs(mean) < 6 * 0.02 / Math.sqrt(n), `mean ${mean}`);
  assert.ok(Math.abs(sd - 0.02) < 6 * 0.02 / Math.sqrt(2 * n), `std ${sd}`);
  const logits = noGrad(() => model.forward(tensor([[3, 1, 4, 1, 5]], { dtype: "i32" })));
  assert.deepEqual(logits.shape, [1, 5, 50]);
  assert.ok((await logits.data()).every(Number.isFinite));
  logits.dispose();
  model.dispose();
});

Deno.test("CausalLM.random init ziggurat with bf16 storage: the same draws, rounded to bfloat16", async () => {
  const f32 = CausalLM.random(CONFIG, { seed: 2, init: "ziggurat" });
  const bf16 = CausalLM.random(CONFIG, { seed: 2, init: "ziggurat", storage: "bf16" });
  const name = "model.layers.1.mlp.down_proj.weight";
  assert.equal(storageFormat(bf16.params.get(name)!), "bf16");
  const a = await f32.params.get(name)!.data(), b = await bf16.params.get(name)!.data();
  for (let i = 0; i < a.length; i++) {
    assert.ok(Math.abs(a[i]! - b[i]!) <= Math.abs(a[i]!) * 2 ** -8, `${i}: ${a[i]} vs ${b[i]}`);
  }
  f32.dispose();
  bf16.dispose();
});

Deno.test("CausalLM.random: an unknown init names the field, the value and the choices", () => {
  assert.throws(
    () => CausalLM.random(CONFIG, { init: "polar" as never }),
    /CausalLM\.random: init must be one of box-muller, ziggurat, got "polar"/,
  );
});
