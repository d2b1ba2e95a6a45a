/**
 * Checkpoint directories of a run: `checkpoints/step-N/`, each finished by a `COMPLETE` marker
 * written last.
 *
 * Design decision: a checkpoint is several files (weights, optimizer state, RNG and data
 * iterator state) that cannot be renamed into place together, so completeness is a separate
 * marker, written atomically after everything else. A directory without it was cut by a crash
 * and is never resumed from; `removeIncomplete` deletes such directories. The marker holds
 * JSON (`{step, files, bytes}`) so a reader can check the listed files exist with their sizes.
 *
 * A complete checkpoint can still be damaged later (a disk that filled up while a file was
 * copied, a file edited by hand): `verifyCheckpoint` checks what can be checked without loading
 * tensors (the marker, each listed file and its recorded size, JSON files parse, safetensors
 * headers agree with their file sizes), and resuming falls back to the previous complete
 * checkpoint when the latest fails it (`RunDir.resume`), moving the damaged one aside as
 * `step-N.corrupt` rather than deleting it.
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
 * import { beginCheckpoint, completeCheckpoint, listCheckpoints } from "./checkpoints.ts";
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
 * import { beginCheckpoint, completeCheckpoint, latestCompleteCheckpoint } from "./checkpoints.ts";
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
 * import { beginCheckpoint } from "./checkpoints.ts";
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
 * import { beginCheckpoint, completeCheckpoint } from "./checkpoints.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const path = await beginCheckpoint(dir, 1);
 * await Deno.writeTextFile(`${path}/state.json`, "{}");
 * await completeCheckpoint(path, { step: 1 });
 * const marker = JSON.parse(await Deno.readTextFile(`${path}/COMPLETE`));
 * assert.deepEqual(marker, { step: 1, files: ["state.json"], bytes: { "state.json": 2 } });
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
  // Sizes of the plain files, so a file cut short later is found before it is loaded.
  const bytes: Record<string, number> = {};
  for (const name of files) {
    const st = await Deno.stat(join(path, name));
    if (st.isFile) bytes[name] = st.size;
  }
  await writeFileAtomic(
    join(path, COMPLETE_MARKER),
    JSON.stringify({ ...info, files, bytes }) + "\n",
  );
}

/** The largest safetensors header read (a larger length field is damage, not a header). */
const MAX_SAFETENSORS_HEADER = 100 * 1024 * 1024;

/** Why safetensors file `path` of `size` bytes is damaged, or null when its header agrees. */
async function safetensorsProblem(path: string, size: number): Promise<string | null> {
  if (size < 8) return `${size} bytes, shorter than a safetensors header`;
  const file = await Deno.open(path, { read: true });
  try {
    const head = new Uint8Array(8);
    if ((await file.read(head)) !== 8) return "its header length cannot be read";
    const n = Number(new DataView(head.buffer).getBigUint64(0, true));
    if (n > MAX_SAFETENSORS_HEADER || 8 + n > size) {
      return `its header claims ${n} bytes, but the file has ${size}`;
    }
    const buf = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const got = await file.read(buf.subarray(at));
      if (got === null) return "its header is cut short";
      at += got;
    }
    let header: Record<string, { data_offsets?: [number, number] }>;
    try {
      header = JSON.parse(new TextDecoder().decode(buf));
    } catch {
      return "its header is not JSON";
    }
    let end = 0;
    for (const [name, t] of Object.entries(header)) {
      if (name === "__metadata__") continue;
      const o = t?.data_offsets;
      if (!Array.isArray(o) || o.length !== 2) return `tensor ${name} has no data_offsets`;
      end = Math.max(end, Number(o[1]));
    }
    if (8 + n + end !== size) {
      return `its tensors need ${8 + n + end} bytes, but the file has ${size}`;
    }
    return null;
  } finally {
    file.close();
  }
}

/**
 * Why the complete checkpoint at `path` cannot be resumed from, or null when it looks whole:
 * its `COMPLETE` marker parses, every file it lists exists with the size it recorded, `.json`
 * files parse and `.safetensors` headers agree with their file sizes. Nothing is loaded, so a
 * checkpoint of any size is checked in milliseconds (bytes flipped inside a tensor are not
 * found; a file cut short, emptied or overwritten with other content is).
 *
 * @example Usage
 * ```ts
 * import { beginCheckpoint, completeCheckpoint, verifyCheckpoint } from "./checkpoints.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const path = await beginCheckpoint(dir, 2);
 * await Deno.writeTextFile(`${path}/data.json`, '{"step": 2}');
 * await completeCheckpoint(path, { step: 2 });
 * assert.equal(await verifyCheckpoint(path), null);
 * await Deno.writeTextFile(`${path}/data.json`, '{"st'); // cut short
 * assert.match((await verifyCheckpoint(path))!, /data\.json: 4 bytes, COMPLETE recorded 11/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function verifyCheckpoint(path: string): Promise<string | null> {
  let marker: { files?: unknown; bytes?: unknown };
  try {
    marker = JSON.parse(await Deno.readTextFile(join(path, COMPLETE_MARKER)));
  } catch (e) {
    return `${COMPLETE_MARKER}: ${e instanceof SyntaxError ? "not JSON" : (e as Error).message}`;
  }
  if (typeof marker !== "object" || marker === null || !Array.isArray(marker.files)) {
    return `${COMPLETE_MARKER} lists no files`;
  }
  const bytes =
    (typeof marker.bytes === "object" && marker.bytes !== null ? marker.bytes : {}) as Record<
      string,
      unknown
    >;
  for (const name of marker.files) {
    if (typeof name !== "string") return `${COMPLETE_MARKER} lists ${JSON.stringify(name)}`;
    const file = join(path, name);
    let st: Deno.FileInfo;
    try {
      st = await Deno.stat(file);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return `${name} is missing`;
      throw e;
    }
    if (!st.isFile) continue; // a folder (a LoRA run's merged model) is checked by loading it
    const recorded = bytes[name];
    if (typeof recorded === "number" && recorded !== st.size) {
      return `${name}: ${st.size} bytes, ${COMPLETE_MARKER} recorded ${recorded}`;
    }
    if (name.endsWith(".json")) {
      try {
        JSON.parse(await Deno.readTextFile(file));
      } catch {
        return `${name} is not JSON`;
      }
    } else if (name.endsWith(".safetensors")) {
      const problem = await safetensorsProblem(file, st.size);
      if (problem !== null) return `${name}: ${problem}`;
    }
  }
  return null;
}

/**
 * Moves a damaged checkpoint out of the way as `step-N.corrupt` (then `.corrupt-2`, ...), which
 * no listing reads, keeping its files for a look; returns the new path.
 *
 * @example Usage
 * ```ts
 * import { beginCheckpoint, listCheckpoints, moveAside } from "./checkpoints.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const moved = await moveAside(await beginCheckpoint(dir, 7));
 * assert.match(moved, /step-7\.corrupt$/);
 * assert.deepEqual(await listCheckpoints(dir), []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function moveAside(path: string): Promise<string> {
  for (let n = 1;; n++) {
    const target = `${path}.corrupt${n === 1 ? "" : `-${n}`}`;
    try {
      await Deno.lstat(target);
      continue;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    await Deno.rename(path, target);
    return target;
  }
}

/**
 * Deletes the incomplete checkpoint directories; returns their steps.
 *
 * @example Usage
 * ```ts
 * import { beginCheckpoint, listCheckpoints, removeIncomplete } from "./checkpoints.ts";
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
