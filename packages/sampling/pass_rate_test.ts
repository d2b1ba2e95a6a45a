import assert from "node:assert/strict";
import fc from "fast-check";
import { passRate, PassRateTracker } from "./pass_rate.ts";

Deno.test("PassRateTracker: EMA from the first observation, decay as documented", () => {
  const t = new PassRateTracker({ decay: 0.8 });
  assert.equal(t.update("q", 0.5), 0.5);
  assert.ok(Math.abs(t.update("q", [1, 1]) - (0.8 * 0.5 + 0.2)) < 1e-15);
  assert.equal(t.count("q"), 2);
  assert.equal(t.rate("never"), undefined);
  assert.equal(new PassRateTracker({ decay: 0 }).update("x", 0.25), 0.25);
});

Deno.test("PassRateTracker: state survives JSON and the restored tracker continues identically (property)", () => {
  fc.assert(
    fc.property(
      fc.double({ min: 0, max: 0.99, noNaN: true }),
      fc.array(
        fc.tuple(fc.constantFrom("a", "b", "c"), fc.double({ min: 0, max: 1, noNaN: true })),
        {
          maxLength: 40,
        },
      ),
      fc.nat(40),
      (decay, updates, cut) => {
        const a = new PassRateTracker({ decay, historyLength: 3 });
        const k = Math.min(cut, updates.length);
        for (const [u, o] of updates.slice(0, k)) a.update(u, o);
        const b = PassRateTracker.fromState(JSON.parse(JSON.stringify(a.state())));
        for (const [u, o] of updates.slice(k)) {
          assert.equal(b.update(u, o), a.update(u, o));
        }
        assert.deepEqual(b.state(), a.state());
        for (const u of ["a", "b", "c"]) {
          const r = a.rate(u);
          if (r !== undefined) assert.ok(r >= 0 && r <= 1);
        }
      },
    ),
  );
});

Deno.test("PassRateTracker: mastery needs m consecutive observations at the threshold", () => {
  const t = new PassRateTracker({ historyLength: 4 });
  for (const o of [1, 1, 0.5, 1, 1]) t.update("q", o);
  assert.equal(t.isMastered("q", 2), true);
  assert.equal(t.isMastered("q", 3), false);
  assert.equal(t.isMastered("q", 3, 0.5), true);
  assert.equal(t.isMastered("new", 1), false);
  assert.throws(() => t.isMastered("q", 5), /consecutive must be an integer in \[1, 4\], got 5/);
  assert.equal(t.inBand("q", 0.2, 0.8), false);
  assert.equal(t.inBand("new", 0.2, 0.8), true);
  assert.equal(t.inBand("new", 0.2, 0.8, false), false);
});

Deno.test("passRate and the tracker's errors name the field and value", () => {
  assert.equal(passRate([1, -1]), 0.5);
  assert.throws(() => passRate([]), /rewards is empty/);
  assert.throws(
    () => passRate([1, Infinity]),
    /rewards\[1\] must be a finite number, got Infinity/,
  );
  assert.throws(
    () => new PassRateTracker({ decay: 1 }),
    /decay must be a finite number in \[0, 1\), got 1/,
  );
  assert.throws(
    () => new PassRateTracker().update("q", 1.5),
    /observed pass rate of q must be a finite number in \[0, 1\], got 1.5/,
  );
  const bad = {
    ...new PassRateTracker().state(),
    entries: { q: { rate: 2, count: 1, recent: [1] } },
  };
  assert.throws(() => PassRateTracker.fromState(bad), /entries\["q"\]\.rate must be .* got 2/);
});
