import assert from "node:assert/strict";
import fc from "fast-check";
import { assembleGroups, collectGroups, planRollouts } from "./rollout.ts";

Deno.test("planRollouts: group-major slots, sample indices, index = group ids (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("a", "b", "c", "d"), { maxLength: 12 }),
      fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 12, maxLength: 12 }),
      (uids, sizes) => {
        const prompts = uids.map((uid, i) => ({ uid, n: sizes[i]! }));
        const plan = planRollouts(prompts, { groupSize: (p) => p.n });
        assert.equal(plan.slots.length, prompts.reduce((a, p) => a + p.n, 0));
        assert.deepEqual(plan.index, plan.slots.map((s) => s.groupId));
        // group ids are unique and each group's slots are contiguous with indices 0..n-1
        assert.equal(new Set(plan.groups.map((g) => g.groupId)).size, plan.groups.length);
        for (const g of plan.groups) {
          const slots = plan.slots.slice(g.start, g.start + g.size);
          assert.deepEqual(slots.map((s) => s.sampleIndex), [...Array(g.size).keys()]);
          assert.ok(slots.every((s) => s.groupId === g.groupId && s.groupSize === g.size));
          assert.ok(g.groupId === g.uid || g.groupId.startsWith(`${g.uid}#`));
        }
        // outputs in slot order come back grouped
        const outputs = plan.slots.map((s) => `${s.groupId}/${s.sampleIndex}`);
        const groups = collectGroups(plan, outputs);
        for (const g of groups) {
          assert.deepEqual(g.samples, g.samples.map((_, k) => `${g.groupId}/${k}`));
        }
      },
    ),
  );
});

Deno.test("planRollouts: duplicate uids get #2, #3 suffixes; bad inputs name the prompt", () => {
  const plan = planRollouts([{ uid: "x" }, { uid: "x" }, { uid: "x" }], { groupSize: 1 });
  assert.deepEqual(plan.index, ["x", "x#2", "x#3"]);
  assert.throws(
    () => planRollouts([{ id: 1 }], { groupSize: 2 }),
    /prompts\[0\] has no string uid/,
  );
  assert.throws(
    () => planRollouts([{ uid: "q" }], { groupSize: 0 }),
    /groupSize must be an integer >= 1, got 0/,
  );
  assert.throws(
    () => planRollouts([{ uid: "q" }], { groupSize: () => 2.5 }),
    /groupSize of prompts\[0\] \(uid q\)/,
  );
  const custom = planRollouts(["p", "q"], { groupSize: 1, uid: (p) => `u-${p}` });
  assert.deepEqual(custom.index, ["u-p", "u-q"]);
});

Deno.test("collectGroups / assembleGroups: out-of-order assembly and every error case", () => {
  const plan = planRollouts([{ uid: "a" }, { uid: "b" }], { groupSize: 2 });
  assert.throws(() => collectGroups(plan, [1, 2, 3]), /got 3 outputs for a plan of 4 slots/);
  const tagged = plan.slots.map((s) => ({
    groupId: s.groupId,
    sampleIndex: s.sampleIndex,
    sample: `${s.groupId}${s.sampleIndex}`,
  })).reverse();
  assert.deepEqual(assembleGroups(plan, tagged).map((g) => g.samples), [["a0", "a1"], [
    "b0",
    "b1",
  ]]);
  assert.throws(
    () => assembleGroups(plan, [...tagged, tagged[0]!]),
    /sample 1 of group b arrived twice/,
  );
  assert.throws(() => assembleGroups(plan, tagged.slice(1)), /group b is missing sample\(s\) 1/);
  assert.throws(
    () => assembleGroups(plan, [{ groupId: "zz", sampleIndex: 0, sample: "" }]),
    /groupId "zz", which is not in the plan/,
  );
  assert.throws(
    () => assembleGroups(plan, [{ groupId: "a", sampleIndex: 2, sample: "" }]),
    /sampleIndex 2; it must be an integer in \[0, 2\)/,
  );
});
