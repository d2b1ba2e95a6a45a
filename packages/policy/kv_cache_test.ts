import assert from "node:assert/strict";
import fc from "fast-check";
import { getBackend, Rng, type Tensor, tensor, tidy } from "@rlvr/tensor";
import { KVCache, modelConfig } from "@rlvr/policy";

const CONFIG = modelConfig({
  vocabSize: 10,
  hiddenSize: 8,
  intermediateSize: 16,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 4,
});
const KV = CONFIG.numKvHeads;
const D = CONFIG.headDim;

/** Host model of one layer's cache: `[row][kvHead][token][feature]`. */
type HostKV = number[][][][];

/** Seeded `[batch, kvHeads, t, headDim]` values as a host array and a tensor. */
function block(rng: Rng, batch: number, t: number): { host: HostKV; t: Tensor } {
  const host: HostKV = Array.from(
    { length: batch },
    () =>
      Array.from(
        { length: KV },
        () =>
          Array.from(
            { length: t },
            () => Array.from({ length: D }, () => Math.fround(rng.normal())),
          ),
      ),
  );
  return { host, t: tensor(host.flat(3), { shape: [batch, KV, t, D] }) };
}

Deno.test("KVCache: appends, row selections (with repeats) and lengths match a host model exactly", async () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant("append" as const), t: fc.integer({ min: 1, max: 3 }) }),
    fc.record({
      kind: fc.constant("select" as const),
      rows: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
    }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 3 }),
      fc.array(op, { minLength: 1, maxLength: 6 }),
      fc.nat(),
      async (batch, ops, seed) => {
        const be = getBackend();
        const start = be.memory().liveBuffers;
        const rng = new Rng(seed);
        const cache = new KVCache(CONFIG, batch);
        // Per layer: keys and values of the host model.
        let keys: HostKV[] = [[], []].map(() => Array.from({ length: batch }, () => []));
        let vals: HostKV[] = [[], []].map(() => Array.from({ length: batch }, () => []));
        let rows = batch;
        for (const o of ops) {
          if (o.kind === "append") {
            for (let layer = 0; layer < CONFIG.numLayers; layer++) {
              const k = block(rng, rows, o.t);
              const v = block(rng, rows, o.t);
              const full = cache.append(layer, k.t, v.t);
              keys[layer] = keys[layer]!.map((r, b) =>
                Array.from({ length: KV }, (_, h) => [...(r[h] ?? []), ...k.host[b]![h]!])
              );
              vals[layer] = vals[layer]!.map((r, b) =>
                Array.from({ length: KV }, (_, h) => [...(r[h] ?? []), ...v.host[b]![h]!])
              );
              // What append returns is the whole sequence, as the cache now holds it.
              assert.deepEqual(await full.key.toArray(), keys[layer]);
              for (const t of [k.t, v.t, full.key, full.value]) t.dispose();
            }
          } else {
            const pick = o.rows.map((r) => r % rows);
            cache.selectRows(pick);
            keys = keys.map((l) => pick.map((r) => l[r]!));
            vals = vals.map((l) => pick.map((r) => l[r]!));
            rows = pick.length;
          }
          assert.equal(cache.batch, rows);
          const length = keys[0]![0]![0]?.length ?? 0;
          assert.equal(cache.length, length);
          for (let layer = 0; layer < CONFIG.numLayers; layer++) {
            const kv = cache.layer(layer);
            if (length === 0) {
              assert.equal(kv, null);
              continue;
            }
            assert.deepEqual(await kv!.key.toArray(), keys[layer]);
            assert.deepEqual(await kv!.value.toArray(), vals[layer]);
          }
        }
        cache.dispose();
        assert.equal(cache.length, 0);
        assert.equal(be.memory().liveBuffers, start, "buffers leaked");
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("KVCache: cached tensors carry no graph and outlive the caller's tidy scope", async () => {
  const cache = new KVCache(modelConfig({ ...CONFIG, numLayers: 1 }), 1);
  const rng = new Rng(1);
  const k0 = block(rng, 1, 2);
  const v0 = block(rng, 1, 2);
  tidy(() => {
    cache.append(0, k0.t, v0.t);
  });
  const k1 = tensor(block(rng, 1, 1).host.flat(3), { shape: [1, KV, 1, D], requiresGrad: true });
  const v1 = block(rng, 1, 1);
  const full = tidy(() => cache.append(0, k1, v1.t));
  // The returned keys are differentiable in the new keys; the cache's own copy is a constant.
  assert.ok(full.key.requiresGrad);
  assert.equal(cache.layer(0)!.key.gradFn, null);
  full.key.sum().backward();
  assert.deepEqual([...await k1.grad!.data()], new Array(KV * D).fill(1));
  assert.equal(cache.length, 3);
  assert.deepEqual((await cache.layer(0)!.key.toArray() as number[][][][])[0]![0]!.length, 3);
  for (const t of [k0.t, v0.t, k1, v1.t, full.key, full.value]) t.dispose();
  cache.dispose();
});

Deno.test("KVCache: bad arguments name the method, the value and the fix", () => {
  assert.throws(() => new KVCache(CONFIG, 0), /KVCache: batch must be an integer >= 1, got 0/);
  const cache = new KVCache(CONFIG, 2);
  const rng = new Rng(2);
  const ok = block(rng, 2, 1);
  const wrongBatch = block(rng, 1, 1);
  assert.throws(
    () => cache.append(0, wrongBatch.t, wrongBatch.t),
    /KVCache\.append: key must be \[batch, kvHeads, t, headDim\] = \[2,2,t,4\], got \[1,2,1,4\]/,
  );
  assert.throws(
    () => cache.append(2, ok.t, ok.t),
    /KVCache\.append: layer must be an integer in \[0, 2\), got 2/,
  );
  cache.append(0, ok.t, ok.t);
  // Layer 0 again without layer 1: a forward pass that stopped half-way.
  assert.throws(() => cache.append(0, ok.t, ok.t), /layer 0 holds 1 tokens but the cache holds 0/);
  assert.throws(() => cache.selectRows([]), /rows must list at least one row index/);
  assert.throws(() => cache.selectRows([0, 2]), /rows\[1\] must be an integer in \[0, 2\), got 2/);
  assert.throws(
    () => cache.layer(-1),
    /KVCache\.layer: layer must be an integer in \[0, 2\), got -1/,
  );
  for (const t of [ok.t, wrongBatch.t]) t.dispose();
  cache.dispose();
});
