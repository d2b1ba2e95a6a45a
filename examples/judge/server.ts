/**
 * A judge served over the OpenAI chat API, for the `judge` reward: `POST /v1/chat/completions`
 * reads the user message the reward's template wrote (`Expression: …` and `Response: …` lines),
 * grades how close the response is to the expression's value, and answers `Score: k/10`, as a
 * judge LLM would. It is a stand-in for a judge model (no model weights can be downloaded here):
 * the reward, its HTTP requests, retries, timeouts and caching are the real ones.
 *
 * ```sh
 * npx -y deno@2.9.6 run -A examples/judge/server.ts --port 8787 &
 * npx -y deno@2.9.6 task train --config examples/configs/judge.yaml
 * ```
 *
 * @module
 */

/** The grade of a response to an addition/subtraction expression, in tenths (0-10). */
export function grade(expression: string, response: string): number {
  if (!/^[\d\s+\-]+$/.test(expression)) return 0;
  const tokens = expression.replace(/\s+/g, "").match(/[+-]?\d+/g) ?? [];
  const truth = tokens.reduce((a, t) => a + Number(t), 0);
  const answer = Number(response.trim());
  if (response.trim() === "" || !Number.isFinite(answer)) return 0;
  return Math.max(0, 10 - Math.abs(answer - truth));
}

/**
 * The server's request handler (exported so a test can serve it on a free port).
 *
 * @example Usage
 * ```ts
 * import { handler } from "./server.ts";
 * import assert from "node:assert/strict";
 * const res = await handler(new Request("http://x/v1/chat/completions", {
 *   method: "POST",
 *   body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "Expression: 40+2\nResponse: 41" }] }),
 * }));
 * const body = await res.json();
 * assert.equal(body.choices[0].message.content, "Score: 9/10");
 * ```
 */
export async function handler(req: Request): Promise<Response> {
  const url = new URL(req.url);
  if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
    return Response.json({ error: { message: `no route ${req.method} ${url.pathname}` } }, {
      status: 404,
    });
  }
  let body: { model?: string; messages?: { role: string; content: string }[] };
  try {
    body = await req.json();
  } catch {
    return Response.json({ error: { message: "the body is not JSON" } }, { status: 400 });
  }
  const user = body.messages?.findLast((m) => m.role === "user")?.content ?? "";
  const expression = /Expression:\s*(.*)/.exec(user)?.[1] ?? "";
  const response = /Response:\s*(.*)/.exec(user)?.[1] ?? "";
  const content = `Score: ${grade(expression, response)}/10`;
  return Response.json({
    id: `judge-${crypto.randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? "rule-judge",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  });
}

if (import.meta.main) {
  const at = Deno.args.indexOf("--port");
  const port = at >= 0 ? Number(Deno.args[at + 1]) : 8787;
  Deno.serve({ hostname: "127.0.0.1", port }, handler);
}
