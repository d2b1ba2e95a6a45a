import assert from "node:assert/strict";
import { join } from "node:path";
import { CharTokenizer } from "./char_tokenizer.ts";
import { HfTokenizer } from "./hf_tokenizer.ts";
import { loadTokenizerFromFiles, loadTokenizerFromUrl } from "./load.ts";
import { loadTokenizer } from "./load_fs.ts";
import type { Tokenizer } from "./tokenizer.ts";
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

/** Every file of a folder, by name (what a browser would hand loadTokenizerFromFiles). */
async function readFolder(dir: string): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile) files[e.name] = await Deno.readFile(join(dir, e.name));
  }
  return files;
}

/** The same class, vocabulary size, special ids, chat template output and ids on `texts`. */
function assertSameTokenizer(actual: Tokenizer, expected: Tokenizer, texts: readonly string[]) {
  assert.equal(actual.constructor, expected.constructor);
  assert.equal(actual.vocabSize, expected.vocabSize);
  assert.deepEqual(actual.specialTokenIds, expected.specialTokenIds);
  assert.deepEqual(actual.eosTokenIds, expected.eosTokenIds);
  const messages = [{ role: "user" as const, content: texts[0]! }];
  assert.equal(
    actual.applyChatTemplate(messages, { addGenerationPrompt: true }),
    expected.applyChatTemplate(messages, { addGenerationPrompt: true }),
  );
  for (const t of texts) assert.deepEqual(actual.encode(t), expected.encode(t));
}

Deno.test("loadTokenizer / loadTokenizerFromFiles / loadTokenizerFromUrl: the same tokenizer from a folder, its bytes and a URL", async () => {
  const dir = await Deno.makeTempDir();
  const char = CharTokenizer.fromCorpus(["0123456789+=abc "]);
  await char.save(join(dir, "char"));
  // toFiles() is what save() writes.
  const charFiles = await readFolder(join(dir, "char"));
  const dec = new TextDecoder();
  assert.deepEqual(
    Object.fromEntries(Object.entries(charFiles).map(([n, b]) => [n, dec.decode(b)])),
    char.toFiles(),
  );
  const cases: [string, Record<string, Uint8Array>, readonly string[]][] = [
    [join(dir, "char"), charFiles, ["12+3=15", "abc 7"]],
    [QWEN3_DIR, await readFolder(QWEN3_DIR), CORPUS],
  ];
  try {
    for (const [folder, files, texts] of cases) {
      const fromDir = await loadTokenizer(folder);
      assertSameTokenizer(await loadTokenizerFromFiles(files), fromDir, texts);
      const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
        const body = files[new URL(req.url).pathname.slice(1)];
        return body === undefined
          ? new Response("", { status: 404 })
          : new Response(body as Uint8Array<ArrayBuffer>);
      });
      try {
        const base = `http://127.0.0.1:${server.addr.port}`;
        const fromUrl = await loadTokenizerFromUrl(base);
        assertSameTokenizer(fromUrl, fromDir, texts);
        if (fromUrl instanceof HfTokenizer) assert.equal(fromUrl.source, `${base}/`);
      } finally {
        await server.shutdown();
      }
    }
    // An HfTokenizer's files round-trip too.
    const qwen = await HfTokenizer.load(QWEN3_DIR);
    assertSameTokenizer(await loadTokenizerFromFiles(qwen.toFiles()), qwen, CORPUS);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadTokenizerFromFiles: the folder loader's errors, naming the files", async () => {
  await assert.rejects(
    loadTokenizerFromFiles({}, { name: "tok" }),
    /loadTokenizerFromFiles: tok\/tokenizer\.json does not exist; a Hugging Face fast tokenizer/,
  );
  await assert.rejects(
    loadTokenizerFromFiles({ "tokenizer_config.json": "{,}" }),
    /loadTokenizerFromFiles: <files>\/tokenizer_config\.json is not valid JSON/,
  );
  const files = CharTokenizer.fromCorpus(["ab"]).toFiles();
  const json = JSON.parse(files["tokenizer.json"]!);
  json.decoder = null;
  await assert.rejects(
    loadTokenizerFromFiles({ ...files, "tokenizer.json": JSON.stringify(json) }, { name: "t" }),
    /loadTokenizerFromFiles: t\/tokenizer\.json decoder must be \{"type": "Fuse"\} for a CharTokenizer/,
  );
  const failing = () => Promise.resolve(new Response("", { status: 500 }));
  await assert.rejects(
    loadTokenizerFromUrl("https://x.test/tok/", { fetch: failing }),
    /loadTokenizerFromUrl: cannot read https:\/\/x\.test\/tok\/tokenizer_config\.json: HTTP 500/,
  );
});
