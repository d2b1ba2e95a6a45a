// Images in chat requests to the policy server (OpenAI `image_url` parts with data URLs), with
// the official `openai` client, on loopback with the built-in vision-language model.

import assert from "node:assert/strict";
import fc from "fast-check";
import OpenAI from "openai";
import {
  createImage,
  decodeImage,
  encodePng,
  parseDataUrl,
  processQwen2VLImages,
  qwen2VLImageGrid,
  toDataUrl,
} from "@rlvr/image";
import {
  CharTokenizer,
  type ChatMessage,
  type DecodeOptions,
  type EncodeOptions,
  expandImageTokens,
  generate,
  imageInputs,
  type Tokenizer,
} from "@rlvr/policy";
import { countShapesTask } from "@rlvr/rewards/vision";
import { type LoadedPolicy, loadPolicy } from "../loop/policy.ts";
import { checkFuzzResponse } from "./_test_util.ts";
import { type PolicyServer, type ServerLimits, startServer } from "./server.ts";

const MODEL = "builtin:tiny-vl";
const TASK = countShapesTask({ size: 56, shapeSize: [8, 10], count: [3, 6], distractors: [6, 8] });

/** The server's extra fields on a choice. */
interface Extra {
  token_ids: number[];
  prompt_token_ids?: number[];
}
function extra(choice: unknown): Extra {
  return choice as Extra;
}

/** A user message with `images` (data URLs) then `text`, as OpenAI content parts. */
function userMessage(images: readonly string[], text: string) {
  return {
    role: "user" as const,
    content: [
      ...images.map((url) => ({ type: "image_url" as const, image_url: { url } })),
      { type: "text" as const, text },
    ],
  };
}

/** A row of the counting task: its image and its compact question, as tiny-vl was trained. */
function shapesRow(index: number) {
  const row = TASK.row(index, 0);
  return { url: row.images[0]!, question: `${row.targetColor} ${row.targetKind}s?` };
}

/** Runs `body` against a server on a loaded tiny-vl (shared, so generate can be run directly). */
async function withVisionServer(
  body: (client: OpenAI, server: PolicyServer, policy: LoadedPolicy) => Promise<void>,
  limits: Partial<ServerLimits> = {},
): Promise<void> {
  const policy = await loadPolicy(MODEL);
  const server = await startServer({ policy, modelName: MODEL, port: 0, limits });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x", maxRetries: 0 });
    await body(client, server, policy);
  } finally {
    await server.close();
    policy.model.dispose();
  }
}

/** POSTs `body` as JSON and returns the status and the parsed answer. */
async function post(server: PolicyServer, path: string, body: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

/** Asserts an OpenAI-shaped 400 with this param, code and message. */
function assert400(
  got: { status: number; text: string; body: { error: Record<string, unknown> } },
  param: string,
  code: string,
  message: RegExp,
): void {
  assert.equal(got.status, 400, got.text);
  const { error } = got.body;
  assert.deepEqual(Object.keys(error).sort(), ["code", "message", "param", "type"]);
  assert.equal(error.type, "invalid_request_error");
  assert.equal(error.param, param, got.text);
  assert.equal(error.code, code, got.text);
  assert.match(error.message as string, message);
}

Deno.test("serve vision: an image_url part is seen as generate sees it (greedy, logprobs), and its pixels matter", async () => {
  await withVisionServer(async (client, _server, policy) => {
    const { url, question } = shapesRow(0);
    const ask = (image: string) =>
      client.chat.completions.create({
        model: MODEL,
        messages: [userMessage([image], question)],
        logprobs: true,
        top_logprobs: 2,
        temperature: 0,
        max_tokens: 64,
      });
    const r = await ask(url);
    const c = r.choices[0]!;
    assert.ok(c.message.content!.length > 0, "a non-empty answer");
    const ids = extra(c).token_ids;
    const content = c.logprobs!.content!;
    assert.equal(content.length, ids.length, "one logprobs entry per token id");
    for (const entry of content) {
      assert.ok(Number.isFinite(entry.logprob) && entry.logprob <= 0, `${entry.logprob}`);
      assert.equal(entry.top_logprobs.length, 2);
      assert.equal(entry.top_logprobs[0]!.token, entry.token, "greedy: the top token");
    }
    // The prompt is tiny-vl's: <bos>, the image block with one <|image_pad|> per merged patch
    // (56 pixels: 4×4 patches, merge 1), then the compact question.
    const tok = policy.tokenizer;
    const imageTokenId = policy.vision!.model.config.imageTokenId;
    const expected = expandImageTokens(
      tok.encode(`<|vision_start|><|image_pad|><|vision_end|>${question}`),
      imageTokenId,
      [16],
    );
    assert.deepEqual(extra(c).prompt_token_ids, expected);
    assert.equal(r.usage!.prompt_tokens, expected.length);

    // generate on the same ids with the image through the model's forward hook: the same answer.
    const pixels = processQwen2VLImages(
      [decodeImage(parseDataUrl(url).bytes)],
      policy.vision!.processor,
    );
    const direct = await generate(policy.model, [expected], {
      maxNewTokens: 64,
      sampler: { temperature: 0, seed: 0 },
      eosTokenIds: policy.eosTokenIds,
      tokenizer: tok,
      forwardHook: policy.vision!.model.forwardHook(() => imageInputs(pixels)),
    });
    const seq = direct.sequences[0]!;
    assert.deepEqual(ids, seq.tokens);
    assert.equal(c.message.content, seq.text);
    seq.scaledLogprobs.forEach((lp, i) => {
      assert.ok(
        Math.abs(content[i]!.logprob - lp) < 1e-5,
        `token ${i}: ${content[i]!.logprob} vs ${lp}`,
      );
    });

    // Another image, the same question: other log-probs (the pixels reach the model).
    const other = await ask(shapesRow(3).url);
    const otherLp = other.choices[0]!.logprobs!.content!.map((e) => e.logprob);
    const shared = Math.min(otherLp.length, content.length);
    const gap = Math.max(
      ...Array.from({ length: shared }, (_, i) => Math.abs(otherLp[i]! - content[i]!.logprob)),
    );
    assert.ok(gap > 1e-3, `the log-probs barely moved (${gap})`);
    assert.notDeepEqual(extra(other.choices[0]).token_ids, ids);
  });
});

Deno.test("serve vision: n choices and streams each see their request's image; text-only chat still works", async () => {
  await withVisionServer(async (client, _server, policy) => {
    const { url, question } = shapesRow(1);
    const req = {
      model: MODEL,
      messages: [userMessage([url], question)],
      temperature: 0,
      max_tokens: 48,
    };
    const one = await client.chat.completions.create(req);
    const want = extra(one.choices[0]).token_ids;
    const three = await client.chat.completions.create({ ...req, n: 3 });
    assert.equal(three.choices.length, 3);
    for (const c of three.choices) assert.deepEqual(extra(c).token_ids, want);
    const stream = await client.chat.completions.create({ ...req, stream: true });
    const streamed: number[] = [];
    let text = "";
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        streamed.push(...(extra(c).token_ids ?? []));
        text += c.delta.content ?? "";
      }
    }
    assert.deepEqual(streamed, want);
    assert.equal(text, one.choices[0]!.message.content);
    // detail is accepted (the checkpoint's processor decides the resolution).
    const low = await client.chat.completions.create({
      ...req,
      messages: [{
        role: "user",
        content: [
          { type: "image_url", image_url: { url, detail: "low" } },
          { type: "text", text: question },
        ],
      }],
    });
    assert.deepEqual(extra(low.choices[0]).token_ids, want);
    // A JPEG data URL is read too (32×24: the processor resizes it to about 56×56 pixels).
    const fixture = JSON.parse(
      await Deno.readTextFile(
        new URL("../../../packages/image/testdata/jpeg_fixture.json", import.meta.url),
      ),
    );
    const jpeg = `data:image/jpeg;base64,${fixture.cases[0].jpeg}`;
    const seen = await client.chat.completions.create({
      ...req,
      messages: [userMessage([jpeg], question)],
    });
    const prompt = extra(seen.choices[0]).prompt_token_ids!;
    const { tokens } = qwen2VLImageGrid(24, 32, policy.vision!.processor);
    assert.equal(prompt.filter((id) => id === 104).length, tokens);
    // A sampled request (n 2, a seed) and a text-only one are served too.
    const sampled = await client.chat.completions.create({
      ...req,
      n: 2,
      temperature: 1,
      seed: 3,
      logprobs: true,
    });
    for (const c of sampled.choices) {
      assert.equal(c.logprobs!.content!.length, extra(c).token_ids.length);
    }
    const plain = await client.chat.completions.create({
      ...req,
      messages: [{ role: "user", content: question }],
    });
    assert.ok(extra(plain.choices[0]).token_ids.length > 0);
  });
});

/**
 * tiny-vl's tokenizer (same characters, same ids) with a Qwen2-VL-shaped chat template, which
 * writes `<|vision_start|><|image_pad|><|vision_end|>` for each `{type: "image"}` part: a
 * tokenizer with a template, so the server renders `messages` with it (the `chat` format of a
 * Hugging Face vision-language checkpoint) instead of the compact prompt.
 */
class TemplatedTokenizer implements Tokenizer {
  static readonly TEMPLATE = "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>" +
    "{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}" +
    "{% if p.type == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}" +
    "{{ p.text }}{% endif %}{% endfor %}{% endif %}{{ eos_token }}{% endfor %}" +
    "{% if add_generation_prompt %}<|assistant|>{% endif %}";
  readonly #tok: CharTokenizer;
  readonly vocabSize: number;
  readonly bosTokenId: number | null;
  readonly eosTokenIds: readonly number[];
  readonly padTokenId: number | null;
  readonly unkTokenId: number | null;
  readonly specialTokenIds: readonly number[];
  constructor(base: CharTokenizer) {
    this.#tok = new CharTokenizer(base.alphabet, {
      words: base.words,
      chatTemplate: TemplatedTokenizer.TEMPLATE,
    });
    this.vocabSize = this.#tok.vocabSize;
    this.bosTokenId = this.#tok.bosTokenId;
    this.eosTokenIds = this.#tok.eosTokenIds;
    this.padTokenId = this.#tok.padTokenId;
    this.unkTokenId = this.#tok.unkTokenId;
    this.specialTokenIds = this.#tok.specialTokenIds;
  }
  encode(text: string, options?: EncodeOptions): number[] {
    return this.#tok.encode(text, options);
  }
  decode(ids: readonly number[], options?: DecodeOptions): string {
    return this.#tok.decode(ids, options);
  }
  tokenToId(token: string): number | null {
    return this.#tok.tokenToId(token);
  }
  idToToken(id: number): string | null {
    return this.#tok.idToToken(id);
  }
  applyChatTemplate(
    messages: readonly ChatMessage[],
    options?: Parameters<Tokenizer["applyChatTemplate"]>[1],
  ): string {
    return this.#tok.applyChatTemplate(messages, options);
  }
  save(dir: string): Promise<void> {
    return this.#tok.save(dir);
  }
}

Deno.test("serve vision: with a chat template, image parts of every message reach the template in order", async () => {
  const policy = await loadPolicy(MODEL);
  const tokenizer = new TemplatedTokenizer(policy.tokenizer as CharTokenizer);
  const server = await startServer({
    policy: { ...policy, tokenizer },
    modelName: MODEL,
    port: 0,
  });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x", maxRetries: 0 });
    const a = shapesRow(0);
    const b = shapesRow(2);
    const r = await client.chat.completions.create({
      model: MODEL,
      messages: [
        userMessage([a.url], a.question),
        { role: "assistant", content: "4" },
        userMessage([b.url], b.question),
      ],
      temperature: 0,
      max_tokens: 24,
      logprobs: true,
    });
    const c = r.choices[0]!;
    const blocks = "<|vision_start|><|image_pad|><|vision_end|>";
    const text = `<bos><|user|>${blocks}${a.question}<eos><|assistant|>4<eos>` +
      `<|user|>${blocks}${b.question}<eos><|assistant|>`;
    const imageTokenId = policy.vision!.model.config.imageTokenId;
    const ids = expandImageTokens(
      tokenizer.encode(text, { addSpecialTokens: false }),
      imageTokenId,
      [16, 16],
    );
    assert.deepEqual(extra(c).prompt_token_ids, ids);
    // The two images, in message order, are the ones the model saw.
    const parts = [a.url, b.url].map((u) =>
      processQwen2VLImages([decodeImage(parseDataUrl(u).bytes)], policy.vision!.processor)
    );
    const pixels = {
      pixelValues: new Float32Array([...parts[0]!.pixelValues, ...parts[1]!.pixelValues]),
      patchDim: parts[0]!.patchDim,
      gridThw: parts.flatMap((p) => p.gridThw),
    };
    const direct = await generate(policy.model, [ids], {
      maxNewTokens: 24,
      sampler: { temperature: 0, seed: 0 },
      eosTokenIds: policy.eosTokenIds,
      forwardHook: policy.vision!.model.forwardHook(() => imageInputs(pixels)),
    });
    assert.deepEqual(extra(c).token_ids, direct.sequences[0]!.tokens);
    direct.sequences[0]!.scaledLogprobs.forEach((lp, i) => {
      assert.ok(Math.abs(c.logprobs!.content![i]!.logprob - lp) < 1e-5, `token ${i}`);
    });
    // A template that places the image markers is the only source of them: typed ones are refused.
    const typed = await post(server, "/v1/chat/completions", {
      model: MODEL,
      messages: [userMessage([a.url], `${blocks}${a.question}`)],
      max_tokens: 2,
    });
    assert400(
      typed,
      "messages",
      "invalid_value",
      /^the prompt written from messages has 2 image token\(s\) .* for 1 image part\(s\); send images as image_url parts only/,
    );
  } finally {
    await server.close();
    policy.model.dispose();
  }
});

Deno.test("serve vision: a text-only policy refuses an image with a 400 that names the part and the fix", async () => {
  const server = await startServer({ model: "builtin:tiny", port: 0 });
  try {
    assert.equal(server.vision, false);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x", maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({
        model: "builtin:tiny",
        messages: [{
          role: "user",
          content: [
            { type: "text", text: "2+2=" },
            { type: "image_url", image_url: { url: shapesRow(0).url } },
          ],
        }],
        max_tokens: 4,
      }),
      (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError, `${e}`);
        assert.equal(e.param, "messages[0].content[1]");
        assert.equal(e.code, "image_not_supported");
        assert.match(
          e.message,
          /messages\[0\]\.content\[1\] is an image_url part, but "builtin:tiny" is a text-only model that cannot read images; .*serve a vision-language checkpoint \(deno task serve --model builtin:tiny-vl/,
        );
        return true;
      },
    );
    // Still serving.
    const ok = await client.chat.completions.create({
      model: "builtin:tiny",
      messages: [{ role: "user", content: [{ type: "text", text: "2+2=" }] }],
      max_tokens: 2,
    });
    assert.equal(ok.object, "chat.completion");
  } finally {
    await server.close();
  }
});

Deno.test("serve vision: bad images are 400s naming the field, the value and the fix; the server keeps serving", async () => {
  const { url, question } = shapesRow(0);
  const pngBytes = parseDataUrl(url).bytes.length;
  // Noise compresses badly: a 64×64 noise PNG is over 12 KB.
  const noise = createImage(64, 64);
  let state = 1;
  for (let i = 0; i < noise.data.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    noise.data[i] = state >>> 24;
  }
  const big = toDataUrl(noise);
  const wide = toDataUrl(createImage(120, 120, { fill: [255, 255, 255] }));
  await withVisionServer(async (_client, server) => {
    const chat = (messages: unknown[], more: Record<string, unknown> = {}) =>
      post(server, "/v1/chat/completions", { model: MODEL, messages, max_tokens: 4, ...more });
    const one = (part: unknown) => chat([{ role: "user", content: [part] }]);
    const imagePart = (u: string) => ({ type: "image_url", image_url: { url: u } });
    const at = "messages[0].content[0].image_url.url";

    assert400(
      await one(imagePart("https://example.com/cat.png")),
      at,
      "invalid_image_url",
      /^messages\[0\]\.content\[0\]\.image_url\.url "https:\/\/example\.com\/cat\.png" is an http\(s\) URL; this server fetches nothing: send the image inline as a base64 data URL, data:image\/png;base64,\.\.\. or data:image\/jpeg;base64,\.\.\.$/,
    );
    assert400(await one(imagePart("cat.png")), at, "invalid_image_url", /is not a data URL/);
    assert400(
      await one(imagePart("data:image/png;base64,@@not base64@@")),
      at,
      "invalid_image",
      /is not an image this server can read: the data URL's payload is not valid base64/,
    );
    assert400(
      await one(imagePart(`data:image/png;base64,${btoa("hello, not a picture")}`)),
      at,
      "invalid_image",
      /is not an image this server can read: .*(PNG|JPEG)/,
    );
    assert400(
      await one(imagePart("data:image/gif;base64,R0lGODlhAQABAAAAACw=")),
      at,
      "invalid_image",
      /only base64 PNG or JPEG data URLs are accepted/,
    );
    // A PNG cut short: its header reads, its pixels do not.
    const cut = parseDataUrl(url).bytes.subarray(0, 60);
    assert400(
      await one(imagePart(`data:image/png;base64,${btoa(String.fromCharCode(...cut))}`)),
      at,
      "invalid_image",
      /is not an image this server can read/,
    );
    assert400(
      await one({ type: "image_url", image_url: url }),
      "messages[0].content[0].image_url",
      "invalid_value",
      /must be an object \{url: "data:image\/png;base64,\.\.\."\}/,
    );
    assert400(
      await one({ type: "image_url", image_url: { url, detail: "max" } }),
      "messages[0].content[0].image_url.detail",
      "invalid_value",
      /"auto", "low" or "high"/,
    );
    assert400(
      await one({ type: "input_audio", input_audio: { data: "", format: "wav" } }),
      "messages[0].content[0]",
      "invalid_value",
      /must be one of text parts .* and image parts \{type: "image_url"/,
    );
    // An image outside the last user message: the compact prompt is that message alone.
    assert400(
      await chat([userMessage([url], question), { role: "assistant", content: "3" }, {
        role: "user",
        content: question,
      }]),
      "messages[0].content[0]",
      "invalid_value",
      /is an image outside the last user message; .* move the image there/,
    );
    // Image tokens typed as text would stand for pixels nobody sent.
    assert400(
      await chat([{ role: "user", content: "<|vision_start|><|image_pad|><|vision_end|>red?" }]),
      "messages",
      "invalid_value",
      /^the prompt written from messages has 1 image token\(s\) "<\|image_pad\|>" \(id 104\) for 0 image part\(s\); send images as image_url parts only, with no "<\|image_pad\|>" or "<\|vision_start\|>" typed in the text$/,
    );
    assert400(
      await chat([userMessage([url], "<|image_pad|>")]),
      "messages",
      "invalid_value",
      /has 2 image token\(s\) .* for 1 image part\(s\), not all of them right after "<\|vision_start\|>"/,
    );
    assert400(
      await post(server, "/v1/completions", {
        model: MODEL,
        prompt: "<|vision_start|><|image_pad|><|vision_end|>red circles?",
        max_tokens: 2,
      }),
      "prompt",
      "invalid_value",
      /^prompt has 1 image token\(s\) .* a completions prompt carries no pixels: remove the image tokens, and send images as image_url parts to \/v1\/chat\/completions$/,
    );
    // Nothing broke: an image request is answered.
    const ok = await chat([userMessage([url], question)]);
    assert.equal(ok.status, 200, ok.text);
    assert.ok(pngBytes < 4000, `the task's PNG is ${pngBytes} bytes`);
  });

  // Configured limits (deno task serve --max-images 2 --max-image-bytes 4000
  // --max-image-pixels 10000): each is a 400 before any pixel is decoded.
  await withVisionServer(async (_client, server) => {
    const chat = (messages: unknown[]) =>
      post(server, "/v1/chat/completions", { model: MODEL, messages, max_tokens: 4 });
    assert400(
      await chat([userMessage([url, url], question), userMessage([url], question)]),
      "messages",
      "too_many_images",
      /^messages carry 3 images, more than this server's limit of 2 per request \(--max-images\); send at most 2 images per request$/,
    );
    assert400(
      await chat([userMessage([big], question)]),
      "messages[0].content[0].image_url.url",
      "image_too_large",
      /carries an image of about \d+ bytes, more than this server's limit of 4000 bytes per image \(--max-image-bytes\); send a smaller or more compressed PNG or JPEG/,
    );
    assert400(
      await chat([userMessage([url, wide], question)]),
      "messages[0].content[1].image_url.url",
      "image_too_large",
      /is a 120×120 image \(14400 pixels\), more than this server's limit of 10000 pixels per image \(--max-image-pixels\); downscale it/,
    );
    const ok = await chat([userMessage([url, url], question)]);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.choices[0].prompt_token_ids.filter((id: number) => id === 104).length, 32);
  }, { maxImages: 2, maxImageBytes: 4000, maxImagePixels: 10_000 });
  assert.ok(encodePng(noise).length > 4000);
});

Deno.test("serve vision: arbitrary content parts and damaged images get a 200 or an OpenAI-shaped 400, never a crash", async () => {
  const { url, question } = shapesRow(0);
  const png = parseDataUrl(url).bytes;
  const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
  await withVisionServer(async (_client, server) => {
    // A PNG with a few bytes changed or cut short: a broken checksum, header or stream.
    const damaged = fc.tuple(
      fc.array(fc.tuple(fc.nat({ max: png.length - 1 }), fc.nat({ max: 255 })), { maxLength: 3 }),
      fc.option(fc.nat({ max: png.length }), { nil: undefined }),
    ).map(([edits, cut]) => {
      const bytes = png.slice(0, cut);
      for (const [at, v] of edits) if (at < bytes.length) bytes[at] = v;
      return `data:image/png;base64,${base64(bytes)}`;
    });
    const imageUrl = fc.oneof(
      fc.constant(url),
      damaged,
      fc.string().map((s) => `data:image/png;base64,${s}`),
      fc.constantFrom("http://localhost/x.png", "data:image/jpeg;base64,", "data:,"),
      fc.string(),
    );
    const part = fc.oneof(
      fc.record({ type: fc.constant("text"), text: fc.constantFrom(question, "<|image_pad|>") }),
      imageUrl.map((u) => ({ type: "image_url", image_url: { url: u } })),
      fc.record({ type: fc.constant("image_url"), image_url: fc.anything() }),
      fc.anything(),
    );
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(part, { maxLength: 4 }),
        fc.boolean(),
        async (content, stream) => {
          const res = await fetch(`${server.url}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              model: MODEL,
              messages: [{ role: "user", content }],
              max_tokens: 2,
              stream,
            }),
          });
          await checkFuzzResponse(res, statuses);
        },
      ),
      { numRuns: 120, seed: 7 },
    );
    assert.ok((statuses.get(200) ?? 0) >= 5, `too few valid requests: ${[...statuses]}`);
    assert.ok((statuses.get(400) ?? 0) >= 20, `too few bad requests: ${[...statuses]}`);
  });
});
