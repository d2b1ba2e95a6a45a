/**
 * A multi-hop question-answering environment over a corpus: the policy searches with
 * `<search>query</search>`, reads `<results>…</results>`, and answers with
 * `<answer>text [id] [id]</answer>`, citing the documents that support the answer.
 *
 * Design decisions:
 * - **Questions come from the corpus facts** ({@link multiHopQaTask}): a question template is a
 *   chain of relations (e.g. `capital → river → source`: "On which mountain does the river that
 *   flows through the capital of X rise?"); a row picks a template and a subject with its
 *   seeded stream, follows the facts, and stores the answer, the number of hops and the ids of
 *   the supporting documents (the documents that state the facts along the chain). Templates
 *   whose relations the corpus lacks are skipped, so any corpus with `facts` works.
 * - **Answer check**: the answer is compared word for word with the gold answer after
 *   removing citations, lower-casing, tokenising like the search index, dropping commas inside
 *   numbers and a few filler words (`mount`, `river`, `script`, `language`, `the`, units:
 *   see `FILLER`), so `Mount Lithou`, `lithou` and `The Lithou` all match `Lithou`, and
 *   `1432 or 1512` does not match `1432`.
 * - **Reward** (`finalReward()`): 0 when any cited id is not a document of the corpus (an
 *   invented citation), 0 for a wrong or missing answer, otherwise
 *   `weights.answer + weights.citations · cite`, with `cite = |cited ∩ supporting| /
 *   max(|supporting|, |cited|)` (recall of the supporting documents, penalised for citing
 *   extra ones) and default weights 0.7 and 0.3. So a correct answer citing exactly the
 *   supporting documents scores 1, a correct answer without citations 0.7. `success()` is
 *   "the answer is correct". The citation check is done here rather than with
 *   `citationRubric`, whose claims must be stated and cited in one sentence: a multi-hop
 *   answer states only the last hop's object, while it must cite every hop's document.
 * - Calls go through `callTool` (the `tool` option replaces the search tool, e.g. by a stub);
 *   parsing, malformed calls and the turn limit follow the shared episode rules (`_episode.ts`).
 *
 * @module
 */

import { checkName, checkNumber, checkOptions, show } from "../_check.ts";
import { defineTask, type Task, type TaskRow } from "../tasks/task.ts";
import {
  type CallSyntax,
  type ToolEnvironment,
  type ToolEpisode,
  toolEpisode,
} from "./_episode.ts";
import { Bm25Index, type Corpus, type Fact, searchTool, tokenize } from "./search.ts";
import type { Tool, ToolLimits } from "./tool.ts";
import type { ResetOptions } from "./types.ts";

/** A row of {@link multiHopQaTask}. */
export interface QaRow extends TaskRow {
  /** The question. */
  question: string;
  /** Ids of the documents stating the facts along the chain, in hop order. */
  supporting: string[];
  /** Relations followed (>= 2). */
  hops: number;
  /** The template's name (`capital.river.source` …). */
  template: string;
  /** The entity the question starts from. */
  subject: string;
}

interface Template {
  path: readonly string[];
  question(subject: string): string;
}

const TEMPLATES: readonly Template[] = [
  { path: ["capital", "river"], question: (s) => `Which river flows through the capital of ${s}?` },
  {
    path: ["capital", "river", "source"],
    question: (s) =>
      `On which mountain does the river that flows through the capital of ${s} rise?`,
  },
  {
    path: ["capital", "river", "length"],
    question: (s) =>
      `How long, in kilometres, is the river that flows through the capital of ${s}?`,
  },
  {
    path: ["capital", "founded"],
    question: (s) => `In which year was the capital of ${s} founded?`,
  },
  { path: ["capital", "founder"], question: (s) => `Who founded the capital of ${s}?` },
  {
    path: ["capital", "founder", "born"],
    question: (s) => `In which year was the founder of the capital of ${s} born?`,
  },
  {
    path: ["language", "script"],
    question: (s) => `In which script is the official language of ${s} written?`,
  },
  {
    path: ["language", "script", "letters"],
    question: (s) => `How many letters does the script of the official language of ${s} have?`,
  },
  {
    path: ["river", "source", "height"],
    question: (s) =>
      `How high, in metres, is the mountain on which the river of the city of ${s} rises?`,
  },
  {
    path: ["river", "source"],
    question: (s) => `On which mountain does the river of the city of ${s} rise?`,
  },
];

/** Words ignored when comparing answers (see the module doc). */
const FILLER = new Set([
  "the",
  "mount",
  "mt",
  "river",
  "script",
  "language",
  "in",
  "year",
  "metres",
  "meters",
  "m",
  "km",
  "kilometres",
  "kilometers",
  "letters",
]);

/**
 * The words an answer is compared by: citations removed, tokenised like the search index,
 * thousands commas and filler words (`mount`, `river`, units …) dropped.
 *
 * @example Usage
 * ```ts
 * import { answerWords } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * assert.deepEqual(answerWords("Mount Lithou [D3]"), ["lithou"]);
 * assert.deepEqual(answerWords("2,140 metres"), ["2140"]);
 * ```
 */
export function answerWords(text: string): string[] {
  const bare = String(text).replace(/\[[^\[\]]*\]/g, " ").replace(/(\d),(?=\d{3}\b)/g, "$1");
  return tokenize(bare).filter((w) => !FILLER.has(w));
}

/**
 * The citation ids of an answer, in order: `[D1]`, `[D1, D2]` or `[D1; D2]`.
 *
 * @example Usage
 * ```ts
 * import { citedIds } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * assert.deepEqual(citedIds("Lithou [D3] [D7, D9]"), ["D3", "D7", "D9"]);
 * ```
 */
export function citedIds(text: string): string[] {
  const ids: string[] = [];
  for (const m of String(text).matchAll(/\[([^\[\]]+)\]/g)) {
    for (const id of m[1]!.split(/[,;]/)) if (id.trim() !== "") ids.push(id.trim());
  }
  return ids;
}

function checkCorpus(owner: string, corpus: unknown): Corpus {
  const c = corpus as Corpus | null;
  if (
    typeof c !== "object" || c === null || !Array.isArray(c.documents) || !Array.isArray(c.facts)
  ) {
    throw new TypeError(
      `${owner}: corpus must be {documents, facts} (e.g. from loadCorpus or generateCorpus), got ${
        show(corpus)
      }`,
    );
  }
  return c;
}

/** Options of {@link multiHopQaTask}. */
export interface QaTaskOptions {
  /** Task name (default `"multihop_qa"`). */
  name?: string;
}

/**
 * Multi-hop questions over a corpus's facts (see the module doc); throws when the corpus has
 * no fact chain that matches a template.
 *
 * @example Usage
 * ```ts
 * import { generateCorpus, multiHopQaTask } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const corpus = generateCorpus(1);
 * const task = multiHopQaTask(corpus);
 * const row = task.row(0, 3);
 * assert.ok(row.hops >= 2 && row.supporting.length === row.hops);
 * assert.ok(task.verify(row, `${row.answer} [${row.supporting[0]}]`));
 * assert.deepEqual(task.row(0, 3), row);
 * ```
 */
export function multiHopQaTask(corpus: Corpus, options?: QaTaskOptions): Task<QaRow> {
  const owner = "multiHopQaTask";
  const c = checkCorpus(owner, corpus);
  const opts = checkOptions<QaTaskOptions>(owner, options, "{name?}");
  const name = checkName(owner, "options.name", opts.name ?? "multihop_qa");
  const bySubject = new Map<string, Fact>();
  for (const f of c.facts) bySubject.set(`${f.subject}\u0000${f.relation}`, f);
  const follow = (subject: string, path: readonly string[]): Fact[] | null => {
    const chain: Fact[] = [];
    let at = subject;
    for (const relation of path) {
      const f = bySubject.get(`${at}\u0000${relation}`);
      if (f === undefined) return null;
      chain.push(f);
      at = f.object;
    }
    return chain;
  };
  // every (template, subject) pair whose chain exists, in a fixed order
  const problems: { template: Template; subject: string; chain: Fact[] }[] = [];
  for (const template of TEMPLATES) {
    const subjects = [
      ...new Set(c.facts.filter((f) => f.relation === template.path[0]).map((f) => f.subject)),
    ];
    for (const subject of subjects) {
      const chain = follow(subject, template.path);
      if (chain !== null) problems.push({ template, subject, chain });
    }
  }
  if (problems.length === 0) {
    throw new RangeError(
      `${owner}: the corpus has no fact chain matching a question template (relations such as capital → river); generate one with generateCorpus`,
    );
  }
  return defineTask<QaRow>({
    name,
    generate(rng) {
      const p = rng.pick(problems);
      const question = p.template.question(p.subject);
      const answer = p.chain[p.chain.length - 1]!.object;
      return {
        question,
        answer,
        supporting: [...new Set(p.chain.map((f) => f.doc))],
        hops: p.chain.length,
        template: p.template.path.join("."),
        subject: p.subject,
        difficulty: p.chain.length,
        prompt:
          `Answer the question. Give the final answer as <answer>ANSWER [id] [id]</answer>, ` +
          `citing the documents that support it.\n\nQuestion: ${question}`,
      };
    },
    key: (row) => `${row.template}:${row.subject}`,
    verify(row, answer) {
      const got = answerWords(answer);
      const want = answerWords(row.answer);
      return got.length === want.length && got.every((w, i) => w === want[i]);
    },
  });
}

/** Options of {@link multiHopQaEnv}. */
export interface QaEnvOptions {
  /** The corpus (documents and facts), e.g. `await loadCorpus(dir)` or `generateCorpus(seed)`. */
  corpus: Corpus;
  /** Search hits per call, >= 1 (default 3). */
  k?: number;
  /** Actions per episode, >= 1 (default 6). */
  maxTurns?: number;
  /** Reward weights of a correct answer and of its citations (default 0.7 and 0.3). */
  weights?: { answer?: number; citations?: number };
  /** The tool (default: {@link searchTool} over a BM25 index of the corpus). */
  tool?: Tool;
  /** Limits of every tool call (default `callTool`'s: 5 s, 2000 characters). */
  toolLimits?: Omit<ToolLimits, "signal">;
  /** Environment and task name (default `"multihop_qa"`). */
  name?: string;
}

/** `<search>q</search>` calls, `<results>…</results>`, `<answer>…</answer>`. */
export const SEARCH_SYNTAX: CallSyntax = Object.freeze({
  callOpen: "<search>",
  callClose: "</search>",
  resultOpen: "<results>\n",
  resultClose: "\n</results>",
  answerOpen: "<answer>",
  answerClose: "</answer>",
});

/**
 * The multi-hop QA environment (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { generateCorpus, multiHopQaEnv } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const env = multiHopQaEnv({ corpus: generateCorpus(1) });
 * const row = env.task.row(0, 0);
 * const episode = env.reset(row, { seed: 0 });
 * const r = await episode.step(`<search>${row.subject}</search>`);
 * assert.match(r.observation, /^<results>\n\[D\d+\] /);
 * const cites = row.supporting.map((id) => `[${id}]`).join(" ");
 * await episode.step(`<answer>${row.answer} ${cites}</answer>`);
 * assert.equal(await episode.finalReward(), 1);
 * assert.ok(episode.success());
 * ```
 */
export function multiHopQaEnv(options: QaEnvOptions): ToolEnvironment<QaRow> {
  const owner = "multiHopQaEnv";
  const opts = checkOptions<QaEnvOptions>(
    owner,
    options,
    "{corpus, k?, maxTurns?, weights?, tool?, toolLimits?, name?}",
  );
  const corpus = checkCorpus(owner, opts.corpus);
  const name = checkName(owner, "options.name", opts.name ?? "multihop_qa");
  const k = checkNumber(owner, "options.k", opts.k ?? 3, { min: 1, integer: true });
  const maxTurns = checkNumber(owner, "options.maxTurns", opts.maxTurns ?? 6, {
    min: 1,
    integer: true,
  });
  const wAnswer = checkNumber(owner, "options.weights.answer", opts.weights?.answer ?? 0.7, {
    min: 0,
  });
  const wCite = checkNumber(owner, "options.weights.citations", opts.weights?.citations ?? 0.3, {
    min: 0,
  });
  const task = multiHopQaTask(corpus, { name });
  const tool = opts.tool ?? searchTool(new Bm25Index(corpus.documents), { k });
  if (typeof tool !== "object" || tool === null || typeof tool.call !== "function") {
    throw new TypeError(
      `${owner}: options.tool must be a Tool {name, description, call}, got ${show(tool)}`,
    );
  }
  const known = new Set(corpus.documents.map((d) => d.id));
  const limits = { ...(opts.toolLimits ?? {}) };
  const hint = `Search the documents with <search>QUERY</search>; the results come back as ` +
    `<results>…</results>, one line per document: [id] title: text. You may search several times.`;
  return Object.freeze({
    name,
    task,
    maxTurns,
    stop: Object.freeze([SEARCH_SYNTAX.callClose]),
    reset(row: QaRow, { seed }: ResetOptions): ToolEpisode {
      checkNumber(name, "seed", seed, { integer: true });
      return toolEpisode({
        prompt: `${hint}\n${row.prompt}`,
        seed,
        syntax: SEARCH_SYNTAX,
        tool,
        limits,
        maxTurns,
        judge(answer) {
          if (answer === null) return { reward: 0, success: false };
          const cited = [...new Set(citedIds(answer))];
          const correct = task.verify(row, answer);
          if (cited.some((id) => !known.has(id))) return { reward: 0, success: correct };
          if (!correct) return { reward: 0, success: false };
          const hits = cited.filter((id) => row.supporting.includes(id)).length;
          const cite = hits / Math.max(row.supporting.length, cited.length);
          return { reward: wAnswer + wCite * cite, success: true };
        },
      });
    },
  });
}
