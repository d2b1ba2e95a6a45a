import assert from "node:assert/strict";
import fc from "fast-check";
import { defineReward } from "@rlvr/rewards";
import { getEstimator } from "@rlvr/advantage";
import { checkSteps, stepTurns } from "./reward_steps.ts";
import { RewardSet } from "./reward_set.ts";

Deno.test("stepTurns: turns cover the completion in order; a step ends at the first token reaching its offset", () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 5 }),
      fc.double({ min: 0, max: 2, noNaN: true }),
      (pieces, cuts, weight) => {
        const decode = (ids: number[]) => ids.map((i) => pieces[i]).join("");
        const ids = pieces.map((_, i) => i);
        const text = decode(ids);
        const ends = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const steps = ends.map((end, k) => ({ end, value: k }));
        const turns = stepTurns(steps, ids, decode, weight);
        assert.equal(turns.length, steps.length + 1);
        assert.equal(turns[0]!.start, 0);
        assert.equal(turns.at(-1)!.end, ids.length);
        assert.equal(turns.at(-1)!.state, "rest");
        assert.equal("reward" in turns.at(-1)!, false);
        turns.forEach((t, k) => {
          if (k > 0) assert.equal(t.start, turns[k - 1]!.end);
          assert.ok(t.end >= t.start);
        });
        steps.forEach((s, k) => {
          const t = turns[k]!;
          assert.equal(t.state, `step${k}`);
          assert.equal(t.reward, weight * s.value);
          // The turn's tokens decode to at least the text up to the offset, and one token fewer
          // would not reach it (unless the offset was already reached by an earlier turn).
          assert.ok(decode(ids.slice(0, t.end)).length >= s.end);
          if (t.end > t.start) assert.ok(decode(ids.slice(0, t.end - 1)).length < s.end);
        });
      },
    ),
  );
});

Deno.test("stepTurns: a tokenizer whose pieces do not add up (half a character per token) is decoded by prefixes", () => {
  // Two tokens make one "é": alone each decodes to the replacement character.
  const decode = (ids: number[]) => {
    let out = "";
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] === 1 && ids[i + 1] === 2) {
        out += "é";
        i++;
      } else out += ids[i] === 0 ? "a" : "\ufffd";
    }
    return out;
  };
  // "a", "é" (tokens 1, 2), "a": offsets 1, 2, 3.
  const turns = stepTurns([{ end: 2, value: 1 }], [0, 1, 2, 0], decode, 1);
  assert.deepEqual(turns, [
    { state: "step0", reward: 1, start: 0, end: 3 },
    { state: "rest", start: 3, end: 4 },
  ]);
});

Deno.test("checkSteps: refuses what is not steps of the value, naming the reward and the fix", () => {
  assert.throws(() => checkSteps("rows", "x", 1, 5), /reward rows: steps must be an array/);
  assert.throws(
    () => checkSteps("rows", [{ end: 3, value: 1 }, { end: 2, value: 0 }], 1, 5),
    /reward rows: steps\[1\]\.end is 2; ends are integer character offsets in order, from 3/,
  );
  assert.throws(
    () => checkSteps("rows", [{ end: 1.5, value: 1 }], 1, 5),
    /steps\[0\]\.end is 1\.5/,
  );
  assert.throws(
    () => checkSteps("rows", [{ end: 1, value: NaN }], 1, 5),
    /steps\[0\]\.value is NaN; a step's value is a finite number/,
  );
  assert.throws(
    () => checkSteps("rows", [{ end: 1, value: 0.5 }], 1, 5),
    /sum to 0\.5, not its value 1/,
  );
  assert.deepEqual(checkSteps("rows", [], 0, 5), []);
});

const half = (completion: string) => Math.floor(completion.length / 2);
/** A stepped reward: 1 per "x" in each half of the completion, steps at the half and the end. */
const xs = {
  ...defineReward("xs", ({ completion }) => (completion.match(/x/g) ?? []).length),
  steps({ completion }: { completion: string }) {
    const count = (s: string) => (s.match(/x/g) ?? []).length;
    const h = half(completion);
    return [
      { end: h, value: count(completion.slice(0, h)) },
      { end: completion.length, value: count(completion.slice(h)) },
    ];
  },
};

Deno.test("RewardSet: one stepped component's steps come back checked; a bad step fails its sample", async () => {
  const liar = { ...xs, steps: () => [{ end: 0, value: 99 }] };
  const set = new RewardSet([
    { name: "xs", weight: 0.5, reward: xs, logprobs: false },
    { name: "len", weight: 1, reward: defineReward("len", () => 1), logprobs: false },
  ]);
  const s = await set.score([
    { prompt: "", completion: "xaxx", row: {} },
    { prompt: "", completion: "", row: {} },
  ]);
  assert.deepEqual(s.totals, [2.5, 1]);
  assert.deepEqual(s.steps, [[{ end: 2, value: 1 }, { end: 4, value: 2 }], [
    { end: 0, value: 0 },
    { end: 0, value: 0 },
  ]]);
  const bad = new RewardSet([{ name: "xs", weight: 1, reward: liar, logprobs: false }]);
  const b = await bad.score([{ prompt: "", completion: "xx", row: {} }]);
  assert.deepEqual(b.totals, [null]);
  assert.deepEqual(b.steps, [null]);
  assert.match(b.errors[0]!.reason, /reward xs: steps sum to 99, not its value 2/);
  assert.throws(
    () =>
      new RewardSet([
        { name: "a", weight: 1, reward: xs, logprobs: false },
        { name: "b", weight: 1, reward: { ...xs, name: "b" }, logprobs: false },
      ]),
    /rewards: a and b both report steps; one reward of a run may/,
  );
});

Deno.test("GiGPO over a stepped reward's turns: each step is compared with the same step of the group", () => {
  // Two samples of one prompt, 4 tokens each ("xaxa" style): step 0 is the first two tokens,
  // step 1 the last two, no rest. Sample 0 got step 0 right, sample 1 step 1.
  const decode = (ids: number[]) => ids.map((i) => "xa"[i]).join("");
  const a = [0, 1, 1, 1]; // "xaaa": step values 1, 0
  const b = [1, 1, 0, 1]; // "aaxa": step values 0, 1
  const turnsOf = (ids: number[]) => {
    const text = decode(ids);
    return stepTurns(xs.steps({ completion: text }), ids, decode, 1);
  };
  const out = getEstimator("gigpo")({
    rewards: [1, 1],
    responseMask: { data: new Float64Array(8).fill(1), batch: 2, length: 4 },
    index: [0, 0],
    turns: [turnsOf(a), turnsOf(b)],
    gamma: 0,
    gigpoMode: "mean_std_norm",
  });
  const adv = Array.from(out.advantages);
  // Equal totals: the episode advantage is 0, so each token's advantage is its step's alone:
  // positive where the sample got that step and the other did not, negative the other way.
  assert.ok(adv[0]! > 0 && adv[1]! > 0 && adv[2]! < 0 && adv[3]! < 0, String(adv));
  assert.ok(adv[4]! < 0 && adv[5]! < 0 && adv[6]! > 0 && adv[7]! > 0, String(adv));
});
