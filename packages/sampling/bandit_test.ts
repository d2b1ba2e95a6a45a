import assert from "node:assert/strict";
import {
  type Bandit,
  banditFromState,
  BanditScheduler,
  learningProgress,
  ThompsonBandit,
  Ucb1Bandit,
} from "./bandit.ts";
import { Prng } from "./_prng.ts";

/**
 * Runs `steps` Bernoulli pulls; returns the fraction of steps in `[from, steps)` (default: the
 * last quarter) spent on the best arm of that step.
 */
function simulate(
  bandit: Bandit,
  probs: (t: number) => readonly number[],
  steps: number,
  seed: number,
  from = steps - Math.floor(steps / 4),
): number {
  const env = Prng.fromSeed(seed, 999);
  let bestPulls = 0;
  for (let t = 0; t < steps; t++) {
    const p = probs(t);
    const arm = bandit.select();
    const i = bandit.arms.indexOf(arm);
    bandit.update(arm, env.float() < p[i]! ? 1 : 0);
    const best = p.indexOf(Math.max(...p));
    if (t >= from && i === best) bestPulls++;
  }
  return bestPulls / (steps - from);
}

const ARMS = ["easy", "medium", "hard"];
const PROBS = [0.3, 0.5, 0.7];

Deno.test("bandits converge to the best arm in a seeded Bernoulli simulation (p = 0.3 / 0.5 / 0.7)", () => {
  for (const seed of [1, 2, 3]) {
    const ucb = simulate(new Ucb1Bandit(ARMS), () => PROBS, 4000, seed);
    const ts = simulate(new ThompsonBandit(ARMS, { seed }), () => PROBS, 4000, seed);
    assert.ok(ucb > 0.8, `UCB1 seed ${seed}: best-arm share ${ucb}`);
    assert.ok(ts > 0.9, `Thompson seed ${seed}: best-arm share ${ts}`);
  }
});

Deno.test("discounted bandits track a switch of the best arm; undiscounted Thompson lags", () => {
  // the best arm switches at t = 2000; score the 600 steps after the switch
  const switching = (t: number) => (t < 2000 ? [0.8, 0.5, 0.2] : [0.2, 0.5, 0.8]);
  const run = (b: Bandit) => simulate(b, switching, 2600, 4, 2000);
  const disc = run(new ThompsonBandit(ARMS, { seed: 4, discount: 0.98 }));
  const ucbDisc = run(new Ucb1Bandit(ARMS, { discount: 0.98 }));
  const stationary = run(new ThompsonBandit(ARMS, { seed: 4 }));
  assert.ok(disc > 0.7, `discounted Thompson: ${disc}`);
  assert.ok(ucbDisc > 0.6, `discounted UCB1: ${ucbDisc}`);
  assert.ok(disc > stationary, `${disc} vs ${stationary}`);
});

Deno.test("bandit state round-trips through JSON and continues identically", () => {
  for (
    const make of [
      () => new Ucb1Bandit(ARMS, { discount: 0.99 }),
      () => new ThompsonBandit(ARMS, { seed: 8, discount: 0.95 }),
    ]
  ) {
    const a = make();
    simulate(a, () => PROBS, 100, 5);
    const b = banditFromState(JSON.parse(JSON.stringify(a.state())));
    const envA = Prng.fromSeed(6);
    const envB = Prng.fromSeed(6);
    for (let t = 0; t < 200; t++) {
      const armA = a.select();
      const armB = b.select();
      assert.equal(armB, armA);
      a.update(armA, envA.float());
      b.update(armB, envB.float());
    }
    assert.deepEqual(b.state(), a.state());
  }
});

Deno.test("BanditScheduler: learning-progress and in-band rewards, state, errors", () => {
  const s = new BanditScheduler(new ThompsonBandit(["a", "b"], { seed: 1 }), {
    kind: "learning_progress",
  });
  assert.equal(s.observe("a", 0.2), undefined); // baseline only
  assert.ok(Math.abs(s.observe("a", 0.5)! - 0.3) < 1e-12);
  assert.equal(s.observe("a", 0.25), 0.25);
  const restored = BanditScheduler.fromState(JSON.parse(JSON.stringify(s.state())));
  assert.deepEqual(restored.allocate(10), s.allocate(10));
  assert.equal(Object.values(s.allocate(7)).reduce((x, y) => x + y, 0), 7);
  assert.equal(learningProgress(0, 1), 1);
  assert.throws(() => s.observe("zz", 0.5), /unknown arm "zz"; arms are "a", "b"/);
  assert.throws(
    () => s.observe("a", 2),
    /batchPassRate must be a finite number in \[0, 1\], got 2/,
  );
  assert.throws(
    () => new BanditScheduler(new Ucb1Bandit(["a"]), { kind: "in_band", low: 0.9, high: 0.1 }),
    /reward\.low \(0\.9\) must be <= reward\.high \(0\.1\)/,
  );
  assert.throws(() => new Ucb1Bandit([]), /arms must be a non-empty array/);
  assert.throws(
    () => new Ucb1Bandit(["a"]).update("a", 1.5),
    /reward must be a finite number in \[0, 1\], got 1.5/,
  );
  // a bandit over difficulty buckets learns which bucket is in band
  const sched = new BanditScheduler(new Ucb1Bandit(["easy", "mid", "hard"]), {
    kind: "in_band",
    low: 0.2,
    high: 0.8,
  });
  const rate = { easy: 0.95, mid: 0.5, hard: 0.02 } as Record<string, number>;
  const picks: string[] = [];
  for (let t = 0; t < 200; t++) {
    const arm = sched.next();
    picks.push(arm);
    sched.observe(arm, rate[arm]!);
  }
  assert.ok(picks.slice(100).filter((a) => a === "mid").length > 80);
});
