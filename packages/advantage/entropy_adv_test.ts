import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, randomBatch } from "./_test_utils.ts";
import { entropyShapedAdvantages } from "./entropy_adv.ts";
import { fromRows } from "./layout.ts";

Deno.test("entropyShapedAdvantages golden: A + min(α·H, |A|/κ)", () => {
  const a = entropyShapedAdvantages({
    advantages: fromRows([[2, -2, 0, 0.5], [1, NaN, NaN, NaN]]),
    entropy: fromRows([[1, 1, 3, 10], [0, NaN, NaN, NaN]]),
    responseMask: fromRows([[1, 1, 1, 1], [1, 0, 0, 0]]),
    alpha: 0.5,
    kappa: 4,
  });
  // (2, H=1): min(0.5, 0.5) = 0.5 → 2.5; (−2, H=1): min(0.5, 0.5) → −1.5; (0, H=3): min(1.5, 0) → 0
  // (0.5, H=10): min(5, 0.125) → 0.625; (1, H=0): min(0, 0.25) → 1
  assert.deepEqual([...a], [2.5, -1.5, 0, 0.625, 1, 0, 0, 0]);
});

Deno.test("entropyShapedAdvantages property: never flips the sign when κ > 1; the bonus is in [0, α·H]", () => {
  fc.assert(
    fc.property(
      // |A| >= 1e-9 or 0: with subnormal A, |A|/κ rounds back to |A| and the sum to 0
      fc.array(
        fc.tuple(
          fc.double({ min: -5, max: 5, noNaN: true }).filter((a) => a === 0 || Math.abs(a) >= 1e-9),
          fc.double({ min: 0, max: 5, noNaN: true }),
        ),
        {
          minLength: 1,
          maxLength: 20,
        },
      ),
      fc.double({ min: 0, max: 2, noNaN: true }),
      fc.double({ min: 1.0001, max: 10, noNaN: true }),
      (cells, alpha, kappa) => {
        const out = entropyShapedAdvantages({
          advantages: fromRows([cells.map(([a]) => a)]),
          entropy: fromRows([cells.map(([, h]) => h)]),
          responseMask: fromRows([cells.map(() => 1)]),
          alpha,
          kappa,
        });
        cells.forEach(([a, h], k) => {
          const bonus = out[k]! - a;
          assert.ok(bonus >= -1e-12 && bonus <= alpha * h + 1e-12);
          if (a !== 0) assert.equal(Math.sign(out[k]!), Math.sign(a));
        });
      },
    ),
  );
});

Deno.test("entropyShapedAdvantages: larger random batch vs an independent clip-based reference", () => {
  const b = randomBatch(14, 80, 30, { holes: true });
  const H = { ...b.other, data: Array.from(b.other.data, (x) => Math.abs(x)) };
  const ref = Array.from(b.mask.data, (m, k) => {
    if (!m) return 0;
    const a = b.tokenRewards.data[k]!;
    // clip(α·H, upper = |A|/κ) written as a clamp
    return a + Math.max(0, Math.min(0.4 * H.data[k]!, Math.abs(a) / 2));
  });
  const out = entropyShapedAdvantages({
    advantages: b.tokenRewards,
    entropy: H,
    responseMask: b.mask,
    alpha: 0.4,
    kappa: 2,
  });
  assertClose(out, ref, { atol: 0, rtol: 0 });
});

Deno.test("entropyShapedAdvantages: invalid inputs name the argument and the value", () => {
  const m = fromRows([[1]]);
  assert.throws(
    () =>
      entropyShapedAdvantages({
        advantages: fromRows([[1]]),
        entropy: fromRows([[-0.5]]),
        responseMask: m,
        alpha: 1,
        kappa: 2,
      }),
    /entropyShapedAdvantages: entropy\[0, 0\] is -0.5; entropies must be >= 0/,
  );
  assert.throws(
    () =>
      entropyShapedAdvantages({
        advantages: fromRows([[1]]),
        entropy: fromRows([[0.5]]),
        responseMask: m,
        alpha: 1,
        kappa: 0,
      }),
    /entropyShapedAdvantages: kappa must be a finite number > 0, got 0/,
  );
});
