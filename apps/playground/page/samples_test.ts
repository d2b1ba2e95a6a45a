import assert from "node:assert/strict";
import { beforeAfter } from "./samples.ts";
import { samplesHtml } from "./view.ts";

Deno.test("samples: the first and the latest evaluation of each logged problem, escaped in the table", () => {
  const s = (step: number, problem: number, completion: string, reward: number) => ({
    step,
    problem,
    prompt: `<p${problem}>`,
    completion,
    reward,
    answer: "7",
  });
  const rows = beforeAfter([
    s(0, 0, "1", 0),
    s(0, 1, "7", 1),
    s(10, 0, "5", 0),
    s(10, 1, "7", 1),
    s(20, 1, "6", 0),
    s(20, 0, "7", 1),
  ]);
  assert.deepEqual(
    rows.map((r) => [r.problem, r.before.completion, r.after.completion, r.after.step]),
    [
      [0, "1", "7", 20],
      [1, "7", "6", 20],
    ],
  );
  const html = samplesHtml(rows);
  assert.match(html, /<code>&lt;p0&gt;<\/code>/);
  assert.equal([...html.matchAll(/<tr>/g)].length, 2);
  assert.deepEqual(beforeAfter([]), []);
});
