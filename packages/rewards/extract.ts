/**
 * A small final-answer extractor for the task rewards and the unsupervised rewards: the content
 * of the last `<answer>…</answer>`, else of the last `\boxed{…}` (braces balanced), trimmed.
 *
 * Design: deliberately tiny and string-only. It does not normalise LaTeX or compare math
 * expressions; that is the math verifier's job (`mathReward`). When the answer tag itself holds a
 * `\boxed{…}`, the boxed content is returned, so `<answer>\boxed{42}</answer>` gives `42`.
 *
 * @module
 */

/** Contents of every balanced `\boxed{…}` (and `\fbox{…}`) in `text`, in order. */
function boxedAll(text: string): string[] {
  const out: string[] = [];
  const re = /\\(?:boxed|fbox)\s*\{/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    let depth = 1;
    let j = m.index + m[0].length;
    const start = j;
    for (; j < text.length && depth > 0; j++) {
      if (text[j] === "{") depth++;
      else if (text[j] === "}") depth--;
    }
    if (depth === 0) out.push(text.slice(start, j - 1));
    re.lastIndex = Math.max(re.lastIndex, start);
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
  const re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "gi");
  let last: string | null = null;
  for (const m of String(text).matchAll(re)) last = m[1]!;
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
