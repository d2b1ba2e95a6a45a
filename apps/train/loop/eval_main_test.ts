import assert from "node:assert/strict";
import { evalMain } from "./eval_main.ts";

Deno.test("evalMain: prints the held-out pass@1 and pass@k of the shipped policy; a bad flag prints the usage", async () => {
  const lines: string[] = [];
  const r = await evalMain(["--problems", "8", "--samples", "4", "--k", "2"], (l) => lines.push(l));
  assert.ok(r !== null);
  assert.equal(r.k, 2);
  assert.equal(r.problems, 8);
  assert.match(
    lines[0]!,
    /^eval builtin:tiny: held-out pass@1 \d+\.\d%, pass@2 \d+\.\d% \(8 problems x 4 samples/,
  );
  const bad: string[] = [];
  assert.equal(await evalMain(["--bogus"], (l) => bad.push(l)), null);
  assert.match(bad[0]!, /Unknown option '--bogus'[\s\S]*Usage: deno task eval/);
});
