import assert from "node:assert/strict";
import fc from "fast-check";
import {
  EntropyTemperatureController,
  lengthBudgetSchedule,
  linearSchedule,
  stepwiseSchedule,
} from "./schedules.ts";

Deno.test("stepwiseSchedule: golden values (POLARIS 7B 0.7 → 1.0 → 1.1) and stage boundaries", () => {
  const t = stepwiseSchedule([
    { from: 0, value: 0.7 },
    { from: 200, value: 1.0 },
    { from: 450, value: 1.1 },
  ]);
  const steps = [0, 1, 199, 199.5, 200, 449, 450, 451, 1e9];
  assert.deepEqual(steps.map(t), [0.7, 0.7, 0.7, 0.7, 1.0, 1.0, 1.1, 1.1, 1.1]);
  assert.equal(stepwiseSchedule([{ from: 0, value: 3 }])(12345), 3);
  // a property: the value at a step is the value of the last stage started at or before it
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 1, max: 10_000 }), { maxLength: 8 }),
      fc.integer({ min: 0, max: 12_000 }),
      (starts, step) => {
        const froms = [0, ...starts.sort((a, b) => a - b)];
        const s = stepwiseSchedule(froms.map((from, i) => ({ from, value: i })));
        const expected = froms.filter((f) => f <= step).length - 1;
        assert.equal(s(step), expected);
      },
    ),
  );
});

Deno.test("linearSchedule: golden values, clamped ends", () => {
  const t = linearSchedule({ start: 1.0, end: 0.6, startStep: 10, endStep: 50 });
  assert.deepEqual([0, 10, 20, 30, 40, 50, 60].map((s) => Number(t(s).toFixed(12))), [
    1,
    1,
    0.9,
    0.8,
    0.7,
    0.6,
    0.6,
  ]);
  const warm = linearSchedule({ start: 0, end: 8, endStep: 4 });
  assert.deepEqual([0, 1, 2, 3, 4, 5].map(warm), [0, 2, 4, 6, 8, 8]);
});

Deno.test("lengthBudgetSchedule: golden staged context 8k → 16k → 24k → 32k", () => {
  const budget = lengthBudgetSchedule([
    { from: 0, maxTokens: 8192 },
    { from: 1000, maxTokens: 16384 },
    { from: 1500, maxTokens: 24576 },
    { from: 2000, maxTokens: 32768 },
  ]);
  assert.deepEqual(
    [0, 999, 1000, 1499, 1500, 1999, 2000, 5000].map(budget),
    [8192, 8192, 16384, 16384, 24576, 24576, 32768, 32768],
  );
});

Deno.test("schedules: errors name the stage, the field, the value and the fix", () => {
  assert.throws(
    () => stepwiseSchedule([]),
    /stepwiseSchedule: stages must be a non-empty array of \{from, value\}/,
  );
  assert.throws(
    () => stepwiseSchedule([{ from: 5, value: 1 }]),
    /stages\[0\]\.from is 5; the first stage must start at step 0/,
  );
  assert.throws(
    () => stepwiseSchedule([{ from: 0, value: 1 }, { from: 10, value: 2 }, { from: 10, value: 3 }]),
    /stages\[2\]\.from is 10 but stages\[1\]\.from is 10; stages must start at strictly increasing steps/,
  );
  assert.throws(
    () => stepwiseSchedule([{ from: 0, value: NaN }]),
    /stages\[0\]\.value must be a finite number, got NaN/,
  );
  assert.throws(
    () => lengthBudgetSchedule([{ from: 0, maxTokens: 8192.5 }]),
    /stages\[0\]\.maxTokens must be an integer >= 1, got 8192.5/,
  );
  assert.throws(
    () => lengthBudgetSchedule([{ from: 0, max_tokens: 10 } as never]),
    /unknown field "max_tokens"/,
  );
  assert.throws(
    () => linearSchedule({ start: 1, end: 2, startStep: 5, endStep: 5 }),
    /endStep must be a finite number > 5, got 5/,
  );
  assert.throws(
    () => stepwiseSchedule([{ from: 0, value: 1 }])(-1),
    /step must be a finite number >= 0, got -1/,
  );
});

Deno.test("EntropyTemperatureController: golden trajectory (additive), bounds, maxChange", () => {
  const ctl = new EntropyTemperatureController({
    target: 0.3,
    initial: 1.0,
    gain: 0.5,
    min: 0.5,
    max: 1.2,
  });
  const entropies = [0.5, 0.45, 0.2, 0.1, 0.1, 0.1, 2.0, 2.0];
  const temps = entropies.map((h) => Number(ctl.update(h).toFixed(12)));
  // 1 − 0.1 = 0.9; 0.9 − 0.075 = 0.825; 0.825 + 0.05 = 0.875; +0.1 = 0.975; 1.075; 1.175 → clamp 1.2
  // after 1.2: −0.85 → 0.35 → clamped to 0.5; again 0.5
  assert.deepEqual(temps, [0.9, 0.825, 0.875, 0.975, 1.075, 1.175, 0.5, 0.5]);
  assert.deepEqual(ctl.state(), { temperature: 0.5, updates: 8, lastEntropy: 2 });

  const limited = new EntropyTemperatureController({
    target: 0.3,
    initial: 1,
    gain: 1,
    maxChange: 0.05,
  });
  assert.equal(limited.update(1.3), 0.95); // would be 0 without the limit
  assert.equal(limited.update(0.3), 0.95); // on target: unchanged
});

Deno.test("EntropyTemperatureController: multiplicative golden values, convergence and save/load", () => {
  const ctl = new EntropyTemperatureController({
    target: 0.3,
    initial: 1,
    gain: 2,
    mode: "multiplicative",
  });
  assert.ok(Math.abs(ctl.update(0.4) - Math.exp(-0.2)) < 1e-15);
  assert.ok(Math.abs(ctl.update(0.2) - 1) < 1e-15);
  // a toy system with entropy H(T) = 0.25·T²: it settles at T* = sqrt(0.3/0.25)
  const sys = new EntropyTemperatureController({ target: 0.3, initial: 0.6, gain: 1 });
  for (let i = 0; i < 200; i++) sys.update(0.25 * sys.temperature ** 2);
  assert.ok(Math.abs(sys.temperature - Math.sqrt(1.2)) < 1e-9, `T = ${sys.temperature}`);
  // save → load into a fresh controller → identical continuation
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { maxLength: 20 }),
      fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { maxLength: 20 }),
      (before, after) => {
        const opts = { target: 0.3, initial: 1, gain: 0.3 } as const;
        const a = new EntropyTemperatureController(opts);
        before.forEach((h) => a.update(h));
        const b = new EntropyTemperatureController(opts);
        b.load(JSON.parse(JSON.stringify(a.state())));
        assert.deepEqual(after.map((h) => b.update(h)), after.map((h) => a.update(h)));
        assert.deepEqual(b.state(), a.state());
      },
    ),
  );
  assert.throws(
    () => new EntropyTemperatureController({ target: 0.3, initial: 3 }),
    /initial must be a finite number in \[0.1, 2\], got 3/,
  );
  assert.throws(
    () => ctl.load({ temperature: 5, updates: 0, lastEntropy: null }),
    /state\.temperature must be a finite number in \[0.1, 2\], got 5/,
  );
  assert.throws(() => ctl.update(-0.1), /entropy must be a finite number >= 0, got -0.1/);
});
