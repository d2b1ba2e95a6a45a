/**
 * `deno task serve`: serves a policy over an OpenAI-compatible HTTP API (see `server.ts` for
 * the endpoints and design decisions).
 *
 * ```sh
 * deno task serve --model runs/grpo/checkpoints/step-600 --port 8000
 * # serving runs/grpo/checkpoints/step-600 at http://127.0.0.1:8000/v1
 * ```
 *
 * Design decisions: the device is picked as `deno task train` and `deno task eval` pick it
 * (`--device auto`: WebGPU on a hardware adapter only, else the CPU) before the model loads, so
 * its tensors live there. The process runs until SIGINT / SIGTERM, then closes the server
 * (waiting for the requests in flight) and exits 0. A bad flag (an empty `--served-model-name`
 * included: no client could send it as `model`) prints the problem and the usage and exits 2.
 * The `--max-*` flags set the server's {@link ServerLimits} (body size, prompts and choices per
 * request, queue length, images per request and each image's bytes and pixels); left out, each
 * keeps its {@link SERVER_LIMITS} default. A vision-language policy is named on the `serving`
 * line, which then says that chat messages may carry images.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { parseDeviceChoice, setBackend } from "@rlvr/tensor";
import { deviceLine, selectTrainDevice } from "../loop/device.ts";
import {
  LIMIT_MAXIMA,
  type PolicyServer,
  SERVER_LIMITS,
  type ServerLimits,
  startServer,
} from "./server.ts";

/** Usage of `deno task serve`. */
export const SERVE_USAGE = `Usage: deno task serve [--model <m>] [--port N] [--host H] [options]
  --model <m>              builtin:tiny (default), a training checkpoint folder
                           (e.g. runs/grpo/checkpoints/step-600) or a Hugging Face folder
  --served-model-name <s>  the model id clients send and GET /v1/models lists (default: --model)
  --port N                 TCP port (default 8000; 0 picks a free one)
  --host H                 interface to listen on (default 127.0.0.1; no authentication,
                           so expose it beyond loopback with care)
  --device auto|webgpu|cpu where the model runs (default auto: WebGPU on a hardware adapter only)
  --decode-loop host|device
                           where decode steps run (default host); device (WebGPU) decodes on the
                           GPU the requests without top_logprobs; those run on the host loop
  --max-body-bytes N       largest request body; a larger one is a 413 (default ${SERVER_LIMITS.maxBodyBytes})
  --max-prompts N          most prompts per completions request; more is a 400 (default ${SERVER_LIMITS.maxPrompts})
  --max-completions N      most choices (n x prompts) per request; more is a 400 (default ${SERVER_LIMITS.maxCompletions})
  --max-queue N            most requests waiting or generating; one more is a 429 (default ${SERVER_LIMITS.maxQueue})
  --max-images N           most images per chat request; more is a 400 (default ${SERVER_LIMITS.maxImages})
  --max-image-bytes N      largest image (encoded bytes); larger is a 400 (default ${SERVER_LIMITS.maxImageBytes})
  --max-image-pixels N     most pixels (width x height) per image; more is a 400 (default ${SERVER_LIMITS.maxImagePixels})
  -h, --help               print this message

Endpoints (OpenAI-compatible, base URL http://host:port/v1):
  GET /v1/models, POST /v1/completions, POST /v1/chat/completions (stream: true for SSE).
  Every choice also carries token_ids (the sampled tokens) and prompt_token_ids.
  A vision-language model (e.g. --model builtin:tiny-vl) reads chat image_url parts given as
  data URLs (data:image/png;base64,... or data:image/jpeg;base64,...).`;

/** What {@link parseServeArgs} returns. */
export interface ServeArgs {
  /** Print the usage and exit. */
  help: boolean;
  /** The checkpoint to serve. */
  model: string;
  /** The served model id. */
  modelName: string;
  /** TCP port. */
  port: number;
  /** Interface to listen on. */
  host: string;
  /** `auto`, `webgpu` or `cpu`. */
  device: string;
  /** Where decode steps run (`--decode-loop`). */
  decodeLoop: "host" | "device";
  /** Request-size and queue limits (`--max-body-bytes`, `--max-prompts`, ...). */
  limits: ServerLimits;
}

/** The limit flags, by the {@link ServerLimits} field each sets. */
const LIMIT_FLAGS = {
  maxBodyBytes: "max-body-bytes",
  maxPrompts: "max-prompts",
  maxCompletions: "max-completions",
  maxQueue: "max-queue",
  maxImages: "max-images",
  maxImageBytes: "max-image-bytes",
  maxImagePixels: "max-image-pixels",
} as const satisfies Record<keyof ServerLimits, string>;

/** A bad command line; the message names the flag, its value and the fix. */
export class ServeUsageError extends Error {
  /** Names the error in stack traces. */
  override name = "ServeUsageError";
}

/**
 * Parses the flags of `deno task serve`.
 *
 * @param args The command-line arguments.
 * @returns The parsed flags with their defaults.
 * @throws {ServeUsageError} On an unknown flag or a bad value.
 *
 * @example Usage
 * ```ts
 * import { parseServeArgs } from "./main.ts";
 * import assert from "node:assert/strict";
 * const a = parseServeArgs(["--model", "runs/x/checkpoints/step-4", "--port", "0"]);
 * assert.equal(a.model, "runs/x/checkpoints/step-4");
 * assert.equal(a.modelName, "runs/x/checkpoints/step-4");
 * assert.equal(a.port, 0);
 * assert.equal(a.host, "127.0.0.1");
 * assert.equal(a.limits.maxBodyBytes, 1048576);
 * assert.throws(() => parseServeArgs(["--port", "http"]), /--port "http"/);
 * assert.throws(() => parseServeArgs(["--served-model-name", ""]), /--served-model-name "" is empty/);
 * ```
 */
export function parseServeArgs(args: readonly string[]): ServeArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        help: { type: "boolean", short: "h", default: false },
        model: { type: "string", default: "builtin:tiny" },
        "served-model-name": { type: "string" },
        port: { type: "string", default: "8000" },
        host: { type: "string", default: "127.0.0.1" },
        device: { type: "string", default: "auto" },
        "decode-loop": { type: "string", default: "host" },
        "max-body-bytes": { type: "string" },
        "max-prompts": { type: "string" },
        "max-completions": { type: "string" },
        "max-queue": { type: "string" },
        "max-images": { type: "string" },
        "max-image-bytes": { type: "string" },
        "max-image-pixels": { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new ServeUsageError((e as Error).message);
  }
  const port = values.port.trim();
  if (!/^\d+$/.test(port) || Number(port) > 65535) {
    throw new ServeUsageError(
      `--port ${JSON.stringify(values.port)} is not a port; use an integer in [0, 65535]`,
    );
  }
  if (values.model === "") throw new ServeUsageError(`--model is empty; use e.g. builtin:tiny`);
  const name = values["served-model-name"];
  if (name !== undefined && name.trim() === "") {
    throw new ServeUsageError(
      `--served-model-name ${JSON.stringify(name)} is empty; clients send this id as model, so ` +
        `give a non-empty one (e.g. --served-model-name policy) or leave the flag out to use ` +
        `--model`,
    );
  }
  const limits: ServerLimits = { ...SERVER_LIMITS };
  for (const [key, flag] of Object.entries(LIMIT_FLAGS) as [keyof ServerLimits, string][]) {
    const raw = values[flag as keyof typeof values] as string | undefined;
    if (raw === undefined) continue;
    const v = raw.trim();
    const max = LIMIT_MAXIMA[key] ?? Number.MAX_SAFE_INTEGER;
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < 1 || Number(v) > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? ">= 1" : `in [1, ${max}]`;
      throw new ServeUsageError(
        `--${flag} ${JSON.stringify(raw)} is not a limit; use an integer ${range} ` +
          `(default ${SERVER_LIMITS[key]})`,
      );
    }
    limits[key] = Number(v);
  }
  try {
    parseDeviceChoice(values.device, "--device");
  } catch (e) {
    throw new ServeUsageError((e as Error).message);
  }
  const loop = values["decode-loop"];
  if (loop !== "host" && loop !== "device") {
    throw new ServeUsageError(
      `--decode-loop ${JSON.stringify(loop)} is not a decode loop; use host or device`,
    );
  }
  return {
    help: values.help,
    model: values.model,
    modelName: name ?? values.model,
    port: Number(port),
    host: values.host,
    device: values.device,
    decodeLoop: loop,
    limits,
  };
}

/**
 * Runs `deno task serve`: picks the device, loads the model, starts the server and prints
 * `serving <model> at http://host:port/v1` (with `(vision-language: ...)` after it for a model
 * that reads images). Returns the running server (the CLI waits for a
 * signal; tests close it), or null after `--help`.
 *
 * @param args The command-line arguments.
 * @param log Where the status lines go (default `console.log`).
 * @returns The server, or null when only the usage was printed.
 *
 * @example Usage
 * ```ts
 * import { serveMain } from "./main.ts";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const server = await serveMain(["--port", "0", "--device", "cpu"], (l) => lines.push(l));
 * assert.match(lines.at(-1)!, /^serving builtin:tiny at http:\/\/127\.0\.0\.1:\d+\/v1$/);
 * await server!.close();
 * ```
 */
export async function serveMain(
  args: readonly string[],
  log: (line: string) => void = console.log,
): Promise<PolicyServer | null> {
  const a = parseServeArgs(args);
  if (a.help) {
    log(SERVE_USAGE);
    return null;
  }
  const device = await selectTrainDevice(a.device);
  setBackend(device.backend);
  log(deviceLine(device).replace("trainer.device", "--device"));
  try {
    const server = await startServer({
      model: a.model,
      modelName: a.modelName,
      port: a.port,
      host: a.host,
      limits: a.limits,
      decodeLoop: a.decodeLoop,
    });
    const images = server.vision
      ? " (vision-language: chat messages may carry image_url parts)"
      : "";
    if (a.decodeLoop === "device") {
      log("decode loop: device (requests with top_logprobs: host)");
    }
    log(`serving ${a.modelName} at ${server.url}/v1${images}`);
    return server;
  } catch (e) {
    device.release();
    throw e;
  }
}

if (import.meta.main) {
  let server: PolicyServer | null;
  try {
    server = await serveMain(Deno.args);
  } catch (e) {
    if (e instanceof ServeUsageError) {
      console.error(`serve: ${e.message}\n\n${SERVE_USAGE}`);
      Deno.exit(2);
    }
    console.error(`serve: ${(e as Error).message ?? e}`);
    Deno.exit(1);
  }
  if (server !== null) {
    const stop = async () => {
      await server!.close();
      Deno.exit(0);
    };
    Deno.addSignalListener("SIGINT", stop);
    if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", stop);
  }
}
