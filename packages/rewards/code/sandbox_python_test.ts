/**
 * Acceptance tests of the Python (Pyodide) sandbox. These tests never skip: when Pyodide cannot
 * load (npm package missing, no snapshot possible), they fail.
 *
 * Untrusted Python is tried both through Python's own APIs (which hit Pyodide's in-memory file
 * system and stubs) and through the JavaScript escape hatch of Pyodide's FFI (`pyodide_js` →
 * `Function`), which would reach the Deno runtime of the sandbox process. That hatch is closed
 * twice (see `_py_toolkit.ts`): `pyodide_js` and `js` are gone, and the JavaScript objects a
 * program can still reach (through the event loop's globals) cannot turn a string into code.
 * The process permissions stay as the third layer.
 *
 * @module
 */

import assert from "node:assert/strict";
import { codeReward, preparePython, runTests, SandboxPool } from "./mod.ts";

const SECRET = `rlvr-secret-${crypto.randomUUID()}`;

/**
 * A Python program that tries every `(label, python expression)` and prints one line per try:
 * `label: blocked <exception>` or `label: NOT BLOCKED <value>`. `js(body)` tries to run a
 * JavaScript function body in the sandbox's global scope (the FFI escape hatch); `js_async(body)`
 * awaits an async one.
 */
function attempts(tries: [string, string][]): string {
  return [
    "def js_function():",
    "    # Every route to a JavaScript Function the sandbox leaves (or left) open.",
    "    try:",
    "        import pyodide_js",
    "        return pyodide_js.runPython.constructor",
    "    except BaseException:",
    "        import asyncio",
    "        g = type(asyncio.get_event_loop_policy()).get_event_loop.__globals__",
    "        return g['create_once_callable'].__self__.to_js({}).constructor.constructor",
    "def js(body):",
    "    return js_function()(body)()",
    "def js_async(body):",
    "    import asyncio",
    "    g = type(asyncio.get_event_loop_policy()).get_event_loop.__globals__",
    "    return g['run_sync'](js_function()('return (async () => {' + body + '})()')())",
    "def attempt(label, fn):",
    "    try:",
    "        print(f'{label}: NOT BLOCKED {fn()!r}')",
    "    except BaseException as e:",
    "        print(f'{label}: blocked {type(e).__name__}: {e}')",
    ...tries.map(([label, expr]) => `attempt(${JSON.stringify(label)}, lambda: ${expr})`),
  ].join("\n");
}

async function one(code: string, options = {}) {
  const report = await runTests(code, "python", [{ input: "", output: "" }], options);
  return report.results[0]!;
}

/** Runs an {@link attempts} program and checks that every try was blocked without a leak. */
async function assertAllBlocked(tries: [string, string][], secret: string, pattern?: RegExp) {
  const r = await one(attempts(tries));
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, tries.length, `${r.status}: ${r.message ?? ""}\n${r.stdout}`);
  lines.forEach((line, i) => {
    assert.ok(line.startsWith(`${tries[i]![0]}: blocked `), line);
    if (pattern) assert.match(line, pattern);
  });
  for (const text of [r.stdout, r.stderr, r.message ?? ""]) {
    assert.ok(!text.includes(secret), `leaked the secret: ${text}`);
    assert.ok(!text.includes("root:x:0:0"), "read /etc/passwd");
  }
  return lines;
}

Deno.test("python sandbox: Pyodide loads offline from the npm package, with a snapshot", async () => {
  const info = await preparePython();
  assert.equal(info.snapshot, true, info.snapshotError);
  assert.ok(info.indexURL.startsWith("file:"));
  console.log(
    `  preparePython: ${info.ms.toFixed(0)} ms (snapshot ${
      info.snapshotCached ? "from the disk cache" : "made now"
    }), interpreter start ${info.startMs.toFixed(0)} ms`,
  );
});

Deno.test("python sandbox: cannot read /etc/passwd or a file the test created", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const txt = JSON.stringify(`${dir}/secret.txt`);
    const json = JSON.stringify(`${dir}/secret.json`);
    await Deno.writeTextFile(`${dir}/secret.txt`, SECRET);
    await Deno.writeTextFile(`${dir}/secret.json`, JSON.stringify({ secret: SECRET }));
    const q = (s: string) => JSON.stringify(s);
    await assertAllBlocked(
      [
        ["open passwd", `open("/etc/passwd").read()`],
        ["open secret", `open(${txt}).read()`],
        ["listdir", `__import__("os").listdir(${q(dir)})`],
        ["js read passwd", `js(${q('return Deno.readTextFileSync("/etc/passwd")')})`],
        ["js read secret", `js(${q(`return Deno.readTextFileSync(${txt})`)})`],
        [
          "js node:fs",
          `js_async(${q(`return (await import("node:fs")).readFileSync(${txt}, "utf8")`)})`,
        ],
        [
          "js import json",
          `js_async(${
            q(`return (await import(${json}, { with: { type: "json" } })).default.secret`)
          })`,
        ],
        [
          "js fetch file",
          `js_async(${q(`return await (await fetch("file://" + ${txt})).text()`)})`,
        ],
      ],
      SECRET,
      /FileNotFoundError|NotCapable|Requires .*access|Module not found|EvalError/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("python sandbox: cannot open a socket to a local server", async () => {
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    hits++;
    return new Response(SECRET);
  });
  try {
    const port = server.addr.port;
    const q = (s: string) => JSON.stringify(s);
    await assertAllBlocked([
      [
        "urllib",
        `__import__("urllib.request").request.urlopen("http://127.0.0.1:${port}/").read()`,
      ],
      ["socket", `__import__("socket").create_connection(("127.0.0.1", ${port}))`],
      [
        "js fetch",
        `js_async(${q(`return await (await fetch("http://127.0.0.1:${port}/")).text()`)})`,
      ],
      [
        "js connect",
        `js_async(${q(`await Deno.connect({ hostname: "127.0.0.1", port: ${port} })`)})`,
      ],
    ], SECRET);
    assert.equal(hits, 0, "the server was reached");
  } finally {
    await server.shutdown();
  }
});

Deno.test("python sandbox: cannot read the parent's environment", async () => {
  Deno.env.set("RLVR_TEST_SECRET", SECRET);
  try {
    await assertAllBlocked(
      [
        ["os.environ", `__import__("os").environ["RLVR_TEST_SECRET"]`],
        ["js env", `js(${JSON.stringify('return Deno.env.get("RLVR_TEST_SECRET")')})`],
        [
          "js environ",
          `js(${JSON.stringify('return Deno.readTextFileSync("/proc/self/environ")')})`,
        ],
      ],
      SECRET,
      /KeyError|NotCapable|Requires .*access|EvalError/,
    );
  } finally {
    Deno.env.delete("RLVR_TEST_SECRET");
  }
});

Deno.test("python sandbox: cannot spawn a process", async () => {
  const dir = await Deno.makeTempDir();
  const marker = `${dir}/pwned`;
  try {
    const touch = JSON.stringify(`touch ${marker}`);
    const lines = await assertAllBlocked([
      ["subprocess", `__import__("subprocess").run(["/bin/sh", "-c", ${touch}], check=True)`],
      [
        "js command",
        `js_async(${
          JSON.stringify(`await new Deno.Command("/bin/sh", { args: ["-c", ${touch}] }).output()`)
        })`,
      ],
    ], SECRET);
    assert.match(lines[1]!, /NotCapable|Requires run access|EvalError/);
    // os.system goes through Node's child_process inside Pyodide: the permission check kills
    // the interpreter (uncatchable), which ends the case as an error.
    const system = await one(`import os\nos.system(${touch})`);
    assert.equal(system.status, "error");
    assert.match(system.message ?? "", /NotCapable|Requires (env|run) access/);
    await assert.rejects(Deno.stat(marker), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("python sandbox: an infinite loop is killed at the time limit; the caller stays responsive", async () => {
  await preparePython(); // keep the one-off snapshot cost out of the measurement
  let ticks = 0;
  const tick = setInterval(() => ticks++, 50);
  try {
    const t0 = performance.now();
    const r = await one("while True:\n    pass", { timeoutMs: 1000 });
    const elapsed = performance.now() - t0;
    assert.equal(r.status, "timeout");
    assert.ok(r.ms >= 1000, `killed too early: ${r.ms}`);
    assert.ok(r.ms < 1000 + 1000, `killed ${r.ms - 1000} ms late`);
    // + interpreter start (0.3 s quiet, over 1 s on a loaded 2-core CI machine) + kill: the
    // bound only catches a limit that does not interrupt, not a slow start.
    assert.ok(elapsed < 1000 + 5000, `took ${elapsed} ms for a 1000 ms limit`);
    assert.ok(ticks >= 10, `the caller's event loop stalled (${ticks} ticks)`);
  } finally {
    clearInterval(tick);
  }
});

Deno.test("python sandbox: memory bombs end as `memory`; the parent stays healthy", async () => {
  const before = Deno.memoryUsage().rss;
  const t0 = performance.now();
  const [grow, huge, bytes] = await Promise.all([
    one("a = []\nwhile True:\n    a.append(bytearray(10**7))", {
      memoryMb: 400,
      timeoutMs: 10_000,
    }),
    one("a = [0] * (10**9)", { memoryMb: 400, timeoutMs: 10_000 }),
    one("s = b'x' * (1500 * 10**6)", { memoryMb: 400, timeoutMs: 10_000 }),
  ]);
  const elapsed = performance.now() - t0;
  assert.equal(grow!.status, "memory", grow!.message);
  assert.equal(huge!.status, "memory", huge!.message);
  assert.equal(bytes!.status, "memory", bytes!.message);
  // The statuses above already say the memory watchdog, not the 10 s time limit, ended them;
  // this only catches a hang.
  assert.ok(elapsed < 30_000, `bombs took ${elapsed} ms`);
  const ok = await runTests("print(6 * 7)", "python", [{ input: "", output: "42" }]);
  assert.equal(ok.results[0]!.status, "pass");
  assert.ok(Deno.memoryUsage().rss - before < 200 * 1024 * 1024, "the parent's memory grew");
});

Deno.test("python sandbox: output bombs end as `output_limit`", async () => {
  const limit = 64 * 1024;
  const bombs = [
    "while True:\n    print('x' * 1000)",
    "import sys\nwhile True:\n    sys.stderr.write('y' * 1000)",
    "import os\nwhile True:\n    os.write(1, b'z' * 4096)",
  ];
  const results = await Promise.all(bombs.map((code) => one(code, { outputLimitBytes: limit })));
  results.forEach((r, i) => {
    assert.equal(r.status, "output_limit", `bomb ${i}: ${r.status} ${r.message}`);
    assert.ok(r.stdout.length <= limit && r.stderr.length <= limit);
  });
  // Straight to the sandbox process's real stdout, around the runner's capture: the escape
  // hatch is closed (the parent would also kill a child flooding its real stdout).
  const around = await one(
    "import asyncio\ng = type(asyncio.get_event_loop_policy()).get_event_loop.__globals__\n" +
      "F = g['create_once_callable'].__self__.to_js({}).constructor.constructor\n" +
      "F('while (true) Deno.stdout.writeSync(new Uint8Array(65536).fill(65))')()",
    { outputLimitBytes: limit },
  );
  assert.equal(around.status, "error", around.message);
  assert.match(around.message ?? "", /EvalError|Code generation from strings disallowed/);
});

const FIZZBUZZ_PY = `
n = int(input())
for i in range(1, n + 1):
    if i % 15 == 0:
        print("FizzBuzz")
    elif i % 3 == 0:
        print("Fizz")
    elif i % 5 == 0:
        print("Buzz")
    else:
        print(i)
`;

function fizzbuzz(n: number): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) {
    out.push(i % 15 === 0 ? "FizzBuzz" : i % 3 === 0 ? "Fizz" : i % 5 === 0 ? "Buzz" : String(i));
  }
  return out.join("\n") + "\n";
}

Deno.test("python sandbox: fizzbuzz over stdin/stdout passes; a wrong solution fails", async () => {
  const cases = [1, 5, 15, 31].map((n) => ({ input: `${n}\n`, output: fizzbuzz(n) }));
  const good = await runTests(FIZZBUZZ_PY, "python", cases);
  assert.deepEqual(good.results.map((r) => r.status), ["pass", "pass", "pass", "pass"]);
  const wrong = await runTests(FIZZBUZZ_PY.replace("i % 15", "i % 10"), "py", cases);
  assert.deepEqual(wrong.results.map((r) => r.status), ["pass", "pass", "fail", "fail"]);
  // Whole-input idioms work too.
  const whole = await runTests(
    "import sys\nprint(sum(map(int, sys.stdin.read().split())))",
    "python",
    [{ input: "1 2\n3\n", output: "6" }, { input: "", output: "0" }],
  );
  assert.equal(whole.allPassed, true);
});

Deno.test("python sandbox: assertion tests pass, fail, error and resist early exit", async () => {
  const code = "def add(a, b):\n    return a + b\n";
  const report = await runTests(code, "python", [
    { assert: "assert add(2, 2) == 4\nassert add(-1, 1) == 0" },
    { assert: "assert add(2, 2) == 5, 'two and two'" },
    { assert: "assert mul(2, 2) == 4" },
  ]);
  assert.deepEqual(report.results.map((r) => r.status), ["pass", "fail", "error"]);
  assert.match(report.results[1]!.message!, /AssertionError: two and two/);
  assert.match(report.results[2]!.message!, /NameError: name 'mul' is not defined/);
  // A trace function that jumps over the assertions is removed before the tests run.
  const tracer = "import sys\ndef skip(frame, event, arg):\n" +
    "    if frame.f_code.co_filename == 'tests.py' and event == 'line' and frame.f_lineno == 1:\n" +
    "        frame.f_lineno = 2\n    return skip\nsys.settrace(skip)";
  for (const exit of ["import sys\nsys.exit(0)", "import os\nos._exit(0)", tracer]) {
    const hack = await runTests(`def add(a, b):\n    return 0\n${exit}\n`, "python", [
      { assert: "assert add(2, 2) == 4\npass" },
    ]);
    assert.notEqual(hack.results[0]!.status, "pass", exit);
  }
});

Deno.test("python sandbox: a syntax error is an `error` with Python's message", async () => {
  const report = await runTests("def f(:\n    pass", "python", [{ assert: "assert True" }]);
  assert.equal(report.results[0]!.status, "error");
  assert.match(report.results[0]!.message!, /SyntaxError/);
  assert.match(report.results[0]!.message!, /solution\.py", line 1/);
});

Deno.test("python sandbox: an interpreter serves one program only", async () => {
  const pool = new SandboxPool({ concurrency: 1 });
  // sys persists inside one interpreter (its cases reuse it); another program gets a new one.
  const counter = "import sys\nsys.rlvr_n = getattr(sys, 'rlvr_n', 0) + 1\nprint(sys.rlvr_n)";
  const cases = [1, 2, 3].map((n) => ({ input: "", output: String(n) }));
  const a = await runTests(counter, "python", cases, { pool });
  assert.deepEqual(a.results.map((r) => r.stdout.trim()), ["1", "2", "3"]);
  const b = await runTests(counter + "\n", "python", cases, { pool });
  assert.deepEqual(b.results.map((r) => r.stdout.trim()), ["1", "2", "3"]);
  await pool.close();
});

Deno.test("python sandbox: the pool bounds concurrency (measured from the programs' own clocks)", async () => {
  const pool = new SandboxPool({ concurrency: 2 });
  const code = "import time\nt0 = time.time()\nwhile time.time() - t0 < 0.25:\n    pass\n" +
    "print(int(t0 * 1000), int(time.time() * 1000))";
  const cases = Array.from({ length: 6 }, () => ({ assert: "pass" }));
  const report = await runTests(code, "python", cases, { pool });
  assert.equal(report.allPassed, true, JSON.stringify(report.results));
  const spans = report.results.map((r) => r.stdout.trim().split(" ").map(Number));
  let peak = 0;
  for (const [s] of spans) {
    peak = Math.max(peak, spans.filter(([a, b]) => a! <= s! && s! < b!).length);
  }
  assert.equal(peak, 2, `max concurrent programs ${peak}`);
  await pool.close();
});

Deno.test("codeReward: Python through Pyodide", async () => {
  const ctx = { signal: new AbortController().signal };
  const reward = codeReward({ languageField: "lang", mode: "pass_rate" });
  const row = {
    lang: "python",
    tests: [
      { input: "3\n", output: "1\n2\nFizz\n" },
      { input: "5\n", output: "1\n2\nFizz\n4\nBuzz\n" },
    ],
  };
  const good = "```python\nn = int(input())\nfor i in range(1, n + 1):\n" +
    "    print('FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else i)\n```";
  const score = (completion: string) => reward.score!({ completion, prompt: "", row }, ctx);
  assert.equal(await score(good), 1);
  assert.equal(await score(good.replace("i % 5 ==", "i % 4 ==")), 0.5);
  assert.equal(await score(good.replace("```python", "```js")), 0); // not the row's language
});
