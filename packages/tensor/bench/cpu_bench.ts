/**
 * CPU-backend micro-benchmarks through the public ops, with `deno bench` statistics
 * (`deno task bench:cpu`). The CPU backend is the oracle, not the fast path. The per-backend
 * kernel tables (GFLOP/s and GB/s, CPU and WebGPU, JSON results) are `deno task bench`
 * (`bench/kernels.ts` at the repository root); this file stays for `deno bench`'s op-level view.
 *
 * @module
 */

import { matmul, randn, softmax, tidy } from "../mod.ts";

for (const n of [64, 128, 256]) {
  const a = randn([n, n], { seed: 1 });
  const b = randn([n, n], { seed: 2 });
  Deno.bench({
    name: `matmul ${n}x${n}x${n} (${((2 * n ** 3) / 1e9).toFixed(3)} GFLOP per call)`,
    group: "matmul",
    fn() {
      tidy(() => {
        matmul(a, b);
      });
    },
  });
}

const logits = randn([64, 4096], { seed: 3 });
Deno.bench({
  name: "softmax 64x4096",
  fn() {
    tidy(() => {
      softmax(logits);
    });
  },
});
