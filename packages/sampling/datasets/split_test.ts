import assert from "node:assert/strict";
import fc from "fast-check";
import { splitOf, trainTestSplit } from "./split.ts";

Deno.test("trainTestSplit: disjoint, complete, and stable when rows are added or reordered (property)", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.string(), { maxLength: 60 }),
      fc.uniqueArray(fc.string(), { maxLength: 30 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.string(),
      (keys, extra, testFraction, salt) => {
        const items = keys.map((k) => ({ uid: k }));
        const { train, test } = trainTestSplit(items, { testFraction, salt });
        const trainKeys = new Set(train.map((x) => x.uid));
        assert.ok(test.every((x) => !trainKeys.has(x.uid)));
        assert.equal(train.length + test.length, items.length);
        // add rows and reverse the order: every old row keeps its side
        const grown = [...items, ...extra.map((k) => ({ uid: k }))].reverse();
        const after = trainTestSplit(grown, { testFraction, salt });
        const testAfter = new Set(after.test.map((x) => x.uid));
        for (const x of test) assert.ok(testAfter.has(x.uid));
        for (const x of train) assert.ok(!testAfter.has(x.uid));
      },
    ),
  );
});

Deno.test("splitOf: the test fraction is respected (10 000 keys within 3σ) and salts are independent", () => {
  const keys = Array.from({ length: 10000 }, (_, i) => `prompt-${i}`);
  for (const f of [0.05, 0.2, 0.5]) {
    const t = keys.filter((k) => splitOf(k, { testFraction: f }) === "test").length;
    const sd = Math.sqrt(10000 * f * (1 - f));
    assert.ok(Math.abs(t - 10000 * f) < 3 * sd, `fraction ${f}: ${t} test keys`);
  }
  const a = keys.map((k) => splitOf(k, { testFraction: 0.5, salt: "a" }));
  const b = keys.map((k) => splitOf(k, { testFraction: 0.5, salt: "b" }));
  const agree = a.filter((s, i) => s === b[i]).length;
  assert.ok(Math.abs(agree - 5000) < 3 * 50, `salts agree on ${agree}`);
  assert.throws(
    () => splitOf("k", { testFraction: 1.5 }),
    /testFraction must be a finite number in \[0, 1\], got 1.5/,
  );
  assert.throws(
    () => trainTestSplit([{ id: 1 }], { testFraction: 0.5 }),
    /has no string uid .* pass options\.key/,
  );
  const byKey = trainTestSplit([{ id: 1 }, { id: 2 }], {
    testFraction: 0.5,
    key: (x) => String(x.id),
  });
  assert.equal(byKey.train.length + byKey.test.length, 2);
});
