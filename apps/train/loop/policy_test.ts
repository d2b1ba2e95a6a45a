import assert from "node:assert/strict";
import { parameterCount } from "@rlvr/policy";
import { checkpointDir, loadPolicy, TINY_CHECKPOINT_DIR } from "./policy.ts";

Deno.test("loadPolicy: builtin:tiny is the shipped char-level checkpoint; a missing folder is an error naming it", async () => {
  assert.equal(checkpointDir("builtin:tiny"), TINY_CHECKPOINT_DIR);
  const p = await loadPolicy("builtin:tiny");
  try {
    assert.equal(p.model.config.vocabSize, p.tokenizer.vocabSize);
    assert.ok(parameterCount(p.model.config) < 250_000);
    assert.equal(p.extra.size, 0);
  } finally {
    p.model.dispose();
  }
  await assert.rejects(
    loadPolicy("/nonexistent/ckpt"),
    /no checkpoint folder at \/nonexistent\/ckpt/,
  );
});
