import assert from "node:assert/strict";
import fc from "fast-check";
import { checkpoint } from "./checkpoint.ts";
import { createCpuBackend } from "./backend/cpu/cpu_backend.ts";
import { tensor } from "./creation.ts";
import { matmul } from "./ops/matmul.ts";
import { rmsNorm } from "./ops/norm.ts";
import { noGrad, tidy, withBackend } from "./runtime.ts";
import { Rng } from "./random.ts";
import type { Tensor } from "./tensor.ts";
import { gradcheck } from "./testing.ts";
import { leaf } from "./_test_utils.ts";

// A residual MLP block as in a transformer layer: x + W2·silu(W1·rmsnorm(x)·g).
function block(x: Tensor, g: Tensor, w1: Tensor, w2: Tensor): Tensor {
  const h = rmsNorm(x, g, 1e-6);
  return x.add(matmul(matmul(h, w1, { transB: true }).silu(), w2, { transB: true }));
}

function values(rng: Rng, n: number, scale = 1): number[] {
  return Array.from({ length: n }, () => rng.normal() * scale);
}

async function grads(ts: readonly Tensor[]): Promise<number[][]> {
  return await Promise.all(ts.map(async (t) => [...(await t.grad!.data())]));
}

Deno.test("checkpoint: gradients of inputs and parameters equal the plain graph's bit for bit (f32, every seed)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 2 ** 31 }),
      fc.integer({ min: 1, max: 4 }), // blocks
      fc.integer({ min: 1, max: 9 }), // rows
      fc.integer({ min: 2, max: 12 }), // hidden
      fc.integer({ min: 2, max: 20 }), // inner
      async (seed, blocks, rows, d, f) => {
        const run = async (ckpt: boolean) => {
          const rng = new Rng(seed);
          const x = tensor(values(rng, rows * d), { shape: [rows, d], requiresGrad: true });
          const params = Array.from({ length: blocks }, () =>
            [
              tensor(values(rng, d, 0.1).map((v) => 1 + v), { requiresGrad: true }),
              tensor(values(rng, f * d, 0.3), { shape: [f, d], requiresGrad: true }),
              tensor(values(rng, d * f, 0.3), { shape: [d, f], requiresGrad: true }),
            ] as const);
          tidy(() => {
            let h = x;
            for (const [g, w1, w2] of params) {
              const prev = h;
              h = ckpt ? checkpoint((a) => block(a, g, w1, w2), [prev]) : block(prev, g, w1, w2);
            }
            h.square().sum().backward();
          });
          return await grads([x, ...params.flat()]);
        };
        assert.deepEqual(await run(true), await run(false));
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("checkpoint: gradients match central finite differences (f64)", async () => {
  await withBackend(createCpuBackend({ precision: "f64" }), async () => {
    for (const seed of [1, 2, 3]) {
      const x = leaf([3, 4], seed);
      const g = leaf([4], seed + 10, (v) => 1 + 0.1 * v);
      const w1 = leaf([5, 4], seed + 20, (v) => 0.3 * v);
      const w2 = leaf([4, 5], seed + 30, (v) => 0.3 * v);
      await gradcheck(
        (a, gg, u, v) => checkpoint((t) => block(t, gg!, u!, v!), [a!]),
        [x, g, w1, w2],
        { rtol: 1e-5, atol: 1e-7 },
      );
    }
  });
});

Deno.test("checkpoint: a block whose input needs no gradient still trains its parameters", async () => {
  const rng = new Rng(5);
  const x = tensor(values(rng, 12), { shape: [3, 4] }); // a frozen embedding's output
  const g = tensor([1, 1, 1, 1], { requiresGrad: true });
  const w1 = tensor(values(rng, 20), { shape: [5, 4], requiresGrad: true });
  const w2 = tensor(values(rng, 20), { shape: [4, 5], requiresGrad: true });
  checkpoint((a) => block(a, g, w1, w2), [x]).sum().backward();
  const [gw1, gw2] = await grads([w1, w2]);
  assert.ok(gw1!.some((v) => v !== 0) && gw2!.some((v) => v !== 0));
  assert.equal(x.grad, null);
});

Deno.test("checkpoint: keeps only the blocks' inputs alive between forward and backward", () => {
  const cpu = createCpuBackend();
  withBackend(cpu, () => {
    const rng = new Rng(9);
    const [rows, d, f, blocks] = [64, 32, 128, 6];
    const x = tensor(values(rng, rows * d), { shape: [rows, d], requiresGrad: true });
    const params = Array.from({ length: blocks }, () =>
      [
        tensor(values(rng, d), { requiresGrad: true }),
        tensor(values(rng, f * d, 0.1), { shape: [f, d], requiresGrad: true }),
        tensor(values(rng, d * f, 0.1), { shape: [d, f], requiresGrad: true }),
      ] as const);
    const heldAfterForward = (ckpt: boolean): number => {
      const before = cpu.memory().liveBytes;
      let held = 0;
      tidy(() => {
        let h = x;
        for (const [g, w1, w2] of params) {
          const prev = h;
          h = ckpt ? checkpoint((a) => block(a, g, w1, w2), [prev]) : block(prev, g, w1, w2);
        }
        const loss = h.square().sum();
        held = cpu.memory().liveBytes - before;
        loss.backward();
      });
      return held;
    };
    const plain = heldAfterForward(false);
    const ckpt = heldAfterForward(true);
    // Plain: each block keeps its normed input, two products and the silu ([rows, f] each);
    // checkpointed: one [rows, d] input per block (and the outputs).
    assert.ok(ckpt * 4 < plain, `checkpointed ${ckpt} bytes vs plain ${plain} bytes`);
  });
});

Deno.test("checkpoint: without gradients it is just the block", () => {
  const x = tensor([1, 2], { requiresGrad: true });
  const y = noGrad(() => checkpoint((a) => a.mul(2), [x]));
  assert.equal(y.gradFn, null);
  assert.equal(y.requiresGrad, false);
});
