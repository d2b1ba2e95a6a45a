import assert from "node:assert/strict";
import { join } from "node:path";
import { type CharTokenizer, HfTokenizer } from "@rlvr/policy";
import { arithmeticTask } from "@rlvr/rewards";
import { countShapesTask } from "@rlvr/rewards/vision";
import { promptText, tinyTokenizer } from "../demo/format.ts";
import { vlPromptIds } from "../demo/vl_format.ts";
import { QWEN3_TOKENIZER_DIR } from "./_qwen_fixture.ts";
import { loadPolicy } from "./policy.ts";
import { IMAGE_MARKERS, promptFormat, promptIds, renderPrompt } from "./prompt.ts";

const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });
const rows = [0, 1, 2].map((i) => task.row(0, i));

Deno.test("compact: the char-level tokenizer keeps <bos> + `expression=` exactly", () => {
  const tok = tinyTokenizer();
  assert.equal(promptFormat(tok), "compact");
  for (const row of rows) {
    assert.equal(renderPrompt(tok, row), promptText(row));
    assert.match(renderPrompt(tok, row), /^\d+\+\d+=$/);
    // The encoding the default run was trained and evaluated with before prompt formats existed.
    assert.deepEqual(promptIds(tok, row), [
      tok.bosTokenId!,
      ...tok.encode(promptText(row), { addSpecialTokens: false }),
    ]);
  }
});

Deno.test("chat: a Hugging Face tokenizer with a chat template renders one user message with the full prompt and the assistant opening", async () => {
  const tok = await HfTokenizer.load(QWEN3_TOKENIZER_DIR);
  assert.equal(promptFormat(tok), "chat");
  for (const row of rows) {
    const text = renderPrompt(tok, row);
    assert.equal(
      text,
      `<|im_start|>user\n${row.prompt}<|im_end|>\n<|im_start|>assistant\n`,
    );
    const ids = promptIds(tok, row);
    assert.deepEqual(ids, tok.encode(text, { addSpecialTokens: false }));
    assert.equal(ids[0], tok.tokenToId("<|im_start|>"));
    assert.equal(tok.decode(ids), text);
  }
});

Deno.test("plain: without a chat template the row's prompt is encoded with the tokenizer's own special tokens; a broken template is an error, not plain", async () => {
  const json = JSON.parse(await Deno.readTextFile(join(QWEN3_TOKENIZER_DIR, "tokenizer.json")));
  const config = JSON.parse(
    await Deno.readTextFile(join(QWEN3_TOKENIZER_DIR, "tokenizer_config.json")),
  );
  const { chat_template: _, ...noTemplate } = config;
  const base = new HfTokenizer(json, noTemplate);
  assert.equal(promptFormat(base), "plain");
  for (const row of rows) {
    assert.equal(renderPrompt(base, row), row.prompt);
    assert.deepEqual(promptIds(base, row), base.encode(row.prompt, { addSpecialTokens: true }));
  }
  const broken = new HfTokenizer(json, {
    ...noTemplate,
    chat_template: "{{ raise_exception('no') }}",
  });
  assert.throws(() => promptFormat(broken), /chat template "default" .* failed: no/);
});

// Rows with images (a visual task's): the image markers, expanded to each image's tokens.
const visual = countShapesTask({ size: 56, shapeSize: [8, 10], count: [1, 4] });
const images = { imageTokenId: -1, tokenCounts: () => [16] };

Deno.test("images, compact: a count_shapes row is prompted as tiny-vl was trained (vlPromptIds), with 16 image tokens", async () => {
  const { tokenizer, model } = await loadPolicy("builtin:tiny-vl");
  model.dispose();
  const tok = tokenizer as CharTokenizer;
  const pad = tok.encode("<|image_pad|>", { addSpecialTokens: false })[0]!;
  for (const i of [0, 1, 2]) {
    const row = visual.row(0, i);
    assert.equal(renderPrompt(tok, row), `${IMAGE_MARKERS}${row.targetColor} ${row.targetKind}s?`);
    const ids = promptIds(tok, row, "compact", { ...images, imageTokenId: pad });
    assert.deepEqual(ids, vlPromptIds(tok, row, [16]));
  }
  // A text-only policy (no image counts given) refuses the row rather than drop its image.
  assert.throws(
    () => promptIds(tok, visual.row(0, 0)),
    /row .* of task count_shapes carries images, but the policy is a text-only model; use a vision-language checkpoint/,
  );
});

Deno.test("images, chat: image content parts reach the template, then each <|image_pad|> is expanded", async () => {
  const json = JSON.parse(await Deno.readTextFile(join(QWEN3_TOKENIZER_DIR, "tokenizer.json")));
  const config = JSON.parse(
    await Deno.readTextFile(join(QWEN3_TOKENIZER_DIR, "tokenizer_config.json")),
  );
  // Qwen2-VL's template shape: an image part is <|vision_start|><|image_pad|><|vision_end|>.
  const template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.content is string %}" +
    "{{ m.content }}{% else %}{% for p in m.content %}{% if p.type == 'image' %}" +
    "<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ p.text }}{% endif %}{% endfor %}" +
    "{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
  const tok = new HfTokenizer(json, { ...config, chat_template: template });
  const row = visual.row(0, 0);
  const text = renderPrompt(tok, row);
  assert.equal(
    text,
    `<|im_start|>user\n${IMAGE_MARKERS}${row.prompt}<|im_end|>\n<|im_start|>assistant\n`,
  );
  const pad = tok.tokenToId("<|image_pad|>")!;
  const ids = promptIds(tok, row, "chat", { imageTokenId: pad, tokenCounts: () => [5] });
  const plain = tok.encode(text, { addSpecialTokens: false });
  assert.equal(ids.length, plain.length + 4);
  assert.equal(ids.filter((id) => id === pad).length, 5);
  // A text row is unchanged by the image options.
  assert.deepEqual(promptIds(tok, rows[0]!, "chat", images), promptIds(tok, rows[0]!));
});
