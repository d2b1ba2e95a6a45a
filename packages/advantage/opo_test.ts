import assert from "node:assert/strict";
import fc from "fast-check";
import { arbBatch, assertClose, randomBatch } from "./_test_utils.ts";
import { fromRows } from "./layout.ts";
import { opo } from "./opo.ts";

Deno.test("opo golden: length-weighted baseline", () => {
  const out = opo({
    rewards: [1, 0, 0.5, 2],
    responseMask: fromRows([[1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]]),
    index: ["a", "a", "a", "b"],
  });
  // group a: lengths [2, 4, 2], rewards [1, 0, 0.5]
  // b = (2·1 + 4·0 + 2·0.5) / (2 + 4 + 2) = 3/8 = 0.375 → A = [0.625, −0.375, 0.125]
  // singleton b: baseline 0 → A = 2
  assert.deepEqual(
    [...out.advantages],
    [0.625, 0.625, 0, 0, -0.375, -0.375, -0.375, -0.375, 0.125, 0.125, 0, 0, 2, 0, 0, 0],
  );
  assert.deepEqual(out.returns, out.advantages);
});

Deno.test("opo property: equal lengths give the plain group mean (Dr. GRPO)", () => {
  fc.assert(
    fc.property(arbBatch(), ({ mask, rewards, index }) => {
      // force equal lengths: full rows
      const full = {
        data: new Float64Array(mask.data.length).fill(1),
        batch: mask.batch,
        length: mask.length,
      };
      const { advantages } = opo({ rewards, responseMask: full, index });
      rewards.forEach((r, i) => {
        const peers = rewards.filter((_, j) => index[j] === index[i]);
        const b = peers.length > 1 ? peers.reduce((x, y) => x + y) / peers.length : 0;
        assert.ok(Math.abs(advantages[i * mask.length]! - (r - b)) < 1e-9);
      });
    }),
  );
});

Deno.test("opo: larger random batch vs an independent per-group reference", () => {
  const b = randomBatch(3, 211, 13, { holes: true });
  const lens = Array.from({ length: 211 }, (_, i) => {
    let l = 0;
    for (let t = 0; t < 13; t++) l += b.mask.data[i * 13 + t]!;
    return l;
  });
  const ref: number[] = [];
  for (let i = 0; i < 211; i++) {
    const g = b.index.map((x, j) => (x === b.index[i] ? j : -1)).filter((j) => j >= 0);
    const base = g.length === 1
      ? 0
      : g.reduce((s, j) => s + lens[j]! * b.rewards[j]!, 0) / g.reduce((s, j) => s + lens[j]!, 0);
    for (let t = 0; t < 13; t++) ref.push(b.mask.data[i * 13 + t] ? b.rewards[i]! - base : 0);
  }
  assertClose(opo({ rewards: b.rewards, responseMask: b.mask, index: b.index }).advantages, ref, {
    rtol: 1e-10,
    atol: 1e-12,
  });
});

Deno.test("opo: invalid inputs name the argument and the value", () => {
  assert.throws(
    () => opo({ rewards: [NaN], responseMask: fromRows([[1]]), index: [0] }),
    /opo: rewards\[0\] is NaN; rewards must be finite numbers/,
  );
  assert.throws(
    () => opo({ rewards: [1], responseMask: [[1]] as never, index: [0] }),
    /opo: responseMask must be a TokenMatrix/,
  );
});
