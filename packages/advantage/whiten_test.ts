import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, randomBatch } from "./_test_utils.ts";
import { fromRows } from "./layout.ts";
import { maskedMean, maskedVar, maskedWhiten } from "./whiten.ts";

Deno.test("maskedWhiten golden: values 1, 2, 4 valid, 99 masked", () => {
  const v = fromRows([[1, 2], [4, 99]]);
  const m = fromRows([[1, 1], [1, 0]]);
  // mean 7/3; squared deviations 16/9 + 1/9 + 25/9 = 42/9; unbiased var (42/9)/2 = 7/3
  assert.ok(Math.abs(maskedMean(v, m) - 7 / 3) < 1e-15);
  assert.ok(Math.abs(maskedVar(v, m) - 7 / 3) < 1e-14);
  assert.ok(Math.abs(maskedVar(v, m, false) - 14 / 9) < 1e-14);
  const s = Math.sqrt(7 / 3 + 1e-8);
  assertClose(maskedWhiten(v, m), [(1 - 7 / 3) / s, (2 - 7 / 3) / s, (4 - 7 / 3) / s, 0], {
    atol: 1e-15,
  });
  // shiftMean false adds the mean back (veRL shift_mean=False)
  assertClose(
    maskedWhiten(v, m, { shiftMean: false }),
    [(1 - 7 / 3) / s + 7 / 3, (2 - 7 / 3) / s + 7 / 3, (4 - 7 / 3) / s + 7 / 3, 0],
    { atol: 1e-14 },
  );
  // a constant batch whitens to zeros, even with eps = 0
  assert.deepEqual([...maskedWhiten(fromRows([[3, 3, 3]]), fromRows([[1, 1, 1]]), { eps: 0 })], [
    0,
    0,
    0,
  ]);
});

Deno.test("maskedWhiten property: masked mean 0 and unbiased masked variance 1 (eps = 0)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.double({ min: -100, max: 100, noNaN: true }), fc.constantFrom(0, 1)), {
        minLength: 2,
        maxLength: 40,
      }),
      (cells) => {
        const valid = cells.filter(([, m]) => m === 1).map(([v]) => v);
        fc.pre(valid.length >= 2 && Math.max(...valid) - Math.min(...valid) > 1e-6);
        const v = fromRows([cells.map(([x]) => x)]);
        const m = fromRows([cells.map(([, x]) => x)]);
        const w = maskedWhiten(v, m, { eps: 0 });
        const ws = cells.map((_, k) => w[k]!).filter((_, k) => cells[k]![1] === 1);
        const mean = ws.reduce((a, b) => a + b) / ws.length;
        const variance = ws.reduce((a, b) => a + (b - mean) ** 2, 0) / (ws.length - 1);
        assert.ok(Math.abs(mean) < 1e-9, `mean ${mean}`);
        assert.ok(Math.abs(variance - 1) < 1e-9, `var ${variance}`);
        cells.forEach(([, mk], k) => mk === 0 && assert.equal(w[k], 0));
      },
    ),
  );
});

Deno.test("maskedWhiten: larger random batch vs a reference that gathers the valid values first", () => {
  const b = randomBatch(6, 100, 30, { holes: true });
  const vals: number[] = [];
  for (let k = 0; k < b.other.data.length; k++) if (b.mask.data[k]) vals.push(b.other.data[k]!);
  const mu = vals.reduce((a, c) => a + c) / vals.length;
  const sd = Math.sqrt(vals.reduce((a, c) => a + (c - mu) ** 2, 0) / (vals.length - 1) + 1e-8);
  const ref = Array.from(b.other.data, (x, k) => (b.mask.data[k] ? (x - mu) / sd : 0));
  assertClose(maskedWhiten(b.other, b.mask), ref, { rtol: 1e-11, atol: 1e-12 });
});

Deno.test("masked statistics: invalid inputs name the argument and the value", () => {
  assert.throws(
    () => maskedWhiten(fromRows([[1, 2]]), fromRows([[1, 0]])),
    /maskedWhiten: the response mask selects 1 token; the unbiased masked variance/,
  );
  assert.throws(
    () => maskedMean(fromRows([[1, 2]]), fromRows([[0, 0]])),
    /maskedMean: the response mask selects no token/,
  );
  assert.throws(
    () => maskedWhiten(fromRows([[1, NaN]]), fromRows([[1, 1]])),
    /maskedWhiten: values\[0, 1\] is NaN; values must be finite numbers where mask is 1/,
  );
  assert.throws(
    () => maskedWhiten(fromRows([[1, 2]]), fromRows([[1, 1]]), { eps: -1 }),
    /maskedWhiten: eps must be a finite number >= 0, got -1/,
  );
});
