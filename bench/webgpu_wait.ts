/**
 * `deno run -A bench/webgpu_wait.ts`: what one host round trip to the GPU and one recorded
 * dispatch cost on this Deno's WebGPU, the two numbers that bound a decode loop which reads every
 * step's logits back (`generate`'s host loop) and motivate the device loop (`DeviceDecoder`).
 *
 * 1. **Waits**: `mapAsync` of a buffer just written by a copy (4 B, 4 KiB, the 607,744 B of one
 *    151,936-token logits row), also when the GPU finished before the call, and
 *    `queue.onSubmittedWorkDone()` with nothing pending. Each median of 8.
 * 2. **Recording**: host microseconds per dispatch of a trivial kernel, 530 per command buffer (a
 *    24-layer decode step through the tensor ops), with bind groups built once, built per
 *    dispatch, and built per dispatch plus a `writeBuffer` of its params.
 *
 * Prints a table and writes JSON to `bench/results/` (`--no-json`: no file).
 *
 * @module
 */

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Waits and recording costs, in milliseconds and microseconds. */
export interface WaitReport {
  /** Adapter description. */
  adapter: string;
  /** Deno version. */
  deno: string;
  /** Median ms from `mapAsync` to its resolution, by case. */
  waitsMs: Record<string, number>;
  /** Host µs per recorded dispatch, by case. */
  recordUs: Record<string, number>;
}

async function measure(device: GPUDevice): Promise<Omit<WaitReport, "adapter" | "deno">> {
  const waitsMs: Record<string, number> = {};
  for (const size of [4, 4096, 151936 * 4]) {
    const src = device.createBuffer({
      size,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    });
    const dst = device.createBuffer({
      size,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    for (const idle of [0, 5]) {
      const ts: number[] = [];
      for (let r = 0; r < 8; r++) {
        const enc = device.createCommandEncoder();
        enc.copyBufferToBuffer(src, 0, dst, 0, size);
        device.queue.submit([enc.finish()]);
        const t0 = performance.now();
        while (performance.now() - t0 < idle) { /* the copy finishes meanwhile */ }
        const t1 = performance.now();
        await dst.mapAsync(GPUMapMode.READ);
        new Uint8Array(dst.getMappedRange()).slice();
        dst.unmap();
        ts.push(performance.now() - t1);
      }
      waitsMs[`mapAsync ${size} B${idle > 0 ? `, after ${idle} ms idle` : ""}`] = median(ts);
    }
    src.destroy();
    dst.destroy();
  }
  const idle: number[] = [];
  for (let r = 0; r < 8; r++) {
    const t0 = performance.now();
    await device.queue.onSubmittedWorkDone();
    idle.push(performance.now() - t0);
  }
  waitsMs["onSubmittedWorkDone, nothing pending"] = median(idle);

  const module = device.createShaderModule({
    code: `@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<uniform> p: vec4<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < p.x) { a[g.x] = a[g.x] + 1.0; }
}`,
  });
  const pipeline = device.createComputePipeline({
    layout: "auto",
    compute: { module, entryPoint: "main" },
  });
  const layout = pipeline.getBindGroupLayout(0);
  const bufs = Array.from(
    { length: 8 },
    () =>
      device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST }),
  );
  const uni = device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(uni, 0, new Uint32Array([64, 0, 0, 0]));
  const group = (i: number) =>
    device.createBindGroup({
      layout,
      entries: [{ binding: 0, resource: { buffer: bufs[i & 7]! } }, {
        binding: 1,
        resource: { buffer: uni },
      }],
    });
  const built = bufs.map((_, i) => group(i));
  const N = 530;
  const recordUs: Record<string, number> = {};
  const cases: [string, boolean, boolean][] = [
    ["bind groups built once", false, false],
    ["a bind group per dispatch", true, false],
    ["a bind group and a params writeBuffer per dispatch", true, true],
  ];
  for (const [name, perDispatch, write] of cases) {
    const ts: number[] = [];
    for (let r = 0; r < 8; r++) {
      const t0 = performance.now();
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      for (let i = 0; i < N; i++) {
        if (write) device.queue.writeBuffer(uni, 0, new Uint32Array([64, i, 0, 0]));
        pass.setBindGroup(0, perDispatch ? group(i) : built[i & 7]!);
        pass.dispatchWorkgroups(1);
      }
      pass.end();
      device.queue.submit([enc.finish()]);
      ts.push(((performance.now() - t0) * 1e3) / N);
      await device.queue.onSubmittedWorkDone();
    }
    recordUs[name] = median(ts.slice(2));
  }
  return { waitsMs, recordUs };
}

if (import.meta.main) {
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter) {
    console.error("bench/webgpu_wait.ts: no WebGPU adapter");
    Deno.exit(1);
  }
  const device = await adapter.requestDevice();
  const info = adapter.info;
  const name = `${info.description || info.device || info.vendor}`.trim();
  const r: WaitReport = { adapter: name, deno: Deno.version.deno, ...(await measure(device)) };
  console.log(`## WebGPU waits and recording on ${r.adapter}, Deno ${r.deno}\n`);
  console.log("| wait | median ms |\n|---|---:|");
  for (const [k, v] of Object.entries(r.waitsMs)) console.log(`| ${k} | ${v.toFixed(2)} |`);
  console.log("\n| recording, 530 dispatches per command buffer | µs per dispatch |\n|---|---:|");
  for (const [k, v] of Object.entries(r.recordUs)) console.log(`| ${k} | ${v.toFixed(2)} |`);
  if (!Deno.args.includes("--no-json")) {
    const stem = `webgpu-wait-${
      name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/-+$/, "")
    }-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    const path = new URL(`./results/${stem}.json`, import.meta.url).pathname;
    await Deno.writeTextFile(path, JSON.stringify(r, null, 2) + "\n");
    console.log(`\nwrote ${path}`);
  }
  device.destroy();
}
