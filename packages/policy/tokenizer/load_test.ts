import assert from "node:assert/strict";
import { join } from "node:path";
import { CharTokenizer } from "./char_tokenizer.ts";
import { HfTokenizer } from "./hf_tokenizer.ts";
import { loadTokenizer } from "./load.ts";
import { CORPUS, QWEN3_DIR, RUST_IDS } from "./_testing.ts";

Deno.test("loadTokenizer: a CharTokenizer directory opens as a CharTokenizer", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const tok = CharTokenizer.fromCorpus(["0123456789+="]);
    await tok.save(dir);
    const loaded = await loadTokenizer(dir);
    assert.ok(loaded instanceof CharTokenizer);
    assert.deepEqual(loaded.encode("12+3=15"), tok.encode("12+3=15"));
    // Without the marker the same files open as an HfTokenizer, with the same ids.
    const config = JSON.parse(await Deno.readTextFile(join(dir, "tokenizer_config.json")));
    delete config.rlvr_tokenizer;
    await Deno.writeTextFile(join(dir, "tokenizer_config.json"), JSON.stringify(config));
    const hf = await loadTokenizer(dir);
    assert.ok(hf instanceof HfTokenizer);
    assert.deepEqual(hf.encode("12+3=15"), tok.encode("12+3=15"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadTokenizer: a Hugging Face directory opens as an HfTokenizer", async () => {
  const tok = await loadTokenizer(QWEN3_DIR);
  assert.ok(tok instanceof HfTokenizer);
  assert.deepEqual(tok.encode(CORPUS[0]!), RUST_IDS[0]);
});

Deno.test("loadTokenizer: a missing directory or file names the path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(
      loadTokenizer(join(dir, "nope")),
      new RegExp(`loadTokenizer: tokenizer directory ${join(dir, "nope")} does not exist`),
    );
    await assert.rejects(
      loadTokenizer(dir),
      (e: Error) => e.message.includes(`${join(dir, "tokenizer.json")} does not exist`),
    );
    await Deno.writeTextFile(join(dir, "tokenizer_config.json"), "{,}");
    await assert.rejects(
      loadTokenizer(dir),
      (e: Error) => e.message.includes(`${join(dir, "tokenizer_config.json")} is not valid JSON`),
    );
    await assert.rejects(loadTokenizer(""), /dir must be a non-empty path string/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
