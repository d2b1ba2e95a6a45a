import assert from "node:assert/strict";
import { codeReward } from "@rlvr/rewards/code";
import { opsProblems, writeOpsData } from "./pretrain_code.ts";

Deno.test("opsProblems: distinct prompts; every solution passes its own tests, a wrong precedence fails", async () => {
  const rows = opsProblems();
  assert.equal(new Set(rows.map((r) => r.prompt)).size, rows.length);
  // In-process check of all rows (the generator's arithmetic against JavaScript's own).
  for (const r of rows) {
    const f = new Function(`return (x) => ${r.solution}`)() as (x: number) => number;
    for (const m of r.tests.matchAll(/assert\.equal\(f\((-?\d+)\),(-?\d+)\)/g)) {
      assert.equal(f(Number(m[1])), Number(m[2]), `${r.prompt} ${r.solution}`);
    }
    assert.equal(r.tests.split(";").length, 4);
  }
  // A few through the real sandbox, as the reward runs them.
  const reward = codeReward({ source: "prompt+completion", language: "js" });
  const ctx = { signal: new AbortController().signal };
  const row = rows.find((r) => r.prompt === "// +3 *2\nconst f=x=>")!;
  const score = (completion: string) =>
    reward.score!({ prompt: row.prompt, completion, row: { ...row } }, ctx);
  assert.equal(await score(row.solution), 1);
  assert.equal(await score("2*(x+3)"), 1);
  assert.equal(await score("x+3*2"), 0);
});

Deno.test("writeOpsData: the same bytes every time", async () => {
  const a = await Deno.makeTempFile({ suffix: ".jsonl" });
  try {
    await writeOpsData(a);
    const text = await Deno.readTextFile(a);
    const shipped = await Deno.readTextFile(
      new URL("../../../examples/data/js_ops.jsonl", import.meta.url),
    );
    assert.equal(text, shipped);
  } finally {
    await Deno.remove(a);
  }
});
