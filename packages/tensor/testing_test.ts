import assert from "node:assert/strict";
import { assertClose, gradcheck, type ParityCase, runParityCase } from "./testing.ts";
import { createCpuBackend } from "./backend/cpu/cpu_backend.ts";
import { randn } from "./creation.ts";
import { keep } from "./runtime.ts";
import type { Tensor } from "./tensor.ts";

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

Deno.test("runParityCase: outputs and the leaf gradients of Σ_k sum(out_k · w_k), seeded weights", async () => {
  const b = createCpuBackend({ precision: "f64" });
  const c: ParityCase = {
    name: "scale and sum",
    leaves: [
      { values: [1, -2, 3], shape: [3], requiresGrad: true },
      { values: [0, 2], shape: [2], dtype: "i32" },
    ],
    fn: (x) => [x.mul(3), x.sum()],
    seed: 5,
  };
  const before = b.memory().liveBuffers;
  const run = await runParityCase(b, c);
  assert.equal(b.memory().liveBuffers, before);
  assertClose(run.outs[0]!, [3, -6, 9]);
  assertClose(run.outs[1]!, [2]);
  assert.deepEqual(run.weights.map((w) => w.length), [3, 1]);
  assert.ok(run.weights.flat().every((w) => w >= -1 && w < 1));
  // d/dx_j [Σ 3·x·w0 + w1·Σ x] = 3·w0_j + w1
  const [w0, w1] = run.weights as [number[], number[]];
  assertClose(run.grads[0]!, w0.map((w) => 3 * w + w1[0]!));
  assert.equal(run.grads[1], null); // the i32 leaf
  assert.deepEqual((await runParityCase(b, c)).weights, run.weights); // the seed fixes them
  // Without a leaf that requires a gradient there is no backward and no weight is drawn.
  const frozen = await runParityCase(b, { ...c, leaves: [{ values: [1, 2], shape: [2] }] });
  assert.deepEqual(frozen.weights, []);
  assert.deepEqual(frozen.grads, [null]);
});

Deno.test("runParityCase: a tensor left alive fails, naming the case and the backend", async () => {
  const b = createCpuBackend();
  let leaked: Tensor | undefined;
  await assert.rejects(
    runParityCase(b, {
      name: "leaky",
      leaves: [{ values: [1, 2], shape: [2], requiresGrad: true }],
      fn: (x) => {
        leaked = keep(x.add(1)); // escapes the tidy scope and is never disposed
        return x.mul(2);
      },
      seed: 0,
    }),
    new RegExp(`leaky: ${b.name} leaked \\d+ buffers \\(live before \\d+, after \\d+\\)`),
  );
  leaked!.dispose();
});
