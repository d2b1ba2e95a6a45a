import assert from "node:assert/strict";
import OpenAI from "openai";
import { parseServeArgs, SERVE_USAGE, serveMain, ServeUsageError } from "./main.ts";
import { SERVER_LIMITS } from "./server.ts";

Deno.test("serve main: flags, defaults and errors that name the flag", () => {
  const d = parseServeArgs([]);
  assert.deepEqual(d, {
    help: false,
    model: "builtin:tiny",
    modelName: "builtin:tiny",
    port: 8000,
    host: "127.0.0.1",
    device: "auto",
    decodeLoop: "host",
    limits: {
      maxBodyBytes: 1048576,
      maxPrompts: 1024,
      maxCompletions: 4096,
      maxQueue: 64,
      maxImages: 8,
      maxImageBytes: 8388608,
      maxImagePixels: 16777216,
    },
  });
  assert.deepEqual(d.limits, SERVER_LIMITS);
  const a = parseServeArgs([
    "--model",
    "runs/r/checkpoints/step-3",
    "--served-model-name",
    "policy",
    "--port",
    "9001",
    "--host",
    "0.0.0.0",
    "--device",
    "cpu",
  ]);
  assert.equal(a.modelName, "policy");
  assert.equal(a.port, 9001);
  assert.equal(a.host, "0.0.0.0");
  assert.throws(() => parseServeArgs(["--port", "70000"]), /--port "70000" is not a port/);
  assert.throws(() => parseServeArgs(["--port", "-1"]), ServeUsageError);
  assert.throws(() => parseServeArgs(["--modle", "x"]), ServeUsageError);
  assert.throws(() => parseServeArgs(["--device", "tpu"]), /--device/);
  assert.throws(() => parseServeArgs(["extra"]), ServeUsageError);
});

Deno.test("serve main: an empty --served-model-name is refused with the fix", () => {
  for (const name of ["", "  "]) {
    assert.throws(
      () => parseServeArgs(["--served-model-name", name]),
      (e: unknown) => {
        assert.ok(e instanceof ServeUsageError, `${e}`);
        assert.equal(
          e.message,
          `--served-model-name ${JSON.stringify(name)} is empty; clients send this id as ` +
            `model, so give a non-empty one (e.g. --served-model-name policy) or leave the flag ` +
            `out to use --model`,
        );
        return true;
      },
    );
  }
  assert.equal(parseServeArgs(["--served-model-name", "p"]).modelName, "p");
});

Deno.test("serve main: the limit flags set the server's limits; a bad value names the flag", () => {
  const a = parseServeArgs([
    "--max-body-bytes",
    "2000",
    "--max-prompts",
    "3",
    "--max-completions",
    "12",
    "--max-queue",
    "2",
    "--max-images",
    "1",
    "--max-image-bytes",
    "5000",
    "--max-image-pixels",
    "4096",
  ]);
  assert.deepEqual(a.limits, {
    maxBodyBytes: 2000,
    maxPrompts: 3,
    maxCompletions: 12,
    maxQueue: 2,
    maxImages: 1,
    maxImageBytes: 5000,
    maxImagePixels: 4096,
  });
  assert.deepEqual(parseServeArgs(["--max-queue", "5"]).limits, { ...SERVER_LIMITS, maxQueue: 5 });
  assert.throws(
    () => parseServeArgs(["--max-queue", "0"]),
    /^ServeUsageError: --max-queue "0" is not a limit; use an integer >= 1 \(default 64\)$/,
  );
  assert.throws(() => parseServeArgs(["--max-body-bytes", "1MB"]), /--max-body-bytes "1MB"/);
  assert.throws(() => parseServeArgs(["--max-prompts=-1"]), /--max-prompts "-1"/);
  assert.throws(() => parseServeArgs(["--max-completions", "1.5"]), /--max-completions "1.5"/);
  assert.throws(
    () => parseServeArgs(["--max-image-pixels", String(2 ** 27)]),
    /^ServeUsageError: --max-image-pixels "134217728" is not a limit; use an integer in \[1, 67108864\] \(default 16777216\)$/,
  );
});

Deno.test("serve main: --help prints the usage and starts nothing", async () => {
  const lines: string[] = [];
  assert.equal(await serveMain(["--help"], (l) => lines.push(l)), null);
  assert.deepEqual(lines, [SERVE_USAGE]);
});

Deno.test("serve main: prints `serving <model> at <url>/v1` and serves it", async () => {
  const lines: string[] = [];
  const server = await serveMain(
    ["--port", "0", "--device", "cpu", "--served-model-name", "tiny"],
    (l) => lines.push(l),
  );
  try {
    const m = lines.at(-1)!.match(/^serving tiny at (http:\/\/127\.0\.0\.1:\d+\/v1)$/);
    assert.ok(m, lines.join("\n"));
    const client = new OpenAI({ baseURL: m[1]!, apiKey: "x", maxRetries: 0 });
    const r = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "2+2=" }],
      max_tokens: 3,
      temperature: 0,
    });
    assert.equal(r.model, "tiny");
  } finally {
    await server!.close();
  }
});

Deno.test("serve main: the CLI process prints its URL and answers requests", async () => {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./main.ts", import.meta.url).pathname, "--port", "0"],
    stdout: "piped",
    stderr: "piped",
  });
  const child = cmd.spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  let url: string | null = null;
  try {
    while (url === null) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
      url = out.match(/serving builtin:tiny at (\S+)\n/)?.[1] ?? null;
    }
    assert.ok(url !== null, out);
    const res = await fetch(`${url}/models`);
    assert.equal((await res.json()).data[0].id, "builtin:tiny");
  } finally {
    child.kill("SIGTERM");
    await reader.cancel();
    const status = await child.status;
    await child.stderr.cancel();
    assert.equal(status.code, 0, "SIGTERM closes the server and exits 0");
  }
});
