/**
 * The WebGPU runtime: buffers, pool reuse and its ordering rules, batching, aliasing, limits,
 * errors, device loss and debug output.
 */

import assert from "node:assert/strict";
import { tensor } from "../../creation.ts";
import { cpu, gpuTest } from "./_test_utils.ts";
import { createWebGpuBackend } from "./webgpu_backend.ts";
import { sizeClass } from "./pool.ts";

const copyAll = (n: number) => ({
  shape: [n],
  inStrides: [1],
  inOffset: 0,
  outStrides: [1],
  outOffset: 0,
});

gpuTest(
  "buffers are zero-filled, round-trip exactly and read back as the CPU backend's arrays",
  async (gpu) => {
    const before = gpu.memory();
    for (const dtype of ["f32", "i32", "bool"] as const) {
      const values = [1.5, -2, 0, 3e9, -0.25, 2, 256, NaN];
      const g = gpu.alloc(values.length, dtype);
      const c = cpu.alloc(values.length, dtype);
      assert.deepEqual([...await gpu.read(g)], new Array(values.length).fill(0));
      gpu.write(g, values);
      cpu.write(c, values);
      const got = await gpu.read(g);
      const want = await cpu.read(c);
      assert.equal(got.constructor, want.constructor, dtype);
      assert.deepEqual([...got], [...want], dtype);
      gpu.free(g);
      cpu.free(c);
    }
    const empty = gpu.alloc(0, "f32");
    gpu.write(empty, []);
    assert.deepEqual([...await gpu.read(empty)], []);
    gpu.run("fill", [], [empty], { value: 1 });
    gpu.free(empty);
    const three = gpu.alloc(3, "bool");
    assert.deepEqual(gpu.memory(), {
      liveBuffers: before.liveBuffers + 1,
      liveBytes: before.liveBytes + 12,
    });
    gpu.free(three);
    assert.deepEqual(gpu.memory(), before);
  },
);

gpuTest("pooled buffers are cleared before reuse and reused by size class", async (gpu) => {
  const a = gpu.alloc(37, "f32");
  gpu.run("fill", [], [a], { value: 7 });
  assert.equal((await gpu.read(a))[36], 7);
  gpu.free(a);
  const pooled = gpu.poolStats().pooledBuffers;
  // Same size class (37·4 = 148 bytes -> 160): the freed buffer comes back, cleared.
  const b = gpu.alloc(38, "f32");
  assert.equal(gpu.poolStats().pooledBuffers, pooled - 1);
  assert.deepEqual([...await gpu.read(b)], new Array(38).fill(0));
  // A kernel that reads its output (copy writes a part) sees zeros too.
  const src = gpu.alloc(2, "f32");
  gpu.write(src, [1, 2]);
  gpu.free(b);
  const c = gpu.alloc(38, "f32");
  gpu.run("copy", [src], [c], copyAll(2));
  assert.deepEqual([...await gpu.read(c)].slice(0, 4), [1, 2, 0, 0]);
  gpu.free(c);
  gpu.free(src);
  assert.equal(sizeClass(148), 160);
  assert.equal(sizeClass(4), 16);
  assert.equal(sizeClass(1 << 20), 1 << 20);
});

gpuTest("a freed buffer is reused only after the work that uses it is submitted", async (gpu) => {
  const x = gpu.alloc(64, "f32");
  const y = gpu.alloc(64, "f32");
  gpu.run("fill", [], [x], { value: 5 });
  gpu.run("copy", [x], [y], copyAll(64));
  gpu.free(x); // still used by the pending fill and copy
  assert.equal(gpu.poolStats().pendingBuffers, 1);
  const z = gpu.alloc(64, "f32"); // must not be x's buffer
  gpu.write(z, new Array(64).fill(9)); // writeBuffer runs ahead of the pending work
  assert.deepEqual([...await gpu.read(y)], new Array(64).fill(5));
  assert.deepEqual([...await gpu.read(z)], new Array(64).fill(9));
  assert.equal(gpu.poolStats().pendingBuffers, 0);
  gpu.free(y);
  gpu.free(z);
});

gpuTest("a write to a buffer that pending work reads is ordered after that work", async (gpu) => {
  const x = gpu.alloc(3, "f32");
  const y = gpu.alloc(3, "f32");
  gpu.run("fill", [], [x], { value: 1 });
  gpu.run("copy", [x], [y], copyAll(3));
  gpu.write(x, [2, 2, 2]);
  assert.deepEqual([...await gpu.read(y)], [1, 1, 1]);
  assert.deepEqual([...await gpu.read(x)], [2, 2, 2]);
  gpu.free(x);
  gpu.free(y);
});

gpuTest("an input that aliases an output is read from a copy", async (gpu) => {
  const params = { shape: [4], inStrides: [1], inOffset: 0, outStrides: [1], outOffset: 1 };
  const results = [];
  for (const b of [cpu, gpu]) {
    const x = b.alloc(5, "f32");
    b.write(x, [1, 2, 3, 4, 5]);
    b.run("copy", [x], [x], params);
    results.push([...await b.read(x)]);
    b.free(x);
  }
  // The CPU loop reads what it just wrote; the GPU reads a snapshot (the semantics a kernel
  // with separate input and output has). Both agree when regions do not overlap; here they do.
  assert.deepEqual(results[1], [1, 1, 2, 3, 4]);
  const x = gpu.alloc(4, "f32");
  gpu.write(x, [1, 2, 3, 4]);
  gpu.run("binary", [x, x], [x], { op: "add", shape: [4], aStrides: [1], bStrides: [1] });
  assert.deepEqual([...await gpu.read(x)], [2, 4, 6, 8]);
  gpu.free(x);
});

gpuTest("grids over 65535 workgroups fold into two dimensions", async (gpu) => {
  const rows = 70_000;
  const values = Array.from({ length: rows * 2 }, (_, i) => i % 7);
  const x = tensor(values, { shape: [rows, 2], backend: gpu });
  const s = await x.sum(1).data();
  assert.equal(s.length, rows);
  assert.equal(s[0], 1);
  assert.equal(s[rows - 1], ((2 * rows - 2) % 7) + ((2 * rows - 1) % 7));
  x.dispose();
});

gpuTest(
  "limits: bindings over maxStorageBufferBindingSize and buffers over maxBufferSize are rejected",
  async (gpu) => {
    const small = await createWebGpuBackend({ maxBindingBytes: 64 });
    try {
      const ok = small.alloc(16, "f32");
      small.run("fill", [], [ok], { value: 1 });
      const big = small.alloc(17, "f32");
      assert.throws(
        () => small.run("fill", [], [big], { value: 1 }),
        /webgpu\.fill: a f32 tensor of 17 elements \(68 bytes\) exceeds the 64-byte storage binding limit/,
      );
      assert.deepEqual([...await small.read(ok)], new Array(16).fill(1));
    } finally {
      small.destroy();
    }
    const tooBig = Math.floor(gpu.device.limits.maxBufferSize / 4) + 1;
    assert.throws(
      () => gpu.alloc(tooBig, "f32"),
      /webgpu\.alloc: a f32 tensor of \d+ elements needs \d+ bytes, over this device's maxBufferSize/,
    );
  },
);

gpuTest("misuse fails with what went wrong", async (gpu) => {
  const a = gpu.alloc(2, "i32");
  assert.throws(
    () => gpu.write(a, [1, 2, 3]),
    /webgpu.write: buffer holds 2 elements but 3 values were given/,
  );
  const c = cpu.alloc(1, "f32");
  assert.throws(() => gpu.free(c), /webgpu.free: the buffer belongs to another backend/);
  cpu.free(c);
  gpu.free(a);
  assert.throws(() => gpu.read(a), /webgpu.read: the buffer was already freed/);
  assert.throws(() => gpu.free(a), /webgpu.free: the buffer was already freed/);
  assert.throws(() => gpu.alloc(-1, "f32"), /webgpu.alloc: size must be an integer >= 0, got -1/);
  await assert.rejects(
    createWebGpuBackend({ flushEvery: 0 }),
    /createWebGpuBackend: flushEvery must be an integer >= 1, got 0/,
  );
});

gpuTest("an uncaptured GPU error makes the next read reject", async () => {
  const b = await createWebGpuBackend();
  const logged: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => logged.push(args.join(" "));
  try {
    const x = b.alloc(1, "f32");
    b.write(x, [1]);
    // An invalid buffer usage raises a validation error outside any error scope.
    b.device.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
    await new Promise((r) => setTimeout(r, 50));
    await assert.rejects(b.read(x), /webgpu\.read: 1 GPU error\(s\) occurred since the last check/);
    assert.deepEqual([...await b.read(x)], [1]);
    assert.ok(logged.some((l) => String(l).includes("uncaptured GPU error")));
  } finally {
    console.error = original;
    b.destroy();
  }
});

gpuTest("after the device is lost every call fails naming the reason", async () => {
  const b = await createWebGpuBackend();
  const x = b.alloc(2, "f32");
  b.destroy();
  const info = await b.device.lost;
  assert.equal(info.reason, "destroyed");
  for (const call of [() => b.alloc(1, "f32"), () => b.read(x), () => b.write(x, [1, 2])]) {
    assert.throws(call, /the GPU device was lost \(reason: destroyed/);
  }
  assert.throws(
    () => b.run("fill", [], [x], { value: 1 }),
    /webgpu\.fill: the GPU device was lost/,
  );
  b.free(x); // freeing after loss only updates the counters
  assert.equal(b.memory().liveBuffers, 0);
});

gpuTest("debug mode prints each kernel's WGSL once and every dispatch", async () => {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args.join(" "));
  const b = await createWebGpuBackend({ debug: true });
  try {
    const x = b.alloc(300, "f32");
    b.run("fill", [], [x], { value: 1 });
    b.run("fill", [], [x], { value: 2 });
    await b.read(x);
    b.free(x);
  } finally {
    console.error = original;
    b.destroy();
  }
  assert.equal(lines.filter((l) => l.startsWith("[webgpu] compiling fill")).length, 1);
  assert.ok(lines.some((l) => l.includes("@compute @workgroup_size(256)")));
  assert.equal(lines.filter((l) => l === "[webgpu] dispatch fill/fill groups=2x1 (2)").length, 2);
});

gpuTest("strided kernels merge contiguous dimensions and reject more than 8 that remain", (gpu) => {
  const shape = new Array(9).fill(2);
  const contiguous = shape.map((_, i) => 2 ** (8 - i));
  const x = gpu.alloc(512, "f32");
  const y = gpu.alloc(512, "f32");
  // Contiguous in both operands: merges to one dimension.
  const copy = { shape, inOffset: 0, outOffset: 0 };
  gpu.run("copy", [x], [y], { ...copy, inStrides: contiguous, outStrides: contiguous });
  // A full reversal of the axes leaves nine dimensions that cannot merge.
  assert.throws(
    () =>
      gpu.run("copy", [x], [y], {
        ...copy,
        inStrides: [...contiguous].reverse(),
        outStrides: contiguous,
      }),
    /webgpu\.copy: 9 dimensions remain after merging contiguous ones; the WebGPU kernels take at most 8/,
  );
  gpu.free(x);
  gpu.free(y);
});

gpuTest(
  "peakAllocatedBytes is the high-water mark of all buffers, reset by resetPeakMemory",
  async (gpu) => {
    await gpu.sync();
    gpu.resetPeakMemory();
    const base = gpu.poolStats();
    assert.equal(base.peakAllocatedBytes, base.allocatedBytes);
    // 1 MiB + 4 bytes: a size class no other test uses, so these are new buffers.
    const n = 2 ** 18 + 1;
    const a = gpu.alloc(n, "f32");
    const b = gpu.alloc(n, "f32");
    const grown = gpu.poolStats();
    assert.ok(grown.allocatedBytes >= base.allocatedBytes + 2 * n * 4);
    assert.equal(grown.peakAllocatedBytes, grown.allocatedBytes);
    gpu.free(a);
    gpu.free(b);
    await gpu.sync();
    const after = gpu.poolStats();
    assert.equal(after.peakAllocatedBytes, grown.peakAllocatedBytes); // a peak does not fall
    gpu.resetPeakMemory();
    assert.equal(gpu.poolStats().peakAllocatedBytes, gpu.poolStats().allocatedBytes);
  },
);

gpuTest(
  "freed buffers awaiting a submit past flushFreedBytes trigger it, so the pool reuses them",
  async () => {
    const grown = async (flushFreedBytes: number) => {
      const b = await createWebGpuBackend({ flushEvery: 10_000, flushFreedBytes });
      try {
        const n = 2 ** 18; // 1 MiB each
        for (let i = 0; i < 20; i++) {
          const h = b.alloc(n, "f32");
          b.run("fill", [], [h], { value: i });
          b.free(h); // pending work writes h: its release waits for a submit
        }
        await b.sync();
        return b.poolStats().peakAllocatedBytes;
      } finally {
        b.destroy();
      }
    };
    const bounded = await grown(1);
    const unbounded = await grown(Infinity);
    assert.ok(bounded < 3 * 2 ** 20, `peak ${bounded} bytes with a flush at every deferred free`);
    assert.ok(
      unbounded >= 20 * 2 ** 20,
      `peak ${unbounded} bytes without: 20 buffers side by side`,
    );
    await assert.rejects(
      createWebGpuBackend({ flushFreedBytes: -1 }),
      /flushFreedBytes must be a number >= 0 \(Infinity: never\), got -1/,
    );
  },
);
