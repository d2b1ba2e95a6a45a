/**
 * Finding the program in a completion: fenced Markdown code blocks and their language tags.
 *
 * Design: a completion usually explains, drafts and finally answers, so the program graded is the
 * LAST closed fenced block (```` ``` ```` or `~~~`, CommonMark rules: up to three spaces of indent,
 * a closing fence of the same character at least as long as the opening one). An unclosed block
 * (a completion cut off at the token limit) is ignored: truncated code is not an answer. When a
 * language is asked for, the last block tagged with that language wins, and an untagged block is
 * accepted only when no tagged block matches.
 *
 * @module
 */

/** A language the code verifier can run. */
export type CodeLanguage = "python" | "javascript" | "typescript";

/** One fenced code block of a completion. */
export interface CodeBlock {
  /** The block's content, without the fences (lines joined with `\n`). */
  code: string;
  /** The info string's first word, lower-cased (`""` when untagged). */
  tag: string;
  /** The language the tag names, or `null` (untagged, or a language the verifier cannot run). */
  language: CodeLanguage | null;
}

const ALIASES: Record<string, CodeLanguage> = {
  python: "python",
  python3: "python",
  py: "python",
  py3: "python",
  javascript: "javascript",
  js: "javascript",
  mjs: "javascript",
  node: "javascript",
  nodejs: "javascript",
  typescript: "typescript",
  ts: "typescript",
  mts: "typescript",
  deno: "typescript",
};

/**
 * The language a name or fence tag stands for (`py`, `python3`, `js`, `node`, `ts` ...), or
 * `null` when the verifier cannot run it. Case-insensitive.
 *
 * @example Usage
 * ```ts
 * import { normalizeLanguage } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeLanguage("Python3"), "python");
 * assert.equal(normalizeLanguage("js"), "javascript");
 * assert.equal(normalizeLanguage("cpp"), null);
 * ```
 */
export function normalizeLanguage(name: string): CodeLanguage | null {
  return ALIASES[name.trim().toLowerCase()] ?? null;
}

const OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/**
 * Every closed fenced code block of `text`, in order.
 *
 * @example Usage
 * ```ts
 * import { codeBlocks } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * const f = "`".repeat(3); // a fence, spelled out so that this example stays one block
 * const blocks = codeBlocks(`Draft:\n${f}js\nlet x\n${f}\nFinal:\n${f}python\nprint(1)\n${f}`);
 * assert.deepEqual(blocks.map((b) => b.language), ["javascript", "python"]);
 * assert.equal(blocks[1]!.code, "print(1)");
 * ```
 */
export function codeBlocks(text: string): CodeBlock[] {
  const lines = text.split(/\r?\n/);
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const fence = open[2]!;
    const info = open[3]!.trim();
    // A backtick fence's info string may not contain backticks (CommonMark): that is inline code.
    if (fence[0] === "`" && info.includes("`")) continue;
    const close = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    let end = -1;
    for (let j = i + 1; j < lines.length; j++) {
      if (close.test(lines[j]!)) {
        end = j;
        break;
      }
    }
    if (end < 0) break; // unclosed: the rest of the text is inside it, no later block exists
    const body = lines.slice(i + 1, end).map((l) => stripIndent(l, indent));
    const tag = (info.split(/\s+/)[0] ?? "").replace(/^\{?\.?/, "").replace(/\}$/, "")
      .toLowerCase();
    blocks.push({ code: body.join("\n"), tag, language: normalizeLanguage(tag) });
    i = end;
  }
  return blocks;
}

function stripIndent(line: string, indent: number): string {
  let k = 0;
  while (k < indent && line[k] === " ") k++;
  return line.slice(k);
}

/**
 * The program to grade: the last fenced block of `completion` tagged with `language` (any
 * alias), else the last untagged block; without `language`, the last block whose tag names a
 * runnable language, else the last untagged block. `null` when there is none.
 *
 * @example Usage
 * ```ts
 * import { extractCode } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * const f = "`".repeat(3);
 * const text = `Idea:\n${f}python\nprint(0)\n${f}\nFixed:\n${f}py\nprint(1)\n${f}\nDone.`;
 * assert.equal(extractCode(text), "print(1)");
 * assert.equal(extractCode(text, "python"), "print(1)");
 * assert.equal(extractCode(text, "js"), null);
 * assert.equal(extractCode("no code here"), null);
 * ```
 */
export function extractCode(completion: string, language?: string): string | null {
  return pickBlock(codeBlocks(completion), language)?.code ?? null;
}

/**
 * The block {@link extractCode} grades, with its tag (for callers that need the language).
 *
 * @example Usage
 * ```ts
 * import { extractCodeBlock } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * const f = "`".repeat(3);
 * const block = extractCodeBlock(`${f}ts\nconst x: number = 1;\n${f}`);
 * assert.equal(block?.language, "typescript");
 * ```
 */
export function extractCodeBlock(completion: string, language?: string): CodeBlock | null {
  return pickBlock(codeBlocks(completion), language);
}

function pickBlock(blocks: readonly CodeBlock[], language?: string): CodeBlock | null {
  const want = language === undefined ? undefined : normalizeLanguage(language);
  if (language !== undefined && want === null) {
    // An unknown language name: match the tag literally.
    const tag = language.trim().toLowerCase();
    return findLast(blocks, (b) => b.tag === tag) ?? findLast(blocks, (b) => b.tag === "") ?? null;
  }
  const tagged = findLast(
    blocks,
    (b) => b.language !== null && (want === undefined || b.language === want),
  );
  return tagged ?? findLast(blocks, (b) => b.tag === "") ?? null;
}

function findLast<T>(xs: readonly T[], ok: (x: T) => boolean): T | undefined {
  for (let i = xs.length - 1; i >= 0; i--) if (ok(xs[i]!)) return xs[i];
  return undefined;
}
