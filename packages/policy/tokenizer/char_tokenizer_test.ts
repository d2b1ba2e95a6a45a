import fc from "fast-check";
import assert from "node:assert/strict";
import { join } from "node:path";
import { CHAR_SPECIAL_TOKENS, CharTokenizer } from "./char_tokenizer.ts";
import { HfTokenizer } from "./hf_tokenizer.ts";
import { QWEN3_DIR } from "./_testing.ts";

/** Any Unicode scalar value (no lone surrogates), as a one-character string. */
const char = fc.integer({ min: 0, max: 0x10ffff })
  .filter((cp) => cp < 0xd800 || cp > 0xdfff)
  .map((cp) => String.fromCodePoint(cp));
const alphabetArb = fc.uniqueArray(char, { minLength: 1, maxLength: 40 });

async function withTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("CharTokenizer: special tokens sit at fixed ids before the alphabet", () => {
  const tok = CharTokenizer.fromCorpus(["ba", "ab!", "😀"]);
  assert.deepEqual(tok.alphabet, ["!", "a", "b", "😀"]);
  assert.equal(tok.vocabSize, 11);
  assert.deepEqual(
    CHAR_SPECIAL_TOKENS.map((t) => tok.tokenToId(t)),
    [0, 1, 2, 3, 4, 5, 6],
  );
  assert.equal(tok.padTokenId, 0);
  assert.equal(tok.bosTokenId, 1);
  assert.deepEqual(tok.eosTokenIds, [2]);
  assert.equal(tok.unkTokenId, 3);
  assert.deepEqual(tok.specialTokenIds, [0, 1, 2, 3, 4, 5, 6]);
  assert.equal(tok.tokenToId("!"), 7);
  assert.equal(tok.idToToken(10), "😀");
  assert.equal(tok.idToToken(11), null);
  assert.equal(tok.tokenToId("ab"), null);
  assert.deepEqual(tok.encode("ab😀"), [1, 8, 9, 10]);
  assert.deepEqual(tok.encode("ab😀", { addSpecialTokens: false }), [8, 9, 10]);
});

Deno.test("CharTokenizer: decode(encode(s)) == s over its alphabet (property)", () => {
  fc.assert(
    fc.property(
      alphabetArb.chain((alphabet) =>
        fc.tuple(fc.constant(alphabet), fc.array(fc.constantFrom(...alphabet), { maxLength: 60 }))
      ),
      ([alphabet, chars]) => {
        const tok = new CharTokenizer(alphabet);
        const s = chars.join("");
        const ids = tok.encode(s, { addSpecialTokens: false });
        assert.equal(tok.decode(ids), s);
        assert.equal(tok.decode(tok.encode(s), { skipSpecialTokens: true }), s);
        // One id per character, unless the alphabet can spell a special token.
        if (!CHAR_SPECIAL_TOKENS.some((t) => s.includes(t))) assert.equal(ids.length, chars.length);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("CharTokenizer: characters outside the alphabet map to <unk> (property)", () => {
  fc.assert(
    fc.property(alphabetArb, fc.array(char, { maxLength: 30 }), (alphabet, chars) => {
      const tok = new CharTokenizer(alphabet);
      const known = new Set(alphabet);
      const ids = tok.encode(chars.join(""), { addSpecialTokens: false });
      // Special tokens need "<", which a random char sequence spells with negligible odds; skip it.
      fc.pre(!CHAR_SPECIAL_TOKENS.some((t) => chars.join("").includes(t)));
      assert.deepEqual(ids, chars.map((c) => known.has(c) ? tok.tokenToId(c) : tok.unkTokenId));
    }),
    { numRuns: 300 },
  );
  const tok = CharTokenizer.fromCorpus(["abc"]);
  assert.deepEqual(tok.encode("axc", { addSpecialTokens: false }), [7, 3, 9]);
  assert.equal(tok.decode(tok.encode("axc")), "<bos>a<unk>c");
  assert.equal(tok.decode(tok.encode("axc"), { skipSpecialTokens: true }), "ac");
});

Deno.test("CharTokenizer: special-token strings in the text become their ids", () => {
  const tok = CharTokenizer.fromCorpus(["<bos>|"]);
  assert.deepEqual(
    tok.encode("<bos><|user|>b<eos", { addSpecialTokens: false }),
    [1, 5, tok.tokenToId("b"), tok.tokenToId("<"), 3, tok.tokenToId("o"), tok.tokenToId("s")],
  );
  assert.equal(tok.decode(tok.encode("<<bos>>")), "<bos><<bos>>");
});

Deno.test("CharTokenizer: save/load round trip keeps alphabet, ids and template", async () => {
  await withTempDir(async (dir) => {
    const tok = CharTokenizer.fromCorpus(["0123456789+=\n"], {
      chatTemplate: "{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}",
    });
    await tok.save(join(dir, "a", "b"));
    const again = await CharTokenizer.load(join(dir, "a", "b"));
    assert.deepEqual(again.alphabet, tok.alphabet);
    assert.equal(again.chatTemplate, tok.chatTemplate);
    for (const s of ["12+34=46\n", "x", "", "<eos>9"]) {
      assert.deepEqual(again.encode(s), tok.encode(s));
    }
    assert.equal(again.applyChatTemplate([{ role: "user", content: "1+1=" }]), "1+1=<eos>");
  });
});

Deno.test("CharTokenizer: HfTokenizer reads the saved files and gives identical ids and text", async () => {
  await withTempDir(async (dir) => {
    const tok = CharTokenizer.fromCorpus(["abc 0123456789+=<>|\n\t é中😀"]);
    await tok.save(dir);
    const hf = await HfTokenizer.load(dir);
    assert.equal(hf.vocabSize, tok.vocabSize);
    assert.equal(hf.bosTokenId, tok.bosTokenId);
    assert.deepEqual(hf.eosTokenIds, tok.eosTokenIds);
    assert.equal(hf.padTokenId, tok.padTokenId);
    assert.equal(hf.unkTokenId, tok.unkTokenId);
    assert.deepEqual(hf.specialTokenIds, tok.specialTokenIds);
    for (let id = 0; id < tok.vocabSize; id++) assert.equal(hf.idToToken(id), tok.idToToken(id));
    // Texts mixing known chars, unknown chars and special-token strings (whole or broken).
    const piece = fc.oneof(
      fc.constantFrom(...tok.alphabet),
      char,
      fc.constantFrom(...CHAR_SPECIAL_TOKENS, "<|user", "<eos", "<bos><", "||>"),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.boolean(), (pieces, add) => {
        const s = pieces.join("");
        const ids = tok.encode(s, { addSpecialTokens: add });
        assert.deepEqual(hf.encode(s, { addSpecialTokens: add }), ids);
        assert.equal(hf.decode(ids), tok.decode(ids));
        assert.equal(
          hf.decode(ids, { skipSpecialTokens: true }),
          tok.decode(ids, { skipSpecialTokens: true }),
        );
      }),
      { numRuns: 300 },
    );
    const messages = [
      { role: "system", content: "be brief" },
      { role: "user", content: "1+1=" },
      { role: "assistant", content: "2" },
    ];
    const rendered = tok.applyChatTemplate(messages, { addGenerationPrompt: true });
    assert.equal(
      rendered,
      "<bos><|system|>be brief<eos><|user|>1+1=<eos><|assistant|>2<eos><|assistant|>",
    );
    assert.equal(hf.applyChatTemplate(messages, { addGenerationPrompt: true }), rendered);
  });
});

Deno.test("CharTokenizer: words are one token each, survive save/load, and HfTokenizer agrees", async () => {
  const words = ["<think>", "</think>", "<answer>", "</answer>", "ab"];
  const tok = new CharTokenizer([..."abc<>/thinkswer0123456789+"], { words });
  assert.deepEqual(tok.words, words);
  const base = CHAR_SPECIAL_TOKENS.length + tok.alphabet.length;
  assert.deepEqual(tok.encode("<think>1+1</think>", { addSpecialTokens: false }), [
    base,
    tok.tokenToId("1"),
    tok.tokenToId("+"),
    tok.tokenToId("1"),
    base + 1,
  ]);
  assert.equal(tok.vocabSize, base + words.length);
  await withTempDir(async (dir) => {
    await tok.save(dir);
    const back = await CharTokenizer.load(dir);
    assert.deepEqual(back.words, words);
    assert.deepEqual(back.alphabet, tok.alphabet);
    const hf = await HfTokenizer.load(dir);
    assert.equal(hf.vocabSize, tok.vocabSize);
    const piece = fc.oneof(
      fc.constantFrom(...tok.alphabet, ...words, "<thin", "</answer", "<eos>", "a"),
      char,
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const s = pieces.join("");
        const ids = tok.encode(s, { addSpecialTokens: false });
        assert.deepEqual(back.encode(s, { addSpecialTokens: false }), ids);
        assert.deepEqual(hf.encode(s, { addSpecialTokens: false }), ids);
        assert.equal(hf.decode(ids), tok.decode(ids));
      }),
      { numRuns: 300 },
    );
  });
  assert.throws(
    () => new CharTokenizer(["a"], { words: ["x"] }),
    /options\.words\[0\] must be a string of two or more characters, got "x"/,
  );
  assert.throws(
    () => new CharTokenizer(["a"], { words: ["<eos>"] }),
    /options\.words\[0\] "<eos>" is already a token/,
  );
});

Deno.test("CharTokenizer: the built-in template rejects tools and unknown roles", () => {
  const tok = CharTokenizer.fromCorpus(["ab"]);
  assert.equal(tok.applyChatTemplate([]), "<bos>");
  assert.throws(
    () => tok.applyChatTemplate([{ role: "user", content: "a" }], { tools: [{ name: "f" }] }),
    /does not support tools/,
  );
  assert.throws(
    () => tok.applyChatTemplate([{ role: "tool", content: "a" }]),
    /has no role tool; use system, user or assistant/,
  );
  assert.throws(
    () => tok.applyChatTemplate([{ role: "user", content: 3 as unknown as string }]),
    /messages\[0\]\.content must be a string or a list of parts, got 3/,
  );
  assert.throws(
    () => tok.applyChatTemplate([{ role: "user", content: "a" }], { extra: { messages: [] } }),
    /options.extra.messages is set by applyChatTemplate itself/,
  );
});

Deno.test("CharTokenizer: a bad alphabet or id is an error naming it", () => {
  assert.throws(() => new CharTokenizer(["a", "bc"]), /alphabet\[1\] must be exactly one Unicode/);
  assert.throws(() => new CharTokenizer(["a", "\ud800"]), /alphabet\[1\].*lone surrogate/);
  assert.throws(() => new CharTokenizer(["a", "b", "a"]), /alphabet\[2\] "a" occurs twice/);
  assert.throws(() => CharTokenizer.fromCorpus(["a", 1 as unknown as string]), /texts\[1\]/);
  const tok = new CharTokenizer("ab");
  assert.deepEqual(tok.alphabet, ["a", "b"]);
  assert.throws(() => tok.decode([9]), /ids\[0\] must be an integer in \[0, 9\)/);
  assert.throws(() => tok.decode([0, -1]), /ids\[1\]/);
});

Deno.test("CharTokenizer.load: other tokenizers and damaged files are refused by field", async () => {
  await assert.rejects(
    CharTokenizer.load(QWEN3_DIR),
    (e: Error) =>
      e.message.includes(`${join(QWEN3_DIR, "tokenizer_config.json")} rlvr_tokenizer`) &&
      /HfTokenizer.load/.test(e.message),
  );
  await withTempDir(async (dir) => {
    const tok = CharTokenizer.fromCorpus(["abc"]);
    await tok.save(dir);
    const path = join(dir, "tokenizer.json");
    const json = tok.toTokenizerJson() as { model: { vocab: Record<string, number> } };
    json.model.vocab["<pad>"] = 42;
    await Deno.writeTextFile(path, JSON.stringify(json));
    await assert.rejects(CharTokenizer.load(dir), /model.vocab id 0 must be "<pad>"/);
    await Deno.writeTextFile(path, JSON.stringify({ ...tok.toTokenizerJson(), decoder: null }));
    await assert.rejects(
      CharTokenizer.load(dir),
      /tokenizer.json decoder must be \{"type": "Fuse"\}/,
    );
    await Deno.remove(path);
    await assert.rejects(
      CharTokenizer.load(dir),
      (e: Error) => e.message.includes(`${path} does not exist`),
    );
  });
});
