import assert from "node:assert/strict";
import fc from "fast-check";
import { checkCountdown, type CountdownRow, countdownTask } from "./countdown.ts";
import { evaluateExpression, expressionLiterals, parseExpression } from "./expr.ts";
import { checkTaskProperties } from "./_test_utils.ts";

const perturb = (row: CountdownRow) => {
  const out = [
    `(${row.answer}) + 1`,
    `(${row.answer}) * 2`,
    `${row.answer} = ${row.target + 1}`,
    "1000 * 1000",
  ];
  const n = row.numbers[0]!;
  // using a number once more than given
  if (row.numbers.filter((x) => x === n).length === 1) out.push(`${row.answer} + ${n} - ${n}`);
  return out;
};

Deno.test("countdownTask: properties (own answer accepted, perturbed rejected, deterministic)", async () => {
  await checkTaskProperties(countdownTask(), perturb);
  await checkTaskProperties(
    countdownTask({ count: [3, 6], useAll: true, maxNumber: 25, maxTarget: 500 }),
    perturb,
  );
});

Deno.test("countdownTask: the stored expression uses given numbers and hits the target exactly", () => {
  fc.assert(fc.property(fc.integer(), fc.boolean(), (seed, useAll) => {
    const row = countdownTask({ count: 5, useAll }).row(seed, 0);
    const e = parseExpression(row.answer);
    const v = evaluateExpression(e);
    assert.equal(v.den, 1n);
    assert.equal(Number(v.num), row.target);
    assert.ok(row.target >= 1 && row.target <= 100 && !row.numbers.includes(row.target));
    const lits = expressionLiterals(e).map(Number).sort((a, b) => a - b);
    if (useAll) assert.deepEqual(lits, [...row.numbers].sort((a, b) => a - b));
    const pool = [...row.numbers];
    for (const l of lits) {
      const at = pool.indexOf(l);
      assert.ok(at >= 0, `literal ${l} is a given number`);
      pool.splice(at, 1);
    }
  }));
});

Deno.test("checkCountdown: rules", () => {
  const p = { numbers: [2, 2, 5, 10], target: 20 };
  assert.ok(checkCountdown(p, "2 * 10"));
  assert.ok(!checkCountdown(p, "(2 + 2 + 5 + 10) + 1 - 0"), "0 and 1 not given");
  assert.ok(checkCountdown(p, "2 * 2 * 5"), "a repeated number may be used as often as given");
  assert.ok(!checkCountdown(p, "2 * 2 * 2 + 10 + 2"), "but not more often");
  assert.ok(!checkCountdown(p, "10 / (5 / 10)"), "10 used twice");
  assert.ok(!checkCountdown(p, "(5 - 2 / 2) * 5"), "5 used twice");
  assert.ok(checkCountdown(p, "5 \\times (2 + 2)"), "LaTeX times");
  assert.ok(checkCountdown(p, "$10 \\cdot 2$"));
  assert.ok(!checkCountdown(p, "2 * 10 = 21"), "a wrong right-hand side");
  assert.ok(!checkCountdown(p, "2 * 10 = 20 = 20"));
  assert.ok(!checkCountdown(p, "10 / (2 - 2)"), "division by zero");
  assert.ok(!checkCountdown(p, "-2 * -10"), "no unary minus");
  assert.ok(!checkCountdown(p, "eval('20')"));
  assert.ok(!checkCountdown({ ...p, useAll: true }, "(2 + 2) * 5 + 10 - 10"), "10 used twice");
  assert.ok(checkCountdown({ ...p, useAll: true }, "(10 - 5) * 2 * 2"));
  assert.ok(!checkCountdown({ ...p, useAll: true }, "2 * 10"), "useAll requires every number");
});

Deno.test("countdownTask: impossible knobs name the fix", () => {
  assert.throws(
    () => countdownTask({ maxNumber: 1 }),
    /options.maxNumber must be an integer in \[2, 10000\], got 1/,
  );
  const impossible = countdownTask({
    count: 2,
    maxNumber: 2,
    minTarget: 90,
    maxTarget: 100,
    operators: ["+"],
  });
  assert.throws(
    () => impossible.row(0, 0),
    /no target in \[90, 100\] found in 2000 draws; widen options.minTarget\/maxTarget or raise options.maxNumber/,
  );
});
