/**
 * Full-text search over a small document corpus: a BM25 index, the search tool an agent calls,
 * and {@link loadCorpus}, which reads a corpus directory of Markdown files.
 *
 * Design decisions:
 * - **Tokenizer**: lower-case the text and keep the maximal runs of letters and digits
 *   (Unicode `\p{L}\p{N}`); everything else separates words. No stemming and no stop words:
 *   the corpora are small and synthetic, and a predictable tokenizer makes retrieval testable
 *   (a word that occurs in one document only retrieves that document first).
 * - **Scoring**: Okapi BM25 with `k1 = 1.2`, `b = 0.75` over the title and the text together,
 *   `idf = ln(1 + (N − df + 0.5) / (df + 0.5))` (never negative). Only documents that contain
 *   a query word are returned; ties keep the corpus order.
 * - **Results the policy can cite**: the tool answers one line per hit,
 *   `[<id>] <title>: <snippet>` (the document's text on one line, or from its sentence with
 *   the most query words on, cut to `snippetChars`), so an answer can cite `[id]`.
 * - **Corpus files**: one `<id>.md` per document, whose first line is `# <title>` and whose
 *   remaining lines are the text (a line break inside a paragraph reads as a space, so files
 *   stay valid after `deno fmt` wraps them); an optional `facts.json` holds the structured facts the
 *   documents state (used to generate questions), see {@link Fact}.
 *
 * @module
 */

import { checkNumber, checkOptions, show } from "../_check.ts";
import type { Tool } from "./tool.ts";

/** A document of a corpus. */
export interface CorpusDocument {
  /** Unique id, cited as `[id]` (the file name without `.md`). */
  id: string;
  /** Title (the file's first line, without `# `). */
  title: string;
  /** Body text. */
  text: string;
}

/** A fact `subject —relation→ object` that a document of the corpus states. */
export interface Fact {
  /** The subject entity's name. */
  subject: string;
  /** The relation (`capital`, `river`, `source`, …). */
  relation: string;
  /** The object: an entity's name or a value. */
  object: string;
  /** The id of the document that states the fact. */
  doc: string;
}

/** A corpus: documents and, optionally, the facts they state. */
export interface Corpus {
  /** The documents, in id order. */
  documents: CorpusDocument[];
  /** The facts (empty when the corpus has no `facts.json`). */
  facts: Fact[];
}

/** A search hit. */
export interface SearchHit {
  /** The document. */
  doc: CorpusDocument;
  /** Its BM25 score (> 0). */
  score: number;
}

/**
 * The tokenizer of {@link Bm25Index}: lower-cased runs of letters and digits.
 *
 * @example Usage
 * ```ts
 * import { tokenize } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * assert.deepEqual(tokenize("Mount Karvel's height: 2,140 m."), ["mount", "karvel", "s", "height", "2", "140", "m"]);
 * ```
 */
export function tokenize(text: string): string[] {
  return String(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Options of {@link Bm25Index}. */
export interface Bm25Options {
  /** Term-frequency saturation (default 1.2). */
  k1?: number;
  /** Length normalisation, 0–1 (default 0.75). */
  b?: number;
}

/**
 * An in-memory BM25 index (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { Bm25Index } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const index = new Bm25Index([
 *   { id: "a", title: "Apples", text: "Apples grow on trees." },
 *   { id: "b", title: "Rivers", text: "The Lorn river rises on Mount Karvel." },
 * ]);
 * assert.deepEqual(index.search("where does the Lorn rise").map((h) => h.doc.id), ["b"]);
 * assert.deepEqual(index.search("bananas"), []);
 * ```
 */
export class Bm25Index {
  /** The documents, in the order given. */
  readonly documents: readonly CorpusDocument[];
  readonly #k1: number;
  readonly #b: number;
  readonly #postings = new Map<string, Array<[number, number]>>(); // term -> [doc, tf]
  readonly #lengths: number[];
  readonly #avgLength: number;

  /** Indexes `documents` (ids must be unique). */
  constructor(documents: readonly CorpusDocument[], options: Bm25Options = {}) {
    const owner = "Bm25Index";
    if (!Array.isArray(documents)) {
      throw new TypeError(
        `${owner}: documents must be an array of {id, title, text}, got ${show(documents)}`,
      );
    }
    this.#k1 = checkNumber(owner, "options.k1", options.k1 ?? 1.2, { min: 0 });
    this.#b = checkNumber(owner, "options.b", options.b ?? 0.75, { min: 0, max: 1 });
    const ids = new Set<string>();
    this.documents = Object.freeze(documents.map((d, k) => {
      if (
        typeof d !== "object" || d === null || typeof d.id !== "string" || d.id === "" ||
        typeof d.title !== "string" || typeof d.text !== "string"
      ) {
        throw new TypeError(
          `${owner}: documents[${k}] must be {id, title, text} strings, got ${show(d)}`,
        );
      }
      if (ids.has(d.id)) throw new TypeError(`${owner}: duplicate document id "${d.id}"`);
      ids.add(d.id);
      return Object.freeze({ id: d.id, title: d.title, text: d.text });
    }));
    this.#lengths = this.documents.map((d, i) => {
      const tf = new Map<string, number>();
      const words = tokenize(`${d.title} ${d.text}`);
      for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
      for (const [w, n] of tf) {
        let list = this.#postings.get(w);
        if (list === undefined) this.#postings.set(w, list = []);
        list.push([i, n]);
      }
      return words.length;
    });
    const total = this.#lengths.reduce((a, n) => a + n, 0);
    this.#avgLength = this.documents.length === 0 ? 0 : total / this.documents.length;
  }

  /** How many documents contain `term` (a single token). */
  documentFrequency(term: string): number {
    return this.#postings.get(String(term).toLowerCase())?.length ?? 0;
  }

  /** The documents matching `query`, best first, at most `k` (default all). */
  search(query: string, k = Infinity): SearchHit[] {
    checkNumber("Bm25Index.search", "k", k, { min: 1, integer: true, allowInfinity: true });
    const n = this.documents.length;
    const scores = new Map<number, number>();
    for (const term of new Set(tokenize(query))) {
      const list = this.#postings.get(term);
      if (list === undefined) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const [i, tf] of list) {
        const norm = 1 - this.#b + this.#b * this.#lengths[i]! / (this.#avgLength || 1);
        const s = idf * tf * (this.#k1 + 1) / (tf + this.#k1 * norm);
        scores.set(i, (scores.get(i) ?? 0) + s);
      }
    }
    return [...scores].filter(([, s]) => s > 0)
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, k)
      .map(([i, score]) => ({ doc: this.documents[i]!, score }));
  }
}

/** Options of {@link searchTool}. */
export interface SearchToolOptions {
  /** Hits answered, >= 1 (default 3). */
  k?: number;
  /** Most characters of a snippet (default 300; see {@link snippet}). */
  snippetChars?: number;
  /** The tool's name (default `"search"`). */
  name?: string;
}

/**
 * A snippet of `text` for `query`: the whole text when it fits in `maxChars`; otherwise from the
 * sentence with the most query words (the first on ties) onwards, cut to `maxChars` with `…`.
 *
 * @example Usage
 * ```ts
 * import { snippet } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const text = "The Lorn is a river. It rises on Mount Karvel. It is 300 km long.";
 * assert.equal(snippet(text, "Karvel"), text);
 * assert.equal(snippet(text, "Karvel", 30), "It rises on Mount Karvel. It…");
 * ```
 */
export function snippet(text: string, query: string, maxChars = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= maxChars) return flat;
  const words = new Set(tokenize(query));
  const sentences = flat.split(/(?<=[.!?])\s+/);
  let best = 0;
  let bestHits = -1;
  sentences.forEach((s, i) => {
    const hits = new Set(tokenize(s).filter((w) => words.has(w))).size;
    if (hits > bestHits) [best, bestHits] = [i, hits];
  });
  const from = sentences.slice(best).join(" ");
  return from.length > maxChars ? `${from.slice(0, maxChars - 1).trimEnd()}…` : from;
}

/**
 * The search tool over `index`: answers the top `k` hits as lines `[<id>] <title>: <snippet>`,
 * or `no results for "<query>"`; throws on an empty query.
 *
 * @example Usage
 * ```ts
 * import { Bm25Index, callTool, searchTool } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const index = new Bm25Index([
 *   { id: "D1", title: "Lorn", text: "The Lorn is a river. It rises on Mount Karvel." },
 *   { id: "D2", title: "Karvel", text: "Mount Karvel is 2140 metres high." },
 * ]);
 * const r = await callTool(searchTool(index, { k: 1 }), "where does the Lorn river rise");
 * assert.equal(r.text, "[D1] Lorn: The Lorn is a river. It rises on Mount Karvel.");
 * ```
 */
export function searchTool(index: Bm25Index, options?: SearchToolOptions): Tool {
  const owner = "searchTool";
  if (!(index instanceof Bm25Index)) {
    throw new TypeError(`${owner}: index must be a Bm25Index, got ${show(index)}`);
  }
  const opts = checkOptions<SearchToolOptions>(owner, options, "{k?, snippetChars?, name?}");
  const k = checkNumber(owner, "options.k", opts.k ?? 3, { min: 1, integer: true });
  const chars = checkNumber(owner, "options.snippetChars", opts.snippetChars ?? 300, {
    min: 10,
    integer: true,
  });
  const name = opts.name ?? "search";
  return Object.freeze({
    name,
    description: `Searches ${index.documents.length} documents; answers the top ${k} as ` +
      `"[id] title: snippet" lines`,
    call(input: string): string {
      const query = String(input).trim();
      if (tokenize(query).length === 0) {
        throw new Error("empty query; write a few words to search for");
      }
      const hits = index.search(query, k);
      if (hits.length === 0) return `no results for ${JSON.stringify(query)}`;
      return hits.map((h) => `[${h.doc.id}] ${h.doc.title}: ${snippet(h.doc.text, query, chars)}`)
        .join("\n");
    },
  });
}

/**
 * Parses one corpus file's text: the first line is `# title`, the rest (trimmed) the text,
 * whose paragraphs (separated by blank lines) may be wrapped over several lines: a line break
 * inside a paragraph reads as a space. Throws a SyntaxError without the title line.
 *
 * @example Usage
 * ```ts
 * import { parseDocument } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseDocument("D1", "# Lorn\n\nA river.\n"), { id: "D1", title: "Lorn", text: "A river." });
 * assert.throws(() => parseDocument("D2", "A river."), SyntaxError);
 * ```
 */
export function parseDocument(id: string, source: string): CorpusDocument {
  const [first = "", ...rest] = source.replace(/\r\n?/g, "\n").split("\n");
  const m = /^#\s+(.+?)\s*$/.exec(first);
  if (!m) {
    throw new SyntaxError(
      `loadCorpus: ${id}.md must start with a "# title" line, got ${JSON.stringify(first)}`,
    );
  }
  // a paragraph may be wrapped over several lines (deno fmt wraps Markdown): join its lines
  const text = rest.join("\n").trim().split(/\n[ \t]*\n\s*/)
    .map((p) => p.replace(/\s*\n\s*/g, " ")).join("\n\n");
  return { id, title: m[1]!, text };
}

/**
 * The file of a corpus directory that lists its document ids, in order (written by
 * `writeCorpus`). {@link loadCorpus} needs it only for a corpus read by URL, which has no
 * directory listing.
 *
 * @example Usage
 * ```ts
 * import { CORPUS_INDEX_FILE } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * assert.equal(CORPUS_INDEX_FILE, "index.json");
 * ```
 */
export const CORPUS_INDEX_FILE = "index.json";

/**
 * Reads a corpus directory: every `*.md` file is a document (id = file name without `.md`,
 * first line `# title`, the rest its text), sorted by id; `facts.json` (an array of
 * {@link Fact}), if present, gives the facts. Needs read permission on `dir`.
 *
 * `dir` may also be an `https:` or `http:` URL (a corpus shipped with a package imported by
 * URL): the documents are then the ids its {@link CORPUS_INDEX_FILE} lists, read with `fetch`
 * (needs net permission on the host).
 *
 * @example Usage
 * ```ts
 * import { loadCorpus } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/D1.md`, "# Lorn\nThe Lorn is a river.\n");
 * const corpus = await loadCorpus(dir);
 * assert.deepEqual(corpus.documents, [{ id: "D1", title: "Lorn", text: "The Lorn is a river." }]);
 * assert.deepEqual(corpus.facts, []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadCorpus(dir: string | URL): Promise<Corpus> {
  const href = typeof dir === "string" ? dir : dir.href;
  if (/^https?:/i.test(href)) return await fetchCorpus(new URL(href.replace(/\/*$/, "/")));
  const path = typeof dir === "string" ? dir : decodeURIComponent(dir.pathname);
  const base = path.replace(/\/+$/, "");
  const names: string[] = [];
  for await (const entry of Deno.readDir(base)) {
    if (entry.isFile && entry.name.endsWith(".md")) names.push(entry.name);
  }
  names.sort();
  const documents = await Promise.all(names.map(async (name) => {
    const id = name.slice(0, -3);
    return parseDocument(id, await Deno.readTextFile(`${base}/${name}`));
  }));
  let facts: Fact[] = [];
  try {
    facts = JSON.parse(await Deno.readTextFile(`${base}/facts.json`));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new Error(`loadCorpus: cannot read ${base}/facts.json: ${(e as Error).message}`);
    }
  }
  if (!Array.isArray(facts)) throw new TypeError(`loadCorpus: facts.json must hold an array`);
  return { documents, facts };
}

/** A file of a corpus served over HTTP: its text, or null when the server answers 404. */
async function fetchText(url: URL): Promise<string | null> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`loadCorpus: cannot fetch ${url.href}: ${(e as Error).message}`);
  }
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`loadCorpus: cannot fetch ${url.href}: HTTP ${res.status} ${res.statusText}`);
  }
  return await res.text();
}

/** {@link loadCorpus} of a directory URL (ending in `/`): the documents its index lists. */
async function fetchCorpus(base: URL): Promise<Corpus> {
  const indexUrl = new URL(CORPUS_INDEX_FILE, base);
  const indexText = await fetchText(indexUrl);
  if (indexText === null) {
    throw new Error(
      `loadCorpus: ${indexUrl.href} does not exist (HTTP 404); a corpus read by URL lists its ` +
        `document ids in ${CORPUS_INDEX_FILE} (writeCorpus writes it)`,
    );
  }
  let ids: unknown;
  try {
    ids = JSON.parse(indexText);
  } catch (e) {
    throw new SyntaxError(`loadCorpus: ${indexUrl.href} is not JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string" && /^[^/\\]+$/.test(id))) {
    throw new TypeError(
      `loadCorpus: ${indexUrl.href} must hold an array of document ids (file names without .md), got ${
        show(ids)
      }`,
    );
  }
  const documents = await Promise.all((ids as string[]).map(async (id) => {
    const url = new URL(`${encodeURIComponent(id)}.md`, base);
    const text = await fetchText(url);
    if (text === null) {
      throw new Error(
        `loadCorpus: ${url.href} does not exist (HTTP 404), but ${CORPUS_INDEX_FILE} lists ${
          JSON.stringify(id)
        }`,
      );
    }
    return parseDocument(id, text);
  }));
  const factsUrl = new URL("facts.json", base);
  const factsText = await fetchText(factsUrl);
  let facts: unknown = [];
  if (factsText !== null) {
    try {
      facts = JSON.parse(factsText);
    } catch (e) {
      throw new SyntaxError(`loadCorpus: ${factsUrl.href} is not JSON: ${(e as Error).message}`);
    }
  }
  if (!Array.isArray(facts)) throw new TypeError(`loadCorpus: facts.json must hold an array`);
  return { documents, facts: facts as Fact[] };
}
