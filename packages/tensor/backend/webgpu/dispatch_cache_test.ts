/**
 * The params-uniform and bind-group cache: reuse by content and identity, LRU bounds, and the
 * backend with the cache on giving the CPU oracle's numbers; and, with and without the cache, the
 * regression that two dispatches recorded right after a submit keep their own params.
 */

import assert from "node:assert/strict";
import { tensor } from "../../creation.ts";
import { tidy, withBackend } from "../../runtime.ts";
import { Rng } from "../../random.ts";
import { cpu, gpuTest } from "./_test_utils.ts";
import { DispatchCache } from "./dispatch_cache.ts";
import { createWebGpuBackend } from "./webgpu_backend.ts";

gpuTest("DispatchCache: uniforms by content, bind groups by buffer identity, LRU bounds", (g) => {
  const retired: GPUBuffer[] = [];
  const cache = new DispatchCache(g.device, 16, (b) => retired.push(b), 2, 2);
  const u1 = cache.uniform(new Uint32Array([1, 2]));
  assert.equal(cache.uniform(new Uint32Array([1, 2])), u1);
  const u2 = cache.uniform(new Uint32Array([1, 3]));
  assert.notEqual(u2, u1);
  assert.deepEqual(cache.stats(), { uniforms: 2, bindGroups: 0, hits: 1, misses: 2 });
  // [1, 2] was used after [1, 3]? No: [1, 3] is newest, so a third key evicts [1, 2].
  cache.uniform(new Uint32Array([9]));
  assert.deepEqual(retired, [u1]);
  assert.equal(cache.stats().uniforms, 2);

  const layout = g.device.createBindGroupLayout({
    entries: [
      { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } },
      { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } },
    ],
  });
  const a = g.device.createBuffer({ size: 64, usage: GPUBufferUsage.STORAGE });
  const b = g.device.createBuffer({ size: 64, usage: GPUBufferUsage.STORAGE });
  const ga = cache.bindGroup(layout, [{ buffer: a, bytes: 64 }], u2);
  assert.equal(cache.bindGroup(layout, [{ buffer: a, bytes: 64 }], u2), ga);
  assert.notEqual(cache.bindGroup(layout, [{ buffer: a, bytes: 32 }], u2), ga); // other size
  assert.notEqual(cache.bindGroup(layout, [{ buffer: b, bytes: 64 }], u2), ga); // other buffer
  assert.equal(cache.stats().bindGroups, 2); // bounded: the oldest was dropped
  cache.clear();
  assert.deepEqual([cache.stats().uniforms, cache.stats().bindGroups], [0, 0]);
  for (const x of [a, b, ...retired]) x.destroy();
});

for (const dispatchCache of [false, true]) {
  gpuTest(
    `dispatches recorded right after a submit keep their own params (cache ${dispatchCache})`,
    async () => {
      const b = await createWebGpuBackend({ dispatchCache });
      try {
        // Nothing pending after a sync: the first dispatch then is the case where a params
        // uniform released too early was reused, and overwritten, by the next dispatch's params
        // before the submit.
        await b.sync();
        const outs = [1, 2, 3, 4].map((v) => {
          const h = b.alloc(5, "f32");
          b.run("fill", [], [h], { value: v });
          return h;
        });
        for (const [i, h] of outs.entries()) {
          assert.deepEqual([...await b.read(h)], new Array(5).fill(i + 1));
        }
      } finally {
        b.destroy();
      }
    },
  );
}

gpuTest(
  "the backend with the dispatch cache on gives the CPU oracle's numbers, step after step",
  async () => {
    const b = await createWebGpuBackend({ dispatchCache: true });
    try {
      const rng = new Rng(3);
      const w = Array.from({ length: 24 }, () => rng.normal());
      const run = async (backend: typeof cpu) =>
        await withBackend(backend, async () => {
          const results: number[][] = [];
          const wt = tensor(w, { shape: [4, 6] });
          let x = tensor(Array.from({ length: 8 }, (_, i) => i / 8), { shape: [2, 4] });
          for (let step = 0; step < 5; step++) {
            // The same kernels with the same geometry each step: the cache's hits.
            const y = tidy(() => x.matmul(wt).softmax(-1).sum(-1, true).mul(x));
            results.push([...await y.data()] as number[]);
            x.dispose();
            x = y;
          }
          x.dispose();
          wt.dispose();
          return results;
        });
      const want = await run(cpu);
      const got = await run(b);
      got.flat().forEach((v, i) =>
        assert.ok(Math.abs(v - want.flat()[i]!) <= 1e-5, `${v} vs ${want.flat()[i]}`)
      );
      const s = b.dispatchCacheStats()!;
      assert.ok(s.hits > 0 && s.misses > 0, JSON.stringify(s));
    } finally {
      b.destroy();
    }
  },
);
