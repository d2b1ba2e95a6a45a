import assert from "node:assert/strict";
import { createCpuBackend } from "./backend/cpu/cpu_backend.ts";
import { tensor } from "./creation.ts";
import { keep, tidy, withBackend } from "./runtime.ts";

Deno.test("tidy: frees what it created except the result, including nested scopes", async () => {
  const b = createCpuBackend();
  await withBackend(b, async () => {
    const x = tensor([1, 2, 3]);
    const base = b.memory().liveBuffers;
    const { y, z } = tidy(() => {
      const inner = tidy(() => x.mul(2).add(1));
      const unused = inner.exp();
      assert.ok(!unused.isDisposed);
      return { y: inner.sum(), z: [inner] };
    });
    assert.equal(b.memory().liveBuffers, base + 2);
    assert.equal(await y.item(), 15);
    assert.deepEqual(await z[0]!.toArray(), [3, 5, 7]);
    y.dispose();
    z[0]!.dispose();
    assert.equal(b.memory().liveBuffers, base);
  });
});

Deno.test("tidy: keep() saves a tensor; a throwing scope still frees; async fns are refused", () => {
  const b = createCpuBackend();
  withBackend(b, () => {
    const base = b.memory().liveBuffers;
    let kept = tensor([0]);
    kept.dispose();
    tidy(() => {
      kept = keep(tensor([1]).add(1));
    });
    assert.equal(b.memory().liveBuffers, base + 1);
    assert.throws(() =>
      tidy(() => {
        tensor([1, 2]).mul(3);
        throw new Error("boom");
      }), /boom/);
    assert.equal(b.memory().liveBuffers, base + 1);
    assert.throws(() => tidy(() => Promise.resolve(1)), /tidy: fn returned a Promise/);
    kept.dispose();
    assert.equal(b.memory().liveBuffers, base);
  });
});

Deno.test("using: a tensor declared with `using` is disposed at the end of the block", () => {
  const b = createCpuBackend();
  withBackend(b, () => {
    const base = b.memory().liveBuffers;
    {
      using t = tensor([1, 2]);
      assert.equal(t.size, 2);
      assert.equal(b.memory().liveBuffers, base + 1);
    }
    assert.equal(b.memory().liveBuffers, base);
  });
});

Deno.test("dispose: use after dispose fails with the shape and dtype; double dispose is harmless", () => {
  const t = tensor([[1, 2]]);
  t.dispose();
  t.dispose();
  assert.throws(() => t.add(1), /Tensor \[1,2\] f32 was used after dispose\(\)/);
});

Deno.test("views share a buffer: disposing the original keeps the reshaped view alive", async () => {
  const b = createCpuBackend();
  await withBackend(b, async () => {
    const base = b.memory().liveBuffers;
    const t = tensor([1, 2, 3, 4]);
    const v = t.reshape(2, 2);
    assert.equal(b.memory().liveBuffers, base + 1);
    t.dispose();
    assert.deepEqual(await v.toArray(), [[1, 2], [3, 4]]);
    v.dispose();
    assert.equal(b.memory().liveBuffers, base);
  });
});

Deno.test("backends: mixing tensors of two backends is an error naming both", () => {
  const a = tensor([1], { backend: createCpuBackend() });
  const c = tensor([1], { backend: createCpuBackend({ precision: "f64" }) });
  assert.throws(() => a.add(c), /add: tensors live on different backends \(cpu and cpu-f64\)/);
});
