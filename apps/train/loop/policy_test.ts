import assert from "node:assert/strict";
import { modelConfig, parameterCount } from "@rlvr/policy";
import { tinyTokenizer } from "../demo/format.ts";
import {
  checkpointDir,
  contextWindowProblem,
  estimateTrainingMemory,
  loadPolicy,
  memoryProblem,
  stopTokenIds,
  TINY_CHECKPOINT_DIR,
} from "./policy.ts";

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

/** Serves the shipped checkpoints folder on loopback (404 for anything missing). */
function serveCheckpoints(): Deno.HttpServer<Deno.NetAddr> {
  const root = new URL("../checkpoints/", import.meta.url);
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname).slice(1);
    if (path.split("/").includes("..")) return new Response("bad path", { status: 400 });
    try {
      return new Response(await Deno.readFile(new URL(path, root)));
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
}

Deno.test("loadPolicy by URL: a checkpoint folder served over HTTP loads the same weights and tokenizer; a missing file names its URL", async () => {
  const server = serveCheckpoints();
  const url = `http://127.0.0.1:${server.addr.port}/tiny/`;
  const local = await loadPolicy("builtin:tiny");
  const remote = await loadPolicy(url);
  try {
    assert.equal(remote.dir, url);
    assert.deepEqual(remote.model.config, local.model.config);
    assert.deepEqual(remote.eosTokenIds, local.eosTokenIds);
    assert.deepEqual(remote.generationConfig, local.generationConfig);
    assert.deepEqual(remote.tokenizer.encode("12+34="), local.tokenizer.encode("12+34="));
    assert.deepEqual([...remote.model.params.keys()], [...local.model.params.keys()]);
    for (const [name, t] of local.model.params) {
      assert.deepEqual(await remote.model.params.get(name)!.data(), await t.data(), name);
    }
    // A vision-language folder by URL: the tower and the image processor come too.
    const vlRemote = await loadPolicy(`http://127.0.0.1:${server.addr.port}/tiny-vl/`);
    const vlLocal = await loadPolicy("builtin:tiny-vl");
    try {
      assert.deepEqual(vlRemote.vision?.model.config, vlLocal.vision?.model.config);
      assert.deepEqual(vlRemote.vision?.processor, vlLocal.vision?.processor);
      for (const [name, t] of vlLocal.vision!.model.params) {
        assert.deepEqual(await vlRemote.vision!.model.params.get(name)!.data(), await t.data());
      }
    } finally {
      vlRemote.vision?.model.dispose();
      vlLocal.vision?.model.dispose();
    }
    await assert.rejects(
      loadPolicy(`http://127.0.0.1:${server.addr.port}/missing/`),
      /http:\/\/127\.0\.0\.1:\d+\/missing\/config\.json not found; expected the model's Hugging Face config/,
    );
  } finally {
    local.model.dispose();
    remote.model.dispose();
    await server.shutdown();
  }
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

Deno.test("contextWindowProblem / estimateTrainingMemory / memoryProblem: what a run needs of the model and the machine", async () => {
  const { model } = await loadPolicy("builtin:tiny");
  const c = model.config; // 256 positions, 2 layers, 4 heads of 16, vocab 103
  model.dispose();
  const at = { checkpoint: "builtin:tiny", field: "rollout.maxNewTokens" };
  assert.equal(contextWindowProblem(c, { ...at, maxNewTokens: 249, longestPrompt: 7 }), null);
  assert.match(
    contextWindowProblem(c, { ...at, maxNewTokens: 250, longestPrompt: 7, promptWhat: "x" })!,
    /^rollout\.maxNewTokens: 250 new tokens after x \(7 tokens\) need 257 positions, but builtin:tiny has 256 .*; set rollout\.maxNewTokens to 249 or less/,
  );
  assert.match(
    contextWindowProblem(c, { ...at, maxNewTokens: 8, longestPrompt: 300 })!,
    /the prompt alone fills the window/,
  );

  const run = {
    batchSize: 64,
    microBatchSize: 64,
    positions: 15,
    evalSequences: 128,
    trainableParameters: 1000,
    reference: false,
  };
  const e = estimateTrainingMemory(c, run);
  assert.equal(e.bytes, e.parts[0]!.bytes + e.peak.bytes);
  assert.equal(e.parts[1]!.bytes, 64 * 2 * 2 * 4 * 16 * 15 * 4); // the rollout's KV cache
  assert.equal(memoryProblem(e, 2 ** 30, {}), null);
  // One 10,000-token prompt: the update's attention scores alone are gigabytes.
  const long = estimateTrainingMemory(c, { ...run, microBatchSize: 1, positions: 10_008 });
  assert.equal(long.peak.field, "algorithm.microBatchSize");
  assert.ok(long.peak.bytes > 3 * 2 ** 30, `${long.peak.bytes}`);
  assert.match(
    memoryProblem(long, 2 ** 30, { "algorithm.microBatchSize": 1 })!,
    /^algorithm\.microBatchSize: 1 needs at least \d+\.\d GiB of memory \(update activations .*\), but this machine has 1\.0 GiB; lower algorithm\.microBatchSize/,
  );
  // The reference doubles the weights.
  const ref = estimateTrainingMemory(c, { ...run, reference: true });
  assert.ok(ref.parts[0]!.bytes > e.parts[0]!.bytes);
});
