import assert from "node:assert/strict";
import fc from "fast-check";
import { AdaptiveKlController, createKlController, FixedKlController } from "./kl_controller.ts";
import { near } from "./_test_utils.ts";

Deno.test("FixedKlController: the coefficient never changes", () => {
  const ctl = new FixedKlController(0.3);
  for (const kl of [0, 1, 100]) ctl.update(kl, 64);
  assert.equal(ctl.value, 0.3);
});

Deno.test("AdaptiveKlController: golden sequence by hand (Ziegler et al. 2019)", () => {
  const ctl = new AdaptiveKlController({ initCoef: 0.2, target: 6, horizon: 10000 });
  // KL 9: error 9/6 − 1 = 0.5 → clipped to 0.2; β = 0.2·(1 + 0.2·256/10000) = 0.201024
  ctl.update(9, 256);
  near(ctl.value, 0.201024, 1e-15);
  // KL 5.4: error −0.1; β ← 0.201024·(1 − 0.1·1000/10000) = 0.201024·0.99 = 0.19901376
  ctl.update(5.4, 1000);
  near(ctl.value, 0.19901376, 1e-15);
  // KL 0: error −1 → clipped to −0.2; β ← β·(1 − 0.2·10000/10000) = 0.8β
  ctl.update(0, 10000);
  near(ctl.value, 0.19901376 * 0.8, 1e-15);
});

Deno.test("AdaptiveKlController: matches the closed-form update on random streams (property)", () => {
  fc.assert(
    fc.property(
      fc.double({ min: 1e-4, max: 1, noNaN: true }),
      fc.double({ min: 1e-3, max: 10, noNaN: true }),
      fc.array(
        fc.tuple(fc.double({ min: 0, max: 20, noNaN: true }), fc.integer({ min: 0, max: 512 })),
      ),
      (init, target, steps) => {
        const ctl = new AdaptiveKlController({ initCoef: init, target, horizon: 2048 });
        let beta = init;
        for (const [kl, n] of steps) {
          ctl.update(kl, n);
          const e = Math.min(0.2, Math.max(-0.2, kl / target - 1));
          beta = beta * (1 + e * n / 2048);
        }
        near(ctl.value, beta, 1e-12);
      },
    ),
  );
});

Deno.test("KL controllers: config factory and argument errors", () => {
  assert.ok(createKlController({ type: "fixed", coef: 0.1 }) instanceof FixedKlController);
  assert.ok(
    createKlController({ type: "adaptive", coef: 0.1, target: 1, horizon: 5 }) instanceof
      AdaptiveKlController,
  );
  assert.throws(
    () => createKlController({ type: "pid" } as never),
    /unknown type "pid"; valid types: fixed, adaptive/,
  );
  assert.throws(
    () => new AdaptiveKlController({ initCoef: 0.1, target: 1, horizon: 0 }),
    /horizon must be a finite number > 0, got 0/,
  );
  assert.throws(
    () => new AdaptiveKlController({ initCoef: 0.1, target: -1, horizon: 1 }),
    /target must be a finite number > 0, got -1/,
  );
  assert.throws(() => new FixedKlController(-1), /coef must be a finite number >= 0, got -1/);
  const ctl = new AdaptiveKlController({ initCoef: 0.1, target: 1, horizon: 1 });
  assert.throws(() => ctl.update(NaN, 1), /currentKl must be a finite number, got NaN/);
  assert.throws(() => ctl.update(1, -1), /nSteps must be a finite number >= 0, got -1/);
});
