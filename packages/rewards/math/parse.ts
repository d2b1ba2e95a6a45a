/**
 * Structural parsing of an answer into a small value tree ({@linkcode MathValue}): choice letters,
 * text, the empty set, sets `\{…\}`, bracket groups (tuples, points and intervals), bare lists,
 * unions, matrices, `±`, equations, relations (single-variable ones become intervals) and scalar
 * leaves that keep their unit and percent annotations.
 *
 * Design decision: structure is read here, with bracket-aware splitting, before any CAS sees the
 * text. A CAS reads `1,000` as a tuple and `(1,2]` as an error; deciding the shape first keeps
 * these decisions explicit and lets the comparison refuse shape mismatches (a tuple is never a
 * set, `[1,2)` is never `(1,2)`).
 *
 * @module
 */

import { isSimpleVariable, normalizeAnswer, normalizeLatex } from "./normalize.ts";

/** Relation operators after canonicalisation (`>`/`\ge` chains are reversed). */
export type RelationOp = "<" | "\\le" | "\\ne";

/** A parsed answer. */
export type MathValue =
  | { readonly kind: "choice"; readonly letter: string }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "empty" }
  | {
    readonly kind: "scalar";
    /** Cleaned-up LaTeX of the value. */
    readonly latex: string;
    /** Canonical unit removed from it, or `null`. */
    readonly unit: string | null;
    /** Whether a percent mark was removed. */
    readonly percent: boolean;
  }
  | { readonly kind: "equation"; readonly lhs: string; readonly rhs: string }
  | {
    readonly kind: "relation";
    /** Operands, in increasing order (`a < b ≤ c`). */
    readonly parts: readonly string[];
    /** Operators between consecutive parts. */
    readonly ops: readonly RelationOp[];
  }
  | {
    readonly kind: "group";
    /** `(` or `[`. */
    readonly open: "(" | "[";
    /** `)` or `]`. */
    readonly close: ")" | "]";
    readonly items: readonly MathValue[];
    /** The variable, when the interval was written as an inequality (`x > 2`). */
    readonly variable?: string;
  }
  | { readonly kind: "set"; readonly items: readonly MathValue[] }
  | { readonly kind: "list"; readonly items: readonly MathValue[] }
  | { readonly kind: "union"; readonly items: readonly MathValue[] }
  | { readonly kind: "matrix"; readonly rows: readonly (readonly MathValue[])[] };

const OPEN = new Set(["(", "[", "{"]);
const CLOSE = new Set([")", "]", "}"]);

/**
 * Splits `s` at every top-level occurrence of `sep` (outside `()`, `[]`, `{}`, `\{\}` and
 * `\begin…\end`). `sep` is a literal string such as `","` or `"\\cup"`.
 *
 * @example Usage
 * ```ts
 * import { splitTopLevel } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(splitTopLevel("(1,2),\\{3,4\\},5", ","), ["(1,2)", "\\{3,4\\}", "5"]);
 * ```
 */
export function splitTopLevel(s: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  const isWord = /^\\[a-zA-Z]+$/.test(sep);
  for (let i = 0; i < s.length; i++) {
    if (
      depth === 0 && s.startsWith(sep, i) && !(isWord && /[a-zA-Z]/.test(s[i + sep.length] ?? ""))
    ) {
      out.push(s.slice(from, i));
      i += sep.length - 1;
      from = i + 1;
      continue;
    }
    const ch = s[i]!;
    if (ch === "\\") {
      const next = s[i + 1] ?? "";
      if (next === "{") depth++;
      else if (next === "}") depth--;
      else if (s.startsWith("\\begin{", i)) depth++;
      else if (s.startsWith("\\end{", i)) depth--;
      i++;
      continue;
    }
    if (OPEN.has(ch)) depth++;
    else if (CLOSE.has(ch)) depth--;
  }
  out.push(s.slice(from));
  return out;
}

/** Index of the bracket closing the opener at 0 (any of `([{` / `\{` closes with any of `)]}`). */
function matchingClose(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === "\\") {
      const next = s[i + 1] ?? "";
      if (next === "{") depth++;
      else if (next === "}" && --depth === 0) return i;
      i++;
      continue;
    }
    if (OPEN.has(ch)) depth++;
    else if (CLOSE.has(ch) && --depth === 0) return i;
  }
  return -1;
}

const CHOICE_PATTERNS = [
  /^\(?([A-J])\)?$/,
  /^\\text\{\s*\(?([A-J])\)?\s*\}$/,
  /^(?:[Oo]ption|[Cc]hoice|[Aa]nswer)\s*:?\s*\(?([A-J])\)?$/,
  /^\(([A-J])\)\s*(\S.*)$/,
  /^([A-J])[.):]\s+(\S.*)$/,
  /^\\text\{\s*\(([A-J])\)([^{}]*)\}(.*)$/,
  /^\\text\{\s*\(?([A-J])\)?\s*\}\s*(\S.*)$/,
];

/** Text after a letter that names another option (`(A) or (B)`, `A. 3, B`) voids the choice. */
const OTHER_CHOICE = /\([A-J]\)|(?<![A-Za-z\\])[A-J](?![A-Za-z])|\b(?:or|and)\b/;

/**
 * The multiple-choice letter an answer names (`A`, `(B)`, `\text{(C)}`, `option D`, `(E) 12`),
 * or `null`.
 *
 * @example Usage
 * ```ts
 * import { parseChoice } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(parseChoice("\\textbf{(B)}"), "B");
 * assert.equal(parseChoice("option c"), null); // lowercase letters are variables
 * assert.equal(parseChoice("12"), null);
 * ```
 */
export function parseChoice(answer: string): string | null {
  const s = normalizeLatex(answer).replace(/\*+/g, "").trim();
  if ((s.match(/\(/g) ?? []).length !== (s.match(/\)/g) ?? []).length) return null;
  for (const re of CHOICE_PATTERNS) {
    const m = re.exec(s);
    if (m && !OTHER_CHOICE.test(m.slice(2).join(" "))) return m[1]!;
  }
  return null;
}

const TEXT_WORDS = new Set([
  "yes",
  "no",
  "true",
  "false",
  "odd",
  "even",
  "none",
  "neither",
  "both",
  "undefined",
  "impossible",
  "never",
  "always",
]);

function textLike(s: string): boolean {
  return /^[A-Za-z]+(?:[\s'-]+[A-Za-z]+)+$/.test(s) || /^[A-Za-z]{3,}$/.test(s) ||
    TEXT_WORDS.has(s.toLowerCase());
}

/** Text answers that name a set of numbers. */
const TEXT_SETS: Record<string, string> = {
  "all real numbers": "(-\\infty, \\infty)",
  "all reals": "(-\\infty, \\infty)",
  "real numbers": "(-\\infty, \\infty)",
  "no solution": "\\emptyset",
  "no solutions": "\\emptyset",
  "no real solutions": "\\emptyset",
};

/** A text answer, or the set it names. */
function textValue(raw: string, depth: number): MathValue {
  const text = canonicalText(raw);
  const set = TEXT_SETS[text];
  return set === undefined ? { kind: "text", text } : parseAt(set, depth + 1);
}

/** Lower-cased words of a text answer, without articles and punctuation. */
function canonicalText(s: string): string {
  return s.toLowerCase().replace(/\\text\{([^{}]*)\}/g, "$1").replace(/\s+/g, " ").trim()
    .replace(/[.!]+$/, "").replace(/^(?:the|a|an) /, "").trim();
}

/** Splits at top-level relation operators; `null` when there is none. */
function splitRelation(s: string): { parts: string[]; ops: string[] } | null {
  const parts: string[] = [];
  const ops: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (depth === 0) {
      const m = /^(?:\\le|\\ge|\\ne)(?![a-zA-Z])|^[<>]/.exec(s.slice(i));
      if (m) {
        parts.push(s.slice(from, i).trim());
        ops.push(m[0]);
        i += m[0].length - 1;
        from = i + 1;
        continue;
      }
    }
    if (ch === "\\") {
      const next = s[i + 1] ?? "";
      if (next === "{") depth++;
      else if (next === "}") depth--;
      i++;
      continue;
    }
    if (OPEN.has(ch)) depth++;
    else if (CLOSE.has(ch)) depth--;
  }
  if (ops.length === 0) return null;
  parts.push(s.slice(from).trim());
  return parts.some((p) => p === "") ? null : { parts, ops };
}

/** Whether a LaTeX operand has no letters other than in commands (`\pi`, `\sqrt`, `\infty`). */
function isConstantLatex(s: string): boolean {
  return !/[a-zA-Z]/.test(s.replace(/\\[a-zA-Z]+/g, ""));
}

function relationValue(parts: string[], ops: string[]): MathValue | null {
  if (ops.includes("\\ne")) {
    if (ops.length !== 1) return null;
    // `x \ne 3`: the variable first when there is one.
    const [a, b] = parts as [string, string];
    const swap = isSimpleVariable(b) && !isSimpleVariable(a);
    return { kind: "relation", parts: swap ? [b, a] : [a, b], ops: ["\\ne"] };
  }
  const up = ops.every((o) => o === "<" || o === "\\le");
  const down = ops.every((o) => o === ">" || o === "\\ge");
  if (!up && !down) return null;
  let p = parts;
  let o: RelationOp[] = ops.map((x) => (x === "<" || x === ">" ? "<" : "\\le"));
  if (down) {
    p = [...parts].reverse();
    o = [...o].reverse();
  }
  const strict = (op: RelationOp) => op === "<";
  // Single-variable relations are intervals.
  if (p.length === 2 && isSimpleVariable(p[0]!) && isConstantLatex(p[1]!)) {
    return interval("-\\infty", p[1]!, false, !strict(o[0]!), p[0]!);
  }
  if (p.length === 2 && isSimpleVariable(p[1]!) && isConstantLatex(p[0]!)) {
    return interval(p[0]!, "\\infty", !strict(o[0]!), false, p[1]!);
  }
  if (
    p.length === 3 && isSimpleVariable(p[1]!) && isConstantLatex(p[0]!) &&
    isConstantLatex(p[2]!)
  ) {
    return interval(p[0]!, p[2]!, !strict(o[0]!), !strict(o[1]!), p[1]!);
  }
  return { kind: "relation", parts: p, ops: o };
}

function interval(
  lo: string,
  hi: string,
  loClosed: boolean,
  hiClosed: boolean,
  variable: string,
): MathValue {
  return {
    kind: "group",
    open: loClosed ? "[" : "(",
    close: hiClosed ? "]" : ")",
    items: [parseAnswer(lo), parseAnswer(hi)],
    variable: variable.replace(/\s+/g, ""),
  };
}

function parseMatrix(s: string): MathValue | null {
  const m = /^\\begin\{([pbBvV]?matrix|array)\}(?:\{[^{}]*\})?([\s\S]*)\\end\{\1\}$/.exec(s);
  if (!m) return null;
  const rows = splitTopLevel(m[2]!, "\\\\").map((r) => r.trim()).filter((r) => r !== "");
  const cells = rows.map((r) => splitTopLevel(r, "&").map((c) => parseAnswer(c)));
  if (cells.length === 0 || cells.some((r) => r.length !== cells[0]!.length)) return null;
  return { kind: "matrix", rows: cells };
}

const MAX_DEPTH = 12;

/**
 * Parses an answer string (raw or LaTeX) into a {@linkcode MathValue} tree.
 *
 * @example Usage
 * ```ts
 * import { parseAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(parseAnswer("[1, 2)").kind, "group");
 * assert.equal(parseAnswer("\\{1,2\\}").kind, "set");
 * assert.equal(parseAnswer("x > 2").kind, "group"); // (2, ∞)
 * assert.deepEqual(parseAnswer("5\\text{ cm}"), { kind: "scalar", latex: "5", unit: "cm", percent: false });
 * ```
 */
export function parseAnswer(answer: string): MathValue {
  return parseAt(answer, 0);
}

function parseAt(answer: string, depth: number): MathValue {
  const s0 = normalizeLatex(answer);
  if (depth > MAX_DEPTH) return { kind: "text", text: s0 };
  const recur = (x: string) => parseAt(x, depth + 1);
  if (s0 === "") return { kind: "text", text: "" };
  const letter = depth === 0 ? parseChoice(s0) : null;
  if (letter) return { kind: "choice", letter };
  if (s0 === "\\emptyset") return { kind: "empty" };
  let s = s0.replace(/^[A-Za-z]\s*\\in\s*/, "");
  // Word separators between items.
  s = s.replace(/\s*,?\s*\\text\{\s*(?:and|or)\s*\}\s*/g, ", ");
  if (!/\\text\{/.test(s)) s = s.replace(/\s*,?\s+(?:and|or)\s+/g, ", ");
  const unions = splitTopLevel(s, "\\cup");
  if (unions.length > 1) return { kind: "union", items: unions.map((u) => recur(u.trim())) };
  const items = splitTopLevel(s, ",").flatMap((x) => splitTopLevel(x, ";")).map((x) => x.trim());
  if (items.length > 1) {
    if (items.some((x) => x === "")) return { kind: "text", text: s };
    return { kind: "list", items: flatten(items.map(recur)) };
  }
  for (const pm of ["\\pm", "\\mp"]) {
    const halves = splitTopLevel(s, pm);
    if (halves.length === 2) {
      const [a, b] = halves.map((x) => x.trim()) as [string, string];
      const plus = a === "" ? b : `${a}+${wrap(b)}`;
      const minus = a === "" ? `-${wrap(b)}` : `${a}-${wrap(b)}`;
      return { kind: "list", items: [recur(plus), recur(minus)] };
    }
  }
  const matrix = parseMatrix(s);
  if (matrix) return matrix;
  if (s.startsWith("\\{") && s.endsWith("\\}") && matchingClose(s) === s.length - 2) {
    const inner = s.slice(2, -2).trim();
    if (inner === "") return { kind: "empty" };
    // Set-builder notation `\{x \mid x > 2\}` is its condition.
    const builder = /^([A-Za-z])\s*(?:\\mid|\||:)\s*(.+)$/.exec(inner);
    if (builder && new RegExp(`(?<![A-Za-z\\\\])${builder[1]}(?![A-Za-z])`).test(builder[2]!)) {
      const cond = recur(builder[2]!);
      if (cond.kind === "group" || cond.kind === "union") return cond;
    }
    const parts = splitTopLevel(inner, ",").map((x) => x.trim());
    return { kind: "set", items: flatten(parts.map(recur)) };
  }
  if ((s[0] === "(" || s[0] === "[") && (s.endsWith(")") || s.endsWith("]"))) {
    if (matchingClose(s) === s.length - 1) {
      const inner = s.slice(1, -1).trim();
      const parts = splitTopLevel(inner, ",").map((x) => x.trim());
      if (parts.length === 1 && s[0] === "(" && s.endsWith(")")) return recur(inner);
      if (parts.length === 1 && /^\\begin\{/.test(inner)) return recur(inner);
      if (parts.some((x) => x === "")) return { kind: "text", text: s };
      return {
        kind: "group",
        open: s[0] as "(" | "[",
        close: s.at(-1) as ")" | "]",
        items: parts.map(recur),
      };
    }
  }
  const rel = splitRelation(s);
  if (rel) return relationValue(rel.parts, rel.ops) ?? { kind: "text", text: s };
  const eq = splitTopLevel(s, "=").map((x) => x.trim());
  if (eq.length >= 2 && eq.every((x) => x !== "")) {
    const lhs = eq[0]!;
    // `2 + 3 = 5` states a value: keep its last side.
    if (eq.every(isConstantLatex)) return recur(eq.at(-1)!);
    if (eq.length === 2 || isSimpleVariable(lhs)) return { kind: "equation", lhs, rhs: eq.at(-1)! };
    return recur(eq.at(-1)!);
  }
  const whole = /^\\text\{([^{}]*)\}$/.exec(s);
  if (whole && /^\s*[-+.\d]/.test(whole[1]!)) return recur(whole[1]!);
  if (whole && /[a-zA-Z]{2,}/.test(whole[1]!)) {
    return textValue(whole[1]!, depth);
  }
  const norm = normalizeAnswer(s);
  let value = norm.value.replace(/\\text\{([^{}]*)\}/g, "$1").trim();
  if (value === "") return { kind: "text", text: canonicalText(s) };
  if (value !== s && /^[([]|^\\\{/.test(value) && (norm.unit || norm.percent)) {
    // "(1, 2) cm": the annotation was around a structure.
    const inner = recur(value);
    if (inner.kind !== "scalar") return inner;
  }
  if (textLike(value)) return textValue(value, depth);
  value = value.replace(/^\((-?[\d.]+)\)$/, "$1");
  return { kind: "scalar", latex: value, unit: norm.unit, percent: norm.percent };
}

/** Items of a collection with the pairs of a `±` item spliced in (`\{1 \pm 2, 5\}`). */
function flatten(items: MathValue[]): MathValue[] {
  return items.flatMap((x) => (x.kind === "list" ? [...x.items] : [x]));
}

/** Parenthesises a summand unless it is a single token. */
function wrap(s: string): string {
  return /^[\w.\\{}]+$/.test(s) && !/[+-]/.test(s) ? s : `(${s})`;
}
