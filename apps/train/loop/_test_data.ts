// Dataset fixtures for the tests of data_task.ts, task.ts and eval_main.ts (not exported): small
// GSM8K-shaped files of 2-digit additions, written as JSONL and as Parquet (hyparquet-writer).

import { parquetWriteBuffer } from "hyparquet-writer";

/** One fixture row: a question, a nested compact expression and a GSM8K-style solution. */
export interface AdditionRow {
  question: string;
  meta: { expr: string; a: number; b: number };
  answer: string;
}

/**
 * `n` distinct 2-digit additions from a fixed linear congruential sequence (seeded, so every
 * test sees the same rows): `{question, meta: {expr, a, b}, answer: "a + b = c\n#### c"}`.
 * The compact `meta.expr` (`37+45`) is the format the shipped tiny model reads after `=`.
 */
export function additionRows(n: number, seed = 1): AdditionRow[] {
  const rows: AdditionRow[] = [];
  const seen = new Set<string>();
  let x = seed;
  while (rows.length < n) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const a = 10 + (x % 90);
    x = (x * 1103515245 + 12345) % 2147483648;
    const b = 10 + (x % 90);
    const expr = `${a}+${b}`;
    if (seen.has(expr)) continue;
    seen.add(expr);
    rows.push({
      question: `Ann has ${a} apples and gets ${b} more. How many apples does she have?`,
      meta: { expr, a, b },
      answer: `She has ${a} + ${b} = ${a + b} apples.\n#### ${a + b}`,
    });
  }
  return rows;
}

/** Writes rows (any JSON objects) as a `.jsonl` file, plus any raw extra lines at the end. */
export async function writeJsonl(
  path: string,
  rows: readonly unknown[],
  extraLines: readonly string[] = [],
): Promise<string> {
  const lines = [...rows.map((r) => JSON.stringify(r)), ...extraLines];
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return path;
}

/** Writes addition rows as a `.parquet` file: `question` and `answer` strings, `meta` JSON. */
export async function writeParquet(path: string, rows: readonly AdditionRow[]): Promise<string> {
  const bytes = parquetWriteBuffer({
    columnData: [
      { name: "question", data: rows.map((r) => r.question), type: "STRING" },
      { name: "meta", data: rows.map((r) => r.meta), type: "JSON" },
      { name: "answer", data: rows.map((r) => r.answer), type: "STRING" },
    ],
  });
  await Deno.writeFile(path, new Uint8Array(bytes));
  return path;
}

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-data-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
