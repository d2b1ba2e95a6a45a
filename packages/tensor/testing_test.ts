import assert from "node:assert/strict";
import { assertClose, gradcheck } from "./testing.ts";
import { createCpuBackend } from "./backend/cpu/cpu_backend.ts";
import { randn } from "./creation.ts";

Deno.test("assertClose: passes within tolerance, reports the worst index, count and values", () => {
  assertClose([1, 2, 3], [1, 2 + 1e-7, 3], { rtol: 1e-6 });
  assertClose([NaN, Infinity], [NaN, Infinity]);
  assert.throws(
    () => assertClose([[1, 2], [3, 4]], [[1, 2.1], [3, 5]], { rtol: 1e-3, atol: 0 }),
    /2 of 4 elements differ \(rtol=0.001, atol=0\); worst at flat index 3: actual 4, expected 5, \|diff\| 1/,
  );
  assert.throws(
    () => assertClose([1, 2], [1, 2, 3]),
    /sizes differ: actual has 2 elements \[2\], expected 3 \[3\]/,
  );
  assert.throws(() => assertClose([Infinity], [1e308]), /1 of 1 elements differ/);
  assert.throws(() => assertClose(1, NaN, { msg: "loss" }), /^Error: loss: assertClose/);
});

Deno.test("gradcheck frees what it allocates (fn's intermediates included)", async () => {
  const b = createCpuBackend({ precision: "f64" });
  const x = randn([3, 4], { seed: 1, requiresGrad: true, backend: b });
  const before = b.memory().liveBuffers;
  await gradcheck((t) => t.square().sum(1), [x]);
  x.grad?.dispose();
  x.grad = null;
  assert.equal(b.memory().liveBuffers, before);
  x.dispose();
});
