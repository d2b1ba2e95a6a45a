import assert from "node:assert/strict";
import { scoreCompletions } from "@rlvr/policy";
import { arithmeticTask, type TaskRow } from "@rlvr/rewards";
import type { Environment } from "@rlvr/rewards/env";
import { AdamW, noGrad } from "@rlvr/tensor";
import { loadConfig } from "../config/load.ts";
import { collectEpisodes } from "./episode.ts";
import { loadPolicy } from "./policy.ts";
import { trainStep } from "./trainer.ts";

const task = arithmeticTask({ digits: 1, chainLength: 1 });

/**
 * A scripted three-turn environment: after turns 1 and 2 it answers `[t<turn>:<n chars>]|`
 * (text the policy never wrote), and the episode ends after turn 3; the reward is 1 when the
 * last action contains the row's answer.
 */
function scripted(turns = 3, seen: string[][] = []): Environment {
  return {
    name: "scripted",
    task,
    maxTurns: 5,
    stop: ["+"],
    reset(row: TaskRow) {
      let n = 0;
      let last = "";
      const actions: string[] = [];
      seen.push(actions);
      return {
        prompt: `${(row as TaskRow & { expression: string }).expression}=`,
        step(action: string) {
          n++;
          actions.push(action);
          last = action;
          const done = n >= turns;
          return Promise.resolve({
            observation: done ? "" : `[t${n}:${action.length}]|`,
            done,
            ...(n === 1 ? { reward: 0.25 } : {}),
          });
        },
        finalReward: () => Promise.resolve(last.includes(row.answer) ? 1 : 0),
        success: () => last.includes(row.answer),
      };
    },
  };
}

Deno.test("collectEpisodes: the learner scores exactly the sampled tokens, observations are the environment's text with loss mask 0", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const seen: string[][] = [];
    const env = scripted(3, seen);
    const rows = task.rows(3, 3);
    const r = await collectEpisodes(model, tokenizer, env, rows, {
      step: 2,
      seed: 1,
      groupSize: 2,
      maxNewTokens: 5,
      sampling: { temperature: 1 },
    });
    assert.equal(r.items.length, 6);
    assert.equal(r.meanTurns, 3);
    r.items.forEach((it, e) => {
      // The policy's token runs, between the observations, are the actions the environment
      // received, turn by turn (the char tokenizer decodes one character per id).
      const runs: number[][] = [];
      it.lossMask.forEach((m, t) => {
        if (m === 1 && (t === 0 || it.lossMask[t - 1] === 0)) runs.push([]);
        if (m === 1) runs.at(-1)!.push(it.completionIds[t]!);
      });
      assert.deepEqual(
        runs.map((ids) => tokenizer.decode(ids, { skipSpecialTokens: true })),
        seen[e],
      );
      // the turn spans are those runs, each with the observations it acted on
      assert.deepEqual(it.turnSpans.map((sp) => it.completionIds.slice(sp.start, sp.end)), runs);
      const obsText = tokenizer.decode(it.completionIds, { skipSpecialTokens: true })
        .match(/\[t\d:\d+\]\|/g)!;
      assert.deepEqual(it.turnSpans.map((sp) => JSON.parse(sp.state)), [
        [it.prompt],
        [it.prompt, obsText[0]],
        [it.prompt, obsText[0], obsText[1]],
      ]);
      assert.deepEqual(it.turnSpans.map((sp) => sp.reward), [0.25, undefined, undefined]);
    });
    for (const it of r.items) {
      assert.equal(it.turns, 3);
      assert.equal(it.completionIds.length, it.lossMask.length);
      assert.equal(it.completionIds.length, it.samplerLogprobs.length);
      // the two observations sit between the turns, token for token as the tokenizer writes them
      const text = tokenizer.decode(it.completionIds, { skipSpecialTokens: true });
      const obs = [...text.matchAll(/\[t(\d):(\d+)\]\|/g)];
      assert.deepEqual(obs.map((m) => m[1]), ["1", "2"], text);
      const envIds = it.completionIds.filter((_, t) => it.lossMask[t] === 0);
      assert.deepEqual(
        envIds,
        obs.flatMap((m) => tokenizer.encode(m[0], { addSpecialTokens: false })),
      );
      assert.ok(it.reward === it.turnReward + (it.success ? 1 : 0));
      assert.equal(it.turnReward, 0.25);
    }
    // Token in, token out: re-scoring prompt + completion gives the sampler's log-probs at every
    // policy token (a re-tokenised context would not), and the observations were not sampled.
    const scores = noGrad(() =>
      scoreCompletions(
        model,
        r.items.map((it) => ({ promptIds: it.promptIds, completionIds: it.completionIds })),
        { temperature: 1 },
      )
    );
    const lp = await scores.logprobs.data();
    const T = scores.logprobs.shape[1]!;
    r.items.forEach((it, b) =>
      it.lossMask.forEach((m, t) => {
        if (m === 1) {
          assert.ok(Math.abs(lp[b * T + t]! - it.samplerLogprobs[t]!) < 1e-5, `row ${b} t ${t}`);
        } else assert.equal(it.samplerLogprobs[t], 0);
      })
    );
    scores.logprobs.dispose();
    scores.mask.dispose();
    // Same seed, step and rows: the same episodes.
    const again = await collectEpisodes(model, tokenizer, env, rows, {
      step: 2,
      seed: 1,
      groupSize: 2,
      maxNewTokens: 5,
      sampling: { temperature: 1 },
    });
    assert.deepEqual(
      again.items.map((it) => it.completionIds),
      r.items.map((it) => it.completionIds),
    );
  } finally {
    model.dispose();
  }
});

Deno.test("collectEpisodes: an episode ends at maxTurns, or when the context window is full", async () => {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  try {
    const never = scripted(99);
    const r = await collectEpisodes(model, tokenizer, never, task.rows(0, 1), {
      step: 1,
      seed: 0,
      groupSize: 2,
      maxNewTokens: 3,
      maxTurns: 2,
      sampling: { temperature: 1 },
    });
    assert.ok(r.items.every((it) => it.turns === 2));
    const tight = await collectEpisodes(model, tokenizer, never, task.rows(0, 1), {
      step: 1,
      seed: 0,
      groupSize: 1,
      maxNewTokens: 3,
      maxTurns: 50,
      maxContextTokens: 24,
      sampling: { temperature: 1 },
    });
    const it = tight.items[0]!;
    assert.ok(it.promptIds.length + it.completionIds.length <= 24);
    assert.ok(it.turns < 50);
  } finally {
    model.dispose();
  }
});

Deno.test("trainStep with loss masks: observation tokens carry no weight; masking them changes the update", async () => {
  const { config } = await loadConfig({
    set: [
      "rollout.batchSize=4",
      "rollout.groupSize=2",
      "algorithm.microBatchSize=2",
      "optimizer.weightDecay=0",
      "trainer.device=cpu",
    ],
  });
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  const r = await collectEpisodes(model, tokenizer, scripted(), task.rows(5, 2), {
    step: 1,
    seed: 4,
    groupSize: 2,
    maxNewTokens: 4,
    sampling: { temperature: 1 },
  });
  // Rewards that differ within each group, so every episode has a non-zero advantage.
  const items = r.items.map((it, i) => ({ ...it, reward: i % 2 }));
  const update = async (lossMask: (m: number[]) => number[]) => {
    const { model: m } = await loadPolicy("builtin:tiny");
    const before = await Promise.all(m.parameters().map(async (p) => [...await p.data()]));
    const opt = new AdamW(m.parameters(), { lr: 1e-2, weightDecay: 0 });
    await trainStep(
      { config, model: m, ref: null, optimizer: opt },
      items.map((it) => ({ ...it, lossMask: lossMask(it.lossMask) })),
    );
    const after = await Promise.all(m.parameters().map(async (p) => [...await p.data()]));
    opt.dispose();
    m.dispose();
    return before.map((b, i) => b.map((x, j) => after[i]![j]! - x));
  };
  const changed = (d: number[][]) => d.some((x) => x.some((v) => v !== 0));
  // No policy token in the loss: nothing moves.
  assert.equal(changed(await update((m) => m.map(() => 0))), false);
  const withMask = await update((m) => m);
  const everyToken = await update((m) => m.map(() => 1));
  assert.ok(changed(withMask));
  assert.ok(items.some((it) => it.lossMask.includes(0)));
  assert.notDeepEqual(withMask, everyToken);
  model.dispose();
});
