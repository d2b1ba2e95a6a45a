import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RunDir } from "../run/run_dir.ts";
import { reportMain } from "./main.ts";

Deno.test("reportMain: writes report.html; bad arguments exit 2 with the usage", async () => {
  const root = await Deno.makeTempDir();
  const err = console.error;
  const log = console.log;
  const lines: string[] = [];
  console.error = (m: unknown) => lines.push(String(m));
  console.log = (m: unknown) => lines.push(String(m));
  try {
    const run = await RunDir.create(root, "r");
    await run.writeConfig("a: 1\n");
    await run.close();
    assert.equal(await reportMain([run.path]), 0);
    assert.match(
      await Deno.readTextFile(join(run.path, "report.html")),
      /<title>rlvr run r<\/title>/,
    );
    assert.equal(await reportMain([]), 2);
    assert.equal(await reportMain([run.path, "x"]), 2);
    assert.equal(await reportMain([join(root, "missing")]), 2);
    assert.match(lines.join("\n"), /is not a directory; usage: deno task report <runDir>/);
  } finally {
    console.error = err;
    console.log = log;
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("deno task report <runDir> as a process (the command the task runs)", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = await RunDir.create(root, "proc");
    await run.writeConfig("a: 1\n");
    await run.close();
    const task = JSON.parse(
      await Deno.readTextFile(fileURLToPath(new URL("../../../deno.json", import.meta.url))),
    )
      .tasks.report as string;
    assert.equal(task, "deno run -A apps/train/report/main.ts");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", fileURLToPath(new URL("./main.ts", import.meta.url)), run.path],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.match(new TextDecoder().decode(out.stdout), /report: wrote .*proc\/report\.html/);
    assert.ok((await Deno.stat(join(run.path, "report.html"))).isFile);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
