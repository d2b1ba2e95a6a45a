/**
 * The hostile suite: wrong programs that attack the verdict itself (early exit, patched
 * assertion machinery, patched printing and serialisation, objects that compare equal to
 * anything, patched intrinsics, reading the tests, escaping from Python to the JavaScript
 * runner) must all score 0 through {@link codeReward}, and correct programs written in styles
 * the defences could break must all score 1. The programs are in `hostile_test_data.ts`; the
 * suite prints one line per program and the timings.
 *
 * @module
 */

import assert from "node:assert/strict";
import { codeReward, preparePython, type TestReport } from "./mod.ts";
import { PROBLEMS, PROGRAMS } from "./hostile_test_data.ts";

const ctx = { signal: new AbortController().signal };

interface Outcome {
  name: string;
  kind: "attack" | "correct";
  language: string;
  score: number;
  ms: number;
  statuses: string;
  why: string;
}

/** The line of a failure message that says why: Python's last line, Deno's "Uncaught" line. */
function reason(message: string): string {
  const lines = message.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines.find((l) => l.startsWith("error: Uncaught")) ?? lines.at(-1) ?? "";
}

async function score(code: string, problem: string): Promise<[number, TestReport | null]> {
  const { language, tests } = PROBLEMS[problem]!;
  let report: TestReport | null = null;
  const reward = codeReward({
    source: "completion",
    language,
    stopEarly: false,
    onReport: (r) => {
      report = r;
    },
  });
  const value = await reward.score!({ completion: code, prompt: "", row: { tests } }, ctx);
  assert.equal(typeof value, "number");
  return [value as number, report];
}

Deno.test("hostile suite: attacks on the verdict score 0, correct programs score 1", async () => {
  const info = await preparePython(); // the one-off snapshot cost stays out of the timings
  console.log(
    `  Python interpreter start: ${info.startMs.toFixed(0)} ms, of which verdict set-up ${
      info.setUpMs.toFixed(0)
    } ms`,
  );
  const outcomes: Outcome[] = [];
  const t0 = performance.now();
  for (const program of PROGRAMS) {
    const started = performance.now();
    const [value, report] = await score(program.code, program.problem);
    const ms = performance.now() - started;
    const results = (report as TestReport | null)?.results ?? [];
    const firstBad = results.find((r) => r.status !== "pass");
    outcomes.push({
      name: program.name,
      kind: program.kind,
      language: PROBLEMS[program.problem]!.language,
      score: value,
      ms,
      statuses: results.map((r) => r.status).join(","),
      why: reason(firstBad?.message ?? ""),
    });
    const o = outcomes.at(-1)!;
    console.log(
      `  ${o.kind === "attack" ? "attack " : "correct"} ${o.score} ${
        o.ms.toFixed(0).padStart(5)
      } ms  ${o.name} [${o.statuses}]${o.why ? ` ${o.why.slice(0, 110)}` : ""}`,
    );
  }
  const total = performance.now() - t0;
  const attacks = outcomes.filter((o) => o.kind === "attack");
  const correct = outcomes.filter((o) => o.kind === "correct");
  const summary = (list: Outcome[], language: "python" | "js/ts") => {
    const l = list.filter((o) => (o.language === "python") === (language === "python"));
    const ms = l.map((o) => o.ms);
    return `${l.length} ${language} (mean ${
      (ms.reduce((a, b) => a + b, 0) / Math.max(1, l.length)).toFixed(0)
    } ms, max ${Math.max(0, ...ms).toFixed(0)} ms)`;
  };
  console.log(
    `  hostile suite: ${attacks.length} attacks [${summary(attacks, "python")}, ${
      summary(attacks, "js/ts")
    }], ${correct.length} correct [${summary(correct, "python")}, ${
      summary(correct, "js/ts")
    }], total ${(total / 1000).toFixed(1)} s`,
  );
  assert.ok(attacks.length >= 30, `only ${attacks.length} attacks`);
  assert.ok(correct.length >= 20, `only ${correct.length} correct programs`);
  const pythonAttacks = attacks.filter((o) => o.language === "python").length;
  assert.ok(pythonAttacks >= 10 && attacks.length - pythonAttacks >= 10);
  const forged = attacks.filter((o) => o.score !== 0);
  const broken = correct.filter((o) => o.score !== 1);
  assert.deepEqual(forged.map((o) => o.name), [], "attacks that scored above 0");
  assert.deepEqual(broken.map((o) => `${o.name}: ${o.why}`), [], "correct programs below 1");
});
