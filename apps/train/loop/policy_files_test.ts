import assert from "node:assert/strict";
import { CharTokenizer, checkpointFiles, modelConfig, parameterShapes } from "@rlvr/policy";
import { ones } from "@rlvr/tensor";
import { fetchPolicyFiles } from "./fetch_policy_files.ts";
import { policyFromFiles, policyStopIds } from "./policy_files.ts";
import { loadPolicy, stopTokenIds, TINY_CHECKPOINT_DIR, TINY_VL_CHECKPOINT_DIR } from "./policy.ts";

const TINY_FILES = [
  "config.json",
  "generation_config.json",
  "model.safetensors",
  "tokenizer.json",
  "tokenizer_config.json",
];

async function readFolder(dir: string, names: readonly string[]): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for (const name of names) files.set(name, await Deno.readFile(`${dir}/${name}`));
  return files;
}

Deno.test("policyFromFiles: builtin:tiny from its files is loadPolicy's policy (weights, stop ids, tokenizer, generation config)", async () => {
  const fromFiles = await policyFromFiles(
    await readFolder(TINY_CHECKPOINT_DIR, TINY_FILES),
    "builtin:tiny",
  );
  const fromFolder = await loadPolicy("builtin:tiny");
  try {
    assert.deepEqual(fromFiles.model.config, fromFolder.model.config);
    assert.deepEqual([...fromFiles.model.params.keys()], [...fromFolder.model.params.keys()]);
    for (const [name, t] of fromFolder.model.params) {
      assert.deepEqual(await fromFiles.model.params.get(name)!.toArray(), await t.toArray(), name);
    }
    assert.deepEqual(fromFiles.eosTokenIds, fromFolder.eosTokenIds);
    assert.deepEqual(fromFiles.generationConfig, fromFolder.generationConfig);
    assert.equal(fromFiles.dir, "builtin:tiny");
    assert.equal(fromFiles.vision, null);
    assert.equal(fromFiles.extra.size, 0);
    const text = "<|user|>12+34=<|assistant|>46";
    assert.deepEqual(fromFiles.tokenizer.encode(text), fromFolder.tokenizer.encode(text));
  } finally {
    fromFiles.model.dispose();
    fromFolder.model.dispose();
  }
});

Deno.test("policyStopIds: the tokenizer's, the config's and generation_config.json's ids, once each; bad ids are refused by name", () => {
  const tok = CharTokenizer.fromCorpus(["0123456789+="]);
  const config = modelConfig({
    vocabSize: tok.vocabSize,
    hiddenSize: 4,
    intermediateSize: 8,
    numLayers: 1,
    numHeads: 2,
    eosTokenIds: [5],
  });
  const base = [...new Set([...tok.eosTokenIds, 5])];
  assert.deepEqual(policyStopIds(tok, config, null), base);
  assert.deepEqual(policyStopIds(tok, config, {}), base);
  assert.deepEqual(policyStopIds(tok, config, { eos_token_id: null }), base);
  assert.deepEqual(policyStopIds(tok, config, { eos_token_id: 3 }), [...new Set([...base, 3])]);
  assert.deepEqual(
    policyStopIds(tok, config, { eos_token_id: [3, 5, 7] }),
    [...new Set([...base, 3, 7])],
  );
  // loadPolicy (folders) goes through the same function.
  assert.deepEqual(stopTokenIds(tok, config, { eos_token_id: [3] }), [...new Set([...base, 3])]);
  for (
    const bad of [{ eos_token_id: -1 }, { eos_token_id: [1, tok.vocabSize] }, { eos_token_id: "2" }]
  ) {
    assert.throws(() => policyStopIds(tok, config, bad), /generation_config\.json eos_token_id/);
  }
});

Deno.test("policyFromFiles loads a vision-language checkpoint as loadPolicy does (tower, image processor, stop ids) and names a missing file", async () => {
  const names = [...TINY_FILES, "preprocessor_config.json"];
  const fromFiles = await policyFromFiles(
    await readFolder(TINY_VL_CHECKPOINT_DIR, names),
    "builtin:tiny-vl",
  );
  const fromFolder = await loadPolicy("builtin:tiny-vl");
  try {
    assert.ok(fromFiles.vision !== null && fromFolder.vision !== null);
    assert.equal(fromFiles.dir, "builtin:tiny-vl");
    assert.deepEqual(fromFiles.vision.model.config, fromFolder.vision.model.config);
    assert.deepEqual(fromFiles.vision.processor, fromFolder.vision.processor);
    assert.deepEqual(fromFiles.vision.preprocessorConfig, fromFolder.vision.preprocessorConfig);
    assert.deepEqual(fromFiles.eosTokenIds, fromFolder.eosTokenIds);
    assert.equal(fromFiles.model, fromFiles.vision.model.lm);
    const params = (p: typeof fromFiles) => p.vision!.model.params;
    assert.deepEqual([...params(fromFiles).keys()], [...params(fromFolder).keys()]);
    for (const [name, t] of params(fromFolder)) {
      assert.deepEqual(await params(fromFiles).get(name)!.data(), await t.data(), name);
    }
  } finally {
    fromFiles.vision?.model.dispose();
    fromFolder.vision?.model.dispose();
  }
  const files = await readFolder(TINY_CHECKPOINT_DIR, TINY_FILES);
  files.delete("model.safetensors");
  await assert.rejects(policyFromFiles(files, "tiny"), /model\.safetensors/);
  const broken = await readFolder(TINY_VL_CHECKPOINT_DIR, names);
  broken.set("preprocessor_config.json", new TextEncoder().encode("[1]"));
  await assert.rejects(
    policyFromFiles(broken, "vl"),
    /vl\/preprocessor_config\.json is not a JSON object/,
  );
});

Deno.test("fetchPolicyFiles: the files of a folder URL, optional ones skipped, shards by their index, a manifest's names exactly", async () => {
  const config = modelConfig({
    vocabSize: 8,
    hiddenSize: 4,
    intermediateSize: 8,
    numLayers: 2,
    numHeads: 2,
  });
  const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, ones(s)]));
  const sharded = await checkpointFiles({ config, params }, { maxShardBytes: 256 });
  const served: Record<string, Uint8Array> = {
    ...sharded,
    "tokenizer.json": new Uint8Array([123, 125]),
  };
  const asked: string[] = [];
  const fake = (url: string | URL | Request) => {
    const name = String(url).replace("https://x.test/ckpt/", "");
    asked.push(name);
    const body = served[name];
    return Promise.resolve(
      body === undefined
        ? new Response("", { status: 404 })
        : new Response(body as Uint8Array<ArrayBuffer>),
    );
  };
  const got = await fetchPolicyFiles("https://x.test/ckpt", { fetch: fake as typeof fetch });
  assert.deepEqual([...got.keys()].sort(), Object.keys(served).sort());
  assert.ok(asked.includes("generation_config.json"), "optional files are asked for");
  asked.length = 0;
  await fetchPolicyFiles("https://x.test/ckpt/", {
    fetch: fake as typeof fetch,
    names: ["config.json", "tokenizer.json"],
  });
  assert.deepEqual(asked.sort(), ["config.json", "tokenizer.json"], "a manifest: only its names");
  const failing = () => Promise.resolve(new Response("", { status: 500, statusText: "Boom" }));
  await assert.rejects(
    fetchPolicyFiles("https://x.test/ckpt", { fetch: failing as typeof fetch }),
    /https:\/\/x\.test\/ckpt\/\S+: HTTP 500 Boom/,
  );
});
