/**
 * Test helpers for the NATS rollout tests (not exported): a Deno subprocess whose output lines
 * a test can wait for, and the tiny configs the tests run.
 *
 * @module
 */

/** The repository root. */
export const ROOT: string = new URL("../../../", import.meta.url).pathname;
/** `apps/train/worker.ts`. */
export const WORKER: string = new URL("../worker.ts", import.meta.url).pathname;
/** `apps/train/main.ts`. */
export const TRAIN_MAIN: string = new URL("../main.ts", import.meta.url).pathname;

/** Overrides of a run small enough for a 2-core machine. */
export const TINY: readonly string[] = [
  "rollout.batchSize=8",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=8",
  "trainer.evalProblems=2",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "rollout.maxNewTokens=4",
  "trainer.evalEvery=0",
];

/** A subprocess (`deno run -A <args>`) whose stdout and stderr lines a test can wait for. */
export class ProcessLines {
  readonly lines: string[] = [];
  readonly child: Deno.ChildProcess;
  #waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  #pumps: Promise<void>[];
  #status: Promise<Deno.CommandStatus>;
  #done = false;

  /** Starts `deno run -A <args>` in the repository root, with `env` added. */
  constructor(readonly name: string, args: readonly string[], env: Record<string, string> = {}) {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "--config", `${ROOT}deno.json`, ...args],
      cwd: ROOT,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.child = child;
    this.#status = child.status.then((s) => {
      this.#done = true;
      return s;
    });
    const pump = async (stream: ReadableStream<Uint8Array>, prefix: string) => {
      let buf = "";
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          this.#line(prefix + buf.slice(0, nl));
          buf = buf.slice(nl + 1);
        }
      }
      if (buf !== "") this.#line(prefix + buf);
    };
    this.#pumps = [pump(child.stdout, ""), pump(child.stderr, "stderr: ")];
  }

  #line(line: string): void {
    if (Deno.env.get("RLVR_TEST_VERBOSE") === "1") console.error(`[${this.name}] ${line}`);
    this.lines.push(line);
    this.#waiters = this.#waiters.filter((w) => {
      const m = line.match(w.re);
      if (m !== null) w.resolve(m);
      return m === null;
    });
  }

  /** Resolves with the first line (past or future) matching `re`. */
  async waitFor(re: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    for (const l of this.lines) {
      const m = l.match(re);
      if (m !== null) return m;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        new Promise<RegExpMatchArray>((resolve) => this.#waiters.push({ re, resolve })),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() =>
            reject(
              new Error(
                `${this.name}: no line matching ${re} within ${timeoutMs} ms; output:\n` +
                  this.lines.join("\n"),
              ),
            ), timeoutMs);
        }),
        this.#status.then((s) => {
          throw new Error(
            `${this.name} exited (${s.code}${s.signal ? ` ${s.signal}` : ""}) before a line ` +
              `matching ${re}; output:\n${this.lines.join("\n")}`,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a signal (if still running). */
  signal(signal: Deno.Signal): void {
    if (!this.#done) {
      try {
        this.child.kill(signal);
      } catch { /* already exited */ }
    }
  }

  /** The exit status, after the output is read. */
  async status(): Promise<Deno.CommandStatus> {
    const s = await this.#status;
    await Promise.all(this.#pumps);
    return s;
  }

  /** Kills the process (if still running) and waits for it and its pipes. */
  kill(signal: Deno.Signal = "SIGKILL"): Promise<Deno.CommandStatus> {
    this.signal(signal);
    return this.status();
  }
}

/** Users of {@link AUTH_CONFIG}: name → password. */
export const AUTH_USERS: {
  readonly trainer: string;
  readonly worker: string;
  readonly peer: string;
} = Object.freeze({
  trainer: "trainer-pw-7f3a",
  worker: "worker-pw-91c2",
  peer: "peer-pw-5d0e",
});

/** A nats-server `authorization` block with {@link AUTH_USERS}. */
export const AUTH_CONFIG: string = `authorization {
  users = [
${Object.entries(AUTH_USERS).map(([u, p]) => `    { user: "${u}", password: "${p}" }`).join("\n")}
  ]
}
`;

/** The token of {@link TOKEN_CONFIG}. */
export const TOKEN = "tok-2b8e61d4c9";

/** A nats-server `authorization` block that requires {@link TOKEN}. */
export const TOKEN_CONFIG: string = `authorization { token: "${TOKEN}" }\n`;

/** Writes `text` to a new temporary file (mode 0600); returns its path. */
export async function tempFile(text: string, suffix = ""): Promise<string> {
  const path = await Deno.makeTempFile({ prefix: "rlvr-nats-test-", suffix });
  await Deno.writeTextFile(path, text, { mode: 0o600 });
  return path;
}

/** A CA and a server certificate for 127.0.0.1 (openssl), in a new temporary directory. */
export interface TestCerts {
  /** The directory (remove it when done). */
  dir: string;
  /** The CA certificate (PEM). */
  ca: string;
  /**
   * The server's certificate (PEM), signed by the CA, for IP 127.0.0.1 and `localhost` (the
   * client checks a connection to an IP address against `localhost`).
   */
  cert: string;
  /** The server's key (PEM). */
  key: string;
}

/** Makes {@link TestCerts} with `openssl`, or returns null when it is not installed. */
export async function makeTestCerts(): Promise<TestCerts | null> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-nats-tls-" });
  const run = async (args: string[]) => {
    const out = await new Deno.Command("openssl", {
      args,
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    if (!out.success) {
      throw new Error(`openssl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
    }
  };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  try {
    await run([
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "2",
      "-subj",
      "/CN=rlvr test CA",
    ]);
    await run([
      "req",
      ...ec,
      "-keyout",
      "server.key",
      "-out",
      "server.csr",
      "-subj",
      "/CN=127.0.0.1",
    ]);
    await Deno.writeTextFile(`${dir}/ext.cnf`, "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    await run([
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.pem",
      "-days",
      "2",
      "-extfile",
      "ext.cnf",
    ]);
  } catch (e) {
    await Deno.remove(dir, { recursive: true });
    if (e instanceof Deno.errors.NotFound) return null; // no openssl
    throw e;
  }
  return { dir, ca: `${dir}/ca.pem`, cert: `${dir}/server.pem`, key: `${dir}/server.key` };
}
