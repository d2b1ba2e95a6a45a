/**
 * The lock of a run directory, `run.lock`: one process at a time trains in (writes to) a run.
 * Two `deno task train --resume runs/x` at once would each truncate the files to the checkpoint
 * and append their own steps, interleaving the records and the checkpoints; the second one now
 * fails at once, naming the process that holds the run.
 *
 * Design decisions:
 * - **The operating system's advisory lock** (`Deno.FsFile.tryLock`, `flock` on Unix) on
 *   `run.lock`, held as long as the run lasts: the OS releases it when its process ends, however
 *   it ends (a crash, `kill -9`, a second Ctrl-C), so a lock can never outlive its holder on this
 *   machine, and a check cannot race with a release. (On a network file system that does not
 *   share `flock` between machines, two machines are not kept apart.)
 * - **The file says who holds it**: the holder's PID, host, start time and command line (JSON),
 *   for the message of the process that is refused. Releasing empties it; a file that still
 *   names a PID when its lock is free was left by a process that died holding it, and taking it
 *   over says so with a warning naming that PID.
 * - **The file is never deleted**: deleting it on release would let a process that opened the
 *   old file lock it while a third process creates and locks a new one, and both would hold
 *   "the" lock.
 * - A brief `tryLock` by {@link checkRunLock} (a check that does not take the lock) can make a
 *   real acquire fail in that instant; {@link RunLock.acquire} then retries a few times, since
 *   a holder names itself right after locking and a check names nobody.
 *
 * @module
 */

import { hostname as osHostname } from "node:os";
import { join } from "node:path";
import process from "node:process";

/** The lock file's name in a run directory. */
export const LOCK_FILE = "run.lock";

/** Who holds a run directory's lock (the content of `run.lock`). */
export interface LockHolder {
  /** The holder's process id. */
  pid: number;
  /** The machine it runs on. */
  host: string;
  /** When it took the lock (ISO 8601). */
  started: string;
  /** Its command line, for the message. */
  command: string;
}

/** Options of {@link RunLock.acquire}. */
export interface AcquireOptions {
  /** Where the warning of a stale lock taken over goes (default `console.warn`). */
  warn?: (line: string) => void;
}

/** The run directory is locked by another process (or another `RunDir` of this process). */
export class RunLockedError extends Error {
  /** The run directory. */
  readonly dir: string;
  /** The holder, or null when it has not written its name yet (or the file is unreadable). */
  readonly holder: LockHolder | null;

  /** Builds the error; the message names the directory, the holder's PID and the fixes. */
  constructor(dir: string, holder: LockHolder | null) {
    super(lockedMessage(dir, holder));
    this.name = "RunLockedError";
    this.dir = dir;
    this.holder = holder;
  }
}

/**
 * The message of a locked run directory: who holds it and what to do.
 *
 * @example Usage
 * ```ts
 * import { lockedMessage } from "./run_lock.ts";
 * import assert from "node:assert/strict";
 * const text = lockedMessage("runs/x", {
 *   pid: 4242, host: "vm", started: "2026-01-01T00:00:00.000Z", command: "deno task train",
 * });
 * assert.match(text, /runs\/x is in use by PID 4242 on vm/);
 * assert.match(text, /Wait for it to finish or stop it \(kill 4242\)/);
 * ```
 */
export function lockedMessage(dir: string, holder: LockHolder | null): string {
  const who = holder === null
    ? "another process (it has not written its PID yet)"
    : `PID ${holder.pid} on ${holder.host} (${holder.command}, since ${holder.started})`;
  const stop = holder === null ? "stop it" : `stop it (kill ${holder.pid})`;
  return `${dir} is in use by ${who}; two processes writing one run would interleave its ` +
    `records and checkpoints. Wait for it to finish or ${stop}, then resume; or start a new ` +
    `run without --resume`;
}

function parseHolder(text: string): LockHolder | null {
  if (text.trim() === "") return null;
  try {
    const x = JSON.parse(text);
    if (Number.isSafeInteger(x?.pid) && x.pid > 0) {
      return {
        pid: x.pid,
        host: String(x.host ?? "?"),
        started: String(x.started ?? "?"),
        command: String(x.command ?? "?"),
      };
    }
  } catch {
    // Unreadable content: nobody we can name.
  }
  return null;
}

async function readHolder(path: string): Promise<LockHolder | null> {
  try {
    return parseHolder(await Deno.readTextFile(path));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    // Windows refuses to read a range another handle holds locked; the holder is then unnamed.
    if (e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.Busy) return null;
    throw e;
  }
}

/**
 * Whether process `pid` runs on this machine (`kill(pid, 0)`: no such process is ESRCH; EPERM
 * means it runs under another user).
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

function hostname(): string {
  try {
    return osHostname();
  } catch {
    return "?"; // no --allow-sys: the PID alone names the holder
  }
}

function commandLine(): string {
  const args = Deno.args.join(" ");
  const main = Deno.mainModule.split("/").at(-1) ?? "deno";
  return args === "" ? main : `${main} ${args}`;
}

/** How often, and how far apart, a refused acquire is retried when nobody is named. */
const RETRIES = 5;
const RETRY_MS = 20;

/**
 * The held lock of a run directory (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { RunLock, RunLockedError } from "./run_lock.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const lock = await RunLock.acquire(dir);
 * assert.equal(lock.holder.pid, Deno.pid);
 * // A second holder, even in this process, is refused with the holder's PID.
 * await assert.rejects(RunLock.acquire(dir), (e: unknown) =>
 *   e instanceof RunLockedError && e.holder?.pid === Deno.pid);
 * await lock.release();
 * const again = await RunLock.acquire(dir); // free again
 * await again.release();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class RunLock {
  /** The lock file's path. */
  readonly path: string;
  /** What this process wrote into it. */
  readonly holder: LockHolder;
  #file: Deno.FsFile | null;

  private constructor(path: string, holder: LockHolder, file: Deno.FsFile) {
    this.path = path;
    this.holder = holder;
    this.#file = file;
  }

  /**
   * Takes the lock of run directory `dir` (which must exist), or rejects with a
   * {@link RunLockedError} naming the holder. A lock file left by a process that died holding it
   * is taken over with a warning naming that PID.
   */
  static async acquire(dir: string, options: AcquireOptions = {}): Promise<RunLock> {
    const warn = options.warn ?? ((line: string) => console.warn(line));
    const path = join(dir, LOCK_FILE);
    for (let attempt = 0;; attempt++) {
      const file = await Deno.open(path, { read: true, write: true, create: true });
      let locked = false;
      try {
        locked = await file.tryLock(true);
        if (locked) {
          const previous = await readHolder(path);
          const holder: LockHolder = {
            pid: Deno.pid,
            host: hostname(),
            started: new Date().toISOString(),
            command: commandLine(),
          };
          await file.truncate(0);
          await file.seek(0, Deno.SeekMode.Start);
          await file.write(new TextEncoder().encode(JSON.stringify(holder) + "\n"));
          await file.syncData();
          if (previous !== null) {
            const gone = previous.host === holder.host && !isRunning(previous.pid)
              ? "which is no longer running"
              : "which no longer holds it";
            warn(
              `warning: ${dir} was locked by PID ${previous.pid} on ${previous.host} (since ${previous.started}), ${gone} (it ended without releasing the lock); taking the lock over`,
            );
          }
          return new RunLock(path, holder, file);
        }
      } catch (e) {
        file.close();
        throw e;
      }
      file.close();
      const holder = await readHolder(path);
      const named = holder !== null && (holder.host !== hostname() || isRunning(holder.pid));
      if (named || attempt >= RETRIES) throw new RunLockedError(dir, holder);
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }

  /** Whether this object still holds the lock. */
  get held(): boolean {
    return this.#file !== null;
  }

  /** Empties the lock file and releases the lock (idempotent). */
  async release(): Promise<void> {
    const file = this.#file;
    if (file === null) return;
    this.#file = null;
    try {
      await file.truncate(0);
    } catch (e) {
      // The directory may have been removed (a run that failed before its first step).
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    } finally {
      try {
        await file.unlock();
      } finally {
        file.close();
      }
    }
  }
}

/**
 * Rejects with a {@link RunLockedError} when another holder has the lock of run directory `dir`;
 * takes nothing (the check locks and unlocks at once). What `--resume` asks before it loads
 * anything, so a second run of one directory fails in milliseconds.
 *
 * @example Usage
 * ```ts
 * import { checkRunLock, RunLock, RunLockedError } from "./run_lock.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await checkRunLock(dir); // free
 * const lock = await RunLock.acquire(dir);
 * await assert.rejects(checkRunLock(dir), (e: unknown) =>
 *   e instanceof RunLockedError && e.holder?.pid === Deno.pid);
 * await lock.release();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function checkRunLock(dir: string): Promise<void> {
  const path = join(dir, LOCK_FILE);
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true, write: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  try {
    if (await file.tryLock(true)) {
      await file.unlock();
      return;
    }
  } finally {
    file.close();
  }
  throw new RunLockedError(dir, await readHolder(path));
}
