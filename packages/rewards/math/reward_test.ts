import assert from "node:assert/strict";
import { mathReward } from "./reward.ts";

const ctx = { signal: new AbortController().signal };
const score = async (
  reward: ReturnType<typeof mathReward>,
  completion: string,
  row: Record<string, unknown>,
) => await reward.score!({ completion, prompt: "", row }, ctx);

Deno.test("mathReward: 1 / 0 / null and the defaults", async () => {
  const r = mathReward();
  assert.equal(r.name, "math");
  assert.equal(r.timeoutMs, undefined);
  assert.equal(await score(r, "\\boxed{\\frac{1}{2}}", { answer: "0.5" }), 1);
  assert.equal(await score(r, "\\boxed{\\frac{1}{3}}", { answer: "0.5" }), 0);
  assert.equal(await score(r, "no answer", { answer: "0.5" }), 0);
  assert.equal(await score(r, "\\boxed{1}", {}), null);
  assert.equal(await score(r, "\\boxed{1}", { answer: "" }), null);
  assert.equal(await score(r, "\\boxed{1}", { answer: null }), null);
  assert.equal(await score(r, "\\boxed{1}", { answer: { value: 1 } }), null);
});

Deno.test("mathReward: gold field, numbers, lists, solutions, name, options", async () => {
  const r = mathReward({ goldField: "solution", name: "acc", timeoutMs: 500, percent: "value" });
  assert.equal(r.name, "acc");
  assert.equal(r.timeoutMs, 500);
  assert.equal(await score(r, "#### 72", { solution: "She sold 72.\n#### 72" }), 1);
  assert.equal(await score(r, "\\boxed{10\\%}", { solution: "0.1" }), 1);
  assert.equal(await score(r, "\\boxed{72}", { answer: "72" }), null);
  const plain = mathReward();
  assert.equal(await score(plain, "\\boxed{72}", { answer: 72 }), 1);
  assert.equal(await score(plain, "\\boxed{72}", { answer: 72n }), 1);
  assert.equal(await score(plain, "\\boxed{0.5}", { answer: ["\\frac12", "50\\%"] }), 1);
  assert.equal(await score(plain, "\\boxed{3}", { answer: ["1", "2"] }), 0);
  assert.equal(await score(plain, "\\boxed{3}", { answer: [] }), null);
});
