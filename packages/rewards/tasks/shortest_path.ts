/**
 * Graph shortest path: the length of the shortest path between two nodes of a small weighted,
 * undirected graph.
 *
 * Design: a row draws `nodes` nodes (named A, B, C …), adds each possible edge with probability
 * `density` and a weight in [1, maxWeight], and picks a source and a target that are connected
 * but not adjacent (so the answer takes at least two hops); Dijkstra gives the distance. The
 * verifier parses the answer as a number and compares it with a fresh Dijkstra run on the row's
 * edges. Difficulty is the number of nodes plus the number of edges on a shortest path.
 *
 * @module
 */

import { checkName, checkNumber, checkOptions } from "../_check.ts";
import { draw, type Knob, knob } from "./_knob.ts";
import { fraction, fractionEquals, parseFraction } from "./expr.ts";
import { defineTask, type Task, type TaskRow } from "./task.ts";

/** An undirected weighted edge `[from, to, weight]`. */
export type Edge = [string, string, number];

/** A row of {@link shortestPathTask}. */
export interface ShortestPathRow extends TaskRow {
  /** Node names. */
  nodes: string[];
  /** Undirected weighted edges. */
  edges: Edge[];
  /** Start node. */
  source: string;
  /** End node. */
  target: string;
}

/** Knobs of {@link shortestPathTask}. */
export interface ShortestPathOptions {
  /** Nodes, 3–26 (default 6); a range is drawn per row. */
  nodes?: Knob;
  /** Probability of each possible edge, in (0, 1] (default 0.4). */
  density?: number;
  /** Largest edge weight (integer 1–1000; default 9). */
  maxWeight?: number;
  /** Task name (default `"shortest_path"`). */
  name?: string;
}

/**
 * Shortest distances from `source` over undirected weighted edges (Dijkstra; `Infinity` for
 * unreachable nodes).
 *
 * @example Usage
 * ```ts
 * import { shortestDistances } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const d = shortestDistances([["A", "B", 5], ["A", "C", 1], ["C", "B", 2]], "A");
 * assert.equal(d.get("B"), 3);
 * ```
 */
export function shortestDistances(edges: readonly Edge[], source: string): Map<string, number> {
  const adj = new Map<string, [string, number][]>();
  for (const [a, b, w] of edges) {
    if (!adj.has(a)) adj.set(a, []);
    if (!adj.has(b)) adj.set(b, []);
    adj.get(a)!.push([b, w]);
    adj.get(b)!.push([a, w]);
  }
  const dist = new Map<string, number>([[source, 0]]);
  const done = new Set<string>();
  for (;;) {
    let u: string | null = null;
    for (const [node, d] of dist) {
      if (!done.has(node) && (u === null || d < dist.get(u)!)) u = node;
    }
    if (u === null) break;
    done.add(u);
    for (const [v, w] of adj.get(u) ?? []) {
      const nd = dist.get(u)! + w;
      if (nd < (dist.get(v) ?? Infinity)) dist.set(v, nd);
    }
  }
  for (const node of adj.keys()) if (!dist.has(node)) dist.set(node, Infinity);
  return dist;
}

/** Fewest edges on any shortest path from `source` to `target`. */
function hops(edges: readonly Edge[], source: string, target: string): number {
  const dist = shortestDistances(edges, source);
  // BFS over the shortest-path DAG.
  const level = new Map<string, number>([[source, 0]]);
  const queue = [source];
  while (queue.length > 0) {
    const u = queue.shift()!;
    for (const [a, b, w] of edges) {
      for (const [x, y] of [[a, b], [b, a]] as const) {
        if (x === u && !level.has(y) && dist.get(u)! + w === dist.get(y)) {
          level.set(y, level.get(u)! + 1);
          queue.push(y);
        }
      }
    }
  }
  return level.get(target) ?? 0;
}

/**
 * The shortest-path task (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { shortestPathTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = shortestPathTask({ nodes: 5 });
 * const row = task.row(2, 0);
 * assert.ok(task.verify(row, row.answer));
 * assert.ok(!task.verify(row, String(Number(row.answer) + 1)));
 * ```
 */
export function shortestPathTask(options?: ShortestPathOptions): Task<ShortestPathRow> {
  const owner = "shortestPathTask";
  const opts = checkOptions<ShortestPathOptions>(
    owner,
    options,
    "{nodes?, density?, maxWeight?, name?}",
  );
  const nodeRange = knob(owner, "options.nodes", opts.nodes, 6, 3, 26);
  const density = checkNumber(owner, "options.density", opts.density ?? 0.4, {
    min: 0,
    minExclusive: true,
    max: 1,
  });
  const maxWeight = checkNumber(owner, "options.maxWeight", opts.maxWeight ?? 9, {
    min: 1,
    max: 1000,
    integer: true,
  });
  const name = checkName(owner, "options.name", opts.name ?? "shortest_path");
  return defineTask<ShortestPathRow>({
    name,
    generate(rng) {
      for (let attempt = 0; attempt < 1000; attempt++) {
        const n = draw(rng, nodeRange);
        const nodes = Array.from({ length: n }, (_, i) => String.fromCharCode(65 + i));
        const edges: Edge[] = [];
        for (let i = 0; i < n; i++) {
          for (let j = i + 1; j < n; j++) {
            if (rng.chance(density)) edges.push([nodes[i]!, nodes[j]!, rng.int(1, maxWeight)]);
          }
        }
        const source = rng.pick(nodes);
        const target = rng.pick(nodes.filter((x) => x !== source));
        const adjacent = edges.some(([a, b]) =>
          (a === source && b === target) || (a === target && b === source)
        );
        const d = shortestDistances(edges, source).get(target) ?? Infinity;
        if (adjacent || !Number.isFinite(d)) continue;
        const list = edges.map(([a, b, w]) => `${a}-${b} (${w})`).join(", ");
        return {
          nodes,
          edges,
          source,
          target,
          prompt: `An undirected graph has nodes ${nodes.join(", ")} and these weighted edges: ` +
            `${list}. What is the total weight of the shortest path from ${source} to ${target}? ` +
            `Give the number inside <answer></answer>.`,
          answer: String(d),
          difficulty: n + hops(edges, source, target),
        };
      }
      throw new RangeError(
        `${owner}: no connected, non-adjacent source/target pair found in 1000 graphs; raise options.nodes or change options.density`,
      );
    },
    key: (row) =>
      `${row.nodes.length}|${
        row.edges.map(([a, b, w]) => `${a}${b}${w}`).join(",")
      }|${row.source}->${row.target}`,
    verify(row, answer) {
      const got = parseFraction(answer);
      const d = shortestDistances(row.edges, row.source).get(row.target);
      return got !== null && d !== undefined && Number.isFinite(d) &&
        fractionEquals(got, fraction(BigInt(d)));
    },
  });
}
