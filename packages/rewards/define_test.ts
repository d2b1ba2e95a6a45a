import assert from "node:assert/strict";
import { defineBatchReward, defineReward } from "./define.ts";
import type { ScoreFn } from "./types.ts";

Deno.test("defineReward: builds a frozen reward with an optional time budget", () => {
  const r = defineReward("acc", () => 1, { timeoutMs: 50 });
  assert.equal(r.name, "acc");
  assert.equal(r.timeoutMs, 50);
  assert.ok(Object.isFrozen(r));
  assert.equal("timeoutMs" in defineReward("x", () => 1), false);
  assert.equal(defineReward("inf", () => 1, { timeoutMs: Infinity }).timeoutMs, Infinity);
});

Deno.test("defineReward / defineBatchReward: errors name the field, the value and the fix", () => {
  assert.throws(
    () => defineReward("", () => 1),
    /defineReward: name must be a non-empty string \(it is the metric key\), got ""/,
  );
  assert.throws(
    () => defineReward("x", 3 as unknown as ScoreFn),
    /defineReward: score must be a function \(input, ctx\) => number \| null/,
  );
  assert.throws(
    () => defineReward("x", () => 1, { timeoutMs: -5 }),
    /defineReward: options.timeoutMs must be a finite number > 0 \(or Infinity\), got -5/,
  );
  assert.throws(
    () => defineBatchReward("x", null as never),
    /defineBatchReward: scoreBatch must be a function/,
  );
});
