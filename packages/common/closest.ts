/**
 * Did-you-mean for names: the edit distance of two words and the closest of several candidates,
 * shared by the registries' "unknown key" errors and the config's unknown-key messages.
 *
 * @module
 */

/**
 * Edit distance with insertions, deletions, substitutions and transpositions of adjacent
 * characters (optimal string alignment): `grpo` is one edit from `gpro`.
 *
 * @example Usage
 * ```ts
 * import { editDistance } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * assert.equal(editDistance("grpx", "grpo"), 1);
 * assert.equal(editDistance("stpes", "steps"), 1);
 * assert.equal(editDistance("", "abc"), 3);
 * ```
 */
export function editDistance(a: string, b: string): number {
  // d[i][j]: distance between a[0, i) and b[0, j); rows i-2, i-1 and i are kept.
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, prev2[j - 2]! + 1);
      }
      cur.push(d);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The candidate closest to `word` (case-insensitive; ties: the earliest) when it is close enough
 * to be a likely typo (distance at most a third of the word's length, and at least 1), else
 * undefined.
 *
 * @example Usage
 * ```ts
 * import { closest } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * assert.equal(closest("grpx", ["grpo", "rloo", "gae"]), "grpo");
 * assert.equal(closest("zzzz", ["grpo", "rloo"]), undefined);
 * ```
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = word.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}
