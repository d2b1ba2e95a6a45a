/**
 * Final-answer extraction from a model completion: the last `\boxed{}`/`\fbox{}` (nested braces,
 * `\boxed 5` without braces), `<answer>…</answer>` tags, GSM8K `#### 42`, "the answer is …" /
 * "Final answer: …" phrases, and fallbacks to the last inline math or the last number, tried in a
 * configurable order.
 *
 * Design decision: extraction never throws and never guesses past a broken box. When the last
 * `\boxed{` is not closed (a truncated completion), the completion has no answer: returning an
 * earlier box or a number from inside the broken one would reward output the model never
 * finished. Empty boxes (`\boxed{}` quoted in prose) are skipped.
 *
 * Every strategy runs in time linear in the completion (a completion is untrusted: a regex that
 * rescans the rest of the text from each of many `\(` or `<answer>` openers is quadratic, and a
 * policy can emit a million of them), and a number is only ever extracted whole: `1e5`, `10^{3}`
 * and `1.5 \times 10^{3}` are one number, and a number directly followed by more of one (`2^x`,
 * `1.5.2`) is not read as its prefix.
 *
 * @module
 */

/** The extraction strategies, by name. */
export type ExtractionStrategy =
  | "boxed"
  | "tag"
  | "hash"
  | "phrase"
  | "choice"
  | "lastMath"
  | "lastNumber";

/**
 * Default order: explicit markers first (`boxed`, `tag`, `hash`, `phrase`), then the loosest
 * fallback (`lastMath`). Use `["boxed"]` for strict box-only grading.
 *
 * @example Usage
 * ```ts
 * import { DEFAULT_STRATEGIES, extractAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(DEFAULT_STRATEGIES[0], "boxed");
 * assert.equal(extractAnswer("it is 7", { strategies: DEFAULT_STRATEGIES })?.answer, "7");
 * ```
 */
export const DEFAULT_STRATEGIES: readonly ExtractionStrategy[] = Object.freeze([
  "boxed",
  "tag",
  "hash",
  "phrase",
  "lastMath",
]);

/** An extracted answer and the strategy that found it. */
export interface Extraction {
  /** The raw answer text (not yet normalised). */
  answer: string;
  /** Which strategy produced it. */
  strategy: ExtractionStrategy;
}

/** Options of {@linkcode extractAnswer}. */
export interface ExtractOptions {
  /** Strategies to try, in order (default {@linkcode DEFAULT_STRATEGIES}). */
  strategies?: readonly ExtractionStrategy[];
  /**
   * `"first"` (default): the first strategy in `strategies` that finds an answer wins.
   * `"rightmost"`: of the explicit markers among `strategies` (`boxed`, `tag`, `hash`, `phrase`,
   * `choice`), the one that appears last in the text wins, so "… \boxed{200} … Final answer:
   * 10,455" gives 10,455; `lastMath`/`lastNumber` still only run when no marker is found.
   */
  select?: "first" | "rightmost";
  /** Look only after the last `</think>` when there is one (default `true`). */
  stripThinking?: boolean;
}

type BoxScan =
  | { status: "found"; content: string; start: number }
  | { status: "none" }
  | { status: "unbalanced" };

/** Index just past the group opened at `open` (`text[open] === "{"`), or -1 when unbalanced. */
function closeBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") {
      i++; // `\{` and `\}` are literal braces, not grouping
      continue;
    }
    if (ch === "{") depth++;
    else if (ch === "}") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * For every `{` of the text, the index just past its closing `}` (one left-to-right pass, `\x`
 * skipped as `closeBrace` does); unclosed ones are absent. Replaces a `closeBrace` per box, which
 * is quadratic when many boxes are unclosed.
 */
function braceEnds(text: string): Map<number, number> {
  const ends = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === "{") open.push(i);
    else if (ch === "}" && open.length > 0) ends.set(open.pop()!, i + 1);
  }
  return ends;
}

function scanBoxes(text: string): BoxScan {
  const starts: { at: number; after: number }[] = [];
  for (const m of text.matchAll(/\\(?:boxed|fbox)(?![A-Za-z])/g)) {
    starts.push({ at: m.index, after: m.index + m[0].length });
  }
  for (let k = starts.length - 1; k >= 0; k--) {
    const { at, after } = starts[k]!;
    let i = after;
    while (text[i] === " " || text[i] === "\t") i++;
    if (text[i] === "{") {
      const end = closeBrace(text, i);
      if (end < 0) {
        // Broken box: only fatal when it is the last one with content (an earlier unclosed box
        // swallowing a later good one cannot happen, since we scan from the end).
        return { status: "unbalanced" };
      }
      const content = text.slice(i + 1, end - 1).trim();
      if (content !== "") return { status: "found", content, start: at };
      continue;
    }
    // A token that is itself `\boxed…` is skipped; test that before reading the token, which
    // would otherwise run to the end of `\boxed\boxed\boxed…` from every box.
    if (text.startsWith("\\boxed", i)) continue;
    const token = /[^\s$]+/y;
    token.lastIndex = i;
    const m = token.exec(text);
    if (m) return { status: "found", content: m[0], start: at };
  }
  return { status: "none" };
}

/**
 * The content of the last non-empty `\boxed{…}` or `\fbox{…}` (nested braces allowed; also
 * `\boxed 5`), or `null` when there is none or the last one is not closed.
 *
 * @example Usage
 * ```ts
 * import { lastBoxed } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(lastBoxed("first \\boxed{1}, then \\boxed{\\frac{1}{2}}"), "\\frac{1}{2}");
 * assert.equal(lastBoxed("\\boxed 5."), "5.");
 * assert.equal(lastBoxed("\\boxed{\\frac{1}{2}"), null); // unbalanced: no answer
 * ```
 */
export function lastBoxed(text: string): string | null {
  const r = scanBoxes(text);
  return r.status === "found" ? r.content : null;
}

/**
 * The text after the last `</think>` (the whole text when there is none).
 *
 * @example Usage
 * ```ts
 * import { stripThinking } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(stripThinking("<think>maybe 3</think> The answer is 4."), " The answer is 4.");
 * ```
 */
export function stripThinking(text: string): string {
  const i = text.lastIndexOf("</think>");
  return i < 0 ? text : text.slice(i + "</think>".length);
}

/**
 * The content of the last `<answer>…</answer>` tag (its last box when it holds one), or `null`.
 *
 * @example Usage
 * ```ts
 * import { extractTagAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractTagAnswer("<answer> 42 </answer>"), "42");
 * ```
 */
export function extractTagAnswer(text: string): string | null {
  return tagAt(text)?.answer ?? null;
}

/** An answer and where its marker starts in the text. */
interface Located {
  answer: string;
  at: number;
}

/**
 * The last `<answer>…</answer>` pair, as `/<answer>([\s\S]*?)<\/answer>/gi` pairs them (each
 * opener with the first closer after it, left to right), in one forward pass: the regex rescans
 * the rest of the text from every opener that has no closer.
 */
function tagAt(text: string): Located | null {
  const open = /<answer>/gi;
  const close = /<\/answer>/gi;
  let last: { inner: string; at: number } | null = null;
  for (;;) {
    const o = open.exec(text);
    if (!o) break;
    close.lastIndex = o.index + o[0].length;
    const c = close.exec(text);
    if (!c) break; // no closer after this opener, so none after any later one
    last = { inner: text.slice(o.index + o[0].length, c.index), at: o.index };
    open.lastIndex = c.index + c[0].length;
  }
  if (!last) return null;
  const inner = last.inner.trim();
  if (inner === "") return null;
  return { answer: lastBoxed(inner) ?? inner, at: last.at };
}

/**
 * The rest of the line after the last GSM8K-style `####` marker, or `null`.
 *
 * @example Usage
 * ```ts
 * import { extractHashAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractHashAnswer("48/2 = 24 clips\n#### 72"), "72");
 * ```
 */
export function extractHashAnswer(text: string): string | null {
  return hashAt(text)?.answer ?? null;
}

function hashAt(text: string): Located | null {
  const i = text.lastIndexOf("####");
  if (i < 0) return null;
  const line = text.slice(i + 4).split("\n")[0]!.trim();
  return line === "" ? null : { answer: line, at: i };
}

/** Cuts an answer span that follows a phrase: a math segment, else the sentence. */
function answerSpan(rest: string): string | null {
  let s = rest.replace(/^[\s*:]+/, "");
  const boxed = /^\\(?:boxed|fbox)(?![A-Za-z])/.test(s) ? lastBoxed(s) : null;
  if (boxed !== null) return boxed;
  const delims: [string, string][] = [["$$", "$$"], ["\\[", "\\]"], ["\\(", "\\)"], ["$", "$"]];
  for (const [open, close] of delims) {
    if (s.startsWith(open)) {
      const end = s.indexOf(close, open.length);
      if (end > open.length) {
        let inner = s.slice(open.length, end);
        // `$28$ \%` / `$12$ cm`: keep a short unit or percent that follows the math.
        const tail = /^\s*(\\?%|percent\b|[a-zA-Z]{1,6}(?:\^\d)?)(?=[\s.,;]|$)/.exec(
          s.slice(end + close.length),
        );
        if (tail && !/^(?:and|or|is|if|so|as|at|by|to|we|i|the|for|of|in)$/i.test(tail[1]!)) {
          inner += ` ${tail[1]}`;
        }
        return inner.trim() || null;
      }
      break;
    }
  }
  s = s.split("\n")[0]!;
  // `(?<!\s)`: try a run of spaces once, from its start (else each space of a long run rescans it).
  const stop = /\.(?:\s|$)|(?<!\s)\s+(?:I hope|because|since|which|as this)\b/i.exec(s);
  if (stop) s = s.slice(0, stop.index);
  s = s.replace(/\*+/g, "").trim();
  return s === "" ? null : s;
}

/**
 * The answer after the last "final answer is/:", "the answer is", "answer:" phrase: a math
 * segment (`$…$`, `\(…\)`, `\[…\]`) when one follows, else the rest of the sentence.
 *
 * @example Usage
 * ```ts
 * import { extractPhraseAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   extractPhraseAnswer("Final Answer: The final answer is $28\\%$. I hope it is correct."),
 *   "28\\%",
 * );
 * assert.equal(extractPhraseAnswer("So the answer is 3.5 cm. Done."), "3.5 cm");
 * ```
 */
export function extractPhraseAnswer(text: string): string | null {
  return phraseAt(text)?.answer ?? null;
}

function phraseAt(text: string): Located | null {
  const re = /\b(?:final\s+answer|answer)\s*(?:is\s*:?|:|=)/gi;
  let last: RegExpExecArray | null = null;
  for (const m of text.matchAll(re)) last = m as RegExpExecArray;
  if (!last) return null;
  const answer = answerSpan(text.slice(last.index + last[0].length));
  return answer === null ? null : { answer, at: last.index };
}

/** An integer exponent, braced or one digit: `{-3}`, `5`. */
const INT_EXPONENT = String.raw`(?:\{\s*[+-]?\d+\s*\}|\d)`;

/**
 * A whole number: sign, digits (with thousands separators), decimals, then at most one of an
 * exponent `e5`, `\times 10^{5}` or `^{5}`, a fraction `/7`, a percent; not digits glued to a
 * letter (`x2`) or opening an exponent or index (`^{5}`, `x_{12}`). The final lookahead
 * refuses a match that more of a number follows (`2^x`, `1.5.2`, `12/7e5`, `3 \times 10^{x}`):
 * the engine then backtracks to shorter matches, which the lookahead refuses too (each is followed
 * by what it dropped: a digit, a point, an exponent, a power, a fraction or a percent), so a number
 * is extracted whole or not at all.
 */
const NUMBER_RE = new RegExp(
  String.raw`(?<![A-Za-z0-9_.^])(?<![\^_]\s*\{\s*[+-]?\s*)(?:(?<![\w)\]}])-)?` +
    String.raw`(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|(?<![\w.])\.\d+)` +
    String.raw`(?:[eE][+-]?\d+|\s*(?:\\times|\\cdot|×|x|\*)\s*10\s*\^\s*${INT_EXPONENT}` +
    String.raw`|\s*\^\s*${INT_EXPONENT})?` +
    String.raw`(?:\s*\/\s*\d+)?(?:\s*\\?%)?` +
    String.raw`(?![\d^_]|[eE][+-]?\d|\.\d|\s*\^|\s*\/\s*\d|\s*\\?%` +
    String.raw`|\s*(?:\\times|\\cdot|×|x|\*)\s*10\s*\^)`,
  "g",
);

function lastNumberMatch(text: string): { value: string; end: number } | null {
  let best: { value: string; end: number } | null = null;
  for (const m of text.matchAll(NUMBER_RE)) {
    best = { value: m[0].trim(), end: m.index + m[0].length };
  }
  return best;
}

/**
 * The last number in the text (thousands separators, decimals, scientific notation `1e5` and
 * `1.5 \times 10^{3}`, powers `10^{3}`, simple fractions `a/b` and a `%` are kept; digits glued to
 * letters such as `x2` are not numbers, and neither is the start of a longer number: `2^x` gives
 * no `2`), or `null`.
 *
 * @example Usage
 * ```ts
 * import { extractLastNumber } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractLastNumber("He pays 1,200 dollars, then -3.5 more."), "-3.5");
 * assert.equal(extractLastNumber("code AZYUK2A"), null);
 * assert.equal(extractLastNumber("so x=1e5"), "1e5");
 * ```
 */
export function extractLastNumber(text: string): string | null {
  return lastNumberMatch(text)?.value ?? null;
}

/** Forward search for `needle`, memoised for non-decreasing starting points (linear in total). */
function forwardFinder(text: string, needle: string): (from: number) => number {
  let at = -2;
  return (from) => {
    if (at === -1 || at >= from) return at;
    at = text.indexOf(needle, from);
    return at;
  };
}

/**
 * The math segments of a text, `[inner, end]` in order: what
 * `/\$\$([\s\S]+?)\$\$|(?<![\\$])\$((?:\\\$|[^$\n])+?)(?<!\\)\$|\\\(([\s\S]+?)\\\)|\\\[([\s\S]+?)\\\]/g`
 * matches, in linear time: that regex rescans the rest of the text from every `\(`, `\[` or `$$`
 * that is never closed, which is quadratic on a completion made of openers.
 */
function mathSegments(text: string): [string, number][] {
  const out: [string, number][] = [];
  const closers = {
    "$": forwardFinder(text, "$$"),
    "(": forwardFinder(text, "\\)"),
    "[": forwardFinder(text, "\\]"),
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const next = text[i + 1];
    if ((ch === "$" && next === "$") || (ch === "\\" && (next === "(" || next === "["))) {
      // `$$…$$`, `\(…\)`, `\[…\]`: the first closer after at least one character. When there is
      // none, a `$$` cannot open a single-dollar segment either (its content cannot start with $).
      const j = closers[next as "$" | "(" | "["](i + 3);
      if (j >= 0) {
        out.push([text.slice(i + 2, j), j + 2]);
        i = j + 2;
        continue;
      }
    } else if (ch === "$" && text[i - 1] !== "\\" && text[i - 1] !== "$") {
      // `$…$` on one line: closed by the first `$` not escaped as `\$`, after at least one
      // character. Scanning stops at the line end, and no segment can start inside what it
      // scanned (every `$` there is escaped), so the scans do not overlap.
      let k = i + 1;
      while (k < text.length && text[k] !== "\n" && !(text[k] === "$" && text[k - 1] !== "\\")) k++;
      if (k < text.length && text[k] === "$" && k > i + 1) {
        out.push([text.slice(i + 1, k), k + 1]);
        i = k + 1;
        continue;
      }
    }
    i++;
  }
  return out;
}

/** Removes `\text{…}`-like groups so prose detection ignores units written in text mode. */
function withoutText(s: string): string {
  return s.replace(
    /\\(?:text|mbox|mathrm|textbf|textit|textnormal|operatorname|begin|end)\s*\{[^{}]*\}/g,
    "",
  );
}

/**
 * The last side of a computation chain whose earlier sides are constants (`2 + 3 = 5` → `5`);
 * anything with a variable before the last `=` stays whole (`x = 3`, `x^2/16 + y^2/12 = 1/4`).
 */
function finalEquationSide(s: string): string {
  const parts = splitTopLevelEquals(s);
  if (parts.length < 2) return s;
  const constant = (x: string) => !/[a-zA-Z]/.test(x.replace(/\\[a-zA-Z]+/g, ""));
  return parts.slice(0, -1).every(constant) ? parts.at(-1)!.trim() : s;
}

function splitTopLevelEquals(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "{" || ch === "(" || ch === "[") depth++;
    else if (ch === "}" || ch === ")" || ch === "]") depth--;
    else if (ch === "=" && depth === 0 && !/[<>!]/.test(s[i - 1] ?? "") && s[i + 1] !== "=") {
      out.push(s.slice(from, i));
      from = i + 1;
    }
  }
  out.push(s.slice(from));
  return out;
}

/**
 * The last inline or display math segment (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`) or the last number,
 * whichever ends later; of an equation chain such as `2+3 = 5` only the final side is kept.
 * Segments that read as prose (`$5 and $`) are ignored.
 *
 * @example Usage
 * ```ts
 * import { extractLastMath } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractLastMath("so $\\frac{1}{2} + \\frac{1}{2} = 1$ in total"), "1");
 * assert.equal(extractLastMath("we get $x = 3$"), "x = 3");
 * assert.equal(extractLastMath("it is $\\frac{3}{4}$ of 12, so 9 remain"), "9");
 * ```
 */
export function extractLastMath(text: string): string | null {
  let seg: { value: string; end: number } | null = null;
  for (const [raw, end] of mathSegments(text)) {
    const inner = raw.trim();
    if (inner === "" || /(?:^|[^\\a-zA-Z])[a-zA-Z]{3,}/.test(withoutText(inner))) continue;
    seg = { value: inner, end };
  }
  const num = lastNumberMatch(text);
  if (seg && (!num || seg.end >= num.end)) return finalEquationSide(seg.value);
  return num?.value ?? null;
}

/**
 * The last multiple-choice letter the text commits to: "answer is (C)", "option B", a standalone
 * `(B)`, or a line holding just `B`. Only used when the gold answer is a letter.
 *
 * @example Usage
 * ```ts
 * import { extractChoiceLetter } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractChoiceLetter("(A) fails, so I pick option C."), "C");
 * assert.equal(extractChoiceLetter("no letter here"), null);
 * ```
 */
export function extractChoiceLetter(text: string): string | null {
  return choiceAt(text)?.answer ?? null;
}

function choiceAt(text: string): Located | null {
  const patterns = [
    /\(([A-J])\)/g,
    /\b(?:answer|option|choice)\s*(?:is\s*)?:?\s*\(?([A-J])\)?(?![A-Za-z0-9])/gi,
    // Spaces and stars of one line only: `[\s*]*` would run across lines from every line start.
    /^(?:[^\S\n\r\u2028\u2029]|\*)*\(?([A-J])\)?[.)]?(?:[^\S\n\r\u2028\u2029]|\*)*$/gm,
    /(?:\$|\\\()\s*(?:\\text(?:bf)?\{\s*)?\(?([A-J])\)?\s*\}?\s*(?:\$|\\\))/g,
  ];
  let best: { letter: string; end: number; at: number } | null = null;
  for (const re of patterns) {
    for (const m of text.matchAll(re)) {
      const end = m.index + m[0].length;
      if (!best || end >= best.end) best = { letter: m[1]!.toUpperCase(), end, at: m.index };
    }
  }
  return best ? { answer: best.letter, at: best.at } : null;
}

/** Extraction result with a reason, for {@linkcode verifyMath}. */
export interface ExtractionReport {
  /** The extracted answer, or `null`. */
  extraction: Extraction | null;
  /** Why nothing was extracted (empty when something was). */
  reason: string;
}

/**
 * Like {@linkcode extractAnswer}, but says why nothing was found.
 *
 * @example Usage
 * ```ts
 * import { extractAnswerReport } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.match(extractAnswerReport("\\boxed{12").reason, /not closed/);
 * ```
 */
export function extractAnswerReport(text: string, options: ExtractOptions = {}): ExtractionReport {
  const body = options.stripThinking === false ? text : stripThinking(text);
  const strategies = options.strategies ?? DEFAULT_STRATEGIES;
  const rightmost = options.select === "rightmost";
  let best: (Located & { strategy: ExtractionStrategy }) | null = null;
  for (const strategy of strategies) {
    let found: Located | null = null;
    const fallback = strategy === "lastMath" || strategy === "lastNumber";
    if (rightmost && fallback && best) continue;
    switch (strategy) {
      case "boxed": {
        const scan = scanBoxes(body);
        if (scan.status === "unbalanced") {
          return {
            extraction: null,
            reason: "the last \\boxed{ is not closed (unbalanced braces)",
          };
        }
        if (scan.status === "found") found = { answer: scan.content, at: scan.start };
        break;
      }
      case "tag":
        found = tagAt(body);
        break;
      case "hash":
        found = hashAt(body);
        break;
      case "phrase":
        found = phraseAt(body);
        break;
      case "choice":
        found = choiceAt(body);
        break;
      case "lastMath": {
        const answer = extractLastMath(body);
        found = answer === null ? null : { answer, at: -1 };
        break;
      }
      case "lastNumber": {
        const answer = extractLastNumber(body);
        found = answer === null ? null : { answer, at: -1 };
        break;
      }
    }
    if (found === null || found.answer.trim() === "") continue;
    const candidate = { answer: found.answer.trim(), at: found.at, strategy };
    if (!rightmost || fallback) {
      return { extraction: { answer: candidate.answer, strategy }, reason: "" };
    }
    if (!best || candidate.at > best.at) best = candidate;
  }
  if (best) return { extraction: { answer: best.answer, strategy: best.strategy }, reason: "" };
  return { extraction: null, reason: `no answer found (tried ${strategies.join(", ")})` };
}

/**
 * Extracts the final answer from a completion with the first strategy that finds one, or `null`.
 *
 * @example Usage
 * ```ts
 * import { extractAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(extractAnswer("... so \\boxed{\\{1, 2\\}}."), {
 *   answer: "\\{1, 2\\}",
 *   strategy: "boxed",
 * });
 * assert.deepEqual(extractAnswer("#### 72"), { answer: "72", strategy: "hash" });
 * assert.equal(extractAnswer("42", { strategies: ["boxed"] }), null);
 * ```
 */
export function extractAnswer(text: string, options: ExtractOptions = {}): Extraction | null {
  return extractAnswerReport(text, options).extraction;
}

/**
 * The answer inside a gold field: its last box when it holds one (a MATH solution; boxes that
 * follow each other, `\boxed{1}, \boxed{2}`, together as a list), the text after `####` when it
 * has one (a GSM8K solution), else the whole trimmed text.
 *
 * @example Usage
 * ```ts
 * import { extractGold } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(extractGold("Thus $x = \\boxed{5}$."), "5");
 * assert.equal(extractGold("3 + 4 = 7\n#### 7"), "7");
 * assert.equal(extractGold(" \\frac{1}{2} "), "\\frac{1}{2}");
 * assert.equal(extractGold("$\\boxed{1}$ and $\\boxed{-2}$."), "1, -2");
 * ```
 */
export function extractGold(gold: string): string {
  const boxes = allBoxes(gold);
  if (boxes.length > 1) {
    // Consecutive boxes separated only by punctuation and "and"/"or" form one list.
    let k = boxes.length - 1;
    while (
      k > 0 &&
      /^[\s$,;.]*(?:(?:and|or)[\s$]*)?$/.test(gold.slice(boxes[k - 1]!.end, boxes[k]!.start))
    ) k--;
    if (k < boxes.length - 1) return boxes.slice(k).map((b) => b.content).join(", ");
  }
  return lastBoxed(gold) ?? extractHashAnswer(gold) ?? gold.trim();
}

/** Every closed, non-empty box, in order. */
function allBoxes(text: string): { content: string; start: number; end: number }[] {
  const out: { content: string; start: number; end: number }[] = [];
  const ends = braceEnds(text);
  for (const m of text.matchAll(/\\(?:boxed|fbox)\s*\{/g)) {
    if (out.length > 0 && m.index < out.at(-1)!.end) continue; // nested inside the previous box
    const open = m.index + m[0].length - 1;
    const end = ends.get(open) ?? -1;
    if (end < 0) continue;
    const content = text.slice(open + 1, end - 1).trim();
    if (content !== "") out.push({ content, start: m.index, end });
  }
  return out;
}
