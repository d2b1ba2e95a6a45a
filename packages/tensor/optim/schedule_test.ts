import assert from "node:assert/strict";
import fc from "fast-check";
import { tensor } from "../creation.ts";
import { assertClose } from "../testing.ts";
import { AdamW } from "./adamw.ts";
import { SGD } from "./sgd.ts";
import {
  constantSchedule,
  cosineSchedule,
  linearDecay,
  linearWarmup,
  LrScheduler,
} from "./schedule.ts";

// Tolerance: schedules are float64 host arithmetic; reference values were computed with the
// Hugging Face lambdas (transformers/optimization.py) in Python, so they agree to 1e-12.
const TOL = { rtol: 1e-12, atol: 1e-15 };

Deno.test("cosineSchedule: matches HF get_cosine_schedule_with_warmup(10, 100)", () => {
  const f = cosineSchedule({ warmupSteps: 10, totalSteps: 100 });
  const steps = [0, 3, 10, 11, 32, 55, 77, 99, 100];
  const hf = [
    0,
    0.3,
    1,
    0.9996954135095479,
    0.8596699001693255,
    0.5,
    0.15267081477050132,
    0.00030458649045211894,
    0,
  ];
  assertClose(steps.map(f), hf, TOL);
  assert.equal(f(250), 0); // clamped past totalSteps (HF's cosine would rise again)
});

Deno.test("cosineSchedule: matches HF get_cosine_with_min_lr_schedule_with_warmup(min_lr_rate 0.1)", () => {
  const f = cosineSchedule({ warmupSteps: 10, totalSteps: 100, minLrRatio: 0.1 });
  const steps = [0, 3, 10, 11, 32, 55, 77, 99, 100];
  const hf = [
    0,
    0.3,
    1,
    0.9997258721585931,
    0.873702910152393,
    0.55,
    0.23740373329345119,
    0.10027412784140691,
    0.1,
  ];
  assertClose(steps.map(f), hf, TOL);
  // warm-up start, warm-up end, mid-cosine, end = minLr, after the end
  assert.equal(f(0), 0);
  assert.equal(f(10), 1);
  assertClose(f(55), 0.1 + 0.9 * 0.5, TOL);
  assertClose(f(100), 0.1, TOL);
  assertClose(f(1000), 0.1, TOL);
});

Deno.test("cosineSchedule: monotone non-increasing after warm-up, within [minLrRatio, 1]", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 0, max: 500 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.integer({ min: 0, max: 700 }),
      fc.integer({ min: 0, max: 700 }),
      (warmupSteps, extra, minLrRatio, s1, s2) => {
        const f = cosineSchedule({ warmupSteps, totalSteps: warmupSteps + extra, minLrRatio });
        const [a, b] = [Math.min(s1, s2) + warmupSteps, Math.max(s1, s2) + warmupSteps];
        assert.ok(f(a) >= f(b), `f(${a}) = ${f(a)} < f(${b}) = ${f(b)}`);
        for (const s of [a, b]) assert.ok(f(s) >= minLrRatio - 1e-15 && f(s) <= 1);
        // warm-up is increasing and below 1
        for (let s = 1; s < warmupSteps; s++) assert.ok(f(s) > f(s - 1) && f(s) < 1);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("linearDecay: matches HF get_linear_schedule_with_warmup(10, 100); monotone after warm-up", () => {
  const f = linearDecay({ warmupSteps: 10, totalSteps: 100 });
  const steps = [0, 3, 10, 11, 32, 55, 77, 99, 100, 120];
  const hf = [
    0,
    0.3,
    1,
    0.9888888888888889,
    0.7555555555555555,
    0.5,
    0.25555555555555554,
    0.011111111111111112,
    0,
    0,
  ];
  assertClose(steps.map(f), hf, TOL);
  const g = linearDecay({ warmupSteps: 0, totalSteps: 10, minLrRatio: 0.2 });
  assertClose([0, 5, 10, 11].map(g), [1, 0.6, 0.2, 0.2], TOL);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 }), (s1, s2) => {
      const [a, b] = [Math.min(s1, s2) + 10, Math.max(s1, s2) + 10];
      assert.ok(f(a) >= f(b));
    }),
  );
});

Deno.test("linearWarmup and constantSchedule", () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 100].map(linearWarmup(4)), [0, 0.25, 0.5, 0.75, 1, 1, 1]);
  assert.deepEqual([0, 7].map(linearWarmup(0)), [1, 1]);
  assert.deepEqual([0, 7].map(constantSchedule()), [1, 1]);
});

Deno.test("schedules: invalid arguments name the field, the value and the range", () => {
  assert.throws(
    () => linearWarmup(-1),
    /linearWarmup: warmupSteps must be an integer >= 0, got -1/,
  );
  assert.throws(
    () => cosineSchedule({ warmupSteps: 10, totalSteps: 5 }),
    /cosineSchedule: totalSteps must be an integer >= 10, got 5/,
  );
  assert.throws(
    () => linearDecay({ totalSteps: 5, minLrRatio: 2 }),
    /linearDecay: minLrRatio must be a finite number in \[0, 1\], got 2/,
  );
  assert.throws(
    () => cosineSchedule({ totalSteps: 5 })(-1),
    /cosineSchedule: step must be a finite number >= 0, got -1/,
  );
});

Deno.test("LrScheduler: sets lr = baseLr × factor(step) per group, like torch LambdaLR", () => {
  const a = tensor([1], { requiresGrad: true });
  const b = tensor([1], { requiresGrad: true });
  const opt = new AdamW([{ params: [a] }, { params: [b], lr: 0.01 }], { lr: 0.1 });
  const sched = new LrScheduler(opt, linearWarmup(4));
  assert.deepEqual(sched.lrs, [0, 0]); // construction applies factor(0)
  assert.deepEqual(sched.baseLrs, [0.1, 0.01]);
  const seen: number[][] = [];
  for (let i = 0; i < 5; i++) {
    sched.step();
    seen.push([opt.paramGroups[0]!.lr, opt.paramGroups[1]!.lr]);
  }
  assertClose(
    seen,
    [[0.025, 0.0025], [0.05, 0.005], [0.075, 0.0075], [0.1, 0.01], [0.1, 0.01]],
    TOL,
  );
  assert.equal(sched.stepCount, 5);
  opt.dispose();
  for (const t of [a, b]) t.dispose();
});

Deno.test("LrScheduler: one schedule per group; state round trip resumes the same learning rates", () => {
  const a = tensor([1], { requiresGrad: true });
  const b = tensor([1], { requiresGrad: true });
  const opt = new SGD([{ params: [a] }, { params: [b] }], { lr: 1 });
  const factors = [cosineSchedule({ totalSteps: 10 }), linearDecay({ totalSteps: 10 })];
  const sched = new LrScheduler(opt, factors);
  for (let i = 0; i < 4; i++) sched.step();
  const saved = sched.state();
  const lrs = sched.lrs;
  assert.deepEqual(saved, { stepCount: 4, baseLrs: [1, 1] });

  const opt2 = new SGD([{ params: [a] }, { params: [b] }], { lr: 123 });
  const sched2 = new LrScheduler(opt2, factors);
  sched2.loadState(saved);
  assert.deepEqual(sched2.lrs, lrs);
  sched.step();
  sched2.step();
  assert.deepEqual(sched2.lrs, sched.lrs);
  assert.throws(
    () => sched2.loadState({ stepCount: 1, baseLrs: [1] }),
    /LrScheduler.loadState: state.baseLrs must hold 2 learning rates \(one per group\), got \[1\]/,
  );
  assert.throws(
    () => new LrScheduler(opt, [factors[0]!]),
    /LrScheduler: factor must be a function/,
  );
  assert.throws(
    () => new LrScheduler(opt, () => NaN),
    /LrScheduler: the schedule of group 0 returned NaN at step 0; a schedule must return a finite number >= 0/,
  );
  for (const o of [opt, opt2]) o.dispose();
  for (const t of [a, b]) t.dispose();
});
