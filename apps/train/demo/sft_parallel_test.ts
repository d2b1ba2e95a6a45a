import assert from "node:assert/strict";
import { CausalLM, modelConfig } from "@rlvr/policy";
import { AdamW, SGD } from "@rlvr/tensor";
import { sftStep } from "./sft.ts";
import { ParallelSft } from "./sft_parallel.ts";

const config = modelConfig({
  modelType: "llama",
  vocabSize: 20,
  hiddenSize: 16,
  intermediateSize: 32,
  numLayers: 2,
  numHeads: 2,
  maxPositions: 64,
  bosTokenId: 1,
  eosTokenIds: [2],
  padTokenId: 0,
});

const batch = Array.from({ length: 7 }, (_, i) => ({
  promptIds: [1, 4 + (i % 5)],
  completionIds: Array.from({ length: 2 + (i * 3) % 7 }, (_, t) => 3 + (i + t) % 15),
  ...(i === 3 ? { lossMask: [0, 1, 1, 0, 1, 1, 1, 1].slice(0, 2 + (i * 3) % 7) } : {}),
}));

Deno.test("ParallelSft: one step equals the one-thread step (same token mean) to f32 rounding; repeatable", async () => {
  const run = async (parallel: boolean) => {
    const model = CausalLM.random(config, { seed: 3 });
    // Plain SGD without clipping effects: the update is lr × the gradient itself.
    const opt = new SGD(model.parameters(), { lr: 0.1 });
    const sft = parallel ? await ParallelSft.start(config) : null;
    try {
      const loss = sft !== null
        ? await sft.step(model, opt, batch, { microBatch: 2 })
        : await sftStep(model, opt, batch);
      const weights = await Promise.all(model.parameters().map(async (p) => [...await p.data()]));
      return { loss, weights };
    } finally {
      sft?.close();
      opt.dispose();
      model.dispose();
    }
  };
  const one = await run(false);
  const two = await run(true);
  const again = await run(true);
  assert.ok(Math.abs(one.loss - two.loss) < 1e-5, `${one.loss} vs ${two.loss}`);
  one.weights.forEach((w, i) =>
    w.forEach((x, j) => assert.ok(Math.abs(x - two.weights[i]![j]!) < 1e-5, `param ${i}[${j}]`))
  );
  assert.deepEqual(again, two);
});

Deno.test("ParallelSft: a one-sequence batch runs on the main thread alone", async () => {
  const model = CausalLM.random(config, { seed: 1 });
  const opt = new AdamW(model.parameters(), { lr: 1e-3 });
  const sft = await ParallelSft.start(config);
  try {
    assert.ok((await sft.step(model, opt, [batch[0]!])) > 0);
  } finally {
    sft.close();
    opt.dispose();
    model.dispose();
  }
});
