import assert from "node:assert/strict";
import { arithmeticTask, checkFormat } from "@rlvr/rewards";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { collectRollout, type RolloutOptions, rolloutReward } from "./rollout.ts";

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

Deno.test("rolloutReward: task.formatWeight adds weight x the strict <think>/<answer> format reward; weight 0 leaves the verifier's reward exactly", () => {
  const row = task.row(0, 0);
  const right = row.answer;
  const wrong = String(Number(row.answer) + 1);
  const opts = { formatWeight: 0.25, thinkInPrompt: false, maxNewTokens: 64, overlong: null };
  const cases: [string, number, number][] = [
    // completion, verifier, format
    [`<think>add the tens</think>\n<answer>${right}</answer>`, 1, 1],
    [`<think>add the tens</think><answer>${wrong}</answer>`, 0, 1],
    [right, 1, 0],
    // The relaxed layout (text around the blocks) does not pass the strict check.
    [`Sure. <think>x</think> <answer>${right}</answer> done`, 1, 0],
    [`<answer>${right}</answer>`, 1, 0],
  ];
  for (const [text, correct, format] of cases) {
    const r = rolloutReward(task, row, text, 8, opts);
    assert.deepEqual(r, { reward: correct + 0.25 * format, correct, format }, text);
    const off = rolloutReward(task, row, text, 8, { ...opts, formatWeight: 0 });
    assert.deepEqual(off, { reward: correct, correct, format: null }, text);
  }
  // A prompt that already opened <think> (R1-style templates): the completion continues it.
  const continued = `carry the one</think><answer>${right}</answer>`;
  assert.equal(rolloutReward(task, row, continued, 8, opts).format, 0);
  assert.equal(rolloutReward(task, row, continued, 8, { ...opts, thinkInPrompt: true }).format, 1);
  // With the overlong penalty too: verifier + format + penalty, in that order.
  const both = rolloutReward(task, row, cases[0]![0], 64, {
    ...opts,
    overlong: { buffer: 8, penalty: 0.5 },
  });
  assert.equal(both.reward, 1 + 0.25 - 0.5);
});

Deno.test("collectRollout: with formatWeight > 0 every reward is verifier + weight x format; with 0 the rewards are the verifier's", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const off = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), base);
    const on = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), {
      ...base,
      formatWeight: 0.5,
    });
    assert.deepEqual(on.items.map((it) => it.text), off.items.map((it) => it.text));
    off.items.forEach((it, i) => {
      assert.equal(it.format, null);
      assert.equal(it.reward, it.correct);
      const o = on.items[i]!;
      assert.equal(o.format, checkFormat(o.text, { mode: "strict" }) ? 1 : 0);
      assert.equal(o.reward, o.correct + 0.5 * o.format!);
    });
    await assert.rejects(
      collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), {
        ...base,
        formatWeight: -1,
      }),
      /formatWeight must be a finite number >= 0, got -1/,
    );
  } finally {
    model.dispose();
  }
});

Deno.test("collectRollout with greedyBaseline: every sample of a prompt carries the reward of its greedy completion (ReMax)", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const r = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), {
      ...base,
      greedyBaseline: true,
    });
    const plain = await collectRollout(
      model,
      tokenizer,
      task,
      new TrainStream(task, 0, held),
      base,
    );
    // The samples are those of a run without the baseline (greedy draws no random numbers).
    assert.deepEqual(r.items.map((it) => it.text), plain.items.map((it) => it.text));
    assert.ok(plain.items.every((it) => it.baselineReward === undefined));
    // The baseline is the reward of the argmax completion, which T -> 0 sampling gives too.
    const greedy = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, held), {
      ...base,
      sampling: { temperature: 0 },
    });
    for (const [i, it] of r.items.entries()) {
      assert.equal(it.baselineReward, greedy.items[i]!.reward, `item ${i}`);
    }
    assert.ok(r.generatedTokens > plain.generatedTokens, "the greedy tokens are counted");
  } finally {
    model.dispose();
  }
});

Deno.test("collectRollout: a group whose rewards are all equal counts as flat though their float std is not 0 (eight 0.1s)", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny-cot");
  const hard = arithmeticTask({ digits: 1, operators: ["+"], chainLength: 3 });
  try {
    const opts = { ...base, batchSize: 64, groupSize: 8, maxNewTokens: 64, formatWeight: 0.1 };
    const r = await collectRollout(model, tokenizer, hard, new TrainStream(hard, 0, []), opts);
    const groups = Array.from(
      { length: 8 },
      (_, g) => r.items.filter((it) => it.group === g).map((it) => it.reward),
    );
    const flat = groups.filter((g) => g.every((x) => x === g[0]));
    assert.ok(flat.some((g) => g[0] === 0.1), `no all-wrong group in ${JSON.stringify(groups)}`);
    assert.equal(r.fracZeroStdGroups, flat.length / 8);
    const d = await collectRollout(model, tokenizer, hard, new TrainStream(hard, 0, []), {
      ...opts,
      dynamicRetries: 2,
    });
    for (let g = 0; g < d.items.length / 8; g++) {
      const rewards = d.items.filter((it) => it.group === g).map((it) => it.reward);
      assert.ok(new Set(rewards).size > 1, `group ${g}: ${rewards}`);
    }
  } finally {
    model.dispose();
  }
});
