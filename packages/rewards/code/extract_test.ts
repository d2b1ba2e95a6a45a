import assert from "node:assert/strict";
import fc from "fast-check";
import { codeBlocks, extractCode, extractCodeBlock, normalizeLanguage } from "./mod.ts";

Deno.test("extractCode: the last closed block wins; prose and unclosed blocks are ignored", () => {
  const text = [
    "First attempt:",
    "```python",
    "print('draft')",
    "```",
    "Better:",
    "```python",
    "def f(x):",
    "    return 2 * x",
    "```",
    "And a cut-off one:",
    "```python",
    "def g(",
  ].join("\n");
  assert.equal(extractCode(text), "def f(x):\n    return 2 * x");
});

Deno.test("extractCode: picks by language, falls back to an untagged block", () => {
  const text =
    "```js\nlet a = 1;\n```\n```python\nx = 1\n```\n```\nuntagged\n```\n```text\nout\n```";
  assert.equal(extractCode(text, "javascript"), "let a = 1;");
  assert.equal(extractCode(text, "py"), "x = 1");
  assert.equal(extractCode(text, "ts"), "untagged");
  assert.equal(extractCode(text), "x = 1"); // the last block in a runnable language
  assert.equal(extractCode(text, "text"), "out"); // an unknown language matches its tag
  assert.equal(extractCodeBlock(text)?.tag, "python");
  assert.equal(extractCode("```\nonly\n```"), "only");
  assert.equal(extractCode("```cpp\nint main() {}\n```"), null);
});

Deno.test("codeBlocks: CommonMark fences (tildes, longer fences, indentation, CRLF, attributes)", () => {
  assert.deepEqual(codeBlocks("~~~py\na\n~~~").map((b) => b.code), ["a"]);
  // A longer fence may contain a shorter one.
  assert.equal(codeBlocks("````md\n```py\nx\n```\n````")[0]!.code, "```py\nx\n```");
  // Indented fences strip that much indentation from the content.
  assert.equal(codeBlocks("  ```js\n  let a;\n    let b;\n  ```")[0]!.code, "let a;\n  let b;");
  assert.equal(codeBlocks("```py\r\nx = 1\r\n```\r\n")[0]!.code, "x = 1");
  assert.equal(codeBlocks("```{.python}\nx\n```")[0]!.language, "python");
  assert.equal(codeBlocks('```python title="a.py"\nx\n```')[0]!.language, "python");
  // Inline triple backticks are not a fence.
  assert.deepEqual(codeBlocks("use ```js``` inline"), []);
  assert.deepEqual(codeBlocks(""), []);
});

Deno.test("normalizeLanguage: aliases", () => {
  for (
    const [name, lang] of [
      ["Python", "python"],
      ["py3", "python"],
      ["node", "javascript"],
      ["JS", "javascript"],
      ["mts", "typescript"],
      [" ts ", "typescript"],
    ] as const
  ) assert.equal(normalizeLanguage(name), lang);
  assert.equal(normalizeLanguage("rust"), null);
});

Deno.test("extractCode: any fence-free program survives being wrapped in prose (property)", () => {
  const line = fc.string({ maxLength: 30 }).filter((s) =>
    !/[\r\n]/.test(s) && !/^ {0,3}(```|~~~)/.test(s)
  );
  fc.assert(
    fc.property(
      fc.array(line, { minLength: 1, maxLength: 8 }),
      fc.string({ maxLength: 40 }),
      (lines, prose) => {
        fc.pre(!/```|~~~/.test(prose));
        const code = lines.join("\n");
        const text = `${prose}\n\`\`\`python\n${code}\n\`\`\`\n${prose}`;
        assert.equal(extractCode(text, "python"), code);
      },
    ),
  );
});
