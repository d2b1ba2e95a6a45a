import assert from "node:assert/strict";
import { arithmeticTask } from "@rlvr/rewards";
import { passAtK } from "@rlvr/sampling";
import { evaluate, type EvaluateOptions } from "./eval.ts";
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
