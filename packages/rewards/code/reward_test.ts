import assert from "node:assert/strict";
import { codeReward, type RewardInput, type TestReport } from "./mod.ts";

const ctx = { signal: new AbortController().signal };
const input = (completion: string, row: Record<string, unknown>): RewardInput => ({
  completion,
  prompt: "",
  row,
});

const SQUARE_TESTS = [
  { input: "2", output: "4" },
  { input: "3", output: "9" },
  { input: "-4", output: "16" },
];
const js = (body: string) => "Here you go:\n```js\n" + body + "\n```\n";
const SQUARE = js("const n = Number(require('fs').readFileSync(0, 'utf8')); console.log(n * n);");
// Right for positive n only.
const HALF = js(
  "const n = Number(require('fs').readFileSync(0, 'utf8')); console.log(n > 0 ? n * n : 0);",
);

Deno.test("codeReward all_pass: 1 when every case passes, else 0; stops at the first failure", async () => {
  const reports: (TestReport | null)[] = [];
  const reward = codeReward({ onReport: (r) => reports.push(r) });
  assert.equal(reward.name, "code_all_pass");
  assert.equal(reward.timeoutMs, Infinity);
  const row = { tests: SQUARE_TESTS };
  assert.equal(await reward.score!(input(SQUARE, row), ctx), 1);
  assert.equal(await reward.score!(input(HALF, row), ctx), 0);
  const failed = reports[1]!;
  assert.equal(failed.results[2]!.status, "fail");
  assert.ok(
    failed.results.every((r) =>
      r.status === "pass" || r.status === "fail" || r.status === "skipped"
    ),
  );
});

Deno.test("codeReward pass_rate: the fraction of passing cases", async () => {
  const reward = codeReward({ mode: "pass_rate" });
  assert.equal(reward.name, "code_pass_rate");
  const row = { tests: SQUARE_TESTS };
  assert.equal(await reward.score!(input(HALF, row), ctx), 2 / 3);
  assert.equal(await reward.score!(input(SQUARE, row), ctx), 1);
});

Deno.test("codeReward: null when not applicable, 0 when there is no runnable code", async () => {
  const reward = codeReward({ languageField: "language" });
  // No tests: not applicable.
  assert.equal(await reward.score!(input(SQUARE, {}), ctx), null);
  assert.equal(await reward.score!(input(SQUARE, { tests: [] }), ctx), null);
  // A language the sandbox cannot run: not applicable.
  assert.equal(
    await reward.score!(input(SQUARE, { tests: SQUARE_TESTS, language: "cpp" }), ctx),
    null,
  );
  // No code block, or a block in another language than the row's: 0.
  assert.equal(await reward.score!(input("I don't know.", { tests: SQUARE_TESTS }), ctx), 0);
  assert.equal(
    await reward.score!(input(SQUARE, { tests: SQUARE_TESTS, language: "python" }), ctx),
    0,
  );
  // An untagged block runs as the row's language.
  const untagged =
    "```\nconst n = Number(require('fs').readFileSync(0, 'utf8')); console.log(n * n);\n```";
  assert.equal(
    await reward.score!(input(untagged, { tests: SQUARE_TESTS, language: "javascript" }), ctx),
    1,
  );
});

Deno.test("codeReward: assertion tests in a custom field, TypeScript, fixed language", async () => {
  const reward = codeReward({ testsField: "checks", language: "typescript", mode: "pass_rate" });
  const row = { checks: ["assert.equal(gcd(12, 18), 6)", "assert.equal(gcd(7, 5), 1)"] };
  const good =
    "```ts\nfunction gcd(a: number, b: number): number { return b ? gcd(b, a % b) : a; }\n```";
  assert.equal(await reward.score!(input(good, row), ctx), 1);
  const broken = "```ts\nfunction gcd(a: number, b: number): number { return }\n```";
  assert.equal(await reward.score!(input(broken, row), ctx), 0);
});

Deno.test("codeReward: rejects bad options", () => {
  assert.throws(() => codeReward({ mode: "most" as "all_pass" }), TypeError);
  assert.throws(() => codeReward({ language: "cobol" }), TypeError);
  assert.throws(() => codeReward({ callTimeoutMs: 0 }), RangeError);
});

Deno.test("codeReward: an aborted call kills its cases", async () => {
  const reward = codeReward();
  const ctl = new AbortController();
  const t0 = performance.now();
  const pending = reward.score!(input(js("while (true) {}"), { tests: SQUARE_TESTS }), {
    signal: ctl.signal,
  });
  setTimeout(() => ctl.abort(new Error("budget spent")), 200);
  assert.equal(await pending, 0); // skipped cases do not pass
  assert.ok(performance.now() - t0 < 2000, "the abort did not stop the run");
});

Deno.test("codeReward source: the whole completion, or prompt + completion (HumanEval's layout)", async () => {
  const tests = ["assert f(4) == 11", "assert f(10) == 23"];
  const whole = codeReward({ source: "completion", language: "python", mode: "pass_rate" });
  const ok = { prompt: "ignored", completion: "f = lambda x: 2*x + 3", row: { tests } };
  assert.equal(await whole.score!(ok, ctx), 1);
  assert.equal(await whole.score!({ ...ok, completion: "f = lambda x: x + 7" }, ctx), 0.5);
  const humaneval = codeReward({ source: "prompt+completion", language: "python" });
  const prompt = "# f(1)=5 f(2)=7 f(3)=9\nf=lambda x:";
  assert.equal(await humaneval.score!({ prompt, completion: "2*x+3", row: { tests } }, ctx), 1);
  assert.equal(await humaneval.score!({ prompt, completion: "3*x+2", row: { tests } }, ctx), 0);
  // A syntax error is a failing program, not an error of the reward.
  assert.equal(await humaneval.score!({ prompt, completion: "2*x+", row: { tests } }, ctx), 0);
  // An empty program scores 0 without running.
  assert.equal(await whole.score!({ ...ok, completion: "  " }, ctx), 0);
  assert.throws(() => codeReward({ source: "completion" }), /set language/);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => codeReward({ source: "fenced" as any }), /source must be/);
});
