import assert from "node:assert/strict";
import { record } from "./autograd.ts";
import { createCpuBackend } from "./backend/cpu/cpu_backend.ts";
import { randn, tensor } from "./creation.ts";
import { keep, noGrad, tidy, withBackend } from "./runtime.ts";
import { gradcheck } from "./testing.ts";
import { f64, leaf } from "./_test_utils.ts";
import type { Tensor } from "./tensor.ts";

Deno.test("backward: a reused input accumulates gradients from every path", async () => {
  const x = tensor([1, 2, 3], { requiresGrad: true });
  // y = x·x + x + x·2 → dy/dx = 2x + 3
  x.mul(x).add(x).add(x.mul(2)).sum().backward();
  assert.deepEqual(await x.grad!.toArray(), [5, 7, 9]);
});

Deno.test("backward: diamond graphs visit the shared node once, after both consumers", async () => {
  const x = tensor([0.5, -1], { requiresGrad: true });
  const h = x.exp();
  const y = h.mul(h).add(h).sum();
  y.backward();
  const e = [Math.exp(0.5), Math.exp(-1)];
  const g = await x.grad!.data();
  e.forEach((v, i) => assert.ok(Math.abs(g[i]! - (2 * v * v + v)) < 1e-5));
});

Deno.test("backward: gradients accumulate across calls until zeroed, like PyTorch", async () => {
  const w = tensor([2], { requiresGrad: true });
  w.mul(3).sum().backward();
  w.mul(3).sum().backward();
  assert.deepEqual(await w.grad!.toArray(), [6]);
});

Deno.test(
  "backward: a second gradient is added in place (the accumulate kernel, the bits of " +
    "add) unless another tensor views the first",
  async () => {
    const backend = createCpuBackend();
    const a = Array.from({ length: 9 }, (_, i) => Math.sin(i + 0.5) * 10 ** (i % 5));
    const b = Array.from({ length: 9 }, (_, i) => Math.cos(i) / 3);
    const want = a.map((v, i) => Math.fround(Math.fround(v) + Math.fround(b[i]!)));
    const kernels: string[] = [];
    const run = backend.run.bind(backend);
    backend.run = ((k, i, o, p) => (kernels.push(k), run(k, i, o, p))) as typeof backend.run;
    // Two paths into x: d/dx of sum(x*a) + sum(x*b) is a + b.
    const x = tensor(Array(9).fill(1), { backend, requiresGrad: true });
    const A = tensor(a, { backend }), B = tensor(b, { backend });
    kernels.length = 0;
    tidy(() => x.mul(A).sum().add(x.mul(B).sum())).backward();
    assert.deepEqual([...await x.grad!.data()], want);
    assert.equal(kernels.filter((k) => k === "accumulate").length, 1);

    // A gradient that a view outlives (kept below) must not change when the other one arrives,
    // whichever of the two reaches y first.
    for (const viewedFirst of [true, false]) {
      let kept: Tensor | null = null;
      const y = tensor(Array(9).fill(1), { backend, requiresGrad: true });
      const viaView = (t: Tensor) =>
        record("viewed", noGrad(() => t.mul(1)), [t], [], (g) => {
          const d = g.mul(A);
          kept = keep(d.share());
          return [d];
        });
      tidy(() => {
        const [p, q] = [viaView(y).sum(), y.mul(B).sum()];
        return viewedFirst ? p.add(q) : q.add(p);
      }).backward();
      assert.deepEqual([...await y.grad!.data()], want);
      assert.deepEqual([...await kept!.data()], a.map(Math.fround), `viewedFirst ${viewedFirst}`);
      kept!.dispose();
      y.dispose();
    }
    for (const t of [x, A, B]) t.dispose();
  },
);

Deno.test("backward: a second pass through a freed graph is an error that says what to do", () => {
  const w = tensor([2], { requiresGrad: true });
  const y = w.exp().sum();
  y.backward();
  assert.throws(
    () => y.backward(),
    /already freed by an earlier backward\(\); compute the forward pass again/,
  );
});

Deno.test("backward: non-scalar outputs need an upstream gradient of their shape", async () => {
  const w = tensor([1, 2], { requiresGrad: true });
  const y = w.mul(w);
  assert.throws(() => y.backward(), /a gradient is needed for a non-scalar output of shape \[2\]/);
  assert.throws(
    () => y.backward(tensor([1, 2, 3])),
    /gradient of shape \[3\] does not match output \[2\]/,
  );
  y.backward(tensor([1, 10]));
  assert.deepEqual(await w.grad!.toArray(), [2, 40]);
});

Deno.test("noGrad and detach: no graph is recorded, backward explains why it cannot run", () => {
  const w = tensor([1], { requiresGrad: true });
  const y = noGrad(() => w.mul(2));
  assert.equal(y.requiresGrad, false);
  assert.equal(y.gradFn, null);
  assert.equal(w.mul(2).detach().requiresGrad, false);
  assert.throws(() => y.sum().backward(), /does not require grad; set requiresGrad on the leaves/);
  assert.throws(
    () => tensor([1], { dtype: "i32", requiresGrad: true }),
    /requiresGrad needs dtype f32, got i32/,
  );
});

Deno.test("graph survives tidy disposing the intermediates; memory returns to baseline after backward", async () => {
  const b = createCpuBackend();
  await withBackend(b, async () => {
    const w = randn([4, 3], { seed: 1, requiresGrad: true });
    const x = randn([5, 4], { seed: 2 });
    const base = b.memory().liveBuffers;
    for (let step = 0; step < 200; step++) {
      const loss = tidy(() => x.matmul(w).tanh().square().mean());
      loss.backward();
      loss.dispose();
      w.grad!.dispose();
      w.grad = null;
      assert.equal(b.memory().liveBuffers, base, `step ${step} leaked buffers`);
    }
    // A graph that is never back-propagated is freed with its output.
    const y = tidy(() => x.matmul(w).exp().sum());
    y.dispose();
    assert.equal(b.memory().liveBuffers, base);
    assert.ok(Number.isFinite(await w.sum().item()));
  });
});

Deno.test("gradcheck fails on a deliberately wrong backward (the checker can fail)", async () => {
  const wrongSquare = (x: Tensor): Tensor => {
    const out = noGrad(() => x.mul(x));
    // Correct would be 2·x·g; this drops the factor 2.
    return record("wrongSquare", out, [x], [x], (g, [sx]) => [g.mul(sx!)]);
  };
  await assert.rejects(
    gradcheck(wrongSquare, [leaf([3], 1)]),
    /gradcheck input 0 .* elements differ/,
  );
  await gradcheck((x) => x.mul(x), [leaf([3], 1)]);
  assert.equal(f64.name, "cpu-f64");
});
