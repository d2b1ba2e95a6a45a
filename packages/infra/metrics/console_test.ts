import assert from "node:assert/strict";
import { ConsoleSink, formatMetric } from "./console.ts";

Deno.test("ConsoleSink: one line per record, key order, 4 significant digits", async () => {
  const lines: string[] = [];
  const sink = new ConsoleSink({ print: (l) => lines.push(l) });
  await sink.write({ step: 10, "reward/mean": 0.666666, ok: true, lr: 1e-6, gone: null });
  await sink.write({ loss: -Infinity });
  assert.deepEqual(lines, [
    "step=10 reward/mean=0.6667 ok=true lr=0.000001 gone=-",
    "loss=-Infinity",
  ]);
  await sink.close();
  await assert.rejects(sink.write({ a: 1 }), /ConsoleSink.write: the sink is closed/);
});

Deno.test("ConsoleSink: keys option selects and orders; bad values are refused", async () => {
  const lines: string[] = [];
  const sink = new ConsoleSink({ print: (l) => lines.push(l), keys: ["loss", "step", "absent"] });
  await sink.write({ step: 1, loss: 2, other: 3 });
  assert.deepEqual(lines, ["loss=2 step=1"]);
  await assert.rejects(
    sink.write({ h: [1, 2] as unknown as number }),
    /metric "h" is object; values must be numbers, strings, booleans or null/,
  );
  assert.throws(() => new ConsoleSink({ digits: 0 }), /digits must be an integer in \[1, 21\]/);
});

Deno.test("formatMetric: digits", () => {
  assert.equal(formatMetric(Math.PI, 2), "3.1");
  assert.equal(formatMetric(123456.789), "123500");
  assert.equal(formatMetric("x"), "x");
});
