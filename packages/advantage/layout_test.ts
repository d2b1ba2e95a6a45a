import assert from "node:assert/strict";
import fc from "fast-check";
import {
  broadcastScalars,
  fromRows,
  outcomeTokenRewards,
  responseLengths,
  sequenceRewards,
  tokenMatrix,
  toRows,
} from "./layout.ts";

Deno.test("layout golden: row-major indexing, rows round trip, lengths", () => {
  const m = fromRows([[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual([m.batch, m.length], [2, 3]);
  assert.equal(m.data[1 * 3 + 0], 4); // (i, t) at i·length + t
  assert.deepEqual(toRows(m.data, 3), [[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual([...responseLengths(fromRows([[1, 0, 1], [0, 0, 0]]))], [2, 0]);
  assert.equal(tokenMatrix(new Float32Array(6), 3, 2).batch, 3);
});

Deno.test("outcomeTokenRewards / sequenceRewards: the reward sits on the last valid token and sums back", () => {
  const mask = fromRows([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]]);
  const t = outcomeTokenRewards([2, -1, 5], mask);
  // row 1's last valid token is t=2 (after a hole); row 2 has none, its reward is dropped
  assert.deepEqual(toRows(t.data, 4), [[0, 2, 0, 0], [0, 0, -1, 0], [0, 0, 0, 0]]);
  assert.deepEqual([...sequenceRewards(t, mask)], [2, -1, 0]);
  assert.deepEqual([...broadcastScalars([1, 2, 3], mask)], [1, 1, 0, 0, 2, 0, 2, 0, 0, 0, 0, 0]);
});

Deno.test("layout property: sequenceRewards(outcomeTokenRewards(R)) = R for rows with a valid token", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.double({ min: -9, max: 9, noNaN: true }),
          fc.array(fc.constantFrom(0, 1), { minLength: 4, maxLength: 4 }),
        ),
        {
          minLength: 1,
          maxLength: 10,
        },
      ),
      (rows) => {
        const mask = fromRows(rows.map(([, m]) => m));
        const R = rows.map(([r]) => r);
        const back = sequenceRewards(outcomeTokenRewards(R, mask), mask);
        rows.forEach(([r, m], i) => assert.ok(back[i] === (m.includes(1) ? r : 0))); // === : −0 sums to +0
      },
    ),
  );
});

Deno.test("layout: invalid inputs name the argument and the value", () => {
  assert.throws(
    () => tokenMatrix([1, 2, 3], 2, 2),
    /tokenMatrix: data.data has 3 entries but batch·length = 2·2 = 4/,
  );
  assert.throws(
    () => tokenMatrix([1, 2], -1, 2),
    /tokenMatrix: batch must be an integer >= 0, got -1/,
  );
  assert.throws(
    () => fromRows([[1, 2], [3]]),
    /fromRows: rows\[1\] has 1 entries but rows\[0\] has 2/,
  );
  assert.throws(
    () => toRows([1, 2, 3], 2),
    /toRows: data has 3 entries, which is not a multiple of length 2/,
  );
  assert.throws(
    () => sequenceRewards(fromRows([[1, NaN]]), fromRows([[1, 1]])),
    /sequenceRewards: tokenRewards\[0, 1\] is NaN; tokenRewards must be finite numbers where responseMask is 1/,
  );
  assert.throws(
    () => outcomeTokenRewards([1], fromRows([[2]])),
    /outcomeTokenRewards: responseMask\[0, 0\] is 2; a mask must hold only 0 and 1/,
  );
});
