import assert from "node:assert/strict";
import { join } from "node:path";
import {
  beginCheckpoint,
  COMPLETE_MARKER,
  completeCheckpoint,
  latestCompleteCheckpoint,
  listCheckpoints,
  moveAside,
  removeIncomplete,
  verifyCheckpoint,
} from "./checkpoints.ts";

Deno.test("checkpoints: listing by numeric step, completeness, latest complete, cleanup", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.deepEqual(await listCheckpoints(join(dir, "missing")), []);
    for (const step of [2, 10, 9]) {
      const path = await beginCheckpoint(dir, step);
      await Deno.writeTextFile(join(path, "model.safetensors"), "w");
      await completeCheckpoint(path, { step });
    }
    await beginCheckpoint(dir, 12); // crashed before COMPLETE
    await Deno.mkdir(join(dir, "step-007")); // not a step directory name
    await Deno.writeTextFile(join(dir, "step-3"), "a file, not a directory");
    const list = await listCheckpoints(dir);
    assert.deepEqual(list.map((c) => [c.step, c.complete]), [[2, true], [9, true], [10, true], [
      12,
      false,
    ]]);
    assert.equal((await latestCompleteCheckpoint(dir))!.step, 10);
    const marker = JSON.parse(await Deno.readTextFile(join(dir, "step-10", COMPLETE_MARKER)));
    assert.deepEqual(marker, {
      step: 10,
      files: ["model.safetensors"],
      bytes: { "model.safetensors": 1 },
    });
    assert.deepEqual(await removeIncomplete(dir), [12]);
    assert.deepEqual((await listCheckpoints(dir)).map((c) => c.step), [2, 9, 10]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("beginCheckpoint: replaces an incomplete directory, refuses a complete one and bad steps", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = await beginCheckpoint(dir, 5);
    await Deno.writeTextFile(join(path, "partial.bin"), "half");
    const again = await beginCheckpoint(dir, 5);
    assert.deepEqual([...Deno.readDirSync(again)], [], "the stale files are gone");
    await completeCheckpoint(again, { step: 5 });
    await assert.rejects(beginCheckpoint(dir, 5), /already a complete checkpoint/);
    await assert.rejects(beginCheckpoint(dir, -1), /step must be an integer >= 0/);
    await assert.rejects(beginCheckpoint(dir, 1.5), /step must be an integer >= 0/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A valid safetensors file of one f32 tensor of `n` values. */
function safetensors(n: number): Uint8Array {
  const header = new TextEncoder().encode(
    JSON.stringify({ w: { dtype: "F32", shape: [n], data_offsets: [0, 4 * n] } }),
  );
  const out = new Uint8Array(8 + header.length + 4 * n);
  new DataView(out.buffer).setBigUint64(0, BigInt(header.length), true);
  out.set(header, 8);
  return out;
}

Deno.test("verifyCheckpoint: a whole checkpoint passes; each kind of damage is named", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const write = async (step: number, files: Record<string, string | Uint8Array>) => {
      const path = await beginCheckpoint(dir, step);
      for (const [name, data] of Object.entries(files)) {
        if (typeof data === "string") await Deno.writeTextFile(join(path, name), data);
        else await Deno.writeFile(join(path, name), data);
      }
      await completeCheckpoint(path, { step });
      return path;
    };
    const whole = { "model.safetensors": safetensors(4), "optimizer.json": '{"kind":"adamw"}' };
    assert.equal(await verifyCheckpoint(await write(1, whole)), null);

    // Each damage, on a checkpoint that was whole when it was marked complete.
    const cases: [string, (path: string) => Promise<void>, RegExp][] = [
      [
        "a file cut short",
        (p) => Deno.writeFile(join(p, "model.safetensors"), safetensors(4).slice(0, 20)),
        /^model\.safetensors: 20 bytes, COMPLETE recorded 79$/,
      ],
      [
        "a file missing",
        (p) => Deno.remove(join(p, "optimizer.json")),
        /^optimizer\.json is missing$/,
      ],
      [
        "JSON overwritten with the same number of bytes",
        (p) => Deno.writeTextFile(join(p, "optimizer.json"), "x".repeat(16)),
        /^optimizer\.json is not JSON$/,
      ],
      [
        "a safetensors header that disagrees with its size",
        async (p) => {
          const bytes = safetensors(4);
          new DataView(bytes.buffer).setBigUint64(0, 1n << 40n, true);
          await Deno.writeFile(join(p, "model.safetensors"), bytes);
        },
        /^model\.safetensors: its header claims \d+ bytes, but the file has 79$/,
      ],
      [
        "the marker itself",
        (p) => Deno.writeTextFile(join(p, COMPLETE_MARKER), "{"),
        /^COMPLETE: not JSON$/,
      ],
    ];
    let step = 2;
    for (const [name, damage, re] of cases) {
      const path = await write(step++, whole);
      await damage(path);
      assert.match((await verifyCheckpoint(path)) ?? "whole", re, name);
    }
    // A marker written before sizes were recorded: existence and content checks still apply.
    const old = await write(20, whole);
    await Deno.writeTextFile(
      join(old, COMPLETE_MARKER),
      JSON.stringify({ step: 20, files: ["model.safetensors", "optimizer.json"] }),
    );
    assert.equal(await verifyCheckpoint(old), null);
    await Deno.writeFile(join(old, "model.safetensors"), safetensors(4).slice(0, 40));
    assert.match((await verifyCheckpoint(old))!, /its (header|tensors)/);

    // Moved aside: no longer listed, its files kept.
    const moved = await moveAside(old);
    assert.match(moved, /step-20\.corrupt$/);
    assert.ok((await Deno.stat(join(moved, "optimizer.json"))).isFile);
    assert.ok(!(await listCheckpoints(dir)).some((c) => c.step === 20));
    const again = await write(20, whole);
    assert.match(await moveAside(again), /step-20\.corrupt-2$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
