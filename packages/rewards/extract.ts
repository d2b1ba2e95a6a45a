/**
 * A small final-answer extractor for the task rewards and the unsupervised rewards: the content
 * of the last `<answer>…</answer>`, else of the last `\boxed{…}` (braces balanced), trimmed.
 *
 * Design: deliberately tiny and string-only. It does not normalise LaTeX or compare math
 * expressions; that is the math verifier's job (`mathReward`). When the answer tag itself holds a
 * `\boxed{…}`, the boxed content is returned, so `<answer>\boxed{42}</answer>` gives `42`.
 * Both scans are linear in the text, however many boxes or tags are left open.
 *
 * @module
 */

/**
 * Contents of every balanced `\boxed{…}` (and `\fbox{…}`) in `text`, in order (boxes nested in
 * boxes included). The closing brace of every `{` comes from one pass with a stack: scanning
 * forward from each box is quadratic when many boxes are never closed.
 */
function boxedAll(text: string): string[] {
  const ends = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "{") open.push(i);
    else if (text[i] === "}" && open.length > 0) ends.set(open.pop()!, i);
  }
  const out: string[] = [];
  for (const m of text.matchAll(/\\(?:boxed|fbox)\s*\{/g)) {
    const brace = m.index + m[0].length - 1;
    const end = ends.get(brace);
    if (end !== undefined) out.push(text.slice(brace + 1, end));
  }
  return out;
}

/**
 * The content of the last balanced `\boxed{…}` in `text`, trimmed, or `null`.
 *
 * @example Usage
 * ```ts
 * import { extractBoxed } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractBoxed("so \\boxed{1} then \\boxed{\\frac{1}{2}}"), "\\frac{1}{2}");
 * assert.equal(extractBoxed("no box"), null);
 * ```
 */
export function extractBoxed(text: string): string | null {
  const all = boxedAll(String(text));
  const last = all[all.length - 1];
  return last === undefined ? null : last.trim();
}

/**
 * The content of the last `<tag>…</tag>` in `text`, trimmed, or `null` (tag names are matched
 * case-insensitively).
 *
 * @example Usage
 * ```ts
 * import { extractTag } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractTag("<answer>1</answer> <answer> 2 </answer>", "answer"), "2");
 * assert.equal(extractTag("<answer>open", "answer"), null);
 * ```
 */
export function extractTag(text: string, tag: string): string | null {
  // The pairs `<tag>([\s\S]*?)</tag>` would match, found by two forward searches instead of a
  // regex that rescans the rest of the text from every opener left unclosed.
  const s = String(text);
  const open = new RegExp(`<${tag}>`, "gi");
  const close = new RegExp(`</${tag}>`, "gi");
  let last: string | null = null;
  for (;;) {
    const o = open.exec(s);
    if (!o) break;
    close.lastIndex = o.index + o[0].length;
    const c = close.exec(s);
    if (!c) break; // no closer after this opener, so none after any later one
    last = s.slice(o.index + o[0].length, c.index);
    open.lastIndex = c.index + c[0].length;
  }
  return last === null ? null : last.trim();
}

/**
 * The final answer of a completion: the last `<answer>…</answer>` (unwrapping a `\boxed{…}`
 * inside it), else the last `\boxed{…}`, trimmed; `null` when there is neither or it is empty.
 *
 * @example Usage
 * ```ts
 * import { extractFinalAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractFinalAnswer("<think>2+2</think><answer> 4 </answer>"), "4");
 * assert.equal(extractFinalAnswer("The result is \\boxed{4}."), "4");
 * assert.equal(extractFinalAnswer("<answer>\\boxed{x+1}</answer>"), "x+1");
 * assert.equal(extractFinalAnswer("just 4"), null);
 * ```
 */
export function extractFinalAnswer(text: string): string | null {
  const tagged = extractTag(text, "answer");
  const found = tagged === null ? extractBoxed(text) : (extractBoxed(tagged) ?? tagged);
  return found === null || found === "" ? null : found;
}
