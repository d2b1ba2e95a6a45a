import assert from "node:assert/strict";
import { Rng } from "./random.ts";

Deno.test("Rng: the stream is pinned (the first outputs before and after it moved onto @rlvr/common's Xoshiro128ss)", () => {
  const a = new Rng(0);
  assert.deepEqual(Array.from({ length: 6 }, () => a.nextUint32()), [
    3809008728,
    1133695204,
    53579671,
    2891528803,
    139681546,
    2203266335,
  ]);
  const b = new Rng(-12345);
  assert.deepEqual(Array.from({ length: 6 }, () => b.nextUint32()), [
    1748552663,
    1347840793,
    2339170912,
    777994161,
    3958886592,
    3883748899,
  ]);
  assert.equal(b.normal(), -0.8479935931533565);
  assert.equal(b.normal(), -1.0066390165783305);
  assert.equal(b.int(10), 9);
});
