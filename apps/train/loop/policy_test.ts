import assert from "node:assert/strict";
import { modelConfig, parameterCount } from "@rlvr/policy";
import { tinyTokenizer } from "../demo/format.ts";
import { checkpointDir, loadPolicy, stopTokenIds, TINY_CHECKPOINT_DIR } from "./policy.ts";

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

Deno.test("stopTokenIds: the tokenizer's EOS, then config.json's, then generation_config.json's, each once; a bad id names the file", () => {
  const tok = tinyTokenizer(); // <eos> = 2
  const config = modelConfig({
    vocabSize: tok.vocabSize,
    hiddenSize: 4,
    intermediateSize: 8,
    numLayers: 1,
    numHeads: 2,
    eosTokenIds: [5, 2],
  });
  assert.deepEqual(stopTokenIds(tok, config, null), [2, 5]);
  assert.deepEqual(stopTokenIds(tok, config, { eos_token_id: 7 }), [2, 5, 7]);
  assert.deepEqual(stopTokenIds(tok, config, { eos_token_id: [9, 5, 2] }), [2, 5, 9]);
  assert.deepEqual(stopTokenIds(tok, config, { eos_token_id: null }), [2, 5]);
  assert.throws(
    () => stopTokenIds(tok, config, { eos_token_id: [3, 103] }),
    /generation_config\.json eos_token_id\[1\] is 103; use a token id in \[0, 103\)/,
  );
  assert.throws(() => stopTokenIds(tok, config, { eos_token_id: "2" }), /eos_token_id is "2"/);
});
