import assert from "node:assert/strict";
import { ChatTemplateSet } from "./_chat_template.ts";

const user = [{ role: "user", content: "hi" }];

Deno.test("ChatTemplateSet: reads a string, a {name, template} list or a name map", () => {
  const one = new ChatTemplateSet("{{ messages[0].content }}", "cfg");
  assert.deepEqual([...one.sources.keys()], ["default"]);
  assert.equal(one.toConfigValue(), "{{ messages[0].content }}");
  assert.equal(one.render("f", user, {}, {}), "hi");
  const list = [{ name: "default", template: "A" }, { name: "rag", template: "B" }];
  const named = new ChatTemplateSet(list, "cfg");
  assert.deepEqual(named.toConfigValue(), list);
  assert.equal(named.render("f", user, { templateName: "rag" }, {}), "B");
  const map = new ChatTemplateSet({ default: "A", tool_use: "T" }, "cfg");
  assert.equal(map.render("f", user, { tools: [{}] }, {}), "T");
  assert.equal(map.render("f", user, { tools: [] }, {}), "A");
  assert.equal(new ChatTemplateSet(undefined, "cfg").toConfigValue(), undefined);
});

Deno.test("ChatTemplateSet: variables follow transformers", () => {
  const t = new ChatTemplateSet(
    // (if/else, not {{ bool }}: Python prints True where @huggingface/jinja prints true)
    "{{ bos_token }}|{% if add_generation_prompt %}G{% endif %}|" +
      "{% if tools is none and documents is none %}N{% endif %}|{{ flag }}|{{ messages | length }}",
    "cfg",
  );
  assert.equal(t.render("f", user, {}, { bos_token: "<s>" }), "<s>||N||1");
  assert.equal(
    t.render("f", user, { addGenerationPrompt: true, extra: { flag: "x" } }, { bos_token: "<s>" }),
    "<s>|G|N|x|1",
  );
  // trim_blocks / lstrip_blocks as in transformers: block tags leave no newline or indent.
  const blocks = new ChatTemplateSet(
    "{% for m in messages %}\n  {% if m.role == 'user' %}\n[{{ m.content }}]\n  {% endif %}\n{% endfor %}",
    "cfg",
  );
  assert.equal(blocks.render("f", user, {}, {}), "[hi]\n");
});

Deno.test("ChatTemplateSet: errors name the function, the template and the field", () => {
  assert.throws(() => new ChatTemplateSet(7, "x.json"), /x.json: chat_template must be a string/);
  assert.throws(
    () => new ChatTemplateSet([{ name: "a" }], "x.json"),
    /x.json: chat_template\[0\] must be \{"name": string, "template": string\}/,
  );
  assert.throws(
    () => new ChatTemplateSet({ a: 1 }, "x.json"),
    /x.json: chat_template.a must be a template string, got 1/,
  );
  const broken = new ChatTemplateSet("{% for m in messages %}", "x.json");
  assert.throws(
    () => broken.render("f", user, {}, {}),
    (e: Error) =>
      e instanceof SyntaxError &&
      /f: chat template "default" of x.json does not parse/.test(e.message),
  );
  const raising = new ChatTemplateSet("{{ raise_exception('no system role') }}", "x.json");
  assert.throws(
    () => raising.render("f", user, {}, {}),
    /f: chat template "default" of x.json failed: no system role/,
  );
  const ok = new ChatTemplateSet("x", "x.json");
  assert.throws(() => ok.render("f", "hi" as never, {}, {}), /f: messages must be an array/);
  assert.throws(
    () => ok.render("f", [{ content: "a" }] as never, {}, {}),
    /messages\[0\] must be an object with a string role/,
  );
  assert.throws(
    () => ok.render("f", user, { tools: "t" as never }, {}),
    /options.tools must be a list/,
  );
  assert.throws(
    () => ok.render("f", user, { extra: { add_generation_prompt: true } }, {}),
    /options.extra.add_generation_prompt is set by applyChatTemplate itself; pass addGenerationPrompt/,
  );
  assert.throws(
    () => new ChatTemplateSet({ rag: "R" }, "x.json").render("f", user, {}, {}),
    /x.json has no "default" chat template; pass templateName, one of "rag"/,
  );
});
