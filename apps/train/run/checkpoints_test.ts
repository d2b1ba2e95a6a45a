import assert from "node:assert/strict";
import { join } from "node:path";
import {
  beginCheckpoint,
  COMPLETE_MARKER,
  completeCheckpoint,
  latestCompleteCheckpoint,
  listCheckpoints,
  removeIncomplete,
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
    assert.deepEqual(marker, { step: 10, files: ["model.safetensors"] });
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
