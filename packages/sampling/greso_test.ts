import assert from "node:assert/strict";
import fc from "fast-check";
import { GresoFilter } from "./greso.ts";

const group = fc.constantFrom([1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 0, 1], [0, 0, 0, 1]);

Deno.test("GresoFilter: skip probability follows 1 − max(p^streak, 0.01) as the authors' code", () => {
  const g = new GresoFilter({ pEasy: 0.6, pHard: 0.3 });
  for (let k = 1; k <= 6; k++) {
    g.observe("easy", [1, 1]);
    g.observe("hard", [0, 0]);
    assert.ok(Math.abs(g.skipProbability("easy") - (1 - Math.max(0.6 ** k, 0.01))) < 1e-15);
    assert.ok(Math.abs(g.skipProbability("hard") - (1 - Math.max(0.3 ** k, 0.01))) < 1e-15);
  }
  // An informative group ends the streak; a solved prompt is no longer "hard".
  g.observe("easy", [1, 0]);
  g.observe("hard", [1, 1]);
  assert.equal(g.skipProbability("easy"), 0);
  assert.deepEqual(g.classify("hard"), { kind: "easy", streak: 1 });
  // The floor: never skipped with certainty.
  const f = new GresoFilter({ pEasy: 0.1 });
  for (let k = 0; k < 20; k++) f.observe("q", [1]);
  assert.equal(f.skipProbability("q"), 0.99);
});

Deno.test("GresoFilter: skip probability is in [0, 0.99], 0 for open prompts, and grows with the streak (property)", () => {
  fc.assert(
    fc.property(
      fc.array(group, { maxLength: 30 }),
      fc.double({ min: 0.05, max: 0.95, noNaN: true }),
      (groups, p) => {
        const g = new GresoFilter({ pEasy: p, pHard: p, historyLength: 64 });
        let prev = 0;
        let prevKind = "open";
        for (const rewards of groups) {
          g.observe("q", rewards);
          const v = g.classify("q");
          const s = g.skipProbability("q");
          assert.ok(s >= 0 && s <= 0.99 + 1e-15);
          if (v.kind === "open") assert.equal(s, 0);
          else if (v.kind === prevKind) assert.ok(s >= prev - 1e-15);
          prev = s;
          prevKind = v.kind;
        }
      },
    ),
  );
});

Deno.test("GresoFilter: adapt keeps p in [minP, maxP] and moves it towards the targets (property)", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.double({ min: 0, max: 1, noNaN: true }),
        ),
        { maxLength: 200 },
      ),
      (rounds) => {
        const g = new GresoFilter({ minP: 0.1, maxP: 0.9, adjust: 0.05 });
        for (const [easy, hard] of rounds) {
          const [pe, ph] = [g.pEasy, g.pHard];
          g.adapt({ easy, hard });
          assert.ok(g.pEasy >= 0.1 - 1e-12 && g.pEasy <= 0.9 + 1e-12);
          assert.ok(g.pHard >= 0.1 - 1e-12 && g.pHard <= 0.9 + 1e-12);
          // Too many easy groups: p_easy does not rise (more easy prompts get skipped).
          if (easy >= 0.25 / 3) assert.ok(g.pEasy <= pe);
          else assert.ok(g.pEasy >= pe);
          if (hard >= 0.5 / 3) assert.ok(g.pHard <= ph);
          else assert.ok(g.pHard >= ph);
        }
      },
    ),
  );
});

Deno.test("GresoFilter: the state survives JSON and the restored filter continues identically (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom("a", "b", "c"), group), { maxLength: 40 }),
      fc.nat(40),
      fc.array(fc.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 3, maxLength: 3 }),
      (events, cut, us) => {
        const a = new GresoFilter({ historyLength: 5 });
        const k = Math.min(cut, events.length);
        for (const [uid, r] of events.slice(0, k)) a.observe(uid, r);
        a.adapt({ easy: 0.5, hard: 0.1 });
        a.skip("a", us[0]!);
        const b = GresoFilter.fromState(JSON.parse(JSON.stringify(a.state())));
        for (const [uid, r] of events.slice(k)) {
          a.observe(uid, r);
          b.observe(uid, r);
        }
        for (const [i, uid] of ["a", "b", "c"].entries()) {
          assert.equal(b.skip(uid, us[i]!), a.skip(uid, us[i]!));
        }
        assert.deepEqual(b.state(), a.state());
      },
    ),
  );
});

Deno.test("GresoFilter: bad options and inputs name the field and the value", () => {
  assert.throws(() => new GresoFilter({ pEasy: 1 }), /pEasy must be .* got 1/);
  assert.throws(() => new GresoFilter({ minP: 0.9, maxP: 0.1 }), /minP 0.9 exceeds maxP 0.1/);
  assert.throws(() => new GresoFilter().observe("q", []), /q: rewards is empty/);
  assert.throws(() => new GresoFilter().skip("q", 1), /u must be/);
  assert.throws(() => GresoFilter.fromState({ version: 2 } as never), /version must be 1, got 2/);
});
