import assert from "node:assert/strict";
import { SafetensorsError } from "./safetensors.ts";
import { parseSafetensorsIndex } from "./safetensors_index.ts";

Deno.test("parseSafetensorsIndex: text and bytes parse alike; dir is the path up to its last separator", () => {
  const text = JSON.stringify({
    metadata: { total_size: 12 },
    weight_map: { b: "two.safetensors", a: "one.safetensors", c: "two.safetensors" },
  });
  const fromText = parseSafetensorsIndex(text, "ckpt/model.safetensors.index.json");
  const fromBytes = parseSafetensorsIndex(
    new TextEncoder().encode(text),
    "ckpt/model.safetensors.index.json",
  );
  assert.deepEqual(fromBytes, fromText);
  assert.deepEqual(fromText.shards, ["two.safetensors", "one.safetensors"]);
  assert.equal(fromText.dir, "ckpt/");
  assert.equal(parseSafetensorsIndex(text, "https://x.test/m/i.json").dir, "https://x.test/m/");
  assert.equal(parseSafetensorsIndex(text, "i.json").dir, "");
});

Deno.test("parseSafetensorsIndex: malformed indexes are SafetensorsErrors naming the index and the fix", () => {
  const bad: [string, RegExp][] = [
    ["nope", /\(i\.json\): index is not valid JSON/],
    ["[]", /index must be a JSON object/],
    ['{"metadata": 1, "weight_map": {}}', /index "metadata" must be an object/],
    ['{"weight_map": {"a": ""}}', /weight_map value must be a shard file name/],
    ['{"weight_map": {"a": "../x.safetensors"}}', /must be a relative path inside the index's/],
    ['{"weight_map": {"a": "/x.safetensors"}}', /must be a relative path inside the index's/],
  ];
  for (const [text, message] of bad) {
    assert.throws(
      () => parseSafetensorsIndex(text, "i.json"),
      (e: unknown) => e instanceof SafetensorsError && message.test(e.message),
      text,
    );
  }
});
