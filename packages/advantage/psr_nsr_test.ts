import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, randomBatch } from "./_test_utils.ts";
import { fromRows } from "./layout.ts";
import { psrNsr } from "./psr_nsr.ts";

Deno.test("psrNsr golden: W-REINFORCE λ = 0.1, PSR only, NSR only", () => {
  const mask = fromRows([[1, 1], [1, 0], [1, 1]]);
  const rewards = [1, 0, -1];
  // W-REINFORCE (paper default λ = 0.1): correct → +0.1, incorrect (0 or −1) → −1
  assert.deepEqual([...psrNsr({ rewards, responseMask: mask }).advantages], [
    0.1,
    0.1,
    -1,
    0,
    -1,
    -1,
  ]);
  // PSR only (the fork's advantage=positive): +1 / 0
  assert.deepEqual(
    [...psrNsr({ rewards, responseMask: mask, positiveWeight: 1, negativeWeight: 0 }).advantages],
    [1, 1, 0, 0, 0, 0],
  );
  // NSR only (advantage=negative): 0 / −1
  assert.deepEqual(
    [...psrNsr({ rewards, responseMask: mask, positiveWeight: 0 }).advantages],
    [0, 0, -1, 0, -1, -1],
  );
  // returns: the 0/1 correctness on valid tokens
  assert.deepEqual([...psrNsr({ rewards, responseMask: mask }).returns], [1, 1, 0, 0, 0, 0]);
});

Deno.test("psrNsr property: λ = 1 equals the unweighted ±1 REINFORCE signal; weights scale each side", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(1, 0, -1), { minLength: 1, maxLength: 20 }),
      fc.double({ min: 0, max: 3, noNaN: true }),
      fc.double({ min: 0, max: 3, noNaN: true }),
      (rewards, lp, ln) => {
        const mask = fromRows(rewards.map(() => [1]));
        const unweighted = psrNsr({
          rewards,
          responseMask: mask,
          positiveWeight: 1,
          negativeWeight: 1,
        });
        assert.deepEqual([...unweighted.advantages], rewards.map((r) => (r === 1 ? 1 : -1)));
        const w = psrNsr({ rewards, responseMask: mask, positiveWeight: lp, negativeWeight: ln });
        rewards.forEach((r, i) => assert.equal(w.advantages[i], r === 1 ? lp * 1 : 0 - ln * 1));
      },
    ),
  );
});

Deno.test("psrNsr: larger random batch vs the fork's formula (returns·λ for correct, returns − 1 otherwise)", () => {
  const b = randomBatch(11, 200, 8, { binary: true });
  const lambda = 0.3;
  const ref = Array.from(b.mask.data, (m, k) => {
    if (!m) return 0;
    const R = b.rewards[Math.floor(k / 8)]!; // γ = 1 outcome return
    return R === 1 ? R * lambda : R - 1;
  });
  assertClose(
    psrNsr({ rewards: b.rewards, responseMask: b.mask, positiveWeight: lambda }).advantages,
    ref,
    {
      atol: 0,
      rtol: 0,
    },
  );
});

Deno.test("psrNsr: invalid inputs name the argument and the value", () => {
  const mask = fromRows([[1], [1]]);
  assert.throws(
    () => psrNsr({ rewards: [1, 0.5], responseMask: mask }),
    /psrNsr: rewards\[1\] is 0.5; PSR\/NSR needs binary rewards/,
  );
  assert.throws(
    () => psrNsr({ rewards: [1, 0], responseMask: mask, positiveWeight: -0.1 }),
    /psrNsr: positiveWeight must be a finite number >= 0, got -0.1/,
  );
});
