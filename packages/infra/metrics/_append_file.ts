/**
 * An append-only text file with one `write` call per record (internal to the file sinks).
 *
 * Design decision: the file is opened with O_APPEND and every record is encoded in full first
 * and handed to the OS in a single `write`, so a record is never interleaved with another one
 * (also across processes appending to the same file) and a crash loses at most the record being
 * written. If that crash tore a line in half, the next {@link AppendFile.open} cuts the file back
 * to its last newline, so readers never see a half record. Writes of one `AppendFile` are
 * serialized in call order.
 *
 * @module
 */

const NEWLINE = 0x0a;

/** An append-only file whose records are whole lines. */
export class AppendFile {
  /** The file's path. */
  readonly path: string;
  /** Bytes of a torn last line that {@link AppendFile.open} removed (0 normally). */
  readonly repairedBytes: number;
  /** Whether the file held data when it was opened (a resumed run). */
  readonly existed: boolean;
  #file: Deno.FsFile | null;
  #chain: Promise<void> = Promise.resolve();

  private constructor(path: string, file: Deno.FsFile, repairedBytes: number, existed: boolean) {
    this.path = path;
    this.#file = file;
    this.repairedBytes = repairedBytes;
    this.existed = existed;
  }

  /** Opens (creating) `path` for appending, cutting a torn last line first. */
  static async open(path: string): Promise<AppendFile> {
    let size = 0;
    try {
      size = (await Deno.stat(path)).size;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    let repaired = 0;
    if (size > 0) {
      const bytes = await Deno.readFile(path);
      const end = bytes.lastIndexOf(NEWLINE) + 1; // 0 when there is no newline at all
      if (end < bytes.length) {
        repaired = bytes.length - end;
        await Deno.truncate(path, end);
        size = end;
      }
    }
    const file = await Deno.open(path, { append: true, create: true });
    return new AppendFile(path, file, repaired, size > 0);
  }

  /** Reads the first line of `path` (without the newline), or null when empty or missing. */
  static async firstLine(path: string): Promise<string | null> {
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
    const nl = text.indexOf("\n");
    return nl < 0 ? null : text.slice(0, nl);
  }

  /** Whether {@link AppendFile.close} was called. */
  get closed(): boolean {
    return this.#file === null;
  }

  /** Appends `text` (one or more whole lines) with one write call; calls run in order. */
  append(text: string): Promise<void> {
    const file = this.#file;
    if (file === null) {
      return Promise.reject(new Error(`${this.path}: the sink is closed; open a new one`));
    }
    const bytes = new TextEncoder().encode(text);
    const done = this.#chain.then(async () => {
      let at = await file.write(bytes);
      // A regular file takes the whole buffer in one write on Linux and macOS; the loop only
      // guards against a short write (full disk), where finishing the line beats leaving it torn.
      while (at < bytes.length) at += await file.write(bytes.subarray(at));
    });
    this.#chain = done.catch(() => {});
    return done;
  }

  /** Waits for pending appends and closes the file. Idempotent. */
  async close(): Promise<void> {
    const file = this.#file;
    if (file === null) return;
    this.#file = null;
    await this.#chain;
    file.close();
  }
}
