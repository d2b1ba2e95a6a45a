import assert from "node:assert/strict";
import {
  AdamW,
  bf16ToF32,
  createCpuBackend,
  f32ToBf16,
  storageFormat,
  tidy,
  withBackend,
} from "@rlvr/tensor";
import { attachLora, CausalLM, generate, modelConfig, scoreCompletions } from "@rlvr/policy";
import { loadCheckpoint, saveCheckpoint } from "@rlvr/policy/fs";

// A model whose weights are held as bf16 must behave exactly like an f32 model holding the same
// (bf16-rounded) values: generation, scoring and LoRA gradients are compared bit for bit.

const CONFIG = modelConfig({
  modelType: "qwen2",
  vocabSize: 48,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  tieWordEmbeddings: true,
});

async function pair(seed: number) {
  const half = CausalLM.random(CONFIG, { seed, std: 0.5, storage: "bf16" });
  const full = CausalLM.random(CONFIG, { seed, std: 0.5 });
  for (const [name, t] of full.params) {
    const values = Float32Array.from(await t.data());
    t.backend.write(t.buffer, bf16ToF32(f32ToBf16(values)));
    assert.equal(storageFormat(half.params.get(name)!), "bf16", name);
  }
  return { half, full };
}

Deno.test("bf16 storage: a bf16 model generates and scores exactly as the f32 model of its rounded weights, in half the memory", async () => {
  const backend = createCpuBackend();
  await withBackend(backend, async () => {
    const before = backend.memory().liveBytes;
    const { half, full } = await pair(1);
    const fullBytes = full.parameters().reduce((s, t) => s + 4 * t.size, 0);
    assert.equal(backend.memory().liveBytes - before, fullBytes + fullBytes / 2);
    const prompts = [[3, 9, 27, 4, 11], [7], [30, 2, 15]];
    const opts = { maxNewTokens: 12, sampler: { seed: 5, temperature: 0.8, topK: 20 } };
    const a = await generate(half, prompts, opts), b = await generate(full, prompts, opts);
    assert.deepEqual(a.sequences, b.sequences);
    const batch = a.sequences.map((s, i) => ({ promptIds: prompts[i]!, completionIds: s.tokens }));
    const sa = scoreCompletions(half, batch), sb = scoreCompletions(full, batch);
    assert.deepEqual(await sa.logprobs.toArray(), await sb.logprobs.toArray());
    assert.deepEqual(await sa.entropies!.toArray(), await sb.entropies!.toArray());
    for (const s of [sa, sb]) for (const t of [s.logprobs, s.entropies!, s.mask]) t.dispose();
    half.dispose();
    full.dispose();
  });
});

Deno.test("bf16 storage: LoRA on a frozen bf16 base trains exactly as on the f32 base of the same values; the base stays bf16 and unchanged", async () => {
  const backend = createCpuBackend();
  await withBackend(backend, async () => {
    const { half, full } = await pair(2);
    const runs = [];
    for (const model of [half, full]) {
      const lora = attachLora(model, { rank: 4, alpha: 8, targetModules: ["q_proj", "up_proj"] });
      const opt = new AdamW(model.parameters(), { lr: 0.05 });
      const losses: number[] = [];
      for (let step = 0; step < 3; step++) {
        const loss = tidy(() => {
          const s = scoreCompletions(model, [{ promptIds: [1, 2, 3], completionIds: [4, 5, 6] }]);
          return s.logprobs.mean().neg();
        });
        losses.push((await loss.data())[0]!);
        loss.backward();
        loss.dispose();
        opt.step();
        opt.zeroGrad();
      }
      const adapters = [...lora.namedParameters().values()];
      runs.push({ losses, lora: await Promise.all(adapters.map((t) => t.data())) });
      opt.dispose();
    }
    assert.deepEqual(runs[0]!.losses, runs[1]!.losses);
    assert.deepEqual(runs[0]!.lora, runs[1]!.lora);
    for (const t of half.params.values()) assert.equal(storageFormat(t), "bf16");
    half.dispose();
    full.dispose();
  });
});

Deno.test("bf16 storage: loadCheckpoint({ storage: 'bf16' }) holds a bf16 checkpoint exactly, and rejects a bad format", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const model = CausalLM.random(CONFIG, { seed: 3 });
    await saveCheckpoint(dir, { config: CONFIG, params: model.params }, { dtype: "bf16" });
    const a = await loadCheckpoint(dir), b = await loadCheckpoint(dir, { storage: "bf16" });
    for (const [name, t] of a.params) {
      const u = b.params.get(name)!;
      assert.equal(storageFormat(u), "bf16");
      assert.deepEqual(await u.toArray(), await t.toArray(), name);
    }
    for (const c of [a, b]) for (const t of c.params.values()) t.dispose();
    model.dispose();
    await assert.rejects(
      () => loadCheckpoint(dir, { storage: "f16" as never }),
      /loadCheckpoint: options.storage must be one of f32, bf16, got "f16"/,
    );
    assert.throws(
      () => CausalLM.random(CONFIG, { storage: "int8" as never }),
      /CausalLM.random: storage must be one of f32, bf16, got "int8"/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
