/**
 * Whether `navigator.gpu` finds an adapter, asked in a child process: a `deno test` process that
 * has requested a lavapipe adapter aborts at exit now and then (heap corruption in a thread's
 * exit; see bench/RESULTS.md), and the bench tests otherwise never touch WebGPU themselves.
 *
 * @module
 */

/**
 * Asks a child Deno whether an adapter exists.
 *
 * @returns True when `navigator.gpu.requestAdapter()` gave one.
 *
 * @example Usage
 * ```ts
 * import { hasWebGpuAdapter } from "./_adapter.ts";
 * console.log(await hasWebGpuAdapter());
 * ```
 */
export async function hasWebGpuAdapter(): Promise<boolean> {
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "console.log((await navigator.gpu?.requestAdapter()) ? 'yes' : 'no')"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(stdout).trim() === "yes";
}
