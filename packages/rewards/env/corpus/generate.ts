/**
 * The generator of the shipped multi-hop QA corpus: a small fictional world whose facts chain
 * (country → capital → river → source mountain → height; capital → founder → birth year;
 * country → language → script → letters), written as one short Markdown document per entity.
 *
 * Design decisions:
 * - **Deterministic from a seed**: names are drawn from syllables with `seededRng(seed)`, so
 *   `generateCorpus(seed)` is the same everywhere; the committed files in this directory are
 *   `generateCorpus(SHIPPED_CORPUS_SEED)`, and a test checks that they still are.
 * - **Every fact is stated in exactly one document** (its subject's), and documents do not
 *   restate their neighbours' facts (a city's document does not name its country), so a
 *   question over a chain of `n` relations needs the `n` documents along the chain: two or
 *   more searches. `facts.json` lists the facts with the id of the document that states them.
 * - Names are invented single words (people: two), unique across the world and never English
 *   words of the templates, so every entity's name is a term that only its own document and
 *   the documents pointing at it contain.
 * - Document ids (`D01` …) are assigned after a seeded shuffle, so an id says nothing about the
 *   kind of entity.
 *
 * Run `deno run --allow-write=packages/rewards/env/corpus packages/rewards/env/corpus/generate.ts`
 * (optionally `--seed=N --out=DIR`) to rewrite the files.
 *
 * @module
 */

import { type Rng, seededRng } from "../../tasks/rng.ts";
import { type Corpus, CORPUS_INDEX_FILE, type CorpusDocument, type Fact } from "../search.ts";

/**
 * The seed of the corpus shipped in this directory.
 *
 * @example Usage
 * ```ts
 * import { generateCorpus, loadCorpus, SHIPPED_CORPUS_DIR, SHIPPED_CORPUS_SEED } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await loadCorpus(SHIPPED_CORPUS_DIR), generateCorpus(SHIPPED_CORPUS_SEED));
 * ```
 */
export const SHIPPED_CORPUS_SEED = 2026;

/**
 * The directory of the shipped corpus, for `loadCorpus`: a `file:` URL, or the `https:`/`http:`
 * URL this package was imported from (then `loadCorpus` fetches the files its `index.json`
 * lists).
 *
 * @example Usage
 * ```ts
 * import { loadCorpus, multiHopQaEnv, SHIPPED_CORPUS_DIR } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const env = multiHopQaEnv({ corpus: await loadCorpus(SHIPPED_CORPUS_DIR) });
 * assert.equal(env.name, "multihop_qa");
 * ```
 */
export const SHIPPED_CORPUS_DIR: URL = new URL("./", import.meta.url);

const OCCUPATIONS = ["cartographer", "merchant", "general", "poet", "shipwright", "priestess"];
const OCCUPATIONS_TEXT = OCCUPATIONS.join(" ");
const GOVERNMENTS = ["kingdom", "republic", "duchy", "federation"];
const ONSETS = [
  "b",
  "d",
  "f",
  "g",
  "k",
  "l",
  "m",
  "n",
  "p",
  "r",
  "s",
  "t",
  "v",
  "z",
  "br",
  "dr",
  "kr",
  "th",
  "sh",
];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ei", "ou"];
const CODAS = ["", "", "n", "r", "s", "l", "th", "nd", "sk", "m"];

/** Every word of the document templates (and a few common ones): never used as a name. */
const TEMPLATE_WORDS = new Set(
  (`is a in the western lowlands its capital official language of small seat government and ` +
    `most people speak city on banks river it was founded by old market known for salt wool ` +
    `born later life led settlers to new rises mount flows kilometres sea barges carry timber ` +
    `along lower course peak metres high upper slopes are covered snow year lowland written ` +
    `script an alphabet letters from left right land sand band bond lend kind mind wind find ` +
    `son sun ton tin pin bin din fin gin kin sin win man men ten den hen pen` +
    ` ${OCCUPATIONS_TEXT} kingdom republic duchy federation`).split(/\s+/),
);

function nameMaker(rng: Rng): (syllables: [number, number]) => string {
  const used = new Set<string>();
  return (syllables) => {
    for (;;) {
      const count = rng.int(syllables[0], syllables[1]);
      let s = "";
      for (let i = 0; i < count; i++) s += rng.pick(ONSETS) + rng.pick(VOWELS);
      s += rng.pick(CODAS);
      if (s.length < 4 || used.has(s) || TEMPLATE_WORDS.has(s)) continue;
      used.add(s);
      return s[0]!.toUpperCase() + s.slice(1);
    }
  };
}

/**
 * Generates the world of `seed`: 8 countries, their 8 capitals, 8 rivers, 8 mountains, 8
 * founders, 6 languages and 4 scripts (50 documents), with the facts they state.
 *
 * @example Usage
 * ```ts
 * import { generateCorpus } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const corpus = generateCorpus(1);
 * assert.equal(corpus.documents.length, 50);
 * assert.deepEqual(generateCorpus(1), corpus); // deterministic
 * const capital = corpus.facts.find((f) => f.relation === "capital")!;
 * const doc = corpus.documents.find((d) => d.id === capital.doc)!;
 * assert.ok(doc.text.includes(capital.object));
 * ```
 */
export function generateCorpus(seed: number): Corpus {
  const rng = seededRng(seed, 0x51a7);
  const name = nameMaker(rng);
  const n = 8;
  const countries = Array.from({ length: n }, () => name([2, 3]));
  const cities = Array.from({ length: n }, () => name([2, 2]));
  const rivers = Array.from({ length: n }, () => name([2, 2]));
  const mountains = Array.from({ length: n }, () => name([2, 3]));
  const people = Array.from({ length: n }, () => `${name([1, 2])} ${name([2, 2])}`);
  const languages = Array.from({ length: 6 }, () => name([2, 2]) + "ic");
  const scripts = Array.from({ length: 4 }, () => name([2, 2]));

  const docs: { key: string; title: string; text: string }[] = [];
  const pending: Array<Omit<Fact, "doc"> & { key: string }> = [];
  const fact = (key: string, subject: string, relation: string, object: string) =>
    pending.push({ key, subject, relation, object });

  countries.forEach((c, i) => {
    const key = `country:${i}`;
    const lang = languages[i % languages.length]!;
    const city = cities[i]!;
    fact(key, c, "capital", city);
    fact(key, c, "language", lang);
    const gov = rng.pick(GOVERNMENTS);
    docs.push({
      key,
      title: c,
      text: rng.chance(0.5)
        ? `${c} is a ${gov} in the western lowlands. Its capital is ${city}. The official language of ${c} is ${lang}.`
        : `${c} is a small ${gov}. The seat of its government, and its capital, is ${city}. Most people in ${c} speak ${lang}, its official language.`,
    });
  });
  cities.forEach((city, i) => {
    const key = `city:${i}`;
    const year = rng.int(900, 1700);
    const founder = people[i]!;
    fact(key, city, "river", rivers[i]!);
    fact(key, city, "founder", founder);
    fact(key, city, "founded", String(year));
    docs.push({
      key,
      title: city,
      text: `${city} is a city on the banks of the ${
        rivers[i]
      } river. It was founded by ${founder} in ${year}. Its old market is known for salt and wool.`,
    });
    const born = year - rng.int(25, 60);
    const job = rng.pick(OCCUPATIONS);
    const pkey = `person:${i}`;
    fact(pkey, founder, "born", String(born));
    docs.push({
      key: pkey,
      title: founder,
      text: `${founder} was a ${job}, born in ${born}. In later life ${
        founder.split(" ")[0]
      } led settlers to a new city.`,
    });
  });
  rivers.forEach((r, i) => {
    const key = `river:${i}`;
    const length = rng.int(80, 2400);
    fact(key, r, "source", mountains[i]!);
    fact(key, r, "length", String(length));
    docs.push({
      key,
      title: `${r} River`,
      text: `The ${r} rises on Mount ${
        mountains[i]
      } and flows ${length} kilometres to the sea. Barges carry timber along its lower course.`,
    });
  });
  mountains.forEach((m, i) => {
    const key = `mountain:${i}`;
    const height = rng.int(900, 6500);
    fact(key, m, "height", String(height));
    docs.push({
      key,
      title: `Mount ${m}`,
      text:
        `Mount ${m} is a peak ${height} metres high. Its upper slopes are covered in snow for most of the year.`,
    });
  });
  languages.forEach((l, i) => {
    const key = `language:${i}`;
    const script = scripts[i % scripts.length]!;
    fact(key, l, "script", script);
    docs.push({
      key,
      title: `${l} language`,
      text: `${l} is a language of the lowlands. It is written in the ${script} script.`,
    });
  });
  scripts.forEach((s, i) => {
    const key = `script:${i}`;
    const letters = rng.int(18, 44);
    fact(key, s, "letters", String(letters));
    docs.push({
      key,
      title: `${s} script`,
      text: `The ${s} script is an alphabet of ${letters} letters, written from left to right.`,
    });
  });

  const order = rng.shuffle(docs.map((_, i) => i));
  const ids = new Map<string, string>();
  order.forEach((docIndex, k) =>
    ids.set(docs[docIndex]!.key, `D${String(k + 1).padStart(2, "0")}`)
  );
  const documents: CorpusDocument[] = docs
    .map((d) => ({ id: ids.get(d.key)!, title: d.title, text: d.text }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const allFacts: Fact[] = pending.map(({ key, ...f }) => ({ ...f, doc: ids.get(key)! }));
  return { documents, facts: allFacts };
}

/** Greedy word wrap at `width` columns (what `deno fmt` does to Markdown prose). */
function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines.join("\n");
}

/**
 * Writes `corpus` to `dir`: one `<id>.md` per document (`# title`, a blank line, the text
 * wrapped at 100 columns as `deno fmt` would), `facts.json`, and `index.json` (the document
 * ids in file-name order, what `loadCorpus` reads for a corpus served by URL); files of other
 * ids are left alone.
 *
 * @example Usage
 * ```ts
 * import { generateCorpus, loadCorpus, writeCorpus } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await writeCorpus(generateCorpus(3), dir);
 * assert.deepEqual(await loadCorpus(dir), generateCorpus(3));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writeCorpus(corpus: Corpus, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const d of corpus.documents) {
    const body = d.text.split("\n\n").map((p) => wrap(p, 100)).join("\n\n");
    await Deno.writeTextFile(`${dir}/${d.id}.md`, `# ${d.title}\n\n${body}\n`);
  }
  await Deno.writeTextFile(`${dir}/facts.json`, JSON.stringify(corpus.facts, null, 2) + "\n");
  const ids = corpus.documents.map((d) => d.id).sort((a, b) =>
    `${a}.md` < `${b}.md` ? -1 : `${a}.md` > `${b}.md` ? 1 : 0
  );
  await Deno.writeTextFile(`${dir}/${CORPUS_INDEX_FILE}`, JSON.stringify(ids, null, 2) + "\n");
}

if (import.meta.main) {
  const arg = (k: string) => Deno.args.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3);
  const seed = Number(arg("seed") ?? SHIPPED_CORPUS_SEED);
  const out = arg("out") ?? new URL(".", import.meta.url).pathname;
  const corpus = generateCorpus(seed);
  await writeCorpus(corpus, out.replace(/\/+$/, ""));
  console.log(
    `wrote ${corpus.documents.length} documents and ${corpus.facts.length} facts to ${out}`,
  );
}
