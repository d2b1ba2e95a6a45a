import assert from "node:assert/strict";
import { arithmeticTask } from "@rlvr/rewards";
import { passAtK } from "@rlvr/sampling";
import { completionReward } from "../demo/format.ts";
import { type EvalSample, evaluate, type EvaluateOptions } from "./eval.ts";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems } from "./problems.ts";

const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });
const opts: EvaluateOptions = {
  samples: 4,
  k: 4,
  seed: 0,
  sampling: { temperature: 1 },
  maxNewTokens: 6,
};

Deno.test("evaluate: deterministic, independent of the generation batch, pass@1 <= pass@k", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const rows = heldOutProblems(task, 16);
    const a = await evaluate(model, tokenizer, task, rows, opts);
    const b = await evaluate(model, tokenizer, task, rows, { ...opts, batch: 7 });
    assert.equal(b.passAt1, a.passAt1);
    assert.equal(b.passAtK, a.passAtK);
    assert.ok(a.passAt1 <= a.passAtK);
    // pass@1 is a mean of c/n, so a multiple of 1/(16·4).
    assert.ok(Math.abs(a.passAt1 * 64 - Math.round(a.passAt1 * 64)) < 1e-9);
    assert.equal(passAtK(4, 0, 1), 0);
    // Greedy decoding: every sample of a problem is the same, so pass@1 = pass@k.
    const g = await evaluate(model, tokenizer, task, rows, {
      ...opts,
      sampling: { temperature: 0 },
    });
    assert.equal(g.passAt1, g.passAtK);
    await assert.rejects(
      evaluate(model, tokenizer, task, rows, { ...opts, k: 5 }),
      /need integers 1 <= k <= samples, got samples 4, k 5/,
    );
  } finally {
    model.dispose();
  }
});

Deno.test("evaluate: onSample sees every completion once, with its problem, sample index and reward", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    // 8 problems x 4 samples, in generation batches of 5 so that batches split problems.
    const rows = heldOutProblems(task, 8);
    const seen: EvalSample[] = [];
    const r = await evaluate(model, tokenizer, task, rows, {
      ...opts,
      batch: 5,
      onSample: (s) => seen.push(s),
    });
    assert.equal(seen.length, 8 * 4);
    assert.deepEqual(
      seen.map((s) => [s.problem, s.sample]),
      Array.from({ length: 32 }, (_, i) => [Math.floor(i / 4), i % 4]),
    );
    assert.equal(seen.reduce((a, s) => a + s.reward, 0) / 32, r.passAt1);
    for (const s of seen) {
      assert.equal(s.reward, completionReward(task, rows[s.problem]!, s.text));
      assert.ok(s.tokens >= 1 && s.tokens <= opts.maxNewTokens);
    }
  } finally {
    model.dispose();
  }
});
