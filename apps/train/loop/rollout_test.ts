import assert from "node:assert/strict";
import { arithmeticTask } from "@rlvr/rewards";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { collectRollout, type RolloutOptions } from "./rollout.ts";

const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });
const held = heldOutProblems(task, 8);
const base: RolloutOptions = {
  step: 3,
  seed: 1,
  batchSize: 16,
  groupSize: 4,
  maxNewTokens: 6,
  sampling: { temperature: 1 },
  dynamicRetries: null,
  overlong: null,
};

Deno.test("collectRollout: a function of seed, step and data position; groups share their prompt", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const a = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), base);
    const b = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), base);
    const c = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), {
      ...base,
      step: 4,
    });
    const view = (r: typeof a) => r.items.map((it) => [it.prompt, it.text, it.reward]);
    assert.deepEqual(view(b), view(a));
    assert.notDeepEqual(view(c).map((x) => x[1]), view(a).map((x) => x[1]));
    assert.equal(a.items.length, 16);
    for (let g = 0; g < 4; g++) {
      const group = a.items.filter((it) => it.group === g);
      assert.equal(group.length, 4);
      assert.equal(new Set(group.map((it) => it.prompt)).size, 1);
    }
    for (const it of a.items) {
      assert.equal(it.samplerLogprobs.length, it.completionIds.length);
      assert.equal(it.reward, it.correct);
    }
  } finally {
    model.dispose();
  }
});

Deno.test("collectRollout: dynamic sampling keeps only groups with reward variance; overlong shaping penalises long completions", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const r = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), {
      ...base,
      dynamicRetries: 3,
    });
    assert.ok(r.rounds >= 1 && r.rounds <= 4);
    assert.equal(r.items.length % 4, 0);
    for (let g = 0; g < r.items.length / 4; g++) {
      const rewards = r.items.filter((it) => it.group === g).map((it) => it.reward);
      assert.ok(new Set(rewards).size > 1, `group ${g}: ${rewards}`);
    }
    // maxNewTokens 2 with a 2-token buffer: every completion of 2 tokens gets the full penalty.
    const o = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), {
      ...base,
      maxNewTokens: 2,
      overlong: { buffer: 2, penalty: 0.5 },
    });
    for (const it of o.items) {
      const expected = it.correct - 0.5 * (it.completionIds.length === 2 ? 1 : 0.5);
      assert.ok(Math.abs(it.reward - expected) < 1e-12, `${it.reward} vs ${expected}`);
    }
  } finally {
    model.dispose();
  }
});
