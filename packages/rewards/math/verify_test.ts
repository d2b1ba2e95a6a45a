import assert from "node:assert/strict";
import fc from "fast-check";
import { MATH_CASES } from "./cases_test_data.ts";
import { lastBoxed } from "./extract.ts";
import { verifyMath } from "./verify.ts";

/** Recall the table reaches today; raise it when false negatives are fixed. */
const RECALL_THRESHOLD = 0.98;

Deno.test("verifyMath: acceptance table (precision must be 1.0)", () => {
  assert.ok(MATH_CASES.length >= 300, `table has ${MATH_CASES.length} cases`);
  let tp = 0, fp = 0, fn = 0, tn = 0;
  const falsePositives: string[] = [];
  const falseNegatives: string[] = [];
  const perCategory = new Map<string, { n: number; ok: number }>();
  for (const c of MATH_CASES) {
    const r = verifyMath(c.completion, c.gold, c.options);
    const stats = perCategory.get(c.category) ?? { n: 0, ok: 0 };
    stats.n++;
    if (r.correct === c.expected) stats.ok++;
    perCategory.set(c.category, stats);
    const line = `[${c.category}] gold=${JSON.stringify(c.gold)} completion=${
      JSON.stringify(c.completion)
    } extracted=${JSON.stringify(r.extracted)}: ${r.reason}`;
    if (r.correct && c.expected) tp++;
    else if (r.correct && !c.expected) {
      fp++;
      falsePositives.push(line);
    } else if (!r.correct && c.expected) {
      fn++;
      falseNegatives.push(line);
    } else tn++;
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp / (tp + fn);
  console.log(
    `math verifier table: ${MATH_CASES.length} cases (${tp + fn} correct, ${fp + tn} wrong); ` +
      `TP=${tp} FP=${fp} FN=${fn} TN=${tn}; precision=${precision.toFixed(4)} recall=${
        recall.toFixed(4)
      }`,
  );
  for (const [cat, s] of perCategory) console.log(`  ${cat}: ${s.ok}/${s.n}`);
  for (const l of falseNegatives) console.log(`  false negative: ${l}`);
  for (const l of falsePositives) console.log(`  FALSE POSITIVE: ${l}`);
  assert.equal(fp, 0, `false positives:\n${falsePositives.join("\n")}`);
  assert.equal(precision, 1);
  assert.ok(recall >= RECALL_THRESHOLD, `recall ${recall} < ${RECALL_THRESHOLD}`);
});

/** Ways of writing an integer. */
function integerForms(n: bigint): string[] {
  const abs = n < 0n ? -n : n;
  const sign = n < 0n ? "-" : "";
  const grouped = abs.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const forms = [
    n.toString(),
    `${sign}${grouped}`,
    `${sign}${abs.toString().replace(/\B(?=(\d{3})+(?!\d))/g, "{,}")}`,
    `${n}.0`,
    `\\frac{${2n * n}}{2}`,
    `x = ${n}`,
    `\\text{${n}}`,
    `${sign}\\frac{${3n * abs}}{3}`,
    n >= 0n ? `+${n}` : `(${n})`,
  ];
  if (n >= 0n) forms.push(`\\$${grouped}`, `${grouped} \\text{ dollars}`);
  if (n % 1000n === 0n && n !== 0n) forms.push(`${n / 1000n}\\times10^{3}`, `${n / 1000n}e3`);
  return forms;
}

Deno.test("verifyMath: an integer written several ways equals itself and not itself + 1", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }),
        fc.bigInt({ min: -50n, max: 50n }),
      ),
      fc.nat(),
      fc.nat(),
      (n, i, j) => {
        const forms = integerForms(n);
        const gold = forms[i % forms.length]!;
        const pred = forms[j % forms.length]!;
        const ok = verifyMath(`so \\boxed{${pred}}`, gold);
        assert.ok(ok.correct, `${pred} vs ${gold}: ${ok.reason}`);
        const next = integerForms(n + 1n)[j % forms.length] ?? String(n + 1n);
        const bad = verifyMath(`so \\boxed{${next}}`, gold);
        assert.ok(!bad.correct, `${next} vs ${gold}: ${bad.reason}`);
      },
    ),
    { numRuns: 300 },
  );
});

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** Ways of writing p/q (q > 1). */
function fractionForms(p: bigint, q: bigint): string[] {
  const neg = p < 0n;
  const a = neg ? -p : p;
  const s = neg ? "-" : "";
  const forms = [
    `${s}\\frac{${a}}{${q}}`,
    `\\frac{${p}}{${q}}`,
    `${p}/${q}`,
    `${s}\\dfrac{${a}}{${q}}`,
    `${s}\\tfrac{${a}}{${q}}`,
    `\\frac{${3n * p}}{${3n * q}}`,
    `${s}\\left(\\frac{${a}}{${q}}\\right)`,
  ];
  // A terminating decimal, written exactly.
  let d = q / gcd(p, q);
  let twos = 0;
  let fives = 0;
  while (d % 2n === 0n) [d, twos] = [d / 2n, twos + 1];
  while (d % 5n === 0n) [d, fives] = [d / 5n, fives + 1];
  if (d === 1n) {
    const places = Math.max(twos, fives, 1);
    const scaled = (a * 10n ** BigInt(places)) / q;
    const str = scaled.toString().padStart(places + 1, "0");
    forms.push(`${s}${str.slice(0, -places)}.${str.slice(-places)}`);
  }
  // A mixed number.
  if (!neg && a > q && a % q !== 0n) forms.push(`${a / q}\\frac{${a % q}}{${q}}`);
  return forms;
}

Deno.test("verifyMath: a fraction written several ways equals itself, not itself + 1 or (p+1)/q", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(10n ** 9n), max: 10n ** 9n }),
      // q ≤ 10^5 keeps (p+1)/q more than the 1e-6 absolute tolerance away from p/q.
      fc.bigInt({ min: 2n, max: 10n ** 5n }),
      fc.nat(),
      fc.nat(),
      (p, q, i, j) => {
        const forms = fractionForms(p, q);
        const gold = forms[i % forms.length]!;
        const pred = forms[j % forms.length]!;
        const ok = verifyMath(`\\boxed{${pred}}`, gold);
        assert.ok(ok.correct, `${pred} vs ${gold}: ${ok.reason}`);
        for (const [pp, qq] of [[p + q, q], [p + 1n, q]] as const) {
          const wrong = fractionForms(pp, qq);
          const w = wrong[j % wrong.length]!;
          const bad = verifyMath(`\\boxed{${w}}`, gold);
          assert.ok(!bad.correct, `${w} vs ${gold}: ${bad.reason}`);
        }
      },
    ),
    { numRuns: 300 },
  );
});

/** Random brace-balanced LaTeX-ish content. */
const balanced: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.stringMatching(/^[a-z0-9+\-= ^_]{1,6}$/),
    fc.tuple(tie("node"), tie("node")).map(([a, b]) => `${a}{${b}}`),
    tie("node").map((a) => `\\frac{${a}}{2}`),
  ),
})).node;

Deno.test("lastBoxed: the last of several boxes with random nested content", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.stringMatching(/^[A-Za-z .,]{0,20}$/), balanced), {
        minLength: 1,
        maxLength: 4,
      }),
      fc.stringMatching(/^[A-Za-z .,]{0,20}$/),
      (parts, tail) => {
        const text = parts.map(([noise, content]) => `${noise}\\boxed{${content}}`).join(" ") +
          tail;
        const last = parts.at(-1)![1].trim();
        const expected = last === "" ? null : last;
        if (expected !== null) assert.equal(lastBoxed(text), expected);
        // Cutting the text inside the last box leaves it unbalanced: no answer at all.
        const cut = text.slice(0, text.lastIndexOf("\\boxed{") + 7) + last.slice(0, -1);
        assert.equal(lastBoxed(cut), null);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("verifyMath: never throws on arbitrary input", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 40 }), (completion, gold) => {
      const r = verifyMath(completion, gold);
      assert.equal(typeof r.correct, "boolean");
      assert.equal(typeof r.reason, "string");
    }),
    { numRuns: 300 },
  );
  const noisy = ["\\boxed{", "{{{", "}}}", "\\frac{", "$$", "\\left(", "\\begin{pmatrix}", "####"];
  for (const a of noisy) for (const b of noisy) verifyMath(a + "5" + b, b + "5");
});

Deno.test("verifyMath: a long completion stays fast", () => {
  const long = "Let us think. ".repeat(5000) + "$x = 3$ and 4 ".repeat(500) + "so \\boxed{42}.";
  const t0 = performance.now();
  assert.equal(verifyMath(long, "42").correct, true);
  assert.equal(verifyMath(long.replace("\\boxed{42}", "42"), "42").correct, true);
  assert.ok(performance.now() - t0 < 2000);
});
