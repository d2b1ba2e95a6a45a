/**
 * Answer normalisation: LaTeX clean-up ({@linkcode normalizeLatex}) and removal of the annotations
 * that do not change a value: units, degrees, currency, percent ({@linkcode normalizeAnswer}), and
 * of a leading `x =` ({@linkcode stripVariablePrefix}).
 *
 * Design decision: clean-up only rewrites spellings that cannot change the value (`\dfrac` →
 * `\frac`, `\left(` → `(`, `1{,}000` → `1000`, `\!` → nothing). Annotations are removed but
 * reported (`unit`, `percent`), so that the comparison can refuse `5 cm` against `5 m` and apply
 * its percent policy, instead of silently dropping information.
 *
 * @module
 */

const UNICODE: [RegExp, string][] = [
  [/[−–—]/g, "-"],
  [/×/g, "\\times "],
  [/[·⋅]/g, "\\cdot "],
  [/÷/g, "\\div "],
  [/√/g, "\\sqrt"],
  [/π/g, "\\pi "],
  [/∞/g, "\\infty "],
  [/≤/g, "\\le "],
  [/≥/g, "\\ge "],
  [/≠/g, "\\ne "],
  [/∪/g, "\\cup "],
  [/∩/g, "\\cap "],
  [/∈/g, "\\in "],
  [/∅/g, "\\emptyset "],
  [/°/g, "^\\circ "],
  [/[\u00a0\u2009\u202f]/g, " "],
  [/½/g, "\\frac{1}{2}"],
  [/⅓/g, "\\frac{1}{3}"],
  [/⅔/g, "\\frac{2}{3}"],
  [/¼/g, "\\frac{1}{4}"],
  [/¾/g, "\\frac{3}{4}"],
  [/⅕/g, "\\frac{1}{5}"],
  [/⅛/g, "\\frac{1}{8}"],
];

/** Reads the argument after a command at `i`: a brace group, a `\command`, or one character. */
function readArg(s: string, i: number): { arg: string; end: number } | null {
  while (s[i] === " ") i++;
  if (i >= s.length) return null;
  if (s[i] === "{") {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const ch = s[j];
      if (ch === "\\") {
        j++;
        continue;
      }
      if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) return { arg: s.slice(i + 1, j), end: j + 1 };
    }
    return null;
  }
  if (s[i] === "\\") {
    const m = /^\\[a-zA-Z]+|^\\./.exec(s.slice(i));
    return m ? { arg: m[0], end: i + m[0].length } : null;
  }
  return { arg: s[i]!, end: i + 1 };
}

/** Rewrites every `\name{arg}` (or `\name arg`) with `fn(arg)`; leaves malformed ones alone. */
function mapCommand(s: string, names: string, fn: (arg: string) => string): string {
  const re = new RegExp(String.raw`\\(?:${names})(?![a-zA-Z])`, "g");
  let out = "";
  let from = 0;
  for (const m of s.matchAll(re)) {
    if (m.index < from) continue;
    const a = readArg(s, m.index + m[0].length);
    if (!a) continue;
    out += s.slice(from, m.index) + fn(a.arg);
    from = a.end;
  }
  return out + s.slice(from);
}

/** `\frac12`, `\frac1{2}`, `\frac{1}2` → `\frac{1}{2}` (and the same for `\sqrt`). */
function braceArguments(s: string): string {
  let out = "";
  let from = 0;
  for (const m of s.matchAll(/\\(frac|binom|sqrt)(?![a-zA-Z])/g)) {
    if (m.index < from) continue;
    let i = m.index + m[0].length;
    let opt = "";
    if (m[1] === "sqrt") {
      const o = /^\s*\[([^\]]*)\]/.exec(s.slice(i));
      if (o) {
        opt = `[${o[1]}]`;
        i += o[0].length;
      }
    }
    const a = readArg(s, i);
    if (!a) continue;
    if (m[1] === "sqrt") {
      out += s.slice(from, m.index) + `\\sqrt${opt}{${braceArguments(a.arg)}}`;
      from = a.end;
      continue;
    }
    const b = readArg(s, a.end);
    if (!b) continue;
    out += s.slice(from, m.index) +
      `\\${m[1]}{${braceArguments(a.arg)}}{${braceArguments(b.arg)}}`;
    from = b.end;
  }
  return out + s.slice(from);
}

/** Strips one pair of outer math delimiters (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`), repeatedly. */
function stripDelimiters(s: string): string {
  for (;;) {
    const t = s.trim();
    const m = /^\$\$([\s\S]*)\$\$$/.exec(t) ?? /^\$([\s\S]*)\$$/.exec(t) ??
      /^\\\(([\s\S]*)\\\)$/.exec(t) ?? /^\\\[([\s\S]*)\\\]$/.exec(t);
    if (!m) return t;
    s = m[1]!;
  }
}

/**
 * Cleans up the spelling of a LaTeX (or plain) answer without changing its value: math
 * delimiters and `\boxed`, `\displaystyle`, `\left`/`\right` and sizing commands, spacing
 * (`\!`, `\,`, `\;`, `\quad`, `~`), `\dfrac`/`\tfrac`/`\cfrac` → `\frac`, braces for `\frac12` and
 * `\sqrt2`, text commands (`\textbf`, `\mbox`, `\mathrm` … → `\text`), thousands separators
 * (`1{,}000`, `1,\!000`, `1\,000`, `1,000,000` outside brackets), Unicode symbols, `\le`/`\ge`
 * spellings, `\{\}`/`\varnothing` → `\emptyset`, degrees as `^\circ`, percent as `\%`, and
 * trailing punctuation.
 *
 * @example Usage
 * ```ts
 * import { normalizeLatex } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeLatex("$\\displaystyle \\left( \\dfrac12, 1{,}000 \\right)$."), "(\\frac{1}{2}, 1000)");
 * assert.equal(normalizeLatex("x \\geqslant 2"), "x \\ge 2");
 * ```
 */
export function normalizeLatex(input: string): string {
  let s = input.replace(/\r\n?/g, "\n").trim();
  for (const [re, to] of UNICODE) s = s.replace(re, to);
  s = stripDelimiters(s.replace(/(?<=\$)\s*[.,;]+$/, ""));
  // \boxed / \fbox anywhere: keep the content.
  s = mapCommand(s, "boxed|fbox", (a) => a);
  s = stripDelimiters(s);
  s = s.replace(/(?<!\\)\$/g, " ");
  s = s.replace(/\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)(?![a-zA-Z])/g, " ");
  s = s.replace(/\\(?:left|right|[bB]igg?[lr]?|middle)(?![a-zA-Z])\s*\.?/g, "");
  s = s.replace(/\\lbrace(?![a-zA-Z])/g, "\\{").replace(/\\rbrace(?![a-zA-Z])/g, "\\}");
  s = s.replace(/\\langle(?![a-zA-Z])/g, "(").replace(/\\rangle(?![a-zA-Z])/g, ")");
  s = s.replace(/\\[lr]?vert(?![a-zA-Z])/g, "|");
  s = s.replace(/\\[dtc]frac(?![a-zA-Z])/g, "\\frac");
  s = mapCommand(
    s,
    "textbf|textit|textrm|textsf|texttt|textnormal|textup|mbox|mathrm|mathbf|mathit|mathsf|mathtt|hbox|emph",
    (a) => `\\text{${a}}`,
  );
  s = braceArguments(s);
  s = s.replace(/\*\*([^*]*)\*\*/g, "$1"); // Markdown bold
  s = plainMath(s);
  // Thousands separators written with LaTeX punctuation.
  s = s.replace(/(\d)\{,\}(?=\d{3}(?!\d))/g, "$1");
  s = s.replace(/(\d),\s*\\!\s*(?=\d{3}(?!\d))/g, "$1");
  s = s.replace(/(\d)(?:\\,|(?<!\\)\\ |~|\\;|\\:|\\!)(?=\d{3}(?!\d))/g, "$1");
  s = s.replace(/\{,\}/g, ",");
  // Spacing.
  // `\\` (a matrix row break) is kept; `\!` goes; the other spacing commands become a space.
  s = s.replace(
    /\\\\|\\!|\\(?:[,:; ]|(?:quad|qquad|enspace|thinspace|medspace|thickspace)(?![a-zA-Z]))/g,
    (m) => (m === "\\\\" ? m : m === "\\!" ? "" : " "),
  );
  s = s.replace(/\\hspace\*?\s*\{[^}]*\}/g, " ");
  s = s.replace(/~/g, " ");
  // Relations and symbols.
  s = s.replace(/\\(?:leqslant|leq|le)(?![a-zA-Z])/g, "\\le ");
  s = s.replace(/\\(?:geqslant|geq|ge)(?![a-zA-Z])/g, "\\ge ");
  s = s.replace(/\\(?:neq|ne)(?![a-zA-Z])/g, "\\ne ");
  s = s.replace(/\\lt(?![a-zA-Z])/g, "<").replace(/\\gt(?![a-zA-Z])/g, ">");
  s = s.replace(/<=/g, "\\le ").replace(/>=/g, "\\ge ").replace(/!=/g, "\\ne ");
  s = s.replace(/\\(?:infinity|infin)(?![a-zA-Z])/g, "\\infty");
  // `x = 1/3 \approx 0.33` states 1/3; a lone `x \approx 11` states 11.
  const approx = s.search(/\\approx(?![a-zA-Z])/);
  if (approx >= 0) {
    s = s.slice(0, approx).includes("=")
      ? s.slice(0, approx)
      : s.replace(/\\approx(?![a-zA-Z])/g, "=");
  }
  s = s.replace(/\\mathbb\s*\{?\s*R\s*\}?|\\R(?![a-zA-Z])/g, "(-\\infty, \\infty)");
  s = s.replace(/\\(?:varnothing)(?![a-zA-Z])/g, "\\emptyset");
  s = s.replace(/\\\{\s*\\\}/g, "\\emptyset");
  s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ(?![a-zA-Z])|\\degree(?![a-zA-Z])/g, "^\\circ ");
  s = s.replace(/(?<!\\)%/g, "\\%");
  // Plain "1,000,000" at top level (inside brackets a comma may separate coordinates).
  s = joinPlainThousands(s);
  // Whitespace and trailing punctuation.
  s = s.replace(/\s+/g, " ").trim();
  s = s.replace(/([([{]|\\\{) /g, "$1").replace(/ (?=[)\]}]|\\\})/g, "").replace(/ ,/g, ",");
  s = s.replace(/^\\text\{\s*\}|\\text\{\s*\}$/g, "").trim();
  for (;;) {
    const t = s.replace(/(?:\s|\\text\{\s*[.,;]?\s*\}|(?<!\\)[.,;:]|\\\.)+$/, "").trim();
    if (t === s) break;
    s = t;
  }
  s = s.replace(/^\+\s*(?=\\infty)/, "");
  return s;
}

/** Plain-text math spellings: `sqrt(2)` → `\\sqrt{2}`, `pi` → `\\pi`, `**` → `^`. */
function plainMath(s: string): string {
  s = s.replace(/\*\*/g, "^");
  s = s.replace(/(?<![\\a-zA-Z])pi(?![a-zA-Z])/g, "\\pi ");
  for (;;) {
    const m = /(?<![\\a-zA-Z])sqrt\s*\(/.exec(s);
    if (!m) return s;
    let depth = 0;
    let end = -1;
    for (let i = m.index + m[0].length - 1; i < s.length; i++) {
      if (s[i] === "(") depth++;
      else if (s[i] === ")" && --depth === 0) {
        end = i;
        break;
      }
    }
    if (end < 0) return s;
    s = s.slice(0, m.index) + `\\sqrt{${s.slice(m.index + m[0].length, end)}}` + s.slice(end + 1);
  }
}

function joinPlainThousands(s: string): string {
  const whole = /^(-?)(\d{1,3}(?:,\d{3})+)(\.\d+)?$/.exec(s.trim());
  if (whole) return whole[1] + whole[2]!.replace(/,/g, "") + (whole[3] ?? "");
  const spaced = /^(-?)(\d{1,3}(?: \d{3})+)(\.\d+)?$/.exec(s.trim());
  if (spaced) return spaced[1] + spaced[2]!.replace(/ /g, "") + (spaced[3] ?? "");
  // Inside a longer answer, join only numbers with two or more separators (1,000,000) at depth 0,
  // or one separator when the number is followed by a decimal part or a unit word.
  let depth = 0;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === "\\") {
      out += ch + (s[i + 1] ?? "");
      i++;
      continue;
    }
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    if (depth === 0 && /\d/.test(ch) && !/[\d.,]/.test(s[i - 1] ?? "")) {
      const m = /^\d{1,3}(?:,\d{3}){2,}(?![\d,])|^\d{1,3},\d{3}(?=\.\d|\s*(?:\\text|[a-zA-Z]{2}))/
        .exec(
          s.slice(i),
        );
      if (m) {
        out += m[0].replace(/,/g, "");
        i += m[0].length - 1;
        continue;
      }
    }
    out += ch;
  }
  return out;
}

/** Canonical unit names, keyed by every spelling we accept. */
const UNIT_ALIASES: Record<string, string> = {};
function alias(canonical: string, ...names: string[]): void {
  for (const n of [canonical, ...names]) UNIT_ALIASES[n] = canonical;
}
alias("mm", "millimeter", "millimeters", "millimetre", "millimetres");
alias("cm", "centimeter", "centimeters", "centimetre", "centimetres");
alias("m", "meter", "meters", "metre", "metres");
alias("km", "kilometer", "kilometers", "kilometre", "kilometres");
alias("in", "inch", "inches");
alias("ft", "foot", "feet");
alias("yd", "yard", "yards");
alias("mi", "mile", "miles");
alias("mg", "milligram", "milligrams");
alias("g", "gram", "grams");
alias("kg", "kilogram", "kilograms", "kgs");
alias("lb", "lbs", "pound", "pounds");
alias("oz", "ounce", "ounces");
alias("ml", "mL", "milliliter", "milliliters", "millilitre", "millilitres");
alias("l", "L", "liter", "liters", "litre", "litres");
alias("gal", "gallon", "gallons");
alias("s", "sec", "secs", "second", "seconds");
alias("min", "mins", "minute", "minutes");
alias("h", "hr", "hrs", "hour", "hours");
alias("day", "days");
alias("week", "weeks");
alias("month", "months");
alias("year", "years", "yr", "yrs");
alias("mph", "miles per hour");
alias("km/h", "kph", "kmh", "kilometers per hour");
alias("m/s", "meters per second");
alias("dollar", "dollars", "usd", "$", "\\$");
alias("cent", "cents");
alias("euro", "euros", "eur", "€");
alias("degree", "degrees", "deg", "^\\circ");
alias("radian", "radians", "rad");
alias("unit", "units");
alias("percent", "percents");

const SINGLE_LETTER_UNITS = new Set(["m", "g", "s", "h", "l", "L"]);

/** Units that stand for "whatever the problem's unit is" and match any unit. */
const GENERIC_UNITS = new Set(["unit", "unit^2", "unit^3"]);

/**
 * Canonical form of a unit spelling (`"Meters"` → `"m"`, `"square feet"` → `"ft^2"`); unknown
 * words are lower-cased and singularised (`"apples"` → `"apple"`).
 *
 * @example Usage
 * ```ts
 * import { canonicalUnit } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(canonicalUnit("Meters"), "m");
 * assert.equal(canonicalUnit("square feet"), "ft^2");
 * assert.equal(canonicalUnit("\\text{cm}^3"), "cm^3");
 * ```
 */
export function canonicalUnit(raw: string): string {
  let u = raw.trim().replace(/\s+/g, " ").replace(/\.$/, "");
  let power = "";
  const sq = /^(?:square|sq\.?)\s+(.+)$/i.exec(u);
  const cu = /^(?:cubic|cu\.?)\s+(.+)$/i.exec(u);
  const pw = /^(.+?)\s*\^\s*\{?\s*([23])\s*\}?$/.exec(u);
  if (sq) [u, power] = [sq[1]!, "^2"];
  else if (cu) [u, power] = [cu[1]!, "^3"];
  else if (pw) [u, power] = [pw[1]!, `^${pw[2]}`];
  u = u.replace(/^\\text\{(.*)\}$/, "$1").trim();
  const base = UNIT_ALIASES[u] ?? UNIT_ALIASES[u.toLowerCase()] ??
    (u.length > 3 && /s$/i.test(u) ? u.slice(0, -1).toLowerCase() : u.toLowerCase());
  return base + power;
}

/**
 * Whether two canonical units can describe the same quantity: equal, or one of them is the
 * generic `unit` (`5 square units` matches `5 cm^2`).
 *
 * @example Usage
 * ```ts
 * import { unitsCompatible } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(unitsCompatible("cm", "cm"));
 * assert.ok(unitsCompatible("unit^2", "cm^2"));
 * assert.ok(!unitsCompatible("cm", "m"));
 * ```
 */
export function unitsCompatible(a: string, b: string): boolean {
  if (a === b) return true;
  if (GENERIC_UNITS.has(a) || GENERIC_UNITS.has(b)) {
    const pa = /\^([23])$/.exec(a)?.[1] ?? "";
    const pb = /\^([23])$/.exec(b)?.[1] ?? "";
    return pa === pb || a === "unit" || b === "unit";
  }
  return false;
}

/** A normalised answer with its annotations taken off. */
export interface NormalizedAnswer {
  /** The value, as cleaned-up LaTeX without unit, degree, currency or percent marks. */
  value: string;
  /** The canonical unit that was removed (`"cm"`, `"degree"`, `"dollar"`, `"ft^2"`), or `null`. */
  unit: string | null;
  /** Whether a percent mark (`\%`, `%`, "percent") was removed. */
  percent: boolean;
}

/** Words that qualify a number rather than name a unit: `5 or more` is not 5. */
const QUALIFIER =
  /\b(?:or|and|more|less|fewer|least|most|than|not|no|none|only|about|approx|approximately|roughly|nearly|almost|over|under|above|below|plus|minus|times|if|when|otherwise|both|either|neither)\b/i;

const KNOWN_UNIT_WORD = new RegExp(
  String.raw`^(?:square\s+|sq\.?\s+|cubic\s+)?(?:${
    Object.keys(UNIT_ALIASES)
      .filter((k) => /^[a-zA-Z/ ]+$/.test(k) && k.length >= 2)
      .sort((a, b) => b.length - a.length)
      .map((k) => k.replace(/\//g, "\\/"))
      .join("|")
  })(?:\s*\^\s*\{?[23]\}?)?$`,
  "i",
);

/**
 * Normalises an answer ({@linkcode normalizeLatex}) and removes its annotations: a trailing unit
 * (`\text{ cm}`, `\mbox{meters}`, `cm^2`, `square units`, plain words after a number such as
 * `5 apples`), degrees (`^\circ`), currency (`\$`), and percent (`\%`, `percent`). The removed
 * unit and percent are reported.
 *
 * @example Usage
 * ```ts
 * import { normalizeAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.deepEqual(normalizeAnswer("\\$1,000.50"), { value: "1000.50", unit: "dollar", percent: false });
 * assert.deepEqual(normalizeAnswer("90^{\\circ}"), { value: "90", unit: "degree", percent: false });
 * assert.deepEqual(normalizeAnswer("12\\text{ cm}^2"), { value: "12", unit: "cm^2", percent: false });
 * assert.deepEqual(normalizeAnswer("28 percent"), { value: "28", unit: null, percent: true });
 * ```
 */
export function normalizeAnswer(input: string): NormalizedAnswer {
  let s = normalizeLatex(input);
  let unit: string | null = null;
  let percent = false;
  const setUnit = (u: string) => {
    if (unit === null) unit = canonicalUnit(u);
  };
  for (let pass = 0; pass < 4; pass++) {
    const before = s;
    // Percent.
    const pct = /^(.+?)\s*(?:\\%|\\text\{\s*(?:\\%|percent)\s*\}|\bpercent(?:age)?\b|\bpct\b)$/i
      .exec(s);
    if (pct) {
      s = pct[1]!.trim();
      percent = true;
    }
    // Currency.
    const cur = /^\\\$\s*(.+)$/.exec(s) ?? /^(.+?)\s*\\\$$/.exec(s);
    if (cur) {
      s = cur[1]!.trim();
      setUnit("dollar");
    }
    // Degrees (all occurrences, only when the rest is a plain value).
    if (/\^\\circ/.test(s)) {
      const t = s.replace(/\s*\^\\circ\s*(?:\\text\{\s*[CF]\s*\}|[CF](?![a-zA-Z]))?/g, "").trim();
      if (t !== "" && !/\\circ/.test(t)) {
        s = t;
        setUnit("degree");
      }
    }
    // A trailing \text{unit} (optionally squared).
    const txt = /^(.*?\S)\s*\\text\{([^{}]*)\}\s*(\^\s*\{?\s*[23]\s*\}?)?$/.exec(s);
    if (
      txt && /^[\sa-zA-Z./^0-9]*[a-zA-Z][\sa-zA-Z./^0-9]*$/.test(txt[2]!) && !/[=<>]$/.test(txt[1]!)
    ) {
      const words = txt[2]!.trim();
      if (!QUALIFIER.test(words) || KNOWN_UNIT_WORD.test(words)) {
        s = txt[1]!.trim();
        setUnit(words + (txt[3] ? txt[3].replace(/[\s{}]/g, "") : ""));
      }
    }
    // Plain unit words after a number or a closing group.
    const plain = /^(.*?[\d})])\s*((?:[a-zA-Z]+\.?)(?:\s+[a-zA-Z]+)*(?:\s*\^\s*\{?[23]\}?)?)$/.exec(
      s,
    );
    if (plain && !/\\[a-zA-Z]*$/.test(plain[1]!)) {
      const words = plain[2]!;
      const spaced = /\s$/.test(s.slice(0, s.length - words.length));
      const known = KNOWN_UNIT_WORD.test(words);
      const single = SINGLE_LETTER_UNITS.has(words) && spaced;
      const prose = spaced && /^[a-zA-Z]{3,}(?:\s+[a-zA-Z]+)*$/.test(words) &&
        /\d$/.test(plain[1]!) && !QUALIFIER.test(words);
      if ((known && (words.length >= 2 || single)) || single || prose) {
        s = plain[1]!.trim();
        setUnit(words);
      }
    }
    if (s === before) break;
  }
  return { value: s, unit, percent };
}

/** A variable name on the left of `=`: `x`, `x_1`, `\theta`, `f(x)`, `k'`. */
const SIMPLE_VAR =
  /^(?:[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?'*|\\(?:alpha|beta|gamma|delta|theta|lambda|mu|phi|psi|omega|rho|sigma|tau)|[A-Za-z]\s*\(\s*[A-Za-z]\s*\))$/;

/**
 * Whether `s` is a plain variable name as it appears left of `=`: `x`, `x_1`, `\theta`, `f(x)`.
 *
 * @example Usage
 * ```ts
 * import { isSimpleVariable } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.ok(isSimpleVariable("x_1"));
 * assert.ok(!isSimpleVariable("2x"));
 * ```
 */
export function isSimpleVariable(s: string): boolean {
  return SIMPLE_VAR.test(s.trim());
}

/**
 * Removes a leading `x =` / `y=` / `f(x) =` when the left side is a plain variable and there is
 * exactly one top-level `=`; returns the input unchanged otherwise.
 *
 * @example Usage
 * ```ts
 * import { stripVariablePrefix } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(stripVariablePrefix("x = -3"), "-3");
 * assert.equal(stripVariablePrefix("2x = 6"), "2x = 6");
 * ```
 */
export function stripVariablePrefix(s: string): string {
  const m = /^([^=<>]+?)\s*=\s*([^=]+)$/.exec(s.trim());
  if (!m || !isSimpleVariable(m[1]!)) return s;
  return m[2]!.trim();
}
