/**
 * Test helper (private): runs a TypeScript snippet in a child Deno with some environment
 * variables set, so a test of what a module reads from the environment does not change the
 * test process's own: under `deno test --parallel` the test files are workers of one process,
 * and a variable set by one file (`RLVR_CPU_KERNELS=gpu`, `RLVR_DEVICE=gpu`) would reach
 * backends that other files create at that moment.
 *
 * @module
 */

import assert from "node:assert/strict";

/**
 * Runs `code` (an ES module; import by absolute URL, e.g. `new URL("./x.ts", import.meta.url)`)
 * with `env` added to the environment, and fails the calling test with the child's output when
 * the child does not exit with 0.
 */
export async function runWithEnv(code: string, env: Record<string, string>): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", code],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  assert.equal(
    out.code,
    0,
    `child with ${JSON.stringify(env)} failed:\n${text(out.stdout)}\n${text(out.stderr)}`,
  );
}
