import assert from "node:assert/strict";
import { checkInt, checkPositive, checkVersion } from "./_util.ts";

Deno.test("checkVersion: non-negative safe integers pass, the rest name field, value and fix", () => {
  assert.equal(checkVersion(0), 0);
  assert.equal(checkVersion(2 ** 53 - 1), 2 ** 53 - 1);
  for (const bad of [-1, 0.5, NaN, Infinity, 2 ** 53, "3", null, undefined]) {
    assert.throws(
      () => checkVersion(bad, "sample.policyVersion"),
      new RegExp(`sample.policyVersion must be a non-negative integer .*got ${String(bad)}; use`),
    );
  }
});

Deno.test("checkInt / checkPositive: bounds and messages", () => {
  assert.equal(checkInt(3, "x", 1, "fix"), 3);
  assert.throws(
    () => checkInt(0, "queue capacity", 1, "pass 1+"),
    /queue capacity must be an integer >= 1, got 0; pass 1\+/,
  );
  assert.throws(() => checkInt(1.5, "x", 0, "f"), /got 1.5/);
  assert.equal(checkPositive(0.1, "x", "f"), 0.1);
  for (const bad of [0, -1, Infinity, NaN]) {
    assert.throws(
      () => checkPositive(bad, "ackWaitMs", "f"),
      /ackWaitMs must be a finite number > 0/,
    );
  }
});
