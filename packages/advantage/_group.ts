/**
 * The unchecked cores of `group.ts` (inputs already validated), shared by the group-relative
 * estimators and the registry.
 *
 * @module
 */

import { checkNumber } from "./_validate.ts";
import type { Group, GroupStats } from "./group.ts";
import type { GroupIndex } from "./types.ts";

/** `groupMembers` on an already-checked index. */
export function groupsOf(index: GroupIndex): Group[] {
  const byKey = new Map<string | number, Group>();
  for (let i = 0; i < index.length; i++) {
    const key = index[i]!;
    let g = byKey.get(key);
    if (!g) byKey.set(key, g = { key, members: [] });
    g.members.push(i);
  }
  return [...byKey.values()];
}

/** `groupStatistics` on already-checked inputs. */
export function statsOf(rewards: ArrayLike<number>, index: GroupIndex): GroupStats[] {
  return groupsOf(index).map((g) => {
    const n = g.members.length;
    // Shifted by the first member, so a group of identical rewards has exactly that mean
    // (and a centred sum of exactly 0): equal rewards give an advantage of exactly 0.
    const shift = rewards[g.members[0]!]!;
    let sum = 0;
    for (const i of g.members) sum += rewards[i]! - shift;
    const mean = shift + sum / n;
    let ss = 0;
    for (const i of g.members) {
      const d = rewards[i]! - mean;
      ss += d * d;
    }
    return { ...g, count: n, mean, std: n > 1 ? Math.sqrt(ss / (n - 1)) : 0 };
  });
}

/** `fixedGroupIndex` with the caller's name in its errors. */
export function fixedIndex(owner: string, batch: number, groupSize: number): number[] {
  checkNumber(owner, "batch", batch, { min: 0, integer: true });
  checkNumber(owner, "groupSize", groupSize, { min: 1, integer: true });
  if (batch % groupSize !== 0) {
    throw new RangeError(
      `${owner}: batch ${batch} is not divisible by groupSize ${groupSize}; fixed-size groups must tile the batch ` +
        `(pass an index of group ids for ragged groups)`,
    );
  }
  return Array.from({ length: batch }, (_, i) => Math.floor(i / groupSize));
}
