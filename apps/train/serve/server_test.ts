// Conformance of the policy server with the official `openai` client, on loopback with the
// built-in tiny model.

import assert from "node:assert/strict";
import fc from "fast-check";
import OpenAI from "openai";
import { noGrad } from "@rlvr/tensor";
import { scoreCompletions } from "@rlvr/policy";
import { loadPolicy } from "../loop/policy.ts";
import { writeTinyQwen } from "../loop/_qwen_fixture.ts";
import { checkFuzzResponse } from "./_test_util.ts";
import { type PolicyServer, startServer } from "./server.ts";

/** The server's extra fields on a choice. */
interface Extra {
  token_ids: number[];
  prompt_token_ids?: number[];
}
function extra(choice: unknown): Extra {
  return choice as Extra;
}

/** Runs `body` against a fresh server with the tiny model, closing both afterwards. */
async function withServer(
  body: (client: OpenAI, server: PolicyServer) => Promise<void>,
): Promise<void> {
  const server = await startServer({ model: "builtin:tiny", port: 0 });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x", maxRetries: 0 });
    await body(client, server);
  } finally {
    await server.close();
  }
}

const MODEL = "builtin:tiny";
const CHAT = [{ role: "user" as const, content: "12+5=" }];

/** The first seed whose completion of `prompt` has at least `chars` characters. */
async function seedWithText(client: OpenAI, prompt: string, chars: number) {
  for (let seed = 0; seed < 200; seed++) {
    const r = await client.completions.create({
      model: MODEL,
      prompt,
      seed,
      temperature: 1.5,
      max_tokens: 12,
    });
    if (r.choices[0]!.text.length >= chars) return { seed, text: r.choices[0]!.text };
  }
  throw new Error(`no seed gave ${chars} characters`);
}

Deno.test("serve: models.list lists the served model", async () => {
  await withServer(async (client) => {
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    assert.equal(models.length, 1);
    assert.equal(models[0]!.id, MODEL);
    assert.equal(models[0]!.object, "model");
    assert.equal((await client.models.retrieve(MODEL)).id, MODEL);
  });
});

Deno.test("serve: chat.completions with logprobs and top_logprobs", async () => {
  await withServer(async (client) => {
    for (const temperature of [0, 0.8]) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: CHAT,
        max_tokens: 10,
        temperature,
        seed: 5,
        logprobs: true,
        top_logprobs: 5,
      });
      assert.equal(r.object, "chat.completion");
      assert.equal(r.choices.length, 1);
      const c = r.choices[0]!;
      assert.equal(c.message.role, "assistant");
      assert.ok(c.finish_reason === "stop" || c.finish_reason === "length");
      const ids = extra(c).token_ids;
      const content = c.logprobs!.content!;
      assert.equal(content.length, ids.length, "one logprobs entry per token id");
      assert.equal(r.usage!.completion_tokens, ids.length);
      assert.equal(r.usage!.prompt_tokens, extra(c).prompt_token_ids!.length);
      let matched = 0;
      for (const entry of content) {
        assert.ok(entry.logprob <= 0, `logprob ${entry.logprob}`);
        assert.equal(typeof entry.token, "string");
        assert.deepEqual(entry.bytes, [...new TextEncoder().encode(entry.token)]);
        assert.equal(entry.top_logprobs.length, 5);
        let mass = 0;
        entry.top_logprobs.forEach((t, i) => {
          assert.ok(t.logprob <= 0);
          if (i > 0) assert.ok(t.logprob <= entry.top_logprobs[i - 1]!.logprob, "sorted");
          mass += Math.exp(t.logprob);
        });
        assert.ok(mass <= 1 + 1e-9);
        const same = entry.top_logprobs.find((t) => t.token === entry.token);
        if (same !== undefined) {
          assert.ok(Math.abs(Math.exp(same.logprob) - Math.exp(entry.logprob)) < 1e-9);
          matched++;
        }
      }
      if (temperature === 0) {
        // Greedy: every chosen token is the top one.
        assert.equal(matched, content.length);
        content.forEach((e) => assert.equal(e.top_logprobs[0]!.token, e.token));
      }
      assert.ok(matched > 0);
    }
  });
});

Deno.test("serve: streamed chat deltas and token ids equal the non-streamed answer (same seed)", async () => {
  await withServer(async (client) => {
    for (const seed of [1, 2, 3]) {
      const req = { model: MODEL, messages: CHAT, max_tokens: 12, temperature: 1.5, seed };
      const whole = await client.chat.completions.create(req);
      const stream = await client.chat.completions.create({
        ...req,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      const ids: number[] = [];
      let finish: string | null = null;
      let role: string | undefined;
      let usage = null;
      for await (const chunk of stream) {
        assert.equal(chunk.object, "chat.completion.chunk");
        if (chunk.usage) usage = chunk.usage;
        for (const c of chunk.choices) {
          role ??= c.delta.role;
          text += c.delta.content ?? "";
          ids.push(...(extra(c).token_ids ?? []));
          if (c.finish_reason !== null) finish = c.finish_reason;
        }
      }
      assert.equal(role, "assistant");
      assert.equal(text, whole.choices[0]!.message.content);
      assert.deepEqual(ids, extra(whole.choices[0]).token_ids);
      assert.equal(finish, whole.choices[0]!.finish_reason);
      assert.deepEqual(usage, whole.usage);
    }
  });
});

Deno.test("serve: streamed n=2 with logprobs: per-choice deltas, logprobs and ids match", async () => {
  await withServer(async (client) => {
    const req = {
      model: MODEL,
      messages: CHAT,
      max_tokens: 12,
      temperature: 1.5,
      seed: 9,
      n: 2,
      logprobs: true,
      top_logprobs: 2,
    };
    const whole = await client.chat.completions.create(req);
    const text = ["", ""];
    const ids: number[][] = [[], []];
    const lps: number[][] = [[], []];
    for await (const chunk of await client.chat.completions.create({ ...req, stream: true })) {
      for (const c of chunk.choices) {
        text[c.index] += c.delta.content ?? "";
        ids[c.index]!.push(...(extra(c).token_ids ?? []));
        for (const e of c.logprobs?.content ?? []) {
          assert.equal(e.top_logprobs.length, 2);
          lps[c.index]!.push(e.logprob);
        }
      }
    }
    whole.choices.forEach((c, i) => {
      assert.equal(text[i], c.message.content);
      assert.deepEqual(ids[i], extra(c).token_ids);
      assert.deepEqual(lps[i], c.logprobs!.content!.map((e) => e.logprob));
    });
  });
});

Deno.test("serve: concurrent requests are queued and answered as if sent alone; an aborted stream is harmless", async () => {
  await withServer(async (client) => {
    const req = (seed: number) => ({
      model: MODEL,
      messages: CHAT,
      max_tokens: 12,
      temperature: 1.5,
      seed,
    });
    const alone: number[][] = [];
    for (const seed of [1, 2, 3, 4]) {
      alone.push(extra((await client.chat.completions.create(req(seed))).choices[0]).token_ids);
    }
    // A stream abandoned after its first chunk.
    const ctrl = new AbortController();
    const stream = await client.chat.completions.create({ ...req(7), stream: true }, {
      signal: ctrl.signal,
    });
    const together = Promise.all([1, 2, 3, 4].map((s) => client.chat.completions.create(req(s))));
    for await (const _ of stream) {
      ctrl.abort();
      break;
    }
    const got = await together;
    got.forEach((r, i) => assert.deepEqual(extra(r.choices[0]).token_ids, alone[i]));
  });
});

Deno.test("serve: completions with logprobs, n=2, token-id prompts", async () => {
  await withServer(async (client) => {
    const r = await client.completions.create({
      model: MODEL,
      prompt: "3+4=",
      n: 2,
      logprobs: 3,
      max_tokens: 8,
      temperature: 1.2,
      seed: 11,
    });
    assert.equal(r.object, "text_completion");
    assert.equal(r.choices.length, 2);
    assert.deepEqual(r.choices.map((c) => c.index), [0, 1]);
    for (const c of r.choices) {
      const ids = extra(c).token_ids;
      const lp = c.logprobs!;
      assert.equal(lp.tokens!.length, ids.length);
      assert.equal(lp.token_logprobs!.length, ids.length);
      assert.ok(lp.token_logprobs!.every((x) => x <= 0));
      lp.top_logprobs!.forEach((top, i) => {
        const n = Object.keys(top).length;
        assert.ok(n >= 3 && n <= 4, `top_logprobs has the top 3 plus the chosen token: ${n}`);
        assert.ok(Math.abs(top[lp.tokens![i]!]! - lp.token_logprobs![i]!) < 1e-9);
      });
      assert.equal(lp.text_offset![0], 0);
    }
    assert.equal(r.usage!.prompt_tokens, 5); // <bos> 3 + 4 =, counted once for both choices
    // The same prompt as token ids gives the same completions.
    const byIds = await client.completions.create({
      model: MODEL,
      prompt: extra(r.choices[0]).prompt_token_ids!,
      n: 2,
      max_tokens: 8,
      temperature: 1.2,
      seed: 11,
    });
    assert.deepEqual(byIds.choices.map((c) => c.text), r.choices.map((c) => c.text));
    // Two prompts, n = 2: choice i*n + j.
    const two = await client.completions.create({
      model: MODEL,
      prompt: ["3+4=", "9-2="],
      n: 2,
      max_tokens: 8,
      temperature: 1.2,
      seed: 11,
    });
    assert.equal(two.choices.length, 4);
    assert.deepEqual(two.choices.slice(0, 2).map((c) => c.text), r.choices.map((c) => c.text));
  });
});

Deno.test("serve: stop strings cut the text, streamed or not, with finish_reason stop", async () => {
  await withServer(async (client) => {
    const { seed, text } = await seedWithText(client, "1+", 3);
    // A character that first occurs after the start (the tiny model's tokens are characters).
    const at = [...text].findIndex((ch, i) => i > 0 && !text.slice(0, i).includes(ch));
    assert.ok(at > 0, `no new character in ${JSON.stringify(text)}`);
    const stop = text[at]!;
    const want = text.slice(0, at);
    const req = { model: MODEL, prompt: "1+", seed, temperature: 1.5, max_tokens: 12, stop };
    const r = await client.completions.create(req);
    assert.equal(r.choices[0]!.text, want);
    assert.equal(r.choices[0]!.finish_reason, "stop");
    // The token ids run through the token that completed the stop string.
    const ids = extra(r.choices[0]).token_ids;
    assert.equal(ids.length, at + 1);
    let streamed = "";
    for await (const chunk of await client.completions.create({ ...req, stream: true })) {
      for (const c of chunk.choices) streamed += c.text;
    }
    assert.equal(streamed, want);
    // A two-character stop string: the streamed text holds back a partial match.
    const two = text.slice(1, 3);
    const r2 = await client.completions.create({ ...req, stop: [two] });
    assert.equal(r2.choices[0]!.text, text.slice(0, text.indexOf(two)));
    let streamed2 = "";
    for await (
      const chunk of await client.completions.create({ ...req, stop: [two], stream: true })
    ) {
      for (const c of chunk.choices) streamed2 += c.text;
    }
    assert.equal(streamed2, r2.choices[0]!.text);
    // A stop string that never occurs changes nothing.
    const none = await client.completions.create({ ...req, stop: ["@@", "##"] });
    assert.equal(none.choices[0]!.text, text);
  });
});

Deno.test("serve: the same seed gives the same text; seeds differ", async () => {
  await withServer(async (client) => {
    const texts = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const req = { model: MODEL, messages: CHAT, max_tokens: 12, temperature: 1.5, seed };
      const a = await client.chat.completions.create(req);
      const b = await client.chat.completions.create(req);
      assert.equal(a.choices[0]!.message.content, b.choices[0]!.message.content);
      assert.deepEqual(extra(a.choices[0]).token_ids, extra(b.choices[0]).token_ids);
      texts.add(extra(a.choices[0]).token_ids.join(","));
    }
    assert.ok(texts.size > 1, "six seeds gave one completion");
  });
});

Deno.test("serve: bad requests get OpenAI-shaped 400s naming the field; the server survives", async () => {
  await withServer(async (client, server) => {
    const cases: [Record<string, unknown>, RegExp, string | null][] = [
      [{ n: 0 }, /n must be an integer in \[1, 128\].*got 0/, "n"],
      [{ temperature: -1 }, /temperature must be a number >= 0.*got -1/, "temperature"],
      [
        { model: "gpt-4o" },
        /model "gpt-4o" is not served here.*set model to "builtin:tiny"/,
        "model",
      ],
      [{ messages: undefined }, /messages must be a non-empty array/, "messages"],
      [{ top_logprobs: 3 }, /top_logprobs 3 needs logprobs: true/, "top_logprobs"],
      [{ top_p: 0 }, /top_p must be a number in \(0, 1\]/, "top_p"],
      [{ max_tokens: 100000 }, /max_tokens 100000 .* context window of 256 tokens/, "max_tokens"],
      [
        { messages: [{ role: "system", content: "hi" }] },
        /must contain a user message/,
        "messages",
      ],
      [{ frequency_penalty: 0.5 }, /frequency_penalty 0.5 is not supported/, "frequency_penalty"],
    ];
    for (const [patch, message, param] of cases) {
      const body = { model: MODEL, messages: CHAT, max_tokens: 4, ...patch };
      await assert.rejects(
        // deno-lint-ignore no-explicit-any
        client.chat.completions.create(body as any),
        (e: unknown) => {
          assert.ok(e instanceof OpenAI.APIError, `${e}`);
          assert.equal(e.status, 400);
          assert.match(e.message, message);
          assert.equal((e.error as { param: string | null }).param, param);
          assert.equal((e.error as { type: string }).type, "invalid_request_error");
          return true;
        },
        JSON.stringify(patch),
      );
    }
    await assert.rejects(
      client.completions.create({ model: MODEL, prompt: "1+", echo: true }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 400 && /echo/.test(e.message),
    );
    // Raw HTTP: bad JSON, unknown route, wrong method.
    const post = (path: string, body: string) =>
      fetch(`${server.url}${path}`, { method: "POST", body });
    let res = await post("/v1/chat/completions", "{not json");
    assert.equal(res.status, 400);
    const err = await res.json();
    assert.deepEqual(Object.keys(err.error).sort(), ["code", "message", "param", "type"]);
    assert.match(err.error.message, /not valid JSON/);
    res = await fetch(`${server.url}/v1/engines`);
    assert.equal(res.status, 404);
    assert.match((await res.json()).error.message, /no route GET \/v1\/engines/);
    res = await fetch(`${server.url}/v1/chat/completions`);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "POST");
    await res.body?.cancel();
    // Still serving.
    const ok = await client.chat.completions.create({
      model: MODEL,
      messages: CHAT,
      max_tokens: 3,
    });
    assert.equal(ok.choices.length, 1);
  });
});

Deno.test("serve: token_ids re-decode to the text and their logprobs equal scoreCompletions", async () => {
  const policy = await loadPolicy("builtin:tiny");
  const server = await startServer({ policy, modelName: MODEL, port: 0 });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x", maxRetries: 0 });
    for (const temperature of [0, 0.7, 1.3]) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: CHAT,
        max_tokens: 12,
        temperature,
        seed: 3,
        n: 3,
        logprobs: true,
      });
      for (const c of r.choices) {
        const { token_ids: ids, prompt_token_ids: promptIds } = extra(c);
        assert.equal(
          policy.tokenizer.decode(ids, { skipSpecialTokens: true }),
          c.message.content,
        );
        const scores = noGrad(() =>
          scoreCompletions(policy.model, [{ promptIds: promptIds!, completionIds: ids }], {
            temperature,
            entropy: false,
          })
        );
        const want = ((await scores.logprobs.toArray()) as number[][])[0]!;
        scores.logprobs.dispose();
        scores.mask.dispose();
        const got = c.logprobs!.content!.map((e) => e.logprob);
        assert.equal(got.length, ids.length);
        got.forEach((g, i) =>
          assert.ok(Math.abs(g - want[i]!) < 1e-5, `token ${i}: ${g} vs ${want[i]}`)
        );
      }
    }
  } finally {
    await server.close();
    policy.model.dispose();
  }
});

Deno.test("serve: a tokenizer with a chat template renders messages with it", async () => {
  const tiny = await loadPolicy("builtin:tiny");
  // The tiny CharTokenizer has a chat template but is prompted in the compact format; the same
  // tokenizer behind a plain object is treated like a Hugging Face tokenizer with a template.
  const tok = tiny.tokenizer;
  const wrapped = {
    vocabSize: tok.vocabSize,
    bosTokenId: tok.bosTokenId,
    eosTokenIds: tok.eosTokenIds,
    padTokenId: tok.padTokenId,
    unkTokenId: tok.unkTokenId,
    specialTokenIds: tok.specialTokenIds,
    encode: tok.encode.bind(tok),
    decode: tok.decode.bind(tok),
    tokenToId: tok.tokenToId.bind(tok),
    idToToken: tok.idToToken.bind(tok),
    applyChatTemplate: tok.applyChatTemplate.bind(tok),
    save: tok.save.bind(tok),
  };
  const server = await startServer({
    policy: { model: tiny.model, tokenizer: wrapped, eosTokenIds: tiny.eosTokenIds },
    port: 0,
  });
  try {
    assert.equal(server.modelName, "policy");
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x", maxRetries: 0 });
    const messages = [
      { role: "system" as const, content: "be brief" },
      { role: "user" as const, content: [{ type: "text" as const, text: "1+1=" }] },
    ];
    const r = await client.chat.completions.create({ model: "policy", messages, max_tokens: 3 });
    const rendered = "<bos><|system|>be brief<eos><|user|>1+1=<eos><|assistant|>";
    assert.equal(
      tok.applyChatTemplate(
        [{ role: "system", content: "be brief" }, { role: "user", content: "1+1=" }],
        { addGenerationPrompt: true },
      ),
      rendered,
    );
    assert.deepEqual(
      extra(r.choices[0]).prompt_token_ids,
      tok.encode(rendered, { addSpecialTokens: false }),
    );
    // The template's own error becomes a 400 naming messages.
    await assert.rejects(
      client.chat.completions.create({
        model: "policy",
        messages: [{ role: "tool", content: "x", tool_call_id: "1" }],
      }),
      (e: unknown) =>
        e instanceof OpenAI.APIError && e.status === 400 &&
        /chat template.*has no role tool/.test(e.message),
    );
  } finally {
    await server.close();
    tiny.model.dispose();
  }
});

Deno.test("serve: arbitrary request bodies get a 200 or an OpenAI-shaped 400, never a crash", async () => {
  await withServer(async (client, server) => {
    const junk = fc.oneof(
      fc.anything(),
      fc.integer({ min: -3, max: 3 }),
      fc.double(),
      fc.string(),
    );
    // A valid request for both endpoints, then up to three fields replaced by anything.
    const valid = fc.record({
      model: fc.constant(MODEL),
      messages: fc.constant(CHAT),
      prompt: fc.oneof(
        fc.constant("1+"),
        fc.array(fc.integer({ min: 0, max: 102 }), { minLength: 1 }),
      ),
      max_tokens: fc.integer({ min: 1, max: 3 }),
      n: fc.integer({ min: 1, max: 3 }),
      temperature: fc.double({ min: 0, max: 2, noNaN: true }),
      stop: fc.array(fc.string({ minLength: 1 }), { maxLength: 2 }),
      seed: fc.nat(),
      stream: fc.boolean(),
    }, { requiredKeys: ["model", "messages", "prompt"] });
    const fields = [
      "model",
      "messages",
      "prompt",
      "max_tokens",
      "n",
      "temperature",
      "top_p",
      "top_k",
      "min_p",
      "stop",
      "seed",
      "logprobs",
      "top_logprobs",
      "stream",
      "stream_options",
      "echo",
    ];
    const body = fc.tuple(valid, fc.dictionary(fc.constantFrom(...fields), junk, { maxKeys: 3 }))
      .map(([v, patch]) => ({ ...v, ...patch }));
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.constantFrom("/v1/chat/completions", "/v1/completions"),
        async (b, path) => {
          // Keep the work small whatever the other fields say.
          const json = {
            ...b,
            max_tokens: typeof b.max_tokens === "number" ? Math.min(b.max_tokens, 3) : 2,
            n: typeof b.n === "number" ? Math.min(b.n, 3) : b.n,
          };
          const res = await fetch(`${server.url}${path}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(json),
          });
          await checkFuzzResponse(res, statuses);
        },
      ),
      { numRuns: 150, seed: 42 },
    );
    assert.ok((statuses.get(200) ?? 0) >= 10, `too few valid requests: ${[...statuses]}`);
    assert.ok((statuses.get(400) ?? 0) >= 10, `too few bad requests: ${[...statuses]}`);
    // A non-streamed request whose client gives up does not block the queue.
    const ctrl = new AbortController();
    const gone = fetch(`${server.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: MODEL, prompt: "1+", max_tokens: 200, n: 8 }),
      signal: ctrl.signal,
    }).catch((e) => e);
    ctrl.abort();
    await gone;
    const ok = await client.completions.create({ model: MODEL, prompt: "1+", max_tokens: 2 });
    assert.equal(ok.choices.length, 1);
  });
});

Deno.test("serve: a Hugging Face folder (Qwen tokenizer, chat template, byte-level BPE)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "serve_qwen_" });
  try {
    await writeTinyQwen(dir, { seed: 3 });
    const policy = await loadPolicy(dir);
    const server = await startServer({ policy, modelName: "qwen", port: 0 });
    try {
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x", maxRetries: 0 });
      const messages = [
        { role: "system" as const, content: "You add numbers." },
        { role: "user" as const, content: "What is 2+2? ½ ✓" },
      ];
      const rendered = policy.tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
      for (const seed of [1, 2, 3]) {
        const req = { model: "qwen", messages, max_tokens: 24, temperature: 1, seed };
        const whole = await client.chat.completions.create({
          ...req,
          logprobs: true,
          top_logprobs: 3,
        });
        const c = whole.choices[0]!;
        const { token_ids: ids, prompt_token_ids: promptIds } = extra(c);
        assert.deepEqual(promptIds, policy.tokenizer.encode(rendered, { addSpecialTokens: false }));
        assert.equal(policy.tokenizer.decode(ids, { skipSpecialTokens: true }), c.message.content);
        let text = "";
        const streamedIds: number[] = [];
        for await (const chunk of await client.chat.completions.create({ ...req, stream: true })) {
          for (const ch of chunk.choices) {
            text += ch.delta.content ?? "";
            streamedIds.push(...(extra(ch).token_ids ?? []));
          }
        }
        assert.deepEqual(streamedIds, ids);
        assert.equal(text, c.message.content, `seed ${seed}`);
        const scores = noGrad(() =>
          scoreCompletions(policy.model, [{ promptIds: promptIds!, completionIds: ids }], {
            temperature: 1,
            entropy: false,
          })
        );
        const want = ((await scores.logprobs.toArray()) as number[][])[0]!;
        scores.logprobs.dispose();
        scores.mask.dispose();
        c.logprobs!.content!.forEach((e, i) => {
          assert.ok(Math.abs(e.logprob - want[i]!) < 1e-5, `token ${i}`);
          assert.equal(e.top_logprobs.length, 3);
        });
      }
    } finally {
      await server.close();
      policy.model.dispose();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
