/**
 * Internal helpers of the code verifier.
 *
 * @module
 */

/** Shortens a diagnostic to at most `max` characters (keeping its end, where errors are). */
export function clip(text: string, max = 4000): string {
  return text.length <= max ? text : `...${text.slice(text.length - max)}`;
}

/** Whether stderr reads like the V8 heap limit was hit. */
export function looksOutOfMemory(stderr: string): boolean {
  return /out of memory|heap limit|Allocation failed|OOM/i.test(stderr);
}
