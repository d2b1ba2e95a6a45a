/**
 * Internal: one sandboxed Deno subprocess, with its limits enforced from outside.
 *
 * The child is the Deno binary running us (`Deno.execPath()`), started with a cleared
 * environment and a `DENO_DIR` of its own (empty); the caller chooses its flags (which never grant anything beyond what it needs).
 * From the parent side: `kill()` sends SIGKILL (the child cannot trap it) and records why; the
 * resident memory of the child is polled from `/proc/<pid>/status` (Linux, when this process
 * may read `/proc`) and the child is killed past the limit; stderr is kept up to a cap and the
 * child is killed when it writes more. Stdout goes to the caller's callback, which enforces its
 * own cap.
 *
 * @module
 */

/** Why the parent killed the child. */
export type KillReason = "timeout" | "memory" | "output_limit" | "aborted" | "closed";

/** How to start a sandboxed child. */
export interface SpawnOptions {
  /** Arguments after the Deno binary (`run`, flags, script). */
  args: string[];
  /** Working directory of the child. */
  cwd: string;
  /**
   * `DENO_DIR` of the child: an empty directory of its own. Deno lets `require()` read files in
   * its npm cache without a permission check, so the child must not see the real one.
   */
  denoDir: string;
  /** Resident-memory limit in MiB (polled; 0 disables). */
  memoryMb: number;
  /** Most stderr bytes kept; the child is killed for `output_limit` when it writes more. */
  stderrLimitBytes: number;
  /** Receives every stdout chunk. */
  onStdout(chunk: Uint8Array): void;
}

const POLL_MS = 20;

let procReadable: boolean | undefined;
function canWatchMemory(): boolean {
  if (procReadable === undefined) {
    try {
      procReadable = Deno.build.os === "linux" &&
        Deno.permissions.querySync({ name: "read", path: "/proc" }).state === "granted";
    } catch {
      procReadable = false;
    }
  }
  return procReadable;
}

/** Resident set size of `pid` in bytes, or `null` when it cannot be read. */
export function residentBytes(pid: number): number | null {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** A running sandboxed child. */
export class SandboxProcess {
  /** The child's process id. */
  readonly pid: number;
  /** Resolves when the child has exited and its output has been read. */
  readonly done: Promise<Deno.CommandStatus>;
  /** Why the parent killed it, or `null`. The first reason wins. */
  killedFor: KillReason | null = null;
  /** Peak resident memory seen by the watchdog, in bytes. */
  peakRss = 0;
  #child: Deno.ChildProcess;
  #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #stdinOpen = true;
  #stderr: Uint8Array[] = [];
  #stderrBytes = 0;
  #exited = false;

  constructor(options: SpawnOptions) {
    const cmd = new Deno.Command(Deno.execPath(), {
      args: options.args,
      cwd: options.cwd,
      clearEnv: true,
      env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", DENO_DIR: options.denoDir },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    });
    const child = cmd.spawn();
    this.#child = child;
    this.pid = child.pid;
    this.#stdin = child.stdin.getWriter();
    this.#stdin.closed.catch(() => {});
    const limit = options.memoryMb * 1024 * 1024;
    let timer: ReturnType<typeof setInterval> | undefined;
    if (limit > 0 && canWatchMemory()) {
      timer = setInterval(() => {
        const rss = residentBytes(this.pid);
        if (rss === null) return;
        if (rss > this.peakRss) this.peakRss = rss;
        if (rss > limit) this.kill("memory");
      }, POLL_MS);
    }
    const out = pump(child.stdout, options.onStdout);
    const err = pump(child.stderr, (chunk) => {
      const room = options.stderrLimitBytes - this.#stderrBytes;
      if (room > 0) this.#stderr.push(chunk.subarray(0, room));
      this.#stderrBytes += chunk.length;
      if (this.#stderrBytes > options.stderrLimitBytes) this.kill("output_limit");
    });
    this.done = (async () => {
      const status = await child.status;
      this.#exited = true;
      if (timer !== undefined) clearInterval(timer);
      await Promise.all([out, err]);
      await this.closeStdin();
      return status;
    })();
  }

  /** Writes to the child's stdin; `false` when stdin is closed or the child is gone. */
  async write(bytes: Uint8Array): Promise<boolean> {
    if (!this.#stdinOpen) return false;
    try {
      await this.#stdin.write(bytes);
      return true;
    } catch {
      this.#stdinOpen = false;
      return false;
    }
  }

  /** Closes the child's stdin (EOF); idempotent. */
  async closeStdin(): Promise<void> {
    if (!this.#stdinOpen) {
      try {
        this.#stdin.releaseLock();
      } catch { /* already released */ }
      return;
    }
    this.#stdinOpen = false;
    try {
      await this.#stdin.close();
    } catch { /* broken pipe: the child is gone */ }
  }

  /** SIGKILLs the child (once) and records `reason` unless an earlier one was recorded. */
  kill(reason: KillReason): void {
    if (this.killedFor !== null || this.#exited) return;
    this.killedFor = reason;
    try {
      this.#child.kill("SIGKILL");
    } catch { /* already exited */ }
  }

  /** The stderr kept so far, decoded. */
  stderrText(): string {
    return new TextDecoder().decode(concat(this.#stderr));
  }
}

async function pump(
  stream: ReadableStream<Uint8Array>,
  onChunk: (chunk: Uint8Array) => void,
): Promise<void> {
  const reader = stream.getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      onChunk(value);
    }
  } catch {
    // The stream errors when the child is killed mid-write; what was read is kept.
  } finally {
    reader.releaseLock();
  }
}

/** Concatenates byte chunks. */
export function concat(chunks: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const c of chunks) n += c.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
