import assert from "node:assert/strict";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { f64, t } from "./_test_utils.ts";

Deno.test("readMetrics reads every scalar, disposeMetrics releases them", async () => {
  const before = f64.memory().liveBuffers;
  const metrics = { a: t(1.25), b: t([[2]]) };
  assert.deepEqual(await readMetrics(metrics), { a: 1.25, b: 2 });
  assert.equal(metrics.a.isDisposed, false);
  assert.deepEqual(await readMetrics(metrics, { dispose: true }), { a: 1.25, b: 2 });
  assert.equal(f64.memory().liveBuffers, before);
  disposeMetrics({ c: t(3) });
  assert.equal(f64.memory().liveBuffers, before);
  await assert.rejects(
    readMetrics({ v: t([1, 2]) }),
    /item: tensor of shape \[2\] has 2 elements, not 1/,
  );
});
