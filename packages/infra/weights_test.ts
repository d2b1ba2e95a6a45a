import assert from "node:assert/strict";
import fc from "fast-check";
import { parseSafetensors, type Tensor, tensor } from "@rlvr/tensor";
import {
  applySnapshot,
  sha256Hex,
  snapshot,
  verifySnapshot,
  WeightChecksumError,
  WeightMismatchError,
} from "./weights.ts";

function params(seed: number): Map<string, Tensor> {
  return new Map([
    ["model.embed_tokens.weight", tensor([[seed, seed + 1, seed + 2], [0.5, -0.25, seed * 3]])],
    ["model.norm.weight", tensor([1, seed / 7, -2])],
  ]);
}

async function values(p: Map<string, Tensor>): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const [n, t] of p) out[n] = [...await t.data()];
  return out;
}

function dispose(p: Map<string, Tensor>): void {
  for (const t of p.values()) t.dispose();
}

Deno.test("snapshot round trip: values, version metadata, checksum = sha256(bytes)", async () => {
  const trainer = params(3);
  const worker = params(0);
  const snap = await snapshot(trainer, 12);
  assert.equal(snap.version, 12);
  assert.equal(snap.checksum, await sha256Hex(snap.bytes));
  assert.equal(parseSafetensors(snap.bytes).metadata["rlvr.version"], "12");
  const before = worker.get("model.norm.weight")!;
  assert.equal(await applySnapshot(worker, snap), 12);
  // written in place: the same tensor objects (the optimizer holds them) now hold new values
  assert.equal(worker.get("model.norm.weight"), before);
  assert.deepEqual(await values(worker), await values(trainer));
  dispose(trainer);
  dispose(worker);
});

Deno.test("a flipped bit anywhere is detected and never applied (property)", async () => {
  const trainer = params(5);
  const snap = await snapshot(trainer, 2);
  const worker = params(1);
  const original = await values(worker);
  await fc.assert(
    fc.asyncProperty(
      fc.nat({ max: snap.bytes.length - 1 }),
      fc.integer({ min: 0, max: 7 }),
      async (at, bit) => {
        const bad = snap.bytes.slice();
        bad[at] = bad[at]! ^ (1 << bit);
        const err = await verifySnapshot(bad, snap.checksum, 2).then(
          () => null,
          (e: unknown) => e,
        );
        assert.ok(err instanceof WeightChecksumError, `flip at byte ${at} bit ${bit} not caught`);
        assert.equal(err.version, 2);
        assert.equal(err.expected, snap.checksum);
        assert.equal(err.actual, await sha256Hex(bad));
        assert.match(err.message, /version 2/);
        assert.match(err.message, new RegExp(snap.checksum));
        // applySnapshot re-verifies: the corrupt bytes are refused and the model is untouched
        await assert.rejects(
          applySnapshot(worker, { version: 2, bytes: bad, checksum: snap.checksum }),
          WeightChecksumError,
        );
        assert.deepEqual(await values(worker), original);
      },
    ),
    { numRuns: 60 },
  );
  dispose(trainer);
  dispose(worker);
});

Deno.test("applySnapshot lists every name/shape mismatch and writes nothing", async () => {
  const snap = await snapshot(
    { a: tensor([1, 2, 3]), b: tensor([[1, 2]]), extra: tensor([9]) },
    1,
  );
  const model = { a: tensor([0, 0, 0]), b: tensor([0, 0]), missing: tensor([0]) };
  const err = await applySnapshot(model, snap).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof WeightMismatchError);
  assert.deepEqual([...err.mismatches].sort(), [
    "b: shape [1, 2] in the snapshot, [2] in the model",
    "extra: in the snapshot, missing from the model",
    "missing: in the model, missing from the snapshot",
  ]);
  assert.match(err.message, /3 mismatches; nothing was applied/);
  // "a" fits, but nothing is written while anything else does not
  assert.deepEqual(await model.a.toArray(), [0, 0, 0]);
  for (const t of Object.values(model)) t.dispose();
});

Deno.test("applySnapshot refuses to go back in versions; same version is allowed", async () => {
  const p = { w: tensor([1]) };
  const snap = await snapshot(p, 3);
  await assert.rejects(applySnapshot(p, snap, { currentVersion: 4 }), /older than .* \(4\)/);
  assert.equal(await applySnapshot(p, snap, { currentVersion: 3 }), 3);
  p.w.dispose();
});

Deno.test("verifySnapshot: the metadata version must match the published version", async () => {
  const snap = await snapshot({ w: tensor([1]) }, 3);
  await assert.rejects(
    verifySnapshot(snap.bytes, snap.checksum, 4),
    /metadata rlvr.version is "3"/,
  );
  // upper-case hex from another tool is accepted
  assert.equal((await verifySnapshot(snap.bytes, snap.checksum.toUpperCase(), 3)).version, 3);
});

Deno.test("snapshot validates its inputs with a clear message", async () => {
  await assert.rejects(snapshot({ w: tensor([1]) }, -1), /version must be a non-negative integer/);
  await assert.rejects(snapshot({ w: tensor([1]) }, 1.5), /got 1.5/);
  await assert.rejects(snapshot({}, 0), /params is empty/);
  const ids = tensor([1, 2], { dtype: "i32" });
  await assert.rejects(snapshot({ ids }, 0), /"ids" has dtype i32/);
  ids.dispose();
});
