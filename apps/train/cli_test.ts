import assert from "node:assert/strict";
import { CliError, parseCli, usage } from "./cli.ts";
import { listRecipes } from "./config/load.ts";

Deno.test("parseCli: every flag, repeated --set in order, --flag=value form", () => {
  assert.deepEqual(
    parseCli([
      "--config=dapo",
      "--set",
      "a.b=1",
      "--set=c.d=2",
      "--model",
      "models/qwen",
      "--device",
      "cpu",
      "--seed",
      "3",
      "--steps",
      "4",
      "--out",
      "o",
    ]),
    {
      kind: "run",
      options: {
        config: "dapo",
        set: ["a.b=1", "c.d=2"],
        model: "models/qwen",
        device: "cpu",
        seed: "3",
        steps: "4",
        out: "o",
      },
    },
  );
  assert.deepEqual(parseCli(["--resume", "runs/x"]), {
    kind: "run",
    options: { resume: "runs/x" },
  });
  assert.deepEqual(parseCli([]), { kind: "run", options: {} });
  assert.deepEqual(parseCli(["-h", "--seed", "1"]), { kind: "help" });
});

Deno.test("parseCli: unknown flags, missing values and positionals are CliErrors", () => {
  for (const args of [["--bogus"], ["--seed"], ["dapo"], ["--help=yes"]]) {
    assert.throws(
      () => parseCli(args),
      (e: unknown) =>
        e instanceof CliError && /^train: .*; run with --help for the options$/.test(e.message),
      args.join(" "),
    );
  }
});

Deno.test("usage: every option and every recipe with its header line", () => {
  const text = usage();
  for (
    const flag of [
      "--config",
      "--set",
      "--model",
      "--device",
      "--seed",
      "--steps",
      "--out",
      "--resume",
      "--reward",
      "--help",
    ]
  ) {
    assert.ok(text.includes(flag), flag);
  }
  for (const name of listRecipes()) assert.match(text, new RegExp(`\\n  ${name} +\\S`), name);
  assert.match(text, /\n {2}gspo +GSPO: Group Sequence Policy Optimization\./);
  assert.match(usage("/nonexistent"), /Recipes:\n$/);
});

Deno.test("parseCli / usage: --data <file> is a LoadOptions shortcut, listed in --help", () => {
  assert.deepEqual(
    parseCli(["--data", "gsm8k.parquet", "--set", "task.data.promptField=question"]),
    {
      kind: "run",
      options: { data: "gsm8k.parquet", set: ["task.data.promptField=question"] },
    },
  );
  assert.throws(() => parseCli(["--data"]), /Option '--data <value>' argument missing/);
  assert.match(
    usage(),
    /\n {2}--data <file> +task\.data\.path: train on a \.jsonl, \.ndjson or \.parquet/,
  );
});

Deno.test("parseCli: bare key=value arguments are --set overrides, in command-line order", () => {
  assert.deepEqual(
    parseCli([
      "algorithm.estimator=rloo",
      "--set",
      "trainer.steps=4",
      "trainer.steps=5",
      "--config",
      "dapo",
      "--set=a.b=1",
      "--",
      "c.d=x=y",
    ]),
    {
      kind: "run",
      options: {
        config: "dapo",
        set: ["algorithm.estimator=rloo", "trainer.steps=4", "trainer.steps=5", "a.b=1", "c.d=x=y"],
      },
    },
  );
  // Without `=` a bare argument is an error naming it, not a silently ignored word.
  assert.throws(
    () => parseCli(["trainer.steps=5", "dapo"]),
    (e: unknown) =>
      e instanceof CliError &&
      e.message ===
        'train: unexpected argument "dapo": overrides are key=value (e.g. trainer.steps=5) and a recipe is --config <name>; run with --help for the options',
  );
  // The key is checked by the config loader, like a --set key.
  assert.deepEqual(parseCli(["1a=2"]), { kind: "run", options: { set: ["1a=2"] } });
});

Deno.test("parseCli / usage: --reward is repeatable and listed in --help with bare overrides", () => {
  assert.deepEqual(parseCli(["--reward", "./r.ts", "--reward=./s.ts#brevity"]), {
    kind: "run",
    options: { reward: ["./r.ts", "./s.ts#brevity"] },
  });
  assert.throws(() => parseCli(["--reward"]), /Option '--reward <value>' argument missing/);
  const text = usage();
  assert.match(text, /deno task train \[--config <recipe>\] \[key=value \.\.\.\]/);
  assert.match(text, /\n {2}--reward <file\[#fn\]> +add \{ path: file#fn, weight: 1 \}/);
  assert.match(text, /veRL and TRL names are\n/);
});
