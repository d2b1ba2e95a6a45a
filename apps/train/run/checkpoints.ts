/**
 * Checkpoint directories of a run: `checkpoints/step-N/`, each finished by a `COMPLETE` marker
 * written last.
 *
 * Design decision: a checkpoint is several files (weights, optimizer state, RNG and data
 * iterator state) that cannot be renamed into place together, so completeness is a separate
 * marker, written atomically after everything else. A directory without it was cut by a crash
 * and is never resumed from; `removeIncomplete` deletes such directories. The marker holds
 * JSON (`{step, files}`) so a reader can check the listed files exist.
 *
 * @module
 */

import { join } from "node:path";
import { writeFileAtomic } from "./atomic.ts";

/** The marker file name. */
export const COMPLETE_MARKER = "COMPLETE";

/** One `checkpoints/step-N` directory. */
export interface CheckpointInfo {
  /** N. */
  step: number;
  /** The directory's path. */
  path: string;
  /** Whether its `COMPLETE` marker exists. */
  complete: boolean;
}

const STEP_DIR = /^step-(0|[1-9][0-9]*)$/;

/**
 * The checkpoint directories under `checkpointsDir`, by increasing step; other entries are
 * ignored, a missing directory lists nothing.
 *
 * @example Usage
 * ```ts
 * import { beginCheckpoint, completeCheckpoint, listCheckpoints } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const a = await beginCheckpoint(dir, 10);
 * await completeCheckpoint(a, { step: 10 });
 * await beginCheckpoint(dir, 20); // a crash before COMPLETE
 * const list = await listCheckpoints(dir);
 * assert.deepEqual(list.map((c) => [c.step, c.complete]), [[10, true], [20, false]]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function listCheckpoints(checkpointsDir: string): Promise<CheckpointInfo[]> {
  const out: CheckpointInfo[] = [];
  try {
    for await (const entry of Deno.readDir(checkpointsDir)) {
      const m = STEP_DIR.exec(entry.name);
      if (!entry.isDirectory || m === null) continue;
      const path = join(checkpointsDir, entry.name);
      let complete = false;
      try {
        complete = (await Deno.stat(join(path, COMPLETE_MARKER))).isFile;
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      out.push({ step: Number(m[1]), path, complete });
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  return out.sort((a, b) => a.step - b.step);
}

/**
 * The complete checkpoint with the largest step, or null.
 *
 * @example Usage
 * ```ts
 * import { beginCheckpoint, completeCheckpoint, latestCompleteCheckpoint } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * assert.equal(await latestCompleteCheckpoint(dir), null);
 * await completeCheckpoint(await beginCheckpoint(dir, 5), { step: 5 });
 * await beginCheckpoint(dir, 9); // incomplete: skipped
 * assert.equal((await latestCompleteCheckpoint(dir))!.step, 5);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function latestCompleteCheckpoint(
  checkpointsDir: string,
): Promise<CheckpointInfo | null> {
  const complete = (await listCheckpoints(checkpointsDir)).filter((c) => c.complete);
  return complete.at(-1) ?? null;
}

/**
 * Creates an empty `step-N` directory for a new checkpoint (replacing an incomplete one left by
 * a crash) and returns its path. A complete checkpoint of the same step is an error: it would
 * be overwritten.
 *
 * @example Usage
 * ```ts
 * import { beginCheckpoint } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const path = await beginCheckpoint(dir, 3);
 * assert.match(path, /step-3$/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function beginCheckpoint(checkpointsDir: string, step: number): Promise<string> {
  if (!Number.isSafeInteger(step) || step < 0) {
    throw new RangeError(`beginCheckpoint: step must be an integer >= 0, got ${step}`);
  }
  const path = join(checkpointsDir, `step-${step}`);
  const existing = (await listCheckpoints(checkpointsDir)).find((c) => c.step === step);
  if (existing?.complete) {
    throw new Error(
      `beginCheckpoint: ${path} is already a complete checkpoint; resume from it or remove it first`,
    );
  }
  if (existing !== undefined) await Deno.remove(path, { recursive: true });
  await Deno.mkdir(path, { recursive: true });
  return path;
}

/**
 * Marks a checkpoint directory complete: writes `COMPLETE` atomically with `info` and the
 * names of the files present. Call it after every file of the checkpoint is written.
 *
 * @example Usage
 * ```ts
 * import { beginCheckpoint, completeCheckpoint } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const path = await beginCheckpoint(dir, 1);
 * await Deno.writeTextFile(`${path}/state.json`, "{}");
 * await completeCheckpoint(path, { step: 1 });
 * const marker = JSON.parse(await Deno.readTextFile(`${path}/COMPLETE`));
 * assert.deepEqual(marker, { step: 1, files: ["state.json"] });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function completeCheckpoint(
  path: string,
  info: Record<string, unknown>,
): Promise<void> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(path)) {
    if (entry.name !== COMPLETE_MARKER && !entry.name.startsWith(".")) files.push(entry.name);
  }
  files.sort();
  await writeFileAtomic(join(path, COMPLETE_MARKER), JSON.stringify({ ...info, files }) + "\n");
}

/**
 * Deletes the incomplete checkpoint directories; returns their steps.
 *
 * @example Usage
 * ```ts
 * import { beginCheckpoint, listCheckpoints, removeIncomplete } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await beginCheckpoint(dir, 4);
 * assert.deepEqual(await removeIncomplete(dir), [4]);
 * assert.deepEqual(await listCheckpoints(dir), []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function removeIncomplete(checkpointsDir: string): Promise<number[]> {
  const removed: number[] = [];
  for (const c of await listCheckpoints(checkpointsDir)) {
    if (c.complete) continue;
    await Deno.remove(c.path, { recursive: true });
    removed.push(c.step);
  }
  return removed;
}
