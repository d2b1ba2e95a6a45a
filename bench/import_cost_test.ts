import assert from "node:assert/strict";
import { benchImports, markdownTable } from "./import_cost.ts";

Deno.test("bench/import_cost: an entry point without npm packages, by URL, in an empty DENO_DIR", async () => {
  // @rlvr/rewards/core reaches no npm package, so this needs no network: only the loopback server.
  const runs = await benchImports({ runs: 2, specs: ["@rlvr/rewards/core"], workspace: [] });
  assert.equal(runs.length, 2);
  for (const r of runs) {
    assert.deepEqual([r.setting, r.spec, r.npm], ["url", "@rlvr/rewards/core", []]);
    assert.ok(r.wallMs > 0 && r.importMs > 0 && r.importMs < r.wallMs, JSON.stringify(r));
    assert.ok(r.denoDirBytes > 0, "the remote modules were cached in the child's DENO_DIR");
  }
  assert.match(
    markdownTable(runs),
    /\| by URL +\| `@rlvr\/rewards\/core` \| [\d.]+ s \([\d.]+, [\d.]+\) +\|/,
  );
});
