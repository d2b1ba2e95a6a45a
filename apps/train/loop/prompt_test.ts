import assert from "node:assert/strict";
import { join } from "node:path";
import { HfTokenizer } from "@rlvr/policy";
import { arithmeticTask } from "@rlvr/rewards";
import { promptText, tinyTokenizer } from "../demo/format.ts";
import { QWEN3_TOKENIZER_DIR } from "./_qwen_fixture.ts";
import { promptFormat, promptIds, renderPrompt } from "./prompt.ts";

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
