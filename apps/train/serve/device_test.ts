// `deno task serve --decode-loop device` on WebGPU (the software adapter here): requests the
// device loop can run decode on the GPU and give the host loop's tokens; the others (top
// logprobs) run on the host loop, byte for byte as a host-loop server answers.

import assert from "node:assert/strict";
import OpenAI from "openai";
import { withBackend } from "@rlvr/tensor";
import { webgpuSuite } from "@rlvr/tensor/testing";
import { countShapesTask } from "@rlvr/rewards/vision";
import { loadPolicy } from "../loop/policy.ts";
import { parseServeArgs } from "./main.ts";
import { startServer } from "./server.ts";

const suite = await webgpuSuite("serve decode loop");

Deno.test("parseServeArgs: --decode-loop takes host or device, naming the flag otherwise", () => {
  assert.equal(parseServeArgs([]).decodeLoop, "host");
  assert.equal(parseServeArgs(["--decode-loop", "device"]).decodeLoop, "device");
  assert.throws(
    () => parseServeArgs(["--decode-loop", "gpu"]),
    /--decode-loop "gpu" is not a decode loop; use host or device/,
  );
});

Deno.test("startServer: decodeLoop device refuses a policy it cannot run, with the reason", async () => {
  await assert.rejects(
    startServer({ model: "builtin:tiny", port: 0, decodeLoop: "device" }),
    /decodeLoop "device" cannot serve this policy: the model's parameters are on the cpu backend, not WebGPU; use decodeLoop "host"/,
  );
});

suite.test(
  "serve --decode-loop device: the host loop's tokens (top_p too); top_logprobs requests run on the host loop",
  async (gpu) => {
    const policy = await withBackend(gpu, () => loadPolicy("builtin:tiny"));
    const servers = [
      await startServer({ policy, modelName: "m", port: 0 }),
      await startServer({ policy, modelName: "m", port: 0, decodeLoop: "device" }),
    ];
    try {
      const [host, device] = servers.map((s) =>
        new OpenAI({ baseURL: `${s.url}/v1`, apiKey: "x", maxRetries: 0 })
      );
      const ask = (client: OpenAI, more: Record<string, unknown> = {}) =>
        client.chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "12+5=" }],
          max_tokens: 24,
          temperature: 1,
          seed: 3,
          n: 4,
          logprobs: true,
          ...more,
        });
      const lps = (r: OpenAI.ChatCompletion) =>
        r.choices.map((c) => c.logprobs!.content!.map((e) => e.logprob));
      const ids = (r: OpenAI.ChatCompletion) =>
        r.choices.map((c) => (c as unknown as { token_ids: number[] }).token_ids);
      // On the device loop: the same tokens, log-probs from its own kernels (within 2e-4, and not
      // all equal to the host loop's, which shows the device loop ran).
      const [h, d] = [await ask(host!), await ask(device!)];
      assert.deepEqual(ids(d), ids(h));
      assert.deepEqual(
        d.choices.map((c) => c.message.content),
        h.choices.map((c) => c.message.content),
      );
      const [lh, ld] = [lps(h), lps(d)];
      ld.forEach((row, i) =>
        row.forEach((lp, j) => assert.ok(Math.abs(lp - lh[i]![j]!) <= 2e-4, `${i} ${j}`))
      );
      assert.notDeepEqual(ld, lh);
      // Streamed: the same tokens as the non-streamed answer.
      const stream = await device!.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "12+5=" }],
        max_tokens: 24,
        temperature: 1,
        seed: 3,
        stream: true,
      });
      const streamed: number[] = [];
      for await (const chunk of stream) {
        for (const c of chunk.choices) {
          streamed.push(...((c as unknown as { token_ids?: number[] }).token_ids ?? []));
        }
      }
      assert.deepEqual(streamed, ids(d)[0]);
      // top_p runs on the device loop too: the host loop's tokens, the device's log-probs.
      const [hp, dp] = [await ask(host!, { top_p: 0.8 }), await ask(device!, { top_p: 0.8 })];
      assert.deepEqual(ids(dp), ids(hp));
      assert.notDeepEqual(lps(dp), lps(hp));
      lps(dp).forEach((row, i) =>
        row.forEach((lp, j) => assert.ok(Math.abs(lp - lps(hp)[i]![j]!) <= 2e-4, `${i} ${j}`))
      );
      // What the device loop cannot give (every step's top logprobs) runs on the host loop: the
      // host server's answer exactly.
      const [a, b] = [
        await ask(host!, { top_logprobs: 2 }),
        await ask(device!, { top_logprobs: 2 }),
      ];
      assert.deepEqual(ids(b), ids(a));
      assert.deepEqual(lps(b), lps(a));
    } finally {
      for (const s of servers) await s.close();
      policy.model.dispose();
    }
  },
);

suite.test(
  "serve --decode-loop device with tiny-vl: a chat request with an image decodes on the GPU with the host loop's tokens",
  async (gpu) => {
    const policy = await withBackend(gpu, () => loadPolicy("builtin:tiny-vl"));
    const servers = [
      await startServer({ policy, modelName: "m", port: 0 }),
      await startServer({ policy, modelName: "m", port: 0, decodeLoop: "device" }),
    ];
    try {
      const row = countShapesTask({ size: 56, shapeSize: [8, 10], count: [3, 6] }).row(2, 0);
      const ask = (s: { url: string }) =>
        new OpenAI({ baseURL: `${s.url}/v1`, apiKey: "x", maxRetries: 0 }).chat.completions
          .create({
            model: "m",
            messages: [{
              role: "user",
              content: [
                { type: "image_url", image_url: { url: row.images[0]! } },
                { type: "text", text: `${row.targetColor} ${row.targetKind}s?` },
              ],
            }],
            max_tokens: 60,
            temperature: 1,
            seed: 4,
            n: 2,
            logprobs: true,
          });
      const [h, d] = [await ask(servers[0]!), await ask(servers[1]!)];
      const ids = (r: OpenAI.ChatCompletion) =>
        r.choices.map((c) => (c as unknown as { token_ids: number[] }).token_ids);
      assert.deepEqual(ids(d), ids(h));
      assert.ok(ids(h)[0]!.length > 20, "a described trace, not a stub");
      const lps = (r: OpenAI.ChatCompletion) =>
        r.choices.flatMap((c) => c.logprobs!.content!.map((e) => e.logprob));
      assert.notDeepEqual(lps(d), lps(h)); // the device's kernels ran
      lps(d).forEach((lp, i) => assert.ok(Math.abs(lp - lps(h)[i]!) <= 2e-4, `token ${i}`));
    } finally {
      for (const s of servers) await s.close();
      policy.model.dispose();
    }
  },
);
