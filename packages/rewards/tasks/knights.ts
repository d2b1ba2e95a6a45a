/**
 * Knights and Knaves (the Logic-RL task): knights always tell the truth, knaves always lie;
 * from what each inhabitant says, tell who is which.
 *
 * Design: a row draws a hidden assignment, then one statement per inhabitant that is true for
 * a knight and false for a knave under it (so the assignment is consistent), and keeps the row
 * only when a brute-force solver over all `2^n` assignments finds exactly one solution.
 * Statements are about other inhabitants: "X is a knight/knave", "X is a knight and/or Y is a
 * knave", and "X and I are the same kind / different kinds"; `compound` is the probability of
 * a two-part statement. The verifier reads a free-form answer ("Alice is a knight, Bob and Eve
 * are knaves"): each `knight(s)`/`knave(s)` applies to the names mentioned since the previous
 * such word; every inhabitant must be named, none twice with different kinds, and the result
 * must equal the unique solution. Difficulty is the number of inhabitants plus half the number
 * of two-part statements.
 *
 * @module
 */

import { checkName, checkNumber, checkOptions } from "../_check.ts";
import { draw, type Knob, knob } from "./_knob.ts";
import type { Rng } from "./rng.ts";
import { defineTask, type Task, type TaskRow } from "./task.ts";

/** A row of {@link knightsKnavesTask}. */
export interface KnightsRow extends TaskRow {
  /** The inhabitants, in order. */
  names: string[];
  /** What each inhabitant says, in order (without quotes). */
  statements: string[];
  /** The unique solution: `true` for a knight, per inhabitant. */
  knights: boolean[];
}

/** Knobs of {@link knightsKnavesTask}. */
export interface KnightsOptions {
  /** Inhabitants, 2–8 (default 3); a range is drawn per row. */
  people?: Knob;
  /** Probability that a statement has two parts (in [0, 1]; default 0.5). */
  compound?: number;
  /** Task name (default `"knights_knaves"`). */
  name?: string;
}

const NAMES = [
  "Alice",
  "Bob",
  "Carol",
  "Dave",
  "Eve",
  "Frank",
  "Grace",
  "Heidi",
  "Ivan",
  "Judy",
  "Mallory",
  "Oscar",
  "Peggy",
  "Rupert",
  "Sybil",
  "Trent",
  "Victor",
  "Walter",
];

type Statement =
  | { kind: "is"; who: number; knight: boolean }
  | { kind: "and" | "or"; a: Statement; b: Statement }
  | { kind: "same" | "differ"; who: number };

function truth(s: Statement, speaker: number, world: readonly boolean[]): boolean {
  switch (s.kind) {
    case "is":
      return world[s.who] === s.knight;
    case "and":
      return truth(s.a, speaker, world) && truth(s.b, speaker, world);
    case "or":
      return truth(s.a, speaker, world) || truth(s.b, speaker, world);
    case "same":
      return world[s.who] === world[speaker];
    case "differ":
      return world[s.who] !== world[speaker];
  }
}

function render(s: Statement, names: readonly string[]): string {
  switch (s.kind) {
    case "is":
      return `${names[s.who]} is a ${s.knight ? "knight" : "knave"}`;
    case "and":
    case "or":
      return `${render(s.a, names)} ${s.kind} ${render(s.b, names)}`;
    case "same":
      return `${names[s.who]} and I are the same kind`;
    case "differ":
      return `${names[s.who]} and I are different kinds`;
  }
}

function other(rng: Rng, n: number, self: number): number {
  const k = rng.int(0, n - 2);
  return k >= self ? k + 1 : k;
}

function atom(rng: Rng, n: number, self: number): Statement {
  return { kind: "is", who: other(rng, n, self), knight: rng.chance(0.5) };
}

function statement(rng: Rng, n: number, self: number, compound: number): Statement {
  if (rng.chance(compound)) {
    if (rng.chance(0.25)) {
      return { kind: rng.chance(0.5) ? "same" : "differ", who: other(rng, n, self) };
    }
    return { kind: rng.chance(0.5) ? "and" : "or", a: atom(rng, n, self), b: atom(rng, n, self) };
  }
  return atom(rng, n, self);
}

/** All assignments under which every statement is true exactly for the knights. */
function solve(statements: readonly Statement[]): boolean[][] {
  const n = statements.length;
  const out: boolean[][] = [];
  for (let mask = 0; mask < 1 << n; mask++) {
    const world = Array.from({ length: n }, (_, i) => ((mask >> i) & 1) === 1);
    if (statements.every((s, i) => truth(s, i, world) === world[i])) out.push(world);
  }
  return out;
}

/**
 * Reads who is a knight from a free-form answer (see the module doc); `null` when some name is
 * missing or given both kinds.
 *
 * @example Usage
 * ```ts
 * import { parseKnightsAnswer } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const names = ["Alice", "Bob", "Eve"];
 * assert.deepEqual(
 *   parseKnightsAnswer("Alice is a knight, Bob and Eve are knaves.", names),
 *   [true, false, false],
 * );
 * assert.equal(parseKnightsAnswer("Alice is a knight", names), null);
 * ```
 */
export function parseKnightsAnswer(answer: string, names: readonly string[]): boolean[] | null {
  const lower = names.map((n) => n.toLowerCase());
  const result: (boolean | undefined)[] = names.map(() => undefined);
  let pending: number[] = [];
  for (const word of String(answer).toLowerCase().match(/[a-z]+/g) ?? []) {
    const who = lower.indexOf(word);
    if (who >= 0) {
      pending.push(who);
      continue;
    }
    const kind = /^knights?$/.test(word) ? true : /^knaves?$/.test(word) ? false : undefined;
    if (kind === undefined) continue;
    for (const p of pending) {
      if (result[p] !== undefined && result[p] !== kind) return null;
      result[p] = kind;
    }
    pending = [];
  }
  return result.every((r) => r !== undefined) ? (result as boolean[]) : null;
}

/**
 * The Knights-and-Knaves task (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { knightsKnavesTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = knightsKnavesTask({ people: 3 });
 * const row = task.row(0, 0);
 * assert.equal(row.statements.length, 3);
 * assert.ok(task.verify(row, row.answer));
 * const flipped = row.names.map((n, i) => `${n} is a ${row.knights[i] ? "knave" : "knight"}`);
 * assert.ok(!task.verify(row, flipped.join(", ")));
 * ```
 */
export function knightsKnavesTask(options?: KnightsOptions): Task<KnightsRow> {
  const owner = "knightsKnavesTask";
  const opts = checkOptions<KnightsOptions>(owner, options, "{people?, compound?, name?}");
  const people = knob(owner, "options.people", opts.people, 3, 2, 8);
  const compound = checkNumber(owner, "options.compound", opts.compound ?? 0.5, { min: 0, max: 1 });
  const name = checkName(owner, "options.name", opts.name ?? "knights_knaves");
  return defineTask<KnightsRow>({
    name,
    generate(rng) {
      for (let attempt = 0; attempt < 10_000; attempt++) {
        const n = draw(rng, people);
        const names = rng.shuffle(NAMES).slice(0, n);
        const world = Array.from({ length: n }, () => rng.chance(0.5));
        const statements = world.map((isKnight, i) => {
          for (;;) {
            const s = statement(rng, n, i, compound);
            if (truth(s, i, world) === isKnight) return s;
          }
        });
        const solutions = solve(statements);
        if (solutions.length !== 1) continue;
        const text = statements.map((s) => render(s, names));
        const lines = names.map((who, i) => `${who} says: "${text[i]}."`).join("\n");
        return {
          names,
          statements: text,
          knights: world,
          prompt: `On an island, knights always tell the truth and knaves always lie. ` +
            `You meet ${n} inhabitants: ${names.join(", ")}.\n${lines}\n` +
            `Who is a knight and who is a knave? Answer inside <answer></answer> in the form ` +
            `"${names[0]} is a knight, ${names[1]} is a knave, ...".`,
          answer: names.map((who, i) => `${who} is a ${world[i] ? "knight" : "knave"}`).join(", "),
          difficulty: n + statements.filter((s) => s.kind !== "is").length / 2,
        };
      }
      throw new RangeError(
        `${owner}: found no puzzle with a unique solution in 10000 draws (people ${
          people.join("–")
        }, compound ${compound}); raise options.compound (two inhabitants need compound > 0)`,
      );
    },
    key: (row) => row.names.map((who, i) => `${who}: ${row.statements[i]}`).join(" | "),
    verify(row, answer) {
      const got = parseKnightsAnswer(answer, row.names);
      return got !== null && got.every((k, i) => k === row.knights[i]);
    },
  });
}
