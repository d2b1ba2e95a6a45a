/**
 * Starts and stops a real `nats-server` with JetStream on loopback, for tests (of this package and
 * of others) and local runs.
 *
 * Design decisions:
 * - A real server, never a mock: acknowledgement, redelivery and deduplication are the server's
 *   behaviour, and that is what the tests must exercise. The server binds `127.0.0.1` on a free
 *   port with its JetStream store in a fresh temporary directory, so parallel test files never
 *   share state, and {@link NatsServer.stop} removes the directory.
 * - "Ready" means a TCP connection gets the server's `INFO` line with `"jetstream":true`, not
 *   "the process started": JetStream is enabled before the client port opens, so the first
 *   client request cannot race the server's start.
 * - The binary is looked up on `PATH` plus `/usr/sbin` and `/usr/local/sbin` (Debian installs it
 *   in `/usr/sbin`, which is not on a normal user's `PATH`), or taken from `NATS_SERVER_BIN`.
 * - {@link natsTest} skips a test when the binary is missing, but fails it under `CI=true`,
 *   where `.ci/run` installs the server (the same rule as the WebGPU tests). Skipping is loud: a
 *   test file whose NATS tests were skipped prints one line with their count (`NATS TESTS
 *   SKIPPED: 4 of this file ...`), so a green run without the server is not mistaken for one
 *   that exercised the transport.
 * - Servers that require credentials or TLS (`NatsServerOptions.config`): the text is written
 *   to a config file passed with `-c`; the command-line flags (`-js -a -p -sd`) still apply, so
 *   the caller writes only `authorization { ... }` or `tls { ... }` blocks.
 *
 * @module
 */

/**
 * Thrown by {@link startNatsServer} when no `nats-server` binary is found.
 *
 * @example Usage
 * ```ts
 * import { NatsServerMissingError, startNatsServer } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   startNatsServer({ binary: "/nonexistent/nats-server" }),
 *   NatsServerMissingError,
 * );
 * ```
 */
export class NatsServerMissingError extends Error {
  /**
   * Builds the message with install instructions.
   *
   * @param detail Where it was looked for.
   */
  constructor(detail: string) {
    super(
      `nats-server not found (${detail}); install it with \`apt-get install -y nats-server\` ` +
        `(Debian/Ubuntu) or set NATS_SERVER_BIN to the binary`,
    );
    this.name = "NatsServerMissingError";
  }
}

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env
  }
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Path of the `nats-server` binary: `NATS_SERVER_BIN`, else the first on `PATH`, `/usr/sbin` or
 * `/usr/local/sbin`; null when none exists. Synchronous and spawns nothing, so test files can
 * call it while registering tests.
 *
 * @returns The path, or null.
 *
 * @example Usage
 * ```ts
 * import { findNatsServer } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const bin = findNatsServer();
 * assert.ok(bin === null || bin.endsWith("nats-server"));
 * ```
 */
export function findNatsServer(): string | null {
  const explicit = env("NATS_SERVER_BIN");
  if (explicit !== undefined && explicit !== "") return isFile(explicit) ? explicit : null;
  const dirs = (env("PATH") ?? "").split(":").filter((d) => d !== "");
  for (const dir of [...dirs, "/usr/sbin", "/usr/local/sbin"]) {
    const p = `${dir}/nats-server`;
    if (isFile(p)) return p;
  }
  return null;
}

/**
 * Options of {@link startNatsServer}.
 *
 * @example Usage
 * ```ts
 * import type { NatsServerOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: NatsServerOptions = { startTimeoutMs: 5000 };
 * assert.equal(o.startTimeoutMs, 5000);
 * ```
 */
export interface NatsServerOptions {
  /** The binary (default {@link findNatsServer}). */
  binary?: string;
  /** Client port (default: a free port). */
  port?: number;
  /**
   * JetStream store directory (default: a new temporary directory, removed by `stop`). A
   * directory given here is kept.
   */
  storeDir?: string;
  /** How long to wait for the server to accept clients (default 10 000 ms). */
  startTimeoutMs?: number;
  /**
   * Extra nats-server configuration (its config-file syntax), e.g. an `authorization { users =
   * [...] }` block or a `tls { ... }` block; written to a file in a temporary directory (removed
   * by `stop`) and passed with `-c`. The listen address, port, JetStream and store still come
   * from the other options.
   */
  config?: string;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads the first line the server sends; true when it is an INFO with JetStream on. */
async function jetstreamReady(port: number): Promise<boolean> {
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
  } catch {
    return false;
  }
  try {
    const buf = new Uint8Array(4096);
    let text = "";
    const deadline = Date.now() + 1000;
    while (!text.includes("\r\n") && Date.now() < deadline) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return text.startsWith("INFO ") && /"jetstream"\s*:\s*true/.test(text);
  } catch {
    return false;
  } finally {
    conn.close();
  }
}

/**
 * A running `nats-server` child process. `await using` stops it.
 *
 * @example Usage
 * ```ts
 * import { findNatsServer, startNatsServer } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * if (findNatsServer() !== null) {
 *   await using server = await startNatsServer();
 *   assert.match(server.url, /^nats:\/\/127\.0\.0\.1:\d+$/);
 * }
 * ```
 */
export class NatsServer implements AsyncDisposable {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  /** Client port. */
  readonly port: number;
  /** JetStream store directory. */
  readonly storeDir: string;
  /** The binary that runs. */
  readonly binary: string;
  #child: Deno.ChildProcess;
  #ownsDir: boolean;
  #log = "";
  #pump: Promise<void>;
  #exited = false;
  #status: Promise<Deno.CommandStatus>;
  #config: string | undefined = undefined;
  #configDir: string | null = null;

  private constructor(
    binary: string,
    port: number,
    storeDir: string,
    ownsDir: boolean,
    child: Deno.ChildProcess,
  ) {
    this.binary = binary;
    this.port = port;
    this.url = `nats://127.0.0.1:${port}`;
    this.storeDir = storeDir;
    this.#ownsDir = ownsDir;
    this.#child = child;
    this.#status = child.status.then((s) => {
      this.#exited = true;
      return s;
    });
    // Drain the server's log continuously (a full pipe would block it) and keep the tail for
    // error messages.
    this.#pump = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) {
        this.#log = (this.#log + decoder.decode(chunk, { stream: true })).slice(-8192);
      }
    })().catch(() => {});
  }

  /**
   * Starts a server and waits until it accepts JetStream clients.
   *
   * @param options Binary, port, store directory, start timeout.
   * @returns The running server.
   * @throws {NatsServerMissingError} when there is no binary.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, NatsServer } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   const server = await NatsServer.start();
   *   assert.ok(server.port > 0);
   *   await server.stop();
   * }
   * ```
   */
  static async start(options: NatsServerOptions = {}): Promise<NatsServer> {
    const binary = options.binary ?? findNatsServer();
    if (binary === null) {
      throw new NatsServerMissingError("looked on PATH, /usr/sbin and /usr/local/sbin");
    }
    if (!isFile(binary)) throw new NatsServerMissingError(`${binary} does not exist`);
    const ownsDir = options.storeDir === undefined;
    const storeDir = options.storeDir ?? await Deno.makeTempDir({ prefix: "rlvr-nats-" });
    const timeout = options.startTimeoutMs ?? 10_000;
    // The config file lives outside the store directory (a kept store stays JetStream's only).
    let configDir: string | null = null;
    const configArgs: string[] = [];
    if (options.config !== undefined) {
      configDir = await Deno.makeTempDir({ prefix: "rlvr-nats-conf-" });
      const file = `${configDir}/nats-server.conf`;
      await Deno.writeTextFile(file, options.config, { mode: 0o600 });
      configArgs.push("-c", file);
    }
    let lastError: Error | null = null;
    // A free port can be taken between our probe and the server's bind; try a few.
    for (let attempt = 0; attempt < (options.port === undefined ? 3 : 1); attempt++) {
      const port = options.port ?? freePort();
      const child = new Deno.Command(binary, {
        args: [...configArgs, "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir],
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const server = new NatsServer(binary, port, storeDir, ownsDir, child);
      server.#config = options.config;
      server.#configDir = configDir;
      const deadline = Date.now() + timeout;
      while (Date.now() < deadline && !server.#exited) {
        if (await jetstreamReady(port)) return server;
        await sleep(20);
      }
      await server.#halt();
      lastError = new Error(
        `nats-server on port ${port} ${
          server.#exited ? "exited" : `did not accept clients within ${timeout} ms`
        }; its log ends with:\n${server.log.slice(-2000)}`,
      );
    }
    if (ownsDir) await Deno.remove(storeDir, { recursive: true }).catch(() => {});
    if (configDir !== null) await Deno.remove(configDir, { recursive: true }).catch(() => {});
    throw lastError!;
  }

  /**
   * The tail of the server's log (last 8 KiB), for error messages.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   await using server = await startNatsServer();
   *   assert.match(server.log, /Server is ready/);
   * }
   * ```
   */
  get log(): string {
    return this.#log;
  }

  /**
   * Whether the process is still running.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   const server = await startNatsServer();
   *   assert.equal(server.running, true);
   *   await server.stop();
   *   assert.equal(server.running, false);
   * }
   * ```
   */
  get running(): boolean {
    return !this.#exited;
  }

  /** Ends the process (SIGTERM, then SIGKILL after `graceMs`) and waits for its log pump. */
  async #halt(graceMs = 5000): Promise<void> {
    if (!this.#exited) {
      try {
        this.#child.kill("SIGTERM");
      } catch { /* already gone */ }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const killed = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          try {
            this.#child.kill("SIGKILL");
          } catch { /* already gone */ }
          resolve();
        }, graceMs);
      });
      await Promise.race([this.#status, killed]);
      clearTimeout(timer);
    }
    await this.#status;
    await this.#pump;
  }

  /**
   * Stops the server and, when it created it, removes the store directory. Idempotent.
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   const server = await startNatsServer();
   *   await server.stop();
   *   await assert.rejects(Deno.stat(server.storeDir), Deno.errors.NotFound);
   * }
   * ```
   */
  async stop(): Promise<void> {
    await this.#halt();
    if (this.#configDir !== null) {
      await Deno.remove(this.#configDir, { recursive: true }).catch(() => {});
      this.#configDir = null;
    }
    if (this.#ownsDir) {
      this.#ownsDir = false;
      await Deno.remove(this.storeDir, { recursive: true }).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
    }
  }

  /**
   * Stops the process and starts a new one on the same port and store directory: JetStream
   * data (streams, unacknowledged work, objects) survives, as after a server crash and restart.
   *
   * @param signal How to stop the old process: `"SIGTERM"` (clean) or `"SIGKILL"` (crash).
   * @returns The new server (this object is stopped; the directory now belongs to the new one).
   *
   * @example Usage
   * ```ts
   * import { findNatsServer, startNatsServer } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * if (findNatsServer() !== null) {
   *   const first = await startNatsServer();
   *   await using second = await first.restart();
   *   assert.equal(second.port, first.port);
   *   assert.equal(first.running, false);
   * }
   * ```
   */
  async restart(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<NatsServer> {
    if (signal === "SIGKILL" && !this.#exited) {
      try {
        this.#child.kill("SIGKILL");
      } catch { /* already gone */ }
    }
    await this.#halt();
    const owned = this.#ownsDir;
    this.#ownsDir = false;
    if (this.#configDir !== null) {
      await Deno.remove(this.#configDir, { recursive: true }).catch(() => {});
      this.#configDir = null;
    }
    const next = await NatsServer.start({
      binary: this.binary,
      port: this.port,
      storeDir: this.storeDir,
      ...(this.#config === undefined ? {} : { config: this.#config }),
    });
    next.#ownsDir = owned;
    return next;
  }

  /** Same as {@link NatsServer.stop}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

/**
 * Starts a `nats-server` with JetStream on `127.0.0.1`, a free port and a temporary store.
 *
 * @param options Binary, port, store directory, start timeout.
 * @returns The running server; stop it with `await server.stop()` or `await using`.
 * @throws {NatsServerMissingError} when there is no binary.
 *
 * @example Usage
 * ```ts
 * import { findNatsServer, startNatsServer } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * if (findNatsServer() !== null) {
 *   await using server = await startNatsServer();
 *   assert.ok(server.running);
 * }
 * ```
 */
export function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  return NatsServer.start(options);
}

/**
 * Options of {@link natsTest} and {@link withNatsServer}.
 *
 * @example Usage
 * ```ts
 * import type { NatsTestOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: NatsTestOptions = { timeoutMs: 15_000 };
 * assert.equal(o.timeoutMs, 15_000);
 * ```
 */
export interface NatsTestOptions {
  /** Fail the test when it runs longer than this (default 30 000 ms). */
  timeoutMs?: number;
  /** Options of the server the test gets. */
  server?: NatsServerOptions;
}

/** NATS tests of this module (test file) skipped for a missing binary, and whether said. */
const skipped = { count: 0, announced: false };

/** The line a test file prints when its NATS tests were skipped: the count, why, the fix. */
function natsSkipLine(count: number): string {
  let file = "this file";
  try {
    const path = new URL(Deno.mainModule).pathname;
    const cwd = `${Deno.cwd()}/`;
    file = path.startsWith(cwd) ? path.slice(cwd.length) : path;
  } catch { /* no main module or no read permission: keep the generic name */ }
  return `NATS TESTS SKIPPED: ${count} test${count === 1 ? "" : "s"} of ${file} did not run ` +
    `(nats-server not found; apt-get install -y nats-server, or set NATS_SERVER_BIN; under ` +
    `CI=true they fail instead)`;
}

/**
 * Registers a `Deno.test` that gets a fresh `nats-server` (stopped and cleaned up afterwards,
 * also on failure). Without the binary the test is skipped (ignored), and the file prints one
 * line with the count of its skipped tests (`NATS TESTS SKIPPED: <n> tests of <file> ...`);
 * under `CI=true` it fails instead.
 *
 * @param name Test name.
 * @param fn The test body.
 * @param options Timeout and server options.
 *
 * @example Usage
 * ```ts
 * import { natsTest } from "@rlvr/infra";
 * import { connect } from "@nats-io/transport-node";
 * import assert from "node:assert/strict";
 * // At the top level of a *_test.ts file (here wrapped, since a doc test cannot register tests):
 * const register = () =>
 *   natsTest("publishes over a real server", async (server) => {
 *     await using nc = await connect({ servers: server.url });
 *     await nc.flush();
 *   });
 * assert.equal(typeof register, "function");
 * ```
 */
export function natsTest(
  name: string,
  fn: (server: NatsServer) => Promise<void>,
  options: NatsTestOptions = {},
): void {
  const binary = findNatsServer();
  const ci = env("CI") === "true" || env("CI") === "1";
  if (binary === null && !ci) {
    skipped.count++;
    if (!skipped.announced) {
      skipped.announced = true;
      // Said when the file's tests are done (Deno dispatches "unload" per test module, after
      // its last test): every natsTest of the file is counted by then, also those registered
      // after a top-level await, and the line sits next to the "ignored" lines it explains.
      globalThis.addEventListener("unload", () => console.warn(natsSkipLine(skipped.count)));
    }
  }
  Deno.test({
    name,
    ignore: binary === null && !ci,
    fn: async () => {
      if (binary === null) {
        throw new NatsServerMissingError("CI=true requires it; .ci/run installs it with apt-get");
      }
      await withNatsServer(fn, { ...options, server: { binary, ...options.server } });
    },
  });
}

/**
 * Runs `fn` with a fresh `nats-server` and stops it (removing its store) afterwards, also when
 * `fn` throws or runs past `timeoutMs`.
 *
 * @param fn The work.
 * @param options Timeout and server options.
 * @returns What `fn` returns.
 * @throws {NatsServerMissingError} when there is no binary.
 *
 * @example Usage
 * ```ts
 * import { findNatsServer, withNatsServer } from "@rlvr/infra";
 * import { connect } from "@nats-io/transport-node";
 * import assert from "node:assert/strict";
 * if (findNatsServer() !== null) {
 *   const rtt = await withNatsServer(async (server) => {
 *     await using nc = await connect({ servers: server.url });
 *     return await nc.rtt();
 *   });
 *   assert.ok(rtt >= 0);
 * }
 * ```
 */
export async function withNatsServer<R>(
  fn: (server: NatsServer) => Promise<R>,
  options: NatsTestOptions = {},
): Promise<R> {
  const server = await startNatsServer(options.server);
  const limit = options.timeoutMs ?? 30_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      fn(server),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`NATS test timed out after ${limit} ms (options.timeoutMs)`)),
          limit,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await server.stop();
  }
}
