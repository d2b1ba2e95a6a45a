import assert from "node:assert/strict";
import { join } from "node:path";
import { evaluate } from "../loop/eval.ts";
import { heldOutProblems } from "../loop/problems.ts";
import { loadPolicy, TINY_CHECKPOINT_DIR } from "../loop/policy.ts";
import { defaultTask, pretrain, tinyModelConfig } from "./pretrain.ts";

Deno.test("shipped tiny checkpoint: small, and held-out pass@1 in [10%, 50%] with pass@8 far above it", async () => {
  const bytes = (await Deno.stat(join(TINY_CHECKPOINT_DIR, "model.safetensors"))).size;
  assert.ok(bytes < 4 * 2 ** 20, `model.safetensors is ${bytes} bytes`);
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    assert.deepEqual(model.config, tinyModelConfig());
    const task = defaultTask();
    // The evaluation `deno task train` runs before training (64 problems, 8 samples, T = 1).
    const r = await evaluate(model, tokenizer, task, heldOutProblems(task, 64), {
      samples: 8,
      k: 8,
      seed: 0,
      sampling: { temperature: 1 },
      maxNewTokens: 8,
    });
    assert.ok(r.passAt1 >= 0.1 && r.passAt1 <= 0.5, `pass@1 ${r.passAt1}`);
    assert.ok(r.passAtK >= r.passAt1 + 0.2, `pass@8 ${r.passAtK} vs pass@1 ${r.passAt1}`);
  } finally {
    model.dispose();
  }
});

Deno.test("pretrain: the same seed writes the same bytes; another seed does not", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = { maxSteps: 3, evalEvery: 3, evalProblems: 2, evalSamples: 2, log: () => {} };
    const a = await pretrain({ ...opts, out: join(root, "a"), seed: 1 });
    await pretrain({ ...opts, out: join(root, "b"), seed: 1 });
    await pretrain({ ...opts, out: join(root, "c"), seed: 2 });
    assert.equal(a.steps, 3);
    const read = (d: string) => Deno.readFile(join(root, d, "model.safetensors"));
    assert.deepEqual(await read("b"), await read("a"));
    assert.notDeepEqual(await read("c"), await read("a"));
    const { tokenizer, model } = await loadPolicy(join(root, "a"));
    assert.equal(tokenizer.vocabSize, model.config.vocabSize);
    model.dispose();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
