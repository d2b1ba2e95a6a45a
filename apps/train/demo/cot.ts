/**
 * Step-by-step traces for the chain-of-thought warm start (`deno task pretrain:cot`): for a row
 * of multi-operand addition, Countdown or Knights and Knaves, a completion
 * `<think>…</think><answer>…</answer>` that works the problem out the way a small char-level
 * model can follow, plus the compact prompts these rows are shown with.
 *
 * Design decisions:
 * - **Every step is local.** A char-level model of about a million parameters cannot add 3-digit
 *   numbers in one token, but it can add two digits and a carry. The trace adds the first two
 *   terms as column sums right to left, each with the carry from the one before (`12,13`: 7+5 =
 *   12, then 4+8+1 = 13), then rewrites the expression with their sum in front (the prompt
 *   `47+85+23=` gets `12,13=132+23:5,5,1=155`): the next step's operands are always the nearest
 *   ones.
 *   (Adding onto a running total and picking the next operand out of the prompt was the first
 *   design; its model mostly failed by picking the wrong operand.)
 * - **Mistakes, repaired or not.** With probability `errorRate` an addition is first worked with
 *   one column off by one, its (wrong) rewrite followed by `?`, then worked again correctly
 *   (`12,12=122+23?12,13=132+23`): SFT shows a recovery to imitate. With probability
 *   `slipRate` the wrong column stays and the chain goes on from the wrong total: a noisy
 *   teacher, so the warm start slips too, and RL has a mistake to unlearn.
 * - **Search written out.** A Countdown trace tries left-to-right chains over the numbers, the
 *   failed ones ending in `x` (0 to 2 of them, random chains that miss the target), then a chain
 *   that hits it; the answer is that chain as one expression with the parentheses it needs. A
 *   Knights and Knaves trace walks the assignments in order (`+` knight, `-` knave), writes the
 *   truth value of each statement under it, and stops at the first assignment where every
 *   statement is true exactly for the knights (`ok`), the others marked `x`.
 * - **The answers are what the task verifiers read**: the sum, a Countdown expression, and
 *   `Alice knight,Bob knave`, so the format reward and the verifiers apply unchanged.
 *
 * @module
 */

import {
  arithmeticTask,
  countdownTask,
  knightsKnavesTask,
  type Rng,
  type Task,
  type TaskRow,
} from "@rlvr/rewards";

/** Tasks with traces: the row's `task` names one of these. */
export type CotTaskName = "arithmetic" | "countdown" | "knights_knaves";

/** Options of {@link cotCompletion}. */
export interface CotOptions {
  /** Probability that an addition is first worked wrongly and then repaired (default 0.1). */
  errorRate?: number;
  /**
   * Probability that an addition slips: one column off by one and not repaired, so the chain
   * goes on from a wrong total and the answer is wrong (default 0.15). The teacher is noisy on
   * purpose: SFT learns to slip at about this rate, and RL has a mistake to unlearn.
   */
  slipRate?: number;
  /** Most failed Countdown chains before the one that works (default 2). */
  maxFailedChains?: number;
}

/**
 * The column sums of `x + y`, right to left, each including the carry in.
 *
 * @example Usage
 * ```ts
 * import { columnSums } from "./cot.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(columnSums(47n, 85n), [12, 13]);
 * assert.deepEqual(columnSums(132n, 23n), [5, 5, 1]);
 * ```
 */
export function columnSums(x: bigint, y: bigint): number[] {
  const a = String(x).split("").reverse().map(Number);
  const b = String(y).split("").reverse().map(Number);
  const out: number[] = [];
  let carry = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const s = (a[i] ?? 0) + (b[i] ?? 0) + carry;
    out.push(s);
    carry = Math.floor(s / 10);
  }
  return out;
}

/** The number the column sums spell: each column's last digit, and the last carry in front. */
function fromColumns(cols: readonly number[]): bigint {
  let digits = cols.map((s) => String(s % 10)).reverse().join("");
  const carry = Math.floor(cols[cols.length - 1]! / 10);
  if (carry > 0) digits = String(carry) + digits;
  return BigInt(digits);
}

/** Column sums `cols` with one of them off by one (never below 0 or above 19). */
function offByOne(cols: readonly number[], rng: Rng): number[] {
  const j = rng.int(0, cols.length - 1);
  const wrong = cols.slice();
  wrong[j] = wrong[j]! === 0 || (wrong[j]! < 19 && rng.chance(0.5)) ? wrong[j]! + 1 : wrong[j]! - 1;
  return wrong;
}

function arithmeticTrace(
  row: TaskRow,
  rng: Rng,
  errorRate: number,
  slipRate: number,
): string | null {
  const expression = row.expression;
  if (typeof expression !== "string" || !/^\d+( \+ \d+)+$/.test(expression)) return null;
  let terms = expression.split(" + ").map((t) => BigInt(t));
  // Each step adds the first two terms of the expression written just before it and rewrites
  // the expression with their sum in front, so the operands of the next step are always the
  // nearest ones: a small model need not count its way back into the prompt. The first step's
  // expression is the prompt itself, just before the trace, so it is not copied.
  let text = "";
  while (terms.length > 1) {
    const [x, y] = [terms[0]!, terms[1]!];
    const rest = terms.slice(2);
    const cols = columnSums(x, y);
    const rewrite = (sum: bigint) => [sum, ...rest].join("+");
    if (text !== "") text += ":";
    if (rng.chance(slipRate)) {
      const wrong = offByOne(cols, rng);
      const sum = fromColumns(wrong);
      text += `${wrong.join(",")}=${rewrite(sum)}`;
      terms = [sum, ...rest];
      continue;
    }
    if (rng.chance(errorRate)) {
      const wrong = offByOne(cols, rng);
      text += `${wrong.join(",")}=${rewrite(fromColumns(wrong))}?`;
    }
    text += `${cols.join(",")}=${rewrite(x + y)}`;
    terms = [x + y, ...rest];
  }
  return `<think>${text}</think><answer>${terms[0]}</answer>`;
}

type ChainOp = "+" | "-" | "*" | "/";
interface Chain {
  order: number[];
  ops: ChainOp[];
}

/** The values after each operation of a chain, or null when a step is not a positive integer. */
function chainValues(numbers: readonly number[], chain: Chain): number[] | null {
  let v = numbers[chain.order[0]!]!;
  const out: number[] = [];
  for (let i = 0; i < chain.ops.length; i++) {
    const k = numbers[chain.order[i + 1]!]!;
    const op = chain.ops[i]!;
    v = op === "+" ? v + k : op === "-" ? v - k : op === "*" ? v * k : v / k;
    if (!Number.isInteger(v) || v <= 0) return null;
    out.push(v);
  }
  return out;
}

function chainText(numbers: readonly number[], chain: Chain, values: readonly number[]): string {
  let v = numbers[chain.order[0]!]!;
  return chain.ops.map((op, i) => {
    const step = `${v}${op}${numbers[chain.order[i + 1]!]!}=${values[i]!}`;
    v = values[i]!;
    return step;
  }).join(",");
}

/** The chain as one expression: parentheses where a `+`/`-` result is multiplied or divided. */
function chainExpression(numbers: readonly number[], chain: Chain): string {
  let expr = String(numbers[chain.order[0]!]!);
  let sum = false;
  chain.ops.forEach((op, i) => {
    const k = numbers[chain.order[i + 1]!]!;
    if ((op === "*" || op === "/") && sum) expr = `(${expr})${op}${k}`;
    else expr = `${expr}${op}${k}`;
    sum = op === "+" || op === "-";
  });
  return expr;
}

function* orders(n: number, length: number, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === length) {
    yield prefix;
    return;
  }
  for (let i = 0; i < n; i++) if (!prefix.includes(i)) yield* orders(n, length, [...prefix, i]);
}

function* opLists(length: number): Generator<ChainOp[]> {
  if (length === 0) {
    yield [];
    return;
  }
  for (const rest of opLists(length - 1)) {
    for (const op of ["+", "-", "*", "/"] as const) yield [...rest, op];
  }
}

function countdownTrace(row: TaskRow, rng: Rng, maxFailed: number): string | null {
  const numbers = row.numbers as number[];
  const target = row.target as number;
  const useAll = row.useAll === true;
  const solutions: Chain[] = [];
  for (let len = useAll ? numbers.length : 2; len <= numbers.length; len++) {
    for (const order of orders(numbers.length, len)) {
      for (const ops of opLists(len - 1)) {
        const values = chainValues(numbers, { order, ops });
        if (values !== null && values[values.length - 1] === target) {
          solutions.push({ order, ops });
        }
      }
    }
  }
  if (solutions.length === 0) return null;
  const attempts: string[] = [];
  const failures = rng.int(0, maxFailed);
  for (let tries = 0; attempts.length < failures && tries < 100; tries++) {
    const order = rng.shuffle(numbers.map((_, i) => i));
    const chain = { order, ops: order.slice(1).map(() => rng.pick(["+", "-", "*", "/"] as const)) };
    const values = chainValues(numbers, chain);
    if (values === null || values[values.length - 1] === target) continue;
    attempts.push(`${chainText(numbers, chain, values)}x`);
  }
  const win = rng.pick(solutions);
  attempts.push(chainText(numbers, win, chainValues(numbers, win)!));
  return `<think>${attempts.join(";")}</think><answer>${chainExpression(numbers, win)}</answer>`;
}

/** A statement of the compact knights form: `Bob+`, `Bob-`, `Bob=`, `Bob!`, joined by & or /. */
function compactStatement(statement: string): string {
  return statement
    .replace(/(\w+) and I are the same kind/g, "$1=")
    .replace(/(\w+) and I are different kinds/g, "$1!")
    .replace(/(\w+) is a knight/g, "$1+")
    .replace(/(\w+) is a knave/g, "$1-")
    .replace(/ and /g, "&")
    .replace(/ or /g, "/");
}

function atomTruth(atom: string, speaker: number, names: readonly string[], world: boolean[]) {
  const who = names.indexOf(atom.slice(0, -1));
  const mark = atom[atom.length - 1];
  if (who < 0) throw new Error(`cot: unknown name in knights statement ${JSON.stringify(atom)}`);
  if (mark === "+") return world[who]!;
  if (mark === "-") return !world[who]!;
  if (mark === "=") return world[who] === world[speaker];
  return world[who] !== world[speaker];
}

function statementTruth(
  compact: string,
  speaker: number,
  names: readonly string[],
  world: boolean[],
): boolean {
  if (compact.includes("&")) {
    return compact.split("&").every((a) => atomTruth(a, speaker, names, world));
  }
  if (compact.includes("/")) {
    return compact.split("/").some((a) => atomTruth(a, speaker, names, world));
  }
  return atomTruth(compact, speaker, names, world);
}

function knightsTrace(row: TaskRow): string | null {
  const names = row.names as string[];
  const statements = (row.statements as string[]).map(compactStatement);
  const n = names.length;
  const lines: string[] = [];
  for (let mask = 0; mask < 1 << n; mask++) {
    const world = names.map((_, i) => ((mask >> (n - 1 - i)) & 1) === 0);
    const truths = statements.map((s, i) => statementTruth(s, i, names, world));
    const ok = truths.every((t, i) => t === world[i]);
    lines.push(
      `${world.map((k) => (k ? "+" : "-")).join("")}:${truths.map((t) => t ? "T" : "F").join("")}${
        ok ? "ok" : "x"
      }`,
    );
    if (ok) {
      const answer = names.map((name, i) => `${name} ${world[i] ? "knight" : "knave"}`).join(",");
      return `<think>${lines.join(";")}</think><answer>${answer}</answer>`;
    }
  }
  return null;
}

/**
 * The trace of a row (see the module doc), or `null` for a row this module cannot trace (an
 * arithmetic row with operators other than `+`, a Countdown row without a chain solution).
 *
 * @example Usage
 * ```ts
 * import { cotCompletion } from "./cot.ts";
 * import { seededRng } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = { id: "a", task: "arithmetic", prompt: "", answer: "155", difficulty: 1, expression: "47 + 85 + 23" };
 * assert.equal(
 *   cotCompletion(row, seededRng(0), { errorRate: 0, slipRate: 0 }),
 *   "<think>12,13=132+23:5,5,1=155</think><answer>155</answer>",
 * );
 * ```
 */
export function cotCompletion(row: TaskRow, rng: Rng, options: CotOptions = {}): string | null {
  if (typeof row.expression === "string") {
    return arithmeticTrace(row, rng, options.errorRate ?? 0.1, options.slipRate ?? 0.15);
  }
  if (Array.isArray(row.numbers) && typeof row.target === "number") {
    return countdownTrace(row, rng, options.maxFailedChains ?? 2);
  }
  if (Array.isArray(row.names) && Array.isArray(row.statements)) return knightsTrace(row);
  return null;
}

/**
 * The compact prompt of a Countdown row (`3,5,7>22=`) or a Knights and Knaves row
 * (`Alice:Bob-;Bob:Alice=?`), or `null` for other rows; `promptText` uses it for char-level
 * models, which cannot read the tasks' English prompts.
 *
 * @example Usage
 * ```ts
 * import { compactPrompt } from "./cot.ts";
 * import assert from "node:assert/strict";
 * const row = { id: "k", task: "knights_knaves", prompt: "", answer: "", difficulty: 2,
 *   names: ["Alice", "Bob"], statements: ["Bob is a knave", "Alice and I are the same kind"] };
 * assert.equal(compactPrompt(row), "Alice:Bob-;Bob:Alice=?");
 * ```
 */
export function compactPrompt(row: TaskRow): string | null {
  if (
    Array.isArray(row.numbers) && row.numbers.every((x) => typeof x === "number") &&
    typeof row.target === "number"
  ) {
    return `${row.numbers.join(",")}>${row.target}=`;
  }
  if (
    Array.isArray(row.names) && Array.isArray(row.statements) &&
    row.names.length === row.statements.length &&
    row.statements.every((s) => typeof s === "string")
  ) {
    const names = row.names as string[];
    return `${
      (row.statements as string[]).map((s, i) => `${names[i]}:${compactStatement(s)}`).join(";")
    }?`;
  }
  return null;
}

/** Options of the three tasks of the warm start, by the difficulty knob. */
export interface CotTaskOptions {
  /** Addition: operands per expression minus one, e.g. `[1, 4]` for 2 to 5 operands. */
  chainLength: number | [number, number];
  /** Addition: digits per operand. */
  digits: number | [number, number];
  /** Countdown: how many numbers. */
  countdownCount: number | [number, number];
  /** Knights and Knaves: inhabitants. */
  people: number | [number, number];
}

/** The SFT distribution's knobs (the difficulty a recipe's "above the median" is measured on). */
export const COT_SFT_OPTIONS: Readonly<CotTaskOptions> = Object.freeze({
  chainLength: [1, 3] as [number, number],
  digits: 1,
  countdownCount: [3, 4] as [number, number],
  people: [2, 3] as [number, number],
});

/**
 * The three tasks of the warm start at the given knobs (addition only; Countdown numbers 1–20,
 * targets up to 100).
 *
 * @example Usage
 * ```ts
 * import { COT_SFT_OPTIONS, cotTasks } from "./cot.ts";
 * import assert from "node:assert/strict";
 * const tasks = cotTasks(COT_SFT_OPTIONS);
 * assert.deepEqual(tasks.map((t) => t.name), ["arithmetic", "countdown", "knights_knaves"]);
 * ```
 */
export function cotTasks(options: Readonly<CotTaskOptions>): Task[] {
  return [
    arithmeticTask({
      digits: options.digits,
      operators: ["+"],
      chainLength: options.chainLength,
    }) as unknown as Task,
    countdownTask({
      count: options.countdownCount,
      maxNumber: 20,
      maxTarget: 100,
    }) as unknown as Task,
    knightsKnavesTask({ people: options.people }) as unknown as Task,
  ];
}
