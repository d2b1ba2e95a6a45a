import assert from "node:assert/strict";
import { FieldError } from "./fields.ts";
import { ChatTemplate, renderTemplate, templateFields, toMessages } from "./template.ts";

/** Qwen2.5-Instruct's `chat_template` (tokenizer_config.json), verbatim. */
const QWEN25_TEMPLATE =
  `{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- messages[0]['content'] }}\n    {%- else %}\n        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n    {%- endif %}\n    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}\n    {%- for tool in tools %}\n        {{- "\\n" }}\n        {{- tool | tojson }}\n    {%- endfor %}\n    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}\n{%- else %}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- else %}\n        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- for message in messages %}\n    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}\n        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n    {%- elif message.role == "assistant" %}\n        {{- '<|im_start|>' + message.role }}\n        {%- if message.content %}\n            {{- '\\n' + message.content }}\n        {%- endif %}\n        {%- for tool_call in message.tool_calls %}\n            {%- if tool_call.function is defined %}\n                {%- set tool_call = tool_call.function %}\n            {%- endif %}\n            {{- '\\n<tool_call>\\n{"name": "' }}\n            {{- tool_call.name }}\n            {{- '", "arguments": ' }}\n            {{- tool_call.arguments | tojson }}\n            {{- '}\\n</tool_call>' }}\n        {%- endfor %}\n        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == "tool" %}\n        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}\n            {{- '<|im_start|>user' }}\n        {%- endif %}\n        {{- '\\n<tool_response>\\n' }}\n        {{- message.content }}\n        {{- '\\n</tool_response>' }}\n        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}\n            {{- '<|im_end|>\\n' }}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n{%- endif %}\n`;

const qwen = new ChatTemplate(QWEN25_TEMPLATE, { eosToken: "<|im_end|>" });

Deno.test("ChatTemplate: Qwen2.5 template, default system prompt and add_generation_prompt", () => {
  const messages = [{ role: "user", content: "What's the WEATHER like in Hangzhou?" }];
  assert.equal(
    qwen.render(messages),
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n" +
      "<|im_start|>user\nWhat's the WEATHER like in Hangzhou?<|im_end|>\n<|im_start|>assistant\n",
  );
  assert.equal(
    qwen.render(messages, { addGenerationPrompt: false }),
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n" +
      "<|im_start|>user\nWhat's the WEATHER like in Hangzhou?<|im_end|>\n",
  );
});

Deno.test("ChatTemplate: a dataset row → messages → Qwen prompt, with a system message and history", () => {
  const row = { question: "Compute 3·4.", meta: { level: 2 } };
  const messages = toMessages(row, {
    system: "Please reason step by step, and put your final answer within \\boxed{}.",
    user: "{{question}} (level {{meta.level}})",
  });
  assert.equal(
    qwen.render(messages),
    "<|im_start|>system\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n" +
      "<|im_start|>user\nCompute 3·4. (level 2)<|im_end|>\n<|im_start|>assistant\n",
  );
  const multi = [
    { role: "user", content: "1+1?" },
    { role: "assistant", content: "2" },
    { role: "user", content: "and 2+2?" },
  ];
  assert.ok(
    qwen.render(multi).endsWith(
      "<|im_start|>assistant\n2<|im_end|>\n<|im_start|>user\nand 2+2?<|im_end|>\n<|im_start|>assistant\n",
    ),
  );
  // extra variables reach the template (tools switch the system block)
  const withTools = qwen.render([{ role: "user", content: "hi" }], {
    variables: { tools: [{ type: "function", function: { name: "calc" } }] },
  });
  assert.match(withTools, /# Tools[\s\S]*"name": "calc"/);
});

Deno.test("ChatTemplate: errors name the problem", () => {
  assert.throws(
    () => new ChatTemplate("{% if %}"),
    /ChatTemplate: cannot parse the template "\{% if %\}"/,
  );
  assert.throws(() => new ChatTemplate(""), /source must be a non-empty Jinja string/);
  assert.throws(
    () => qwen.render([{ role: "user" } as never]),
    /messages\[0\]\.content must be a string, got undefined/,
  );
  assert.throws(
    () => qwen.render([{ content: "x" } as never]),
    /messages\[0\] must be an object with a string role/,
  );
});

Deno.test("renderTemplate: fields, nested paths, non-string values, missing fields", () => {
  assert.equal(
    renderTemplate("{{a}}-{{ b.c }}-{{d}}-{{e}}", { a: 1, b: { c: true }, d: [1, 2], e: 5n }),
    "1-true-[1,2]-5",
  );
  assert.equal(renderTemplate("no fields", {}), "no fields");
  assert.deepEqual(templateFields("{{x}}{{y.z}}{{x}}"), ["x", "y.z"]);
  try {
    renderTemplate("Q: {{question}}", { problem: "p", answer: "a" });
    assert.fail("expected a FieldError");
  } catch (e) {
    assert.ok(e instanceof FieldError);
    assert.equal(e.path, "question");
    assert.deepEqual(e.available, ["problem", "answer"]);
    assert.match(e.message, /renderTemplate\("Q: \{\{question\}\}"\): field "question" is missing/);
  }
});

Deno.test("toMessages: veRL message-list prompts, string prompts, errors", () => {
  const verl = { prompt: [{ role: "system", content: "s" }, { role: "user", content: "u" }] };
  assert.deepEqual(toMessages(verl, { system: "ignored" }), verl.prompt);
  assert.deepEqual(toMessages({ q: "hi" }, { prompt: "q" }), [{ role: "user", content: "hi" }]);
  assert.throws(
    () => toMessages({ prompt: 3 }),
    /the prompt must be a string or a message list, got 3/,
  );
  assert.throws(
    () => toMessages({ prompt: [{ role: "user", content: 1 }] }),
    /messages\[0\]\.content must be a string/,
  );
});
