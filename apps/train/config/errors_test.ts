import assert from "node:assert/strict";
import { ConfigError, formatProblem, problemSource, showValue, sourceOf } from "./errors.ts";

Deno.test("sourceOf: own entry, then nearest parent, then a child, then nothing", () => {
  const p = new Map([
    ["algorithm", "defaults"],
    ["algorithm.clip.high", "recipe dapo.yaml"],
    ["trainer.steps", "--steps 5"],
  ]);
  assert.equal(sourceOf(p, "algorithm.clip.high"), "recipe dapo.yaml");
  assert.equal(sourceOf(p, "algorithm.clip.low"), "defaults"); // parent algorithm
  assert.equal(sourceOf(p, "trainer"), "--steps 5"); // only known through its child
  assert.equal(sourceOf(p, "model.lora"), undefined);
});

Deno.test("formatProblem / ConfigError: one line per problem, source in parentheses", () => {
  const e = new ConfigError([
    { path: "a.b", message: "1 is not allowed; use 2", source: "--set a.b=1" },
    { path: "", message: "x.yaml is not valid YAML" },
  ]);
  assert.equal(
    e.message,
    "config: a.b: 1 is not allowed; use 2 (from --set a.b=1)\nconfig: x.yaml is not valid YAML",
  );
  assert.equal(e.name, "ConfigError");
  assert.equal(formatProblem(e.problems[1]!), "config: x.yaml is not valid YAML");
});

Deno.test("showValue: JSON for data, plain numbers, long values cut", () => {
  assert.equal(showValue(null), "null");
  assert.equal(showValue([0.9]), "[0.9]");
  assert.equal(showValue(NaN), "NaN");
  const long = showValue("x".repeat(200));
  assert.equal(long.length, 80);
  assert.ok(long.endsWith("..."));
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(showValue(cyclic), "[object Object]");
});

Deno.test("sourceOf: a list item's key falls back to the list's layer", () => {
  const p = new Map([["rewards", "--set rewards=[{type: math, weight: x}]"]]);
  assert.equal(sourceOf(p, "rewards[0].weight"), "--set rewards=[{type: math, weight: x}]");
  assert.equal(sourceOf(p, "rewards[1]"), "--set rewards=[{type: math, weight: x}]");
});

Deno.test("problemSource: a rule's other keys add their layers when those differ", () => {
  const p = new Map([
    ["rollout", "defaults"],
    ["rollout.groupSize", "recipe grpo.yaml"],
    ["rollout.batchSize", "--set rollout.batchSize=12"],
  ]);
  assert.equal(
    problemSource(p, "rollout.groupSize", ["rollout.batchSize"]),
    "recipe grpo.yaml; rollout.batchSize from --set rollout.batchSize=12",
  );
  // the same layer is named once
  p.set("rollout.batchSize", "recipe grpo.yaml");
  assert.equal(problemSource(p, "rollout.groupSize", ["rollout.batchSize"]), "recipe grpo.yaml");
  assert.equal(problemSource(new Map(), "x", ["y"]), undefined);
});
