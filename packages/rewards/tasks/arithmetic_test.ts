import assert from "node:assert/strict";
import fc from "fast-check";
import { arithmeticTask } from "./arithmetic.ts";
import {
  evaluateExpression,
  formatFraction,
  fraction,
  parseExpression,
  parseFraction,
} from "./expr.ts";
import { checkTaskProperties } from "./_test_utils.ts";

const perturb = (row: { answer: string }) => {
  const v = parseFraction(row.answer)!;
  const plusOne = fraction(v.num + v.den, v.den);
  const out = [formatFraction(plusOne), "banana"];
  if (v.num !== 0n) out.push(formatFraction(fraction(-v.num, v.den)), `${row.answer}0`);
  return out;
};

Deno.test("arithmeticTask: properties (own answer accepted, perturbed rejected, deterministic)", async () => {
  await checkTaskProperties(arithmeticTask(), perturb);
  await checkTaskProperties(
    arithmeticTask({
      digits: [1, 3],
      chainLength: [1, 6],
      parentheses: true,
      operators: ["+", "-", "*", "/"],
    }),
    perturb,
  );
});

Deno.test("arithmeticTask: knobs shape the expressions", () => {
  fc.assert(fc.property(fc.integer(), (seed) => {
    const row = arithmeticTask({ digits: 3, chainLength: 4, operators: ["*"] }).row(seed, 0);
    const nums = row.expression.split(" * ");
    assert.equal(nums.length, 5);
    assert.ok(nums.every((n) => n.length === 3));
    assert.equal(row.difficulty, 12);
    const flat = arithmeticTask({ chainLength: 3 }).row(seed, 1);
    assert.ok(!flat.expression.includes("("), "no parentheses unless asked");
  }));
  // With a digits range, each row's difficulty is its own operand lengths.
  fc.assert(fc.property(fc.integer(), (seed) => {
    const row = arithmeticTask({ digits: [1, 3], chainLength: 1, operators: ["+"] }).row(seed, 0);
    const [a, b] = row.expression.split(" + ");
    assert.equal(row.difficulty, (a!.length + b!.length) / 2);
  }));
  const withParens = arithmeticTask({ chainLength: 5, parentheses: true }).rows(0, 50);
  assert.ok(withParens.some((r) => r.expression.includes("(")));
});

Deno.test("arithmeticTask: the answer is the exact value; division gives reduced fractions", () => {
  const task = arithmeticTask({ operators: ["/"], chainLength: 2, digits: 1 });
  for (const row of task.rows(5, 30)) {
    assert.equal(row.answer, formatFraction(evaluateExpression(parseExpression(row.expression))));
    const v = parseFraction(row.answer)!;
    assert.ok(task.verify(row, `${v.num * 3n}/${v.den * 3n}`), "unreduced spelling accepted");
    assert.ok(row.prompt.includes("fraction"));
  }
});

Deno.test("arithmeticTask: bad knobs name the field and the range", () => {
  assert.throws(
    () => arithmeticTask({ digits: 0 }),
    /arithmeticTask: options.digits must be an integer in \[1, 12\], got 0/,
  );
  assert.throws(
    () => arithmeticTask({ chainLength: [3, 2] }),
    /options.chainLength\[1\] must be an integer in \[3, 20\], got 2/,
  );
  assert.throws(
    () => arithmeticTask({ operators: ["^" as "+"] }),
    /options.operators must be a non-empty array of "\+", "-", "\*", "\/", got \["\^"\]/,
  );
});
