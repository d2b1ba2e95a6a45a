import assert from "node:assert/strict";
import fc from "fast-check";
import { generateCorpus, SHIPPED_CORPUS_SEED, writeCorpus } from "./corpus/generate.ts";
import { Bm25Index, loadCorpus, searchTool, snippet, tokenize } from "./search.ts";
import { callTool } from "./tool.ts";

const CORPUS_DIR = new URL("./corpus/", import.meta.url);

Deno.test("tokenize: lower-cased runs of letters and digits", () => {
  assert.deepEqual(tokenize("Hello, World! x2 — Ærø"), ["hello", "world", "x2", "ærø"]);
  assert.deepEqual(tokenize("  ...  "), []);
});

Deno.test("BM25 matches a hand computation (k1 = 1.2, b = 0.75)", () => {
  const docs = [
    { id: "a", title: "", text: "apple apple pear" },
    { id: "b", title: "", text: "pear plum" },
    { id: "c", title: "", text: "plum" },
  ];
  const index = new Bm25Index(docs);
  const avg = 2; // (3 + 2 + 1) / 3
  const idf = (df: number) => Math.log(1 + (3 - df + 0.5) / (df + 0.5));
  const term = (tf: number, len: number, df: number) =>
    idf(df) * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * len / avg));
  const hits = index.search("apple pear");
  assert.deepEqual(hits.map((h) => h.doc.id), ["a", "b"]);
  assert.ok(Math.abs(hits[0]!.score - (term(2, 3, 1) + term(1, 3, 2))) < 1e-12);
  assert.ok(Math.abs(hits[1]!.score - term(1, 2, 2)) < 1e-12);
  assert.equal(index.documentFrequency("PEAR"), 2);
  assert.deepEqual(index.search("plum", 1).map((h) => h.doc.id), ["c"]); // shorter doc wins
  assert.throws(() => new Bm25Index([docs[0]!, docs[0]!]), /duplicate/);
  assert.throws(() => index.search("x", 0), /k/);
});

Deno.test("property: a document's unique term retrieves it first", () => {
  const word = fc.constantFrom("alpha", "beta", "gamma", "delta", "river", "mount", "city", "the");
  const doc = fc.array(word, { minLength: 0, maxLength: 12 }).map((ws) => ws.join(" "));
  fc.assert(
    fc.property(
      fc.array(doc, { minLength: 1, maxLength: 12 }),
      fc.nat(),
      fc.constantFrom("zyxquux", "ZyxQuux", "zyxquux?", "...ZYXQUUX"),
      (texts, pick, query) => {
        const target = pick % texts.length;
        const docs = texts.map((text, i) => ({
          id: `d${i}`,
          title: `T${i}`,
          text: i === target ? `${text} zyxquux` : text,
        }));
        const hits = new Bm25Index(docs).search(query);
        assert.deepEqual(hits.map((h) => h.doc.id), [`d${target}`]);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("shipped corpus: unique terms and titles retrieve their document first", async () => {
  const corpus = await loadCorpus(CORPUS_DIR);
  assert.ok(corpus.documents.length >= 40 && corpus.documents.length <= 80);
  const index = new Bm25Index(corpus.documents);
  let checked = 0;
  for (const d of corpus.documents) {
    for (const term of new Set(tokenize(`${d.title} ${d.text}`))) {
      if (index.documentFrequency(term) !== 1) continue;
      assert.equal(index.search(term)[0]!.doc.id, d.id, term);
      checked++;
    }
  }
  assert.ok(checked >= 40, `${checked} unique terms`);
  // and every document comes first for its own title
  for (const d of corpus.documents) assert.equal(index.search(d.title)[0]!.doc.id, d.id, d.title);
});

Deno.test("shipped corpus files are generateCorpus(SHIPPED_CORPUS_SEED)", async () => {
  assert.deepEqual(await loadCorpus(CORPUS_DIR), generateCorpus(SHIPPED_CORPUS_SEED));
  const dir = await Deno.makeTempDir();
  try {
    await writeCorpus(generateCorpus(SHIPPED_CORPUS_SEED), dir);
    for await (const e of Deno.readDir(dir)) {
      assert.equal(
        await Deno.readTextFile(`${dir}/${e.name}`),
        await Deno.readTextFile(new URL(e.name, CORPUS_DIR)),
        e.name,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Serves `dir` (a `file:` URL ending in `/`) on loopback; 404 for anything missing. */
function serveDir(dir: URL): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const name = decodeURIComponent(new URL(req.url).pathname).slice(1);
    if (name.includes("/") || name.includes("..")) return new Response("bad path", { status: 400 });
    try {
      return new Response(await Deno.readFile(new URL(name, dir)));
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
}

Deno.test("loadCorpus by URL: the shipped corpus served over HTTP reads the same as from disk", async () => {
  const server = serveDir(CORPUS_DIR);
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    assert.deepEqual(await loadCorpus(url), generateCorpus(SHIPPED_CORPUS_SEED));
    assert.deepEqual(await loadCorpus(new URL(`${url}/`)), generateCorpus(SHIPPED_CORPUS_SEED));
  } finally {
    await server.shutdown();
  }
});

Deno.test("loadCorpus by URL: a missing index.json or listed document names the URL", async () => {
  const dir = await Deno.makeTempDir();
  const server = serveDir(new URL(`file://${dir}/`));
  try {
    const url = `http://127.0.0.1:${server.addr.port}/`;
    await assert.rejects(loadCorpus(url), /index\.json does not exist \(HTTP 404\)/);
    await Deno.writeTextFile(`${dir}/index.json`, JSON.stringify(["D1"]));
    await assert.rejects(
      loadCorpus(url),
      /D1\.md does not exist \(HTTP 404\), but index\.json lists "D1"/,
    );
    await Deno.writeTextFile(`${dir}/index.json`, JSON.stringify({ D1: true }));
    await assert.rejects(loadCorpus(url), /must hold an array of document ids/);
    await Deno.writeTextFile(`${dir}/index.json`, JSON.stringify(["D1"]));
    await Deno.writeTextFile(`${dir}/D1.md`, "# Lorn\n\nThe Lorn is a river.\n");
    assert.deepEqual(await loadCorpus(url), {
      documents: [{ id: "D1", title: "Lorn", text: "The Lorn is a river." }],
      facts: [],
    });
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("generateCorpus: deterministic, facts stated once, chains need several documents", () => {
  const a = generateCorpus(5);
  assert.deepEqual(generateCorpus(5), a);
  assert.notDeepEqual(generateCorpus(6).documents, a.documents);
  const byId = new Map(a.documents.map((d) => [d.id, d]));
  for (const f of a.facts) {
    const doc = byId.get(f.doc)!;
    assert.ok(doc.text.includes(f.object), `${f.doc} states ${f.relation} ${f.object}`);
    // the object (an entity) is not stated together with the subject elsewhere
    const also = a.documents.filter((d) =>
      d.id !== f.doc && d.text.includes(f.subject) && d.text.includes(f.object)
    );
    assert.deepEqual(also.map((d) => d.id), [], `${f.subject} ${f.relation} ${f.object}`);
  }
});

Deno.test("searchTool: lines [id] title: snippet, k hits, errors", async () => {
  const corpus = generateCorpus(SHIPPED_CORPUS_SEED);
  const tool = searchTool(new Bm25Index(corpus.documents), { k: 2 });
  const capital = corpus.facts.find((f) => f.relation === "capital")!;
  const r = await callTool(tool, `capital of ${capital.subject}`);
  assert.equal(r.status, "ok");
  const lines = r.text.split("\n");
  assert.equal(lines.length, 2);
  assert.match(
    lines[0]!,
    new RegExp(`^\\[${capital.doc}\\] ${capital.subject}: .*${capital.object}`),
  );
  assert.equal((await callTool(tool, "qqqqzz")).text, 'no results for "qqqqzz"');
  assert.match((await callTool(tool, " ?! ")).text, /^error: search failed: empty query/);
  assert.throws(() => searchTool({} as Bm25Index), /Bm25Index/);
});

Deno.test("snippet: whole text when short, else from the best sentence", () => {
  const text = "First one here. Second about Karvel. Third.";
  assert.equal(snippet(text, "karvel"), text);
  assert.equal(snippet(text, "karvel", 25), "Second about Karvel. Thi…");
});

Deno.test("loadCorpus: rejects a file without a title line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/x.md`, "no title\n");
    await assert.rejects(() => loadCorpus(dir), /must start with a "# title" line/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
