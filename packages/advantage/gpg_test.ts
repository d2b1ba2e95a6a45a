import assert from "node:assert/strict";
import { assertClose, randomBatch } from "./_test_utils.ts";
import { gpg } from "./gpg.ts";
import { fromRows } from "./layout.ts";

const ones = (n: number) => fromRows(Array.from({ length: n }, () => [1, 1]));

Deno.test("gpg golden: α = B / #non-zero rewards, group-mean baseline, F_norm", () => {
  const out = gpg({
    rewards: [1, 0, 1, 1, 0, 3],
    responseMask: ones(6),
    index: ["a", "a", "a", "b", "b", "c"],
  });
  // non-zero rewards: 1, 1, 1, 3 → 4 of B = 6, α = 1.5
  // group a [1, 0, 1]: mean 2/3 → α·[1/3, −2/3, 1/3] = [0.5, −1, 0.5]
  // group b [1, 0]: mean 0.5 → α·[0.5, −0.5] = [0.75, −0.75]; singleton c: mean 0 → α·3 = 4.5
  const per = [0.5, -1, 0.5, 0.75, -0.75, 4.5];
  assertClose(out.advantages, per.flatMap((a) => [a, a]), { atol: 1e-15 });
  // F_norm divides; an explicit α replaces veRL's count
  const scaled = gpg({ rewards: [1, 0], responseMask: ones(2), index: [0, 0], fNorm: 2, alpha: 3 });
  assert.deepEqual([...scaled.advantages], [0.75, 0.75, -0.75, -0.75]); // 3·(±0.5)/2
  // all rewards zero: α = B / max(1, 0) = B, advantages 0
  assert.deepEqual([...gpg({ rewards: [0, 0], responseMask: ones(2), index: [0, 0] }).advantages], [
    0,
    0,
    0,
    0,
  ]);
});

Deno.test("gpg: larger random batch vs an independent reference", () => {
  const b = randomBatch(4, 190, 7, { binary: true });
  const nz = b.rewards.filter((r) => r !== 0).length;
  const alpha = 190 / Math.max(1, nz);
  const ref: number[] = [];
  b.rewards.forEach((r, i) => {
    const peers = b.rewards.filter((_, j) => b.index[j] === b.index[i]);
    const mean = peers.length === 1 ? 0 : peers.reduce((x, y) => x + y) / peers.length;
    for (let t = 0; t < 7; t++) ref.push(b.mask.data[i * 7 + t] ? alpha * (r - mean) : 0);
  });
  assertClose(gpg({ rewards: b.rewards, responseMask: b.mask, index: b.index }).advantages, ref, {
    rtol: 1e-12,
    atol: 1e-12,
  });
});

Deno.test("gpg: invalid inputs name the argument and the value", () => {
  assert.throws(
    () => gpg({ rewards: [1, 0], responseMask: ones(2), index: [0, 0], fNorm: 0 }),
    /gpg: fNorm must be a finite number > 0, got 0/,
  );
  assert.throws(
    () => gpg({ rewards: [1, 0], responseMask: ones(2), index: [0, 0], alpha: -2 }),
    /gpg: alpha must be a finite number > 0, got -2/,
  );
});
