/**
 * Acceptance tests of the JavaScript/TypeScript sandbox: untrusted programs cannot read files,
 * reach the network, read the environment, spawn processes or hang/exhaust the caller, and real
 * programs pass or fail as they should.
 *
 * @module
 */

import assert from "node:assert/strict";
import { runTests, SandboxPool } from "./mod.ts";

const SECRET = `rlvr-secret-${crypto.randomUUID()}`;

/** Runs one program on one stdin case and returns its single result. */
async function one(code: string, language = "js", options = {}) {
  const report = await runTests(code, language, [{ input: "", output: "" }], options);
  return report.results[0]!;
}

/** A file inside Deno's npm cache (where the pinned pyodide package lives). */
async function npmCacheFile(): Promise<string> {
  await import("pyodide");
  return decodeURIComponent(new URL("package.json", import.meta.resolve("pyodide")).pathname);
}

function assertNoLeak(r: { stdout: string; stderr: string; message?: string }, secret: string) {
  assert.ok(!r.stdout.includes(secret), `stdout leaked the secret: ${r.stdout}`);
  assert.ok(!r.stderr.includes(secret), `stderr leaked the secret: ${r.stderr}`);
  assert.ok(!(r.message ?? "").includes(secret), `message leaked the secret: ${r.message}`);
}

Deno.test("js sandbox: cannot read /etc/passwd or a file the test created, by any route", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const txt = `${dir}/secret.txt`;
    const json = `${dir}/secret.json`;
    const ts = `${dir}/secret.ts`;
    await Deno.writeTextFile(txt, SECRET);
    await Deno.writeTextFile(json, JSON.stringify({ secret: SECRET }));
    await Deno.writeTextFile(ts, `export const secret = ${JSON.stringify(SECRET)};`);
    const attempts = [
      `console.log(Deno.readTextFileSync("/etc/passwd"))`,
      `console.log(await Deno.readTextFile(${JSON.stringify(txt)}))`,
      `import fs from "node:fs"; console.log(fs.readFileSync(${JSON.stringify(txt)}, "utf8"))`,
      `console.log(await (await fetch("file://${txt}")).text())`,
      `import s from ${JSON.stringify(json)} with { type: "json" }; console.log(s.secret)`,
      `const m = await import(${
        JSON.stringify(json)
      }, { with: { type: "json" } }); console.log(m.default.secret)`,
      `import { secret } from ${JSON.stringify(ts)}; console.log(secret)`,
      `import { secret } from "file://${ts}"; console.log(secret)`,
      `import "/etc/passwd";`,
      `console.log(require(${JSON.stringify(json)}).secret)`,
      `for await (const e of Deno.readDir(${JSON.stringify(dir)})) console.log(e.name)`,
      `console.log(Deno.readTextFileSync("/proc/self/environ"))`,
      // Deno lets require() read its npm cache unchecked: the child gets an empty DENO_DIR.
      `console.log(require(${JSON.stringify(await npmCacheFile())}).version)`,
    ];
    const results = await Promise.all(attempts.map((code) => one(code)));
    results.forEach((r, i) => {
      assert.equal(r.status, "error", `attempt ${i} (${attempts[i]}) was not stopped: ${r.status}`);
      assert.match(r.message ?? "", /NotCapable|Requires .*access|Module not found/);
      assertNoLeak(r, SECRET);
      assert.ok(!r.stdout.includes("root:"), "read /etc/passwd");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("js sandbox: cannot open a socket to a local server (fetch, Deno.connect, node:net)", async () => {
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    hits++;
    return new Response(SECRET);
  });
  try {
    const port = server.addr.port;
    const attempts = [
      `console.log(await (await fetch("http://127.0.0.1:${port}/")).text())`,
      `const c = await Deno.connect({ hostname: "127.0.0.1", port: ${port} }); console.log("connected")`,
      `import net from "node:net"; const s = net.connect(${port}, "127.0.0.1"); ` +
      `await new Promise((ok, no) => { s.on("connect", ok); s.on("error", no); }); console.log("connected")`,
      `const ws = new WebSocket("ws://127.0.0.1:${port}/"); await new Promise((ok, no) => { ws.onopen = ok; ws.onerror = no; }); console.log("connected")`,
      `Deno.listen({ port: 0 }); console.log("listening")`,
    ];
    const results = await Promise.all(attempts.map((code) => one(code)));
    results.forEach((r, i) => {
      assert.equal(r.status, "error", `attempt ${i} was not stopped: ${r.status} ${r.stdout}`);
      assert.ok(!r.stdout.includes("connected") && !r.stdout.includes("listening"));
      assertNoLeak(r, SECRET);
    });
    assert.equal(hits, 0, "the server was reached");
  } finally {
    await server.shutdown();
  }
});

Deno.test("js sandbox: cannot read the parent's environment", async () => {
  Deno.env.set("RLVR_TEST_SECRET", SECRET);
  try {
    const attempts = [
      `console.log(Deno.env.get("RLVR_TEST_SECRET"))`,
      `console.log(JSON.stringify(Deno.env.toObject()))`,
      `console.log(process.env.RLVR_TEST_SECRET)`,
    ];
    const results = await Promise.all(attempts.map((code) => one(code)));
    results.forEach((r, i) => {
      assert.equal(r.status, "error", `attempt ${i} was not stopped: ${r.status} ${r.stdout}`);
      assert.match(r.message ?? "", /NotCapable|Requires env access/);
      assertNoLeak(r, SECRET);
    });
  } finally {
    Deno.env.delete("RLVR_TEST_SECRET");
  }
});

Deno.test("js sandbox: cannot spawn a process, load native code or query the system", async () => {
  const marker = `${await Deno.makeTempDir()}/pwned`;
  try {
    const attempts = [
      `await new Deno.Command("/bin/sh", { args: ["-c", "touch ${marker}"] }).output()`,
      `import cp from "node:child_process"; cp.execFileSync("/bin/sh", ["-c", "touch ${marker}"])`,
      `Deno.dlopen("libc.so.6", {})`,
      `console.log(Deno.hostname())`,
      `Deno.writeTextFileSync(${JSON.stringify(marker)}, "x")`,
    ];
    const results = await Promise.all(attempts.map((code) => one(code)));
    results.forEach((r, i) => {
      assert.equal(r.status, "error", `attempt ${i} was not stopped: ${r.status}`);
      assert.match(r.message ?? "", /NotCapable|Requires .*access/);
    });
    await assert.rejects(Deno.stat(marker), Deno.errors.NotFound);
  } finally {
    await Deno.remove(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
  }
});

Deno.test("js sandbox: an infinite loop is killed at the time limit and the caller stays responsive", async () => {
  let ticks = 0;
  const tick = setInterval(() => ticks++, 50);
  try {
    const t0 = performance.now();
    const r = await one("while (true) {}", "js", { timeoutMs: 1000 });
    const elapsed = performance.now() - t0;
    assert.equal(r.status, "timeout");
    assert.ok(r.ms >= 1000, `killed too early: ${r.ms}`);
    assert.ok(r.ms < 1000 + 1000, `killed ${r.ms - 1000} ms late`);
    assert.ok(elapsed < 1000 + 1500, `took ${elapsed} ms for a 1000 ms limit`);
    assert.ok(ticks >= 10, `the caller's event loop stalled (${ticks} ticks)`);
  } finally {
    clearInterval(tick);
  }
});

Deno.test("js sandbox: memory bombs end as `memory`, the parent stays healthy", async () => {
  const before = Deno.memoryUsage().rss;
  const bombs = [
    "const a = []; while (true) a.push(new Array(1e6).fill(1.5));", // V8 heap
    "const a = []; while (true) a.push(new Uint8Array(1e8).fill(1));", // outside the heap
    "const a = []; while (true) a.push('x'.repeat(1e6) + Math.random());", // strings
    // Each worker has a heap limit of its own; the resident-memory watchdog still catches them.
    "const src = 'const a = []; while (true) a.push(new Array(1e6).fill(1.5));';\n" +
    "for (let i = 0; i < 8; i++) new Worker('data:text/javascript,' + encodeURIComponent(src), { type: 'module' });\n" +
    "setInterval(() => {}, 1000);",
  ];
  const t0 = performance.now();
  const results = await Promise.all(
    bombs.map((code) => one(code, "js", { memoryMb: 256, timeoutMs: 10_000 })),
  );
  const elapsed = performance.now() - t0;
  results.forEach((r, i) => {
    assert.equal(r.status, "memory", `bomb ${i}: ${r.status} ${r.message}`);
  });
  assert.ok(elapsed < 10_000, `bombs took ${elapsed} ms`);
  // The parent is fine: it runs the next program, and its own memory did not balloon.
  const ok = await runTests("console.log(1 + 1)", "js", [{ input: "", output: "2" }]);
  assert.equal(ok.results[0]!.status, "pass");
  assert.ok(Deno.memoryUsage().rss - before < 200 * 1024 * 1024, "the parent's memory grew");
});

Deno.test("js sandbox: an output bomb ends as `output_limit` with the output truncated", async () => {
  const limit = 64 * 1024;
  for (
    const code of [
      `while (true) console.log("x".repeat(1000));`,
      `while (true) console.error("y".repeat(1000));`,
      `Deno.stdout.writeSync(new Uint8Array(10 * 1024 * 1024).fill(65));`,
    ]
  ) {
    const r = await one(code, "js", { outputLimitBytes: limit });
    assert.equal(r.status, "output_limit", code);
    assert.ok(r.stdout.length <= limit + 100 && r.stderr.length <= limit + 100);
  }
});

const FIZZBUZZ_JS = `
const n = Number(require("fs").readFileSync(0, "utf8").trim());
const out = [];
for (let i = 1; i <= n; i++) {
  out.push(i % 15 === 0 ? "FizzBuzz" : i % 3 === 0 ? "Fizz" : i % 5 === 0 ? "Buzz" : String(i));
}
console.log(out.join("\\n"));
`;

function fizzbuzz(n: number): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) {
    out.push(i % 15 === 0 ? "FizzBuzz" : i % 3 === 0 ? "Fizz" : i % 5 === 0 ? "Buzz" : String(i));
  }
  return out.join("\n") + "\n";
}

Deno.test("js sandbox: fizzbuzz over stdin/stdout passes; a wrong solution fails", async () => {
  const cases = [1, 5, 15, 31].map((n) => ({ input: `${n}\n`, output: fizzbuzz(n) }));
  const good = await runTests(FIZZBUZZ_JS, "javascript", cases);
  assert.deepEqual(good.results.map((r) => r.status), ["pass", "pass", "pass", "pass"]);
  assert.equal(good.allPassed, true);
  const wrong = await runTests(FIZZBUZZ_JS.replace("i % 15", "i % 10"), "js", cases);
  assert.deepEqual(wrong.results.map((r) => r.status), ["pass", "pass", "fail", "fail"]);
  assert.equal(wrong.passRate, 0.5);
  // Deno-style stdin and TypeScript work too.
  const ts = `const n: number = Number((await new Response(Deno.stdin.readable).text()).trim());
for (let i = 1; i <= n; i++) console.log(i % 15 === 0 ? "FizzBuzz" : i % 3 === 0 ? "Fizz" : i % 5 === 0 ? "Buzz" : i);`;
  assert.equal((await runTests(ts, "ts", cases)).allPassed, true);
});

Deno.test("js sandbox: assertion tests pass, fail, error and resist early exit", async () => {
  const code = "function add(a, b) { return a + b; }";
  const report = await runTests(code, "js", [
    { assert: "assert(add(2, 2) === 4); assert.equal(add(-1, 1), 0);" },
    {
      assert:
        "assert.deepEqual([add(1, 1)], [2]); assert.equal(await Promise.resolve(add(1, 2)), 3);",
    },
    { assert: "assert.equal(add(2, 2), 5);" },
    { assert: "assert.equal(mul(2, 2), 4);" },
  ]);
  assert.deepEqual(report.results.map((r) => r.status), ["pass", "pass", "fail", "error"]);
  assert.match(report.results[2]!.message!, /AssertionError/);
  assert.match(report.results[3]!.message!, /mul is not defined/);
  // A program that exits before the assertions run does not pass.
  const hack = await runTests("function add() { return 0; }\nDeno.exit(0);", "js", [
    { assert: "assert.equal(add(2, 2), 4);" },
  ]);
  assert.equal(hack.results[0]!.status, "fail");
  const hack2 = await runTests("function add() { return 0; }\nprocess.exit(0);", "ts", [
    { assert: "assert.equal(add(2, 2), 4);" },
  ]);
  assert.equal(hack2.results[0]!.status, "fail");
  // Nor does one that disarms node:assert (it is frozen before any module of the program runs).
  for (
    const tamper of [
      `import a from "node:assert/strict"; a.equal = () => {};`,
      `import "data:text/javascript,import a from 'node:assert/strict'; a.equal = () => {};";`,
    ]
  ) {
    const r = await runTests(`${tamper}\nfunction add() { return 0; }`, "js", [
      { assert: "assert.equal(add(2, 2), 4);" },
    ]);
    assert.notEqual(r.results[0]!.status, "pass", tamper);
  }
});

Deno.test("js sandbox: a syntax error is an `error` carrying the compiler's message", async () => {
  const report = await runTests("function f( {", "js", [{ assert: "assert(true)" }]);
  assert.equal(report.results[0]!.status, "error");
  assert.match(report.results[0]!.message!, /SyntaxError|Expected/);
  const ts = await runTests("const x: number = ;", "ts", [{ input: "", output: "" }]);
  assert.equal(ts.results[0]!.status, "error");
  assert.match(ts.results[0]!.message!, /Expression expected|Unexpected|SyntaxError/);
  assert.ok(!ts.results[0]!.message!.includes("/tmp/"), "leaks the temp path");
});

Deno.test("js sandbox: the pool bounds concurrency (measured from the programs' own clocks)", async () => {
  const pool = new SandboxPool({ concurrency: 2 });
  const code =
    `const t0 = Date.now(); while (Date.now() - t0 < 250) {} console.log(t0, Date.now());`;
  const cases = Array.from({ length: 6 }, () => ({ assert: "" }));
  const report = await runTests(code, "js", cases, { pool });
  assert.equal(report.allPassed, true);
  const spans = report.results.map((r) =>
    r.stdout.trim().split(" ").map(Number) as [number, number]
  );
  let peak = 0;
  for (const [s] of spans) {
    const overlapping = spans.filter(([a, b]) => a <= s && s < b).length;
    peak = Math.max(peak, overlapping);
  }
  assert.equal(peak, 2, `max concurrent programs ${peak}`);
  assert.equal(pool.maxActive, 2);
  await pool.close();
});

Deno.test("js sandbox: stopOnFirstFailure skips the remaining cases", async () => {
  const pool = new SandboxPool({ concurrency: 1 });
  const report = await runTests("console.log(1)", "js", [
    { input: "", output: "2" },
    { input: "", output: "1" },
    { input: "", output: "1" },
  ], { pool, stopOnFirstFailure: true });
  assert.deepEqual(report.results.map((r) => r.status), ["fail", "skipped", "skipped"]);
  await pool.close();
});
