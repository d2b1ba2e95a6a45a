import { Tokenizer as JsTokenizer } from "@huggingface/tokenizers";
import fc from "fast-check";
import assert from "node:assert/strict";
import { join } from "node:path";
import { HfTokenizer } from "./hf_tokenizer.ts";
import { CORPUS, QWEN3_CONFIG, QWEN3_DIR, RUST_IDS } from "./_testing.ts";

const qwen = await HfTokenizer.load(QWEN3_DIR);
// The same files through @huggingface/tokenizers directly: the reference HfTokenizer must match.
const direct = new JsTokenizer(
  JSON.parse(await Deno.readTextFile(join(QWEN3_DIR, "tokenizer.json"))),
  QWEN3_CONFIG,
);

Deno.test("HfTokenizer: Qwen3 ids equal @huggingface/tokenizers' and the Rust library's", () => {
  assert.equal(CORPUS.length, RUST_IDS.length);
  CORPUS.forEach((text, i) => {
    const ids = qwen.encode(text);
    assert.deepEqual(ids, direct.encode(text).ids, `line ${i}`);
    assert.deepEqual(ids, RUST_IDS[i], `line ${i} vs Rust`);
    // Qwen3's post-processor adds nothing, so both settings give the same ids.
    assert.deepEqual(
      qwen.encode(text, { addSpecialTokens: false }),
      direct.encode(text, { add_special_tokens: false }).ids,
    );
  });
});

Deno.test("HfTokenizer: Qwen3 decode(encode(x)) == x on the corpus", () => {
  for (const text of CORPUS) assert.equal(qwen.decode(qwen.encode(text)), text);
});

Deno.test("HfTokenizer: Qwen3 round trip and agreement on random NFC text (property)", () => {
  // Byte-level BPE is lossless for NFC text (the normalizer is NFC).
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), (raw) => {
      const text = raw.normalize("NFC");
      const ids = qwen.encode(text);
      assert.deepEqual(ids, direct.encode(text).ids);
      assert.equal(qwen.decode(ids), text);
    }),
    { numRuns: 300 },
  );
});

Deno.test("HfTokenizer: Qwen3 special tokens come from tokenizer_config.json", () => {
  assert.equal(qwen.vocabSize, 151669);
  assert.equal(qwen.bosTokenId, null);
  assert.deepEqual(qwen.eosTokenIds, [qwen.tokenToId("<|im_end|>")]);
  assert.equal(qwen.padTokenId, qwen.tokenToId("<|endoftext|>"));
  assert.equal(qwen.unkTokenId, null);
  // The 14 added tokens marked special; <tool_call>, <think> ... are added but not special.
  assert.deepEqual(qwen.specialTokenIds, Array.from({ length: 14 }, (_, i) => 151643 + i));
  assert.equal(qwen.tokenToId("<|im_start|>"), 151644);
  assert.equal(qwen.idToToken(151644), "<|im_start|>");
  assert.equal(qwen.idToToken(9707), "Hello");
  assert.equal(qwen.tokenToId("not a token at all"), null);
  assert.equal(qwen.idToToken(10 ** 7), null);
  assert.deepEqual(qwen.encode("<|im_start|>"), [151644]);
  const chat = CORPUS[5]!;
  assert.equal(
    qwen.decode(qwen.encode(chat), { skipSpecialTokens: true }),
    "user\nWhat is 2+2?\nassistant\n<think>\n\n</think>\n\n4",
  );
});

Deno.test("HfTokenizer: decode rejects ids outside the vocabulary and accepts []", () => {
  assert.equal(qwen.decode([]), "");
  assert.equal(qwen.decode([151644], { skipSpecialTokens: true }), "");
  for (const bad of [-1, 1.5, 151669, Number.NaN]) {
    assert.throws(
      () => qwen.decode([9707, bad]),
      (e: Error) => e instanceof RangeError && /ids\[1\].*\[0, 151669\)/.test(e.message),
    );
  }
  assert.throws(() => qwen.encode(42 as unknown as string), /HfTokenizer.encode: text must be/);
});

Deno.test("HfTokenizer: Qwen3 chat template, system/user/assistant + generation prompt", () => {
  const messages = [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "What is 2+2?" },
    { role: "assistant", content: "2+2 = 4." },
  ];
  // The last assistant turn after the last user query gets an (empty) think block; the
  // generation prompt opens a new assistant turn.
  const expected = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n" +
    "<|im_start|>assistant\n<think>\n\n</think>\n\n2+2 = 4.<|im_end|>\n";
  assert.equal(qwen.applyChatTemplate(messages), expected);
  assert.equal(
    qwen.applyChatTemplate(messages, { addGenerationPrompt: true }),
    expected + "<|im_start|>assistant\n",
  );
  const ids = qwen.encode(qwen.applyChatTemplate(messages), { addSpecialTokens: false });
  assert.equal(ids[0], 151644);
  assert.equal(ids.at(-2), 151645);
});

Deno.test("HfTokenizer: Qwen3 chat template, enable_thinking and earlier reasoning", () => {
  const prompt = [{ role: "user", content: "2+2?" }];
  assert.equal(
    qwen.applyChatTemplate(prompt, { addGenerationPrompt: true }),
    "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n",
  );
  assert.equal(
    qwen.applyChatTemplate(prompt, {
      addGenerationPrompt: true,
      extra: { enable_thinking: false },
    }),
    "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
  );
  // Reasoning of an assistant turn before the last user query is dropped; in the last turn it
  // is kept, reformatted.
  const turns = [
    { role: "user", content: "2+2?" },
    { role: "assistant", content: "<think>\nadd\n</think>\n\n4" },
    { role: "user", content: "3+3?" },
    { role: "assistant", content: "<think>add again</think>6" },
  ];
  assert.equal(
    qwen.applyChatTemplate(turns),
    "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n" +
      "<|im_start|>user\n3+3?<|im_end|>\n" +
      "<|im_start|>assistant\n<think>\nadd again\n</think>\n\n6<|im_end|>\n",
  );
});

Deno.test("HfTokenizer: Qwen3 chat template with tools and a tool call", () => {
  const tools = [{
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the weather",
      parameters: {
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
      },
    },
  }];
  const messages = [
    { role: "user", content: "Weather in Paris?" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{
        type: "function",
        function: { name: "get_weather", arguments: { city: "Paris" } },
      }],
    },
    { role: "tool", content: '{"temp": 18}' },
  ];
  const expected = "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist " +
    "with the user query.\n\nYou are provided with function signatures within <tools></tools> " +
    'XML tags:\n<tools>\n{"type": "function", "function": {"name": "get_weather", "description": ' +
    '"Get the weather", "parameters": {"type": "object", "properties": {"city": {"type": ' +
    '"string"}}, "required": ["city"]}}}\n</tools>\n\nFor each function call, return a json ' +
    "object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>' +
    "<|im_end|>\n" +
    "<|im_start|>user\nWeather in Paris?<|im_end|>\n" +
    '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}' +
    "\n</tool_call><|im_end|>\n" +
    '<|im_start|>user\n<tool_response>\n{"temp": 18}\n</tool_response><|im_end|>\n' +
    "<|im_start|>assistant\n";
  assert.equal(qwen.applyChatTemplate(messages, { tools, addGenerationPrompt: true }), expected);
});

Deno.test("HfTokenizer: save and load give the same tokenizer", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await qwen.save(join(dir, "nested"));
    const again = await HfTokenizer.load(join(dir, "nested"));
    for (const text of CORPUS) assert.deepEqual(again.encode(text), qwen.encode(text));
    assert.deepEqual(again.specialTokenIds, qwen.specialTokenIds);
    assert.deepEqual(again.eosTokenIds, qwen.eosTokenIds);
    const m = [{ role: "user", content: "hi" }];
    assert.equal(again.applyChatTemplate(m), qwen.applyChatTemplate(m));
    const config = JSON.parse(
      await Deno.readTextFile(join(dir, "nested", "tokenizer_config.json")),
    );
    assert.deepEqual(config, QWEN3_CONFIG);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// A tiny BPE tokenizer for the error and template-selection tests.
function tinyJson(): Record<string, unknown> {
  return {
    model: {
      type: "BPE",
      unk_token: "?",
      merges: [["a", "b"]],
      vocab: { "?": 0, a: 1, b: 2, ab: 3, "<|end|>": 4 },
    },
    added_tokens: [{ id: 4, content: "<|end|>", special: true, normalized: false }],
    normalizer: null,
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: "Fuse" },
  };
}

async function tinyDir(
  files: Record<string, string | Record<string, unknown>>,
  body: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    for (const [name, content] of Object.entries(files)) {
      const text = typeof content === "string" ? content : JSON.stringify(content);
      await Deno.writeTextFile(join(dir, name), text);
    }
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("HfTokenizer.load: missing directory and missing tokenizer.json name the path", async () => {
  const gone = join(await Deno.makeTempDir(), "gone");
  await assert.rejects(HfTokenizer.load(gone), (e: Error) => e.message.includes(gone));
  await tinyDir({ "tokenizer_config.json": {} }, async (dir) => {
    await assert.rejects(
      HfTokenizer.load(dir),
      (e: Error) =>
        e.message.includes(join(dir, "tokenizer.json")) && e.message.includes("does not exist"),
    );
  });
  await tinyDir({ "tokenizer.json": tinyJson() }, async (dir) => {
    await assert.rejects(
      HfTokenizer.load(join(dir, "tokenizer.json")),
      /is a file; pass the directory/,
    );
    // tokenizer_config.json is optional.
    const tok = await HfTokenizer.load(dir);
    assert.deepEqual(tok.encode("abba"), [3, 2, 1]);
    assert.deepEqual(tok.eosTokenIds, []);
    assert.equal(tok.unkTokenId, 0);
  });
});

Deno.test("HfTokenizer.load: bad JSON names the file", async () => {
  await tinyDir({ "tokenizer.json": "{ not json" }, async (dir) => {
    await assert.rejects(
      HfTokenizer.load(dir),
      (e: Error) =>
        e instanceof SyntaxError && e.message.includes(join(dir, "tokenizer.json")) &&
        /not valid JSON/.test(e.message),
    );
  });
  await tinyDir({ "tokenizer.json": tinyJson(), "tokenizer_config.json": "[1," }, async (dir) => {
    await assert.rejects(
      HfTokenizer.load(dir),
      (e: Error) => e.message.includes(join(dir, "tokenizer_config.json")),
    );
  });
  await tinyDir({ "tokenizer.json": "[1, 2]" }, async (dir) => {
    await assert.rejects(HfTokenizer.load(dir), /must hold a JSON object, got \[1,2\]/);
  });
});

Deno.test("HfTokenizer.load: an unknown special token names the field and the files", async () => {
  await tinyDir(
    { "tokenizer.json": tinyJson(), "tokenizer_config.json": { eos_token: "<|nope|>" } },
    async (dir) => {
      await assert.rejects(
        HfTokenizer.load(dir),
        (e: Error) =>
          e.message.includes(`${join(dir, "tokenizer_config.json")} eos_token "<|nope|>"`) &&
          e.message.includes(join(dir, "tokenizer.json")),
      );
    },
  );
  await tinyDir(
    {
      "tokenizer.json": tinyJson(),
      "tokenizer_config.json": { additional_special_tokens: ["<|end|>", "<x>"] },
    },
    async (dir) => {
      await assert.rejects(HfTokenizer.load(dir), /additional_special_tokens\[1\] "<x>"/);
    },
  );
  await tinyDir(
    { "tokenizer.json": tinyJson(), "tokenizer_config.json": { pad_token: 4 } },
    async (dir) => {
      await assert.rejects(HfTokenizer.load(dir), /pad_token must be a token string.*got 4/);
    },
  );
  // transformers' older AddedToken form of a special token is accepted.
  const tok = new HfTokenizer(tinyJson(), {
    eos_token: { __type: "AddedToken", content: "<|end|>", special: true },
  });
  assert.deepEqual(tok.eosTokenIds, [4]);
});

Deno.test("HfTokenizer: a model type the JavaScript library lacks is an error naming the file", async () => {
  const json = { ...tinyJson(), model: { type: "WordLevel", vocab: { a: 0 }, unk_token: "a" } };
  await tinyDir({ "tokenizer.json": json }, async (dir) => {
    await assert.rejects(
      HfTokenizer.load(dir),
      (e: Error) => e.message.includes(join(dir, "tokenizer.json")) && /WordLevel/.test(e.message),
    );
  });
  assert.throws(
    () => new HfTokenizer({ ...tinyJson(), decoder: { type: "Nope" } }, {}, { source: "m" }),
    /cannot build a tokenizer from m\/tokenizer.json: Unknown Decoder type: Nope/,
  );
  assert.throws(() => new HfTokenizer({ vocab: {} }), /must be an object with a "model" field/);
});

Deno.test("HfTokenizer: named chat templates are selected as transformers does", () => {
  const tok = new HfTokenizer(tinyJson(), {
    eos_token: "<|end|>",
    chat_template: [
      { name: "default", template: "D{{ messages[0].content }}{{ eos_token }}" },
      { name: "tool_use", template: "T{{ tools | length }}" },
      { name: "short", template: "S" },
    ],
  });
  const m = [{ role: "user", content: "ab" }];
  assert.equal(tok.applyChatTemplate(m), "Dab<|end|>");
  assert.equal(tok.applyChatTemplate(m, { tools: [{ name: "f" }] }), "T1");
  assert.equal(tok.applyChatTemplate(m, { templateName: "short", tools: [{}] }), "S");
  assert.throws(
    () => tok.applyChatTemplate(m, { templateName: "long" }),
    /templateName "long" is not a chat template of tokenizer_config.json; it has "default", "tool_use", "short"/,
  );
  const none = new HfTokenizer(tinyJson(), {}, { source: "models/tiny" });
  assert.throws(
    () => none.applyChatTemplate(m),
    /models\/tiny\/tokenizer_config.json has no chat_template/,
  );
});

Deno.test("HfTokenizer.load: chat_template.jinja is used when the config has none", async () => {
  await tinyDir(
    {
      "tokenizer.json": tinyJson(),
      "tokenizer_config.json": { eos_token: "<|end|>" },
      "chat_template.jinja": "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}",
    },
    async (dir) => {
      const tok = await HfTokenizer.load(dir);
      assert.equal(tok.applyChatTemplate([{ role: "user", content: "ab" }]), "[user]ab");
      // save writes it into tokenizer_config.json, so the copy needs no .jinja file.
      const out = join(dir, "out");
      await tok.save(out);
      const again = await HfTokenizer.load(out);
      assert.equal(again.applyChatTemplate([{ role: "user", content: "b" }]), "[user]b");
    },
  );
});

// The shape of Qwen2-VL's chat template (chat_template.json of Qwen/Qwen2-VL-*-Instruct): string
// content as is, each image part as <|vision_start|><|image_pad|><|vision_end|>, text parts
// verbatim. Written here, not copied, to test that content parts reach the template.
const QWEN2VL_TEMPLATE =
  "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}" +
  "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n" +
  "{% if message['content'] is string %}{{ message['content'] }}{% else %}" +
  "{% for part in message['content'] %}{% if part['type'] == 'image' or part['type'] == 'image_url' %}" +
  "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}" +
  "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

Deno.test("applyChatTemplate: multimodal content parts reach a Qwen2-VL-style template; image markers are single special tokens", () => {
  const tok = new HfTokenizer(
    JSON.parse(Deno.readTextFileSync(join(QWEN3_DIR, "tokenizer.json"))),
    { ...QWEN3_CONFIG, chat_template: QWEN2VL_TEMPLATE },
  );
  const text = tok.applyChatTemplate([{
    role: "user",
    content: [
      { type: "image" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      { type: "text", text: "How many circles?" },
    ],
  }], { addGenerationPrompt: true });
  assert.equal(
    text,
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n" +
      "<|vision_start|><|image_pad|><|vision_end|><|vision_start|><|image_pad|><|vision_end|>" +
      "How many circles?<|im_end|>\n<|im_start|>assistant\n",
  );
  const ids = tok.encode(text, { addSpecialTokens: false });
  const pad = tok.encode("<|image_pad|>", { addSpecialTokens: false });
  assert.equal(pad.length, 1);
  assert.equal(ids.filter((id) => id === pad[0]).length, 2);
  assert.throws(
    () => tok.applyChatTemplate([{ role: "user", content: [{ type: "audio" } as never] }]),
    /messages\[0\]\.content\[0\] must be \{type: "text", text\}/,
  );
});
