/**
 * Test helpers of the playground (private): the Chromium a browser test runs, or a skip.
 *
 * @module
 */

import { findChromium } from "./browser.ts";

/**
 * The Chromium executable for a browser test, or null when the test should be skipped (a
 * warning saying so is printed). Under `CI=true` a missing Chromium fails instead: `.ci/run`
 * installs it, so CI cannot lose the browser coverage silently.
 *
 * @param what Names the test in the skip warning.
 * @returns The executable, or null.
 */
export async function chromiumOrSkip(what: string): Promise<string | null> {
  const chromium = await findChromium();
  if (chromium !== null) return chromium;
  if (Deno.env.get("CI") === "true") {
    throw new Error(
      `${what}: chromium not found but CI=true: .ci/run installs it with apt-get ` +
        `(apt-get install chromium; set CHROMIUM_BIN to use another binary)`,
    );
  }
  const env = Deno.env.get("CHROMIUM_BIN");
  const looked = env ? `CHROMIUM_BIN=${env} does not run` : "no chromium on PATH";
  console.warn(`skipping ${what}: ${looked} (apt-get install chromium, or set CHROMIUM_BIN)`);
  return null;
}

/**
 * Where a test saves artifacts: `$RLVR_ARTIFACTS/playground` when set, else a new temporary
 * directory (kept after the test, so the path printed stays valid).
 *
 * @returns An existing directory.
 */
export async function artifactDir(): Promise<string> {
  const base = Deno.env.get("RLVR_ARTIFACTS");
  if (base !== undefined && base !== "") {
    const dir = `${base}/playground`;
    await Deno.mkdir(dir, { recursive: true });
    return dir;
  }
  return await Deno.makeTempDir({ prefix: "rlvr-playground-artifacts-" });
}

/** The files of the shipped `builtin:tiny` checkpoint (apps/train/checkpoints/tiny/), by name. */
export async function tinyCheckpointFiles(): Promise<Map<string, Uint8Array>> {
  const dir = new URL("../train/checkpoints/tiny/", import.meta.url);
  const names = [
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
  ];
  const files = new Map<string, Uint8Array>();
  for (const name of names) files.set(name, await Deno.readFile(new URL(name, dir)));
  return files;
}
