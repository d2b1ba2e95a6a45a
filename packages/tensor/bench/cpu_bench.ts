/**
 * CPU-backend benchmarks (`deno task bench`). The CPU backend is the oracle, not the fast path:
 * these numbers are a baseline for the WebGPU and optimised CPU work of later issues. GFLOP/s for
 * matmul is 2·n³ / time; the table with GB/s per backend comes with the WebGPU backend.
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
