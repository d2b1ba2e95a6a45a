import assert from "node:assert/strict";
import { join } from "node:path";
import { judgeReward, parseJudgeScore } from "./judge.ts";
import { scoreRewards } from "./runner.ts";
import type { RewardInput } from "./types.ts";

interface Seen {
  body: { model: string; messages: { role: string; content: string }[]; temperature: number };
  auth: string | null;
  path: string;
}

/** A real OpenAI-compatible stand-in on an ephemeral port; `reply` decides each response. */
function startServer(reply: (seen: Seen, n: number) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const s: Seen = {
      body: await req.json(),
      auth: req.headers.get("authorization"),
      path: new URL(req.url).pathname,
    };
    seen.push(s);
    return await reply(s, seen.length);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, seen, close: () => server.shutdown() };
}

const chat = (content: string) =>
  Response.json({
    id: "x",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content } }],
  });

const input = (
  completion: string,
  row: Record<string, unknown> = { answer: "4" },
): RewardInput => ({
  prompt: "What is 2+2?",
  completion,
  row,
});

const TEMPLATE = "Q: {{prompt}}\nReference: {{answer}}\nResponse: {{completion}}\nGrade it.";

Deno.test("judgeReward: fills the template, posts to /v1/chat/completions, parses the score", async () => {
  const srv = startServer(() => chat("Looks right. Score: 8/10"));
  try {
    const judge = judgeReward({
      baseUrl: `${srv.url}/v1/`,
      model: "qwen-judge",
      promptTemplate: TEMPLATE + " meta={{row.meta}}",
      system: "You are a strict grader.",
      apiKey: "sk-test",
    });
    const r = await scoreRewards([judge], [input("4", { answer: "4", meta: { k: 1 } })]);
    assert.deepEqual(r.totals, [0.8]);
    assert.equal(srv.seen.length, 1);
    const s = srv.seen[0]!;
    assert.equal(s.path, "/v1/chat/completions");
    assert.equal(s.auth, "Bearer sk-test");
    assert.equal(s.body.model, "qwen-judge");
    assert.equal(s.body.temperature, 0);
    assert.deepEqual(s.body.messages, [
      { role: "system", content: "You are a strict grader." },
      {
        role: "user",
        content: 'Q: What is 2+2?\nReference: 4\nResponse: 4\nGrade it. meta={"k":1}',
      },
    ]);
  } finally {
    await srv.close();
  }
});

Deno.test("judgeReward: cache hits: identical requests reach the server once", async () => {
  const srv = startServer(() => chat("0.75"));
  try {
    const judge = judgeReward({ baseUrl: srv.url, model: "m", promptTemplate: TEMPLATE });
    // two identical samples in one batch (in flight together) and again in a later batch
    const r1 = await scoreRewards([judge], [input("4"), input("4")]);
    const r2 = await scoreRewards([judge], [input("4")]);
    assert.deepEqual(r1.totals, [0.75, 0.75]);
    assert.deepEqual(r2.totals, [0.75]);
    assert.equal(srv.seen.length, 1);
    assert.deepEqual(judge.stats(), { requests: 1, cacheHits: 2, retries: 0, failures: 0 });
    // a different completion is a different request
    await scoreRewards([judge], [input("5")]);
    assert.equal(srv.seen.length, 2);
    judge.clearCache();
    await scoreRewards([judge], [input("4")]);
    assert.equal(srv.seen.length, 3);
  } finally {
    await srv.close();
  }
});

Deno.test("judgeReward: HTTP 500 then success is retried with backoff", async () => {
  const srv = startServer((
    _,
    n,
  ) => (n === 1 ? new Response("overloaded", { status: 500 }) : chat("Score: 9/10")));
  try {
    const judge = judgeReward({
      baseUrl: srv.url,
      model: "m",
      promptTemplate: TEMPLATE,
      backoffMs: 5,
    });
    const r = await scoreRewards([judge], [input("4")]);
    assert.deepEqual(r.totals, [0.9]);
    assert.equal(r.outcomes.judge![0]!.status, "ok");
    assert.equal(srv.seen.length, 2);
    assert.equal(judge.stats().retries, 1);
  } finally {
    await srv.close();
  }
});

Deno.test("judgeReward: persistent 5xx gives up after `retries` and records the error", async () => {
  const srv = startServer(() => new Response("down", { status: 503 }));
  try {
    const judge = judgeReward({
      baseUrl: srv.url,
      model: "m",
      promptTemplate: TEMPLATE,
      retries: 2,
      backoffMs: 1,
    });
    const r = await scoreRewards([judge], [input("4")]);
    assert.equal(srv.seen.length, 3);
    assert.equal(r.outcomes.judge![0]!.status, "error");
    assert.match(
      r.outcomes.judge![0]!.reason!,
      /judgeReward: HTTP 503 from http:\/\/127.0.0.1:\d+\/v1\/chat\/completions after 3 attempts/,
    );
  } finally {
    await srv.close();
  }
});

Deno.test("judgeReward: 4xx is not retried", async () => {
  const srv = startServer(() => new Response('{"error":"model not found"}', { status: 404 }));
  try {
    const judge = judgeReward({
      baseUrl: srv.url,
      model: "nope",
      promptTemplate: TEMPLATE,
      backoffMs: 1,
    });
    const r = await scoreRewards([judge], [input("4")]);
    assert.equal(srv.seen.length, 1);
    assert.match(
      r.outcomes.judge![0]!.reason!,
      /HTTP 404 .*model not found.*check options.baseUrl, model and apiKey/,
    );
  } finally {
    await srv.close();
  }
});

Deno.test("judgeReward: malformed responses are recorded per sample and the batch completes", async () => {
  const srv = startServer((s) => {
    const user = s.body.messages.at(-1)!.content;
    if (user.includes("Response: not-json")) {
      return new Response("<html>oops</html>", { status: 200 });
    }
    if (user.includes("Response: no-choices")) return Response.json({ result: "0.5" });
    if (user.includes("Response: no-score")) return chat("I refuse to grade this.");
    return chat("Score: 1/2");
  });
  try {
    const judge = judgeReward({
      baseUrl: srv.url,
      model: "m",
      promptTemplate: TEMPLATE,
      backoffMs: 1,
    });
    const r = await scoreRewards([judge], [
      input("fine"),
      input("not-json"),
      input("no-choices"),
      input("no-score"),
      input("also fine"),
    ]);
    const o = r.outcomes.judge!;
    assert.deepEqual(o.map((x) => x.status), ["ok", "error", "error", "error", "ok"]);
    assert.deepEqual(r.totals, [0.5, 0, 0, 0, 0.5]);
    assert.match(o[1]!.reason!, /the reply from .* is not JSON/);
    assert.match(o[2]!.reason!, /has no choices\[0\].message.content/);
    assert.match(
      o[3]!.reason!,
      /could not read a score from the judge's reply "I refuse to grade this."/,
    );
    assert.equal(srv.seen.length, 5, "malformed replies are not retried");
    assert.equal(judge.stats().failures, 3);
    // an unparseable reply is not cached: asking again asks the server again
    await scoreRewards([judge], [input("no-score")]);
    assert.equal(srv.seen.length, 6);
  } finally {
    await srv.close();
  }
});

Deno.test("judgeReward: the JSON file cache is written atomically and reused by a new judge", async () => {
  const dir = await Deno.makeTempDir();
  const file = join(dir, "judge-cache.json");
  const srv = startServer(() => chat("Score: 3/4"));
  try {
    const opts = { baseUrl: srv.url, model: "m", promptTemplate: TEMPLATE, cache: { file } };
    const first = judgeReward(opts);
    await scoreRewards([first], [input("a"), input("b")]);
    await first.flush();
    assert.equal(srv.seen.length, 2);
    const saved = JSON.parse(await Deno.readTextFile(file));
    assert.equal(Object.keys(saved).length, 2);
    assert.deepEqual(Object.values(saved), ["Score: 3/4", "Score: 3/4"]);
    const leftovers = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.deepEqual(leftovers, ["judge-cache.json"], "no temporary files left behind");
    const second = judgeReward(opts);
    const r = await scoreRewards([second], [input("b"), input("a")]);
    assert.deepEqual(r.totals, [0.75, 0.75]);
    assert.equal(srv.seen.length, 2, "served from the file");
    assert.equal(second.stats().cacheHits, 2);
  } finally {
    await srv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("judgeReward: a corrupt cache file is an error naming the file and the fix", async () => {
  const dir = await Deno.makeTempDir();
  const file = join(dir, "bad.json");
  await Deno.writeTextFile(file, "{not json");
  const srv = startServer(() => chat("1"));
  try {
    const judge = judgeReward({
      baseUrl: srv.url,
      model: "m",
      promptTemplate: TEMPLATE,
      cache: { file },
    });
    const r = await scoreRewards([judge], [input("a")]);
    assert.match(
      r.outcomes.judge![0]!.reason!,
      /cache file .*bad.json is not a JSON object .*delete it or point options.cache.file elsewhere/,
    );
  } finally {
    await srv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("judgeReward: a slow server hits the time budget; the request is aborted", async () => {
  const srv = startServer(async () => {
    await new Promise((r) => setTimeout(r, 300));
    return chat("1");
  });
  try {
    const judge = judgeReward({
      baseUrl: srv.url,
      model: "m",
      promptTemplate: TEMPLATE,
      timeoutMs: 50,
    });
    const r = await scoreRewards([judge], [input("a")]);
    assert.equal(r.outcomes.judge![0]!.status, "timeout");
    assert.equal(r.outcomes.judge![0]!.reason, "timed out after 50 ms");
  } finally {
    await srv.close();
  }
});

Deno.test("judgeReward: template errors and custom parsers", async () => {
  const srv = startServer(() => chat("GRADE=B"));
  try {
    const judge = judgeReward({
      baseUrl: srv.url,
      model: "m",
      promptTemplate: "Grade {{completion}} against {{rubric}}",
      parseScore: (reply) =>
        ({ A: 1, B: 0.5, C: 0 } as Record<string, number>)[reply.split("=")[1]!] ?? null,
    });
    const r = await scoreRewards([judge], [input("x", { rubric: "r" }), input("y", {})]);
    assert.equal(r.totals[0], 0.5);
    assert.match(
      r.outcomes.judge![1]!.reason!,
      /promptTemplate uses \{\{rubric\}\} but the row has no field "rubric"/,
    );
    assert.equal(srv.seen.length, 1);
  } finally {
    await srv.close();
  }
  assert.throws(
    () => judgeReward({ baseUrl: "localhost:8000", model: "m", promptTemplate: "x" }),
    /options.baseUrl must be an http\(s\) URL such as "http:\/\/localhost:8000", got "localhost:8000"/,
  );
  assert.throws(
    () => judgeReward({ baseUrl: "http://x", model: "m", promptTemplate: "x", retries: -1 }),
    /options.retries must be an integer >= 0, got -1/,
  );
});

Deno.test("parseJudgeScore: score forms", () => {
  const cases: [string, number | null][] = [
    ["0.8", 0.8],
    ["Score: 7/10", 0.7],
    ["score 7 / 10.", 0.7],
    ["8 out of 10", 0.8],
    ["85%", 0.85],
    ["In 2024, 3 of 5 were right. Final: .4", 0.4],
    ["Score: 1", 1],
    ["Score: 0", 0],
    ["11/10", null],
    ["Score: 7", null],
    ["no numbers", null],
    ["first 0.2, finally 0.9", 0.9],
  ];
  for (const [reply, want] of cases) assert.equal(parseJudgeScore(reply), want, reply);
});
