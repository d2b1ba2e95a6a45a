// Hostile and careless input against the policy server, on loopback with the built-in tiny
// model: every one gets a clear OpenAI-shaped error at once, and the server keeps serving.

import assert from "node:assert/strict";
import OpenAI from "openai";
import type { Tokenizer } from "@rlvr/policy";
import { loadPolicy } from "../loop/policy.ts";
import { MAX_STOP, type PolicyServer, SERVER_LIMITS, startServer } from "./server.ts";

const MODEL = "builtin:tiny";

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** POSTs `body` (JSON-encoded unless a string) and returns the status, headers and JSON. */
async function post(server: PolicyServer, path: string, body: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** Asserts an OpenAI-shaped error with this status, param, code and message. */
function assertError(
  got: { status: number; text: string },
  status: number,
  param: string | null,
  code: string,
  message: RegExp,
): ErrorBody["error"] {
  assert.equal(got.status, status, got.text);
  const { error } = JSON.parse(got.text) as ErrorBody;
  assert.deepEqual(Object.keys(error).sort(), ["code", "message", "param", "type"]);
  assert.equal(error.param, param);
  assert.equal(error.code, code);
  assert.match(error.message, message);
  return error;
}

/** Still serving: a small completion succeeds. */
async function assertServes(server: PolicyServer): Promise<void> {
  const ok = await post(server, "/v1/completions", { model: MODEL, prompt: "1+", max_tokens: 2 });
  assert.equal(ok.status, 200, ok.text);
}

/**
 * Sends raw bytes over TCP and reads one HTTP response (status line, headers, a body of
 * Content-Length bytes). `body` goes out while the response is read, so a server that answers
 * early is seen answering early. Fails after `deadlineMs` without a response: a server that
 * waits for the rest of a body that never comes would otherwise hang the test.
 */
async function rawExchange(
  server: PolicyServer,
  head: string,
  body: Uint8Array,
  deadlineMs = 30_000,
): Promise<{ status: number; text: string }> {
  const url = new URL(server.url);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const writing = (async () => {
    await conn.write(new TextEncoder().encode(head));
    let at = 0;
    while (at < body.length) at += await conn.write(body.subarray(at));
  })().catch(() => {}); // the server may close the connection before taking every byte
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no response in ${deadlineMs} ms: the server waited for the body`)),
      deadlineMs,
    );
  });
  const reading = (async () => {
    const buf = new Uint8Array(64 * 1024);
    let got = new Uint8Array(0);
    const decoder = new TextDecoder();
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) throw new Error(`connection closed: ${decoder.decode(got)}`);
      const next = new Uint8Array(got.length + n);
      next.set(got);
      next.set(buf.subarray(0, n), got.length);
      got = next;
      const text = decoder.decode(got);
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) continue;
      const length = Number(text.slice(0, end).match(/content-length: *(\d+)/i)?.[1] ?? NaN);
      if (got.length - (end + 4) < length) continue;
      const status = Number(text.slice(9, 12));
      return { status, text: text.slice(end + 4, end + 4 + length) };
    }
  })();
  try {
    return await Promise.race([reading, deadline]);
  } finally {
    clearTimeout(timer);
    conn.close();
    await writing;
    await reading.catch(() => {});
  }
}

Deno.test("serve limits: a body over the limit is a 413, from its Content-Length or while streamed", async () => {
  const server = await startServer({ model: MODEL, port: 0 });
  try {
    const max = SERVER_LIMITS.maxBodyBytes;
    assert.equal(max, 1024 * 1024);
    // A valid request whose prompt alone is 2 MiB: refused, not tokenized.
    const big = { model: MODEL, prompt: "1".repeat(2 * max), max_tokens: 1 };
    const res = await post(server, "/v1/completions", big);
    assertError(
      res,
      413,
      null,
      "request_too_large",
      /^the request body has \d+ bytes \(its Content-Length\), more than this server's limit of 1048576 bytes \(--max-body-bytes\)/,
    );
    assert.equal(res.headers.get("content-type"), "application/json");
    // Only a Content-Length of 50 MB and no body at all: the 413 comes without reading one.
    const head = (extra: string) =>
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${extra}\r\n`;
    const declared = await rawExchange(
      server,
      head(`content-length: ${50 * 1024 * 1024}\r\n`),
      new Uint8Array(0),
    );
    assertError(declared, 413, null, "request_too_large", /has 52428800 bytes/);
    // Chunked (no Content-Length), 1.5 MiB sent and never finished: the server stops reading
    // past the limit and answers.
    const chunk = new TextEncoder().encode(`10000\r\n${"x".repeat(0x10000)}\r\n`);
    const chunks = new Uint8Array(chunk.length * 24); // 24 × 64 KiB = 1.5 MiB
    for (let i = 0; i < 24; i++) chunks.set(chunk, i * chunk.length);
    const streamed = await rawExchange(server, head("transfer-encoding: chunked\r\n"), chunks);
    assertError(
      streamed,
      413,
      null,
      "request_too_large",
      /passed 1048576 bytes while being read \(it has no Content-Length\)/,
    );
    // A body just under the limit is read and parsed as usual.
    const under = await post(server, "/v1/completions", "x".repeat(max - 1));
    assertError(under, 400, null, "invalid_json", /not valid JSON/);
    await assertServes(server);
  } finally {
    await server.close();
  }
  // The limit is configurable (deno task serve --max-body-bytes).
  const small = await startServer({ model: MODEL, port: 0, limits: { maxBodyBytes: 200 } });
  try {
    const body = { model: MODEL, prompt: "1+", max_tokens: 1 };
    assert.equal((await post(small, "/v1/completions", body)).status, 200);
    const res = await post(small, "/v1/completions", { ...body, user: "u".repeat(200) });
    assertError(res, 413, null, "request_too_large", /limit of 200 bytes/);
  } finally {
    await small.close();
  }
});

Deno.test("serve limits: too many prompts or choices are a 400 naming the field, the value and the limit, before tokenizing", async () => {
  const policy = await loadPolicy(MODEL);
  // Counts the prompts the server tokenizes: a refused request must tokenize none.
  let encoded = 0;
  const tok = policy.tokenizer;
  const tokenizer: Tokenizer = {
    vocabSize: tok.vocabSize,
    bosTokenId: tok.bosTokenId,
    eosTokenIds: tok.eosTokenIds,
    padTokenId: tok.padTokenId,
    unkTokenId: tok.unkTokenId,
    specialTokenIds: tok.specialTokenIds,
    encode: (text, opts) => {
      encoded++;
      return tok.encode(text, opts);
    },
    decode: tok.decode.bind(tok),
    tokenToId: tok.tokenToId.bind(tok),
    idToToken: tok.idToToken.bind(tok),
    applyChatTemplate: tok.applyChatTemplate.bind(tok),
    save: tok.save.bind(tok),
  };
  const server = await startServer({ policy: { ...policy, tokenizer }, modelName: MODEL, port: 0 });
  try {
    const base = { model: MODEL, max_tokens: 1 };
    // 1025 string prompts: one past the default of 1024.
    let res = await post(server, "/v1/completions", {
      ...base,
      prompt: Array.from({ length: 1025 }, () => "1+"),
    });
    assertError(
      res,
      400,
      "prompt",
      "too_many_prompts",
      /^prompt has 1025 prompts, more than this server's limit of 1024 per request \(--max-prompts\); send at most 1024 prompts per request$/,
    );
    // The request that overflowed the call stack: 1000 prompts × n = 128.
    res = await post(server, "/v1/completions", {
      ...base,
      n: 128,
      prompt: Array.from({ length: 1000 }, () => "1+"),
    });
    assertError(
      res,
      400,
      "n",
      "too_many_completions",
      /^n 128 × 1000 prompts = 128000 choices is more than this server's limit of 4096 choices per request \(--max-completions\); lower n or send fewer prompts per request$/,
    );
    // Token-id prompts count the same way.
    res = await post(server, "/v1/completions", {
      ...base,
      n: 64,
      prompt: Array.from({ length: 65 }, () => [1, 5]),
    });
    assertError(res, 400, "n", "too_many_completions", /n 64 × 65 prompts = 4160 choices/);
    assert.equal(encoded, 0, "a refused request was tokenized");
    // At the limit: 32 prompts × n = 128 = 4096 choices are served.
    res = await post(server, "/v1/completions", {
      ...base,
      n: 128,
      prompt: Array.from({ length: 32 }, () => [1, 5]),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json().choices.length, 4096);
    await assertServes(server);
  } finally {
    await server.close();
  }
  // Configured limits (deno task serve --max-prompts 2 --max-completions 4), chat included.
  const small = await startServer({
    policy,
    modelName: MODEL,
    port: 0,
    limits: { maxPrompts: 2, maxCompletions: 4 },
  });
  try {
    const client = new OpenAI({ baseURL: `${small.url}/v1`, apiKey: "x", maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content: "1+" }],
        max_tokens: 1,
        n: 5,
      }),
      (e: unknown) => {
        assert.ok(e instanceof OpenAI.APIError, `${e}`);
        assert.equal(e.status, 400);
        assert.equal((e.error as { param: string }).param, "n");
        assert.match(
          e.message,
          /n 5 choices is more than this server's limit of 4 choices.*lower n$/,
        );
        return true;
      },
    );
    const three = await post(small, "/v1/completions", { model: MODEL, prompt: ["1", "2", "3"] });
    assertError(three, 400, "prompt", "too_many_prompts", /prompt has 3 prompts.*limit of 2/);
    const r = await client.completions.create({
      model: MODEL,
      prompt: ["1+", "2+"],
      n: 2,
      max_tokens: 1,
    });
    assert.equal(r.choices.length, 4);
  } finally {
    await small.close();
    policy.model.dispose();
  }
});

Deno.test("serve limits: a full queue answers 429 with Retry-After at once, streams included", async () => {
  const policy = await loadPolicy(MODEL);
  // No EOS: the long stream below cannot end early, so it holds the queue's one place.
  const server = await startServer({
    policy: { ...policy, eosTokenIds: [] },
    modelName: MODEL,
    port: 0,
    limits: { maxQueue: 1 },
  });
  try {
    const long = await fetch(`${server.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: MODEL, prompt: "1", max_tokens: 250, stream: true, seed: 1 }),
    });
    assert.equal(long.status, 200);
    const reader = long.body!.pipeThrough(new TextDecoderStream()).getReader();
    let sse = (await reader.read()).value ?? "";
    assert.match(sse, /^data: /, "the stream has started generating");
    // The stream now runs 250 decode steps, yielding to the event loop after each one; the
    // requests below are answered within a few turns of it, long before it ends.
    const req = { model: MODEL, prompt: "1+", max_tokens: 2 };
    for (const stream of [false, true]) {
      const busy = await post(server, "/v1/completions", { ...req, stream });
      const e = assertError(
        busy,
        429,
        null,
        "queue_full",
        /^the server is busy: its generation queue is full \(1 requests waiting or running, its limit of 1, --max-queue\); retry later \(the openai client retries a 429 by itself\)$/,
      );
      assert.equal(e.type, "rate_limit_error");
      assert.equal(busy.headers.get("retry-after"), "1");
    }
    const chat = await post(server, "/v1/chat/completions", {
      model: MODEL,
      messages: [{ role: "user", content: "1+" }],
      max_tokens: 2,
    });
    assert.equal(chat.status, 429, chat.text);
    // Bad requests are still told what is wrong, and the model list is still served.
    assertError(
      await post(server, "/v1/completions", { ...req, n: 0 }),
      400,
      "n",
      "invalid_value",
      /n must be an integer/,
    );
    assert.equal((await fetch(`${server.url}/v1/models`).then((r) => r.json())).data[0].id, MODEL);
    // The stream ends normally; its place is free again.
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      sse += value;
    }
    assert.ok(sse.endsWith("data: [DONE]\n\n"));
    assert.ok(!sse.includes(`"error"`), sse.slice(-500));
    await assertServes(server);
    await assertServes(server);
  } finally {
    await server.close();
    policy.model.dispose();
  }
});

Deno.test("serve limits: a denormal temperature is greedy, with finite log-probs everywhere", async () => {
  const server = await startServer({ model: MODEL, port: 0 });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x", maxRetries: 0 });
    const chat = (temperature: number) =>
      client.chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content: "12+5=" }],
        max_tokens: 8,
        temperature,
        seed: 4,
        n: 2,
        logprobs: true,
        top_logprobs: 5,
      });
    const greedy = await chat(0);
    for (const temperature of [1e-320, 5e-324, 1e-300, 9e-6]) {
      const r = await chat(temperature);
      r.choices.forEach((c, i) => {
        const content = c.logprobs!.content!;
        assert.ok(content.length > 0);
        for (const e of content) {
          assert.ok(Number.isFinite(e.logprob), `T=${temperature}: logprob ${e.logprob}`);
          assert.equal(e.top_logprobs.length, 5);
          for (const t of e.top_logprobs) {
            assert.ok(Number.isFinite(t.logprob), `T=${temperature}: top ${t.logprob}`);
          }
        }
        // Greedy, exactly as temperature 0: the same tokens and log-probs.
        assert.deepEqual(c.logprobs, greedy.choices[i]!.logprobs);
        assert.equal(c.message.content, greedy.choices[i]!.message.content);
      });
    }
    const completion = await client.completions.create({
      model: MODEL,
      prompt: "3+4=",
      max_tokens: 6,
      temperature: 1e-320,
      logprobs: 3,
    });
    const lp = completion.choices[0]!.logprobs!;
    assert.ok(lp.token_logprobs!.every(Number.isFinite), `${lp.token_logprobs}`);
    for (const top of lp.top_logprobs!) {
      assert.ok(Object.values(top).every(Number.isFinite), JSON.stringify(top));
    }
  } finally {
    await server.close();
  }
});

Deno.test("serve limits: more than MAX_STOP stop strings, or a deeply nested prompt, is a 400", async () => {
  const server = await startServer({ model: MODEL, port: 0 });
  try {
    const stop = Array.from({ length: MAX_STOP + 1 }, (_, i) => `s${i}`);
    assertError(
      await post(server, "/v1/completions", { model: MODEL, prompt: "1+", stop }),
      400,
      "stop",
      "invalid_value",
      /^stop has 17 strings, more than this server's limit of 16; send at most 16 stop strings$/,
    );
    const ok = await post(server, "/v1/completions", {
      model: MODEL,
      prompt: "1+",
      max_tokens: 2,
      stop: stop.slice(0, MAX_STOP),
    });
    assert.equal(ok.status, 200, ok.text);
    // 100k levels of nesting (200 kB, under the body limit).
    const deep = `{"model": "${MODEL}", "prompt": [${"[".repeat(100_000)}${"]".repeat(100_000)}]}`;
    assertError(
      await post(server, "/v1/completions", deep),
      400,
      "prompt[0][0]",
      "invalid_value",
      /prompt\[0\]\[0\] must be a token id/,
    );
    await assertServes(server);
  } finally {
    await server.close();
  }
});

Deno.test("serve limits: startServer refuses an empty modelName and bad limits before loading", async () => {
  for (const modelName of ["", " "]) {
    await assert.rejects(
      startServer({ model: "no/such/folder", modelName, port: 0 }),
      new RegExp(
        `^RangeError: startServer: modelName must be a non-empty model id \\(clients send it as ` +
          `model\\), got ${JSON.stringify(modelName)}; leave it out to use the model path$`,
      ),
    );
  }
  await assert.rejects(
    startServer({ model: "no/such/folder", port: 0, limits: { maxQueue: 0 } }),
    /startServer: limits.maxQueue must be an integer >= 1, got 0; leave it out for the default 64/,
  );
});
