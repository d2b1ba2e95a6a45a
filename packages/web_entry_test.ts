/**
 * The packages' browser entries (issue 25): each entry below is bundled for the browser with
 * `deno bundle --platform browser` and checked three ways.
 *
 * 1. **Imports.** The bundle must be self-contained: `deno info` on it lists its remaining static
 *    and dynamic imports, and any (a `node:` module above all) fails the test with the package and
 *    the specifier. Deno-only code belongs behind the package's `/fs` (or `/code`) entry.
 * 2. **`Deno` references.** Each `Deno.<member>` left in the minified bundle must be on the
 *    entry's list of references that sit inside functions guarded at call time (a
 *    `globalThis.Deno` check or a `try` that treats its absence as "unset"); a new one fails with
 *    its name.
 * 3. **Evaluation without Deno.** The bundle is imported in a worker whose `Deno`, `process`,
 *    `Buffer`, `global`, `setImmediate` and `clearImmediate` globals were deleted first, as a
 *    browser has none of them, and a short smoke test of the entry runs there (for
 *    `@rlvr/tensor`: a matmul on the WebAssembly kernel, single-threaded as in a browser without
 *    `node:worker_threads`; for `@rlvr/policy`: a model and tokenizer loaded from bytes).
 *
 * The bundle sizes (minified) are printed.
 *
 * @module
 */

import assert from "node:assert/strict";

/** One entry point that must run on the web platform. */
interface WebEntry {
  /** The import specifier, for messages. */
  name: string;
  /** The file, relative to `packages/`. */
  file: string;
  /** `Deno.<member>` references allowed in the bundle (each guarded at call time). */
  deno: readonly string[];
  /**
   * The body of an async function of `m` (the bundle's namespace) run in the worker without
   * Deno; it throws on failure and may return a value for the message.
   */
  smoke: string;
}

const ENTRIES: readonly WebEntry[] = [
  {
    name: "@rlvr/common",
    file: "common/mod.ts",
    deno: [],
    smoke: `
      const g = new m.Xoshiro128ss([1, 2, 3, 4]);
      if (typeof g.next() !== "number") throw new Error("Xoshiro128ss.next is not a number");
      const { records, partial } = m.parseJsonl('{"a":1}\\n{"a"', "x.jsonl");
      if (records.length !== 1 || partial !== '{"a"') throw new Error("parseJsonl");
    `,
  },
  {
    name: "@rlvr/tensor",
    file: "tensor/mod.ts",
    // blas.ts: loadNativeBlas checks globalThis.Deno?.dlopen first; env.ts reads the environment
    // inside a try that treats a missing Deno as "unset".
    deno: ["Deno.UnsafePointerView", "Deno.dlopen", "Deno.env", "Deno.errors", "Deno.permissions"],
    smoke: `
      // Asks for 4 threads: without node:worker_threads (a browser) the kernel runs on one.
      const cpu = m.createCpuBackend({ threads: 4 });
      if (cpu.matmulThreads !== 1) throw new Error("matmulThreads " + cpu.matmulThreads);
      const M = 8, K = 64, N = 48; // N*K >= WASM_MIN_NK: the WebAssembly kernel
      const a = Array.from({ length: M }, (_, i) => Array.from({ length: K }, (_, k) => ((i * 7 + k * 3) % 11) - 5));
      const b = Array.from({ length: K }, (_, k) => Array.from({ length: N }, (_, j) => ((k * 5 + j) % 7) - 3));
      const c = await m.withBackend(cpu, () => m.tensor(a).matmul(m.tensor(b)).toArray());
      for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
        let s = 0;
        for (let k = 0; k < K; k++) s += a[i][k] * b[k][j];
        if (c[i][j] !== s) throw new Error("matmul[" + i + "][" + j + "] = " + c[i][j] + ", expected " + s);
      }
      return cpu.matmulPath + ", " + cpu.matmulThreads + " thread";
    `,
  },
  {
    name: "@rlvr/advantage",
    file: "advantage/mod.ts",
    deno: [],
    smoke: `
      if (!m.estimatorNames().includes("grpo")) throw new Error("no grpo estimator");
    `,
  },
  {
    name: "@rlvr/objectives",
    file: "objectives/mod.ts",
    deno: ["Deno.UnsafePointerView", "Deno.dlopen", "Deno.env", "Deno.errors", "Deno.permissions"],
    smoke: `
      if (!m.policyLossNames().includes("vanilla")) throw new Error("no vanilla policy loss");
    `,
  },
  {
    name: "@rlvr/sampling",
    file: "sampling/mod.ts",
    deno: [],
    smoke: `
      const t = new m.ChatTemplate("{{ question }}");
      if (typeof t !== "object") throw new Error("ChatTemplate");
      if (m.passAtK(4, 2, 1) !== 0.5) throw new Error("passAtK(4, 2, 1) = " + m.passAtK(4, 2, 1));
    `,
  },
  {
    name: "@rlvr/image",
    file: "image/mod.ts",
    // loadImage reads a file path only after checking globalThis.Deno.
    deno: ["Deno.readFile", "Deno.stat"],
    smoke: `
      const image = m.createImage(3, 2, { fill: [1, 2, 3] });
      const back = await m.loadImage(m.toDataUrl(image));
      if (back.width !== 3 || back.data[0] !== 1) throw new Error("loadImage(data URL)");
      let error = "";
      await m.loadImage("x.png").catch((e) => (error = String(e)));
      if (!/needs Deno's file system/.test(error)) throw new Error("loadImage(path): " + error);
    `,
  },
  {
    name: "@rlvr/policy",
    file: "policy/mod.ts",
    // Tensor's (see above), plus the folder reader (file_source.ts) that the tokenizers'
    // load(dir) methods use after requireDeno.
    deno: [
      "Deno.UnsafePointerView",
      "Deno.dlopen",
      "Deno.env",
      "Deno.errors",
      "Deno.permissions",
      "Deno.readDir",
      "Deno.readFile",
    ],
    smoke: `
      const tok = m.CharTokenizer.fromCorpus(["0123456789+="]);
      const files = {
        "tokenizer.json": JSON.stringify(tok.toTokenizerJson()),
        "tokenizer_config.json": JSON.stringify(tok.toTokenizerConfig()),
      };
      const loaded = await m.loadTokenizerFromFiles(files);
      if (loaded.decode(loaded.encode("12+3"), { skipSpecialTokens: true }) !== "12+3") {
        throw new Error("loadTokenizerFromFiles");
      }
      let error = "";
      await m.CharTokenizer.load("tok").catch((e) => (error = String(e)));
      if (!/needs Deno's file system/.test(error)) throw new Error("CharTokenizer.load: " + error);
      const config = m.modelConfig({
        vocabSize: tok.vocabSize, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
      });
      const model = m.CausalLM.random(config, { seed: 1 });
      const bytes = await m.checkpointFiles({ config, params: model.params });
      const ckpt = await m.loadCheckpointFromFiles(bytes);
      if (ckpt.params.size !== model.params.size) throw new Error("loadCheckpointFromFiles");
      return Object.keys(bytes).join(", ");
    `,
  },
  {
    name: "@rlvr/rewards",
    file: "rewards/mod.ts",
    // judgeReward's optional cache file, behind a Deno check.
    deno: ["Deno.errors", "Deno.readTextFile", "Deno.rename", "Deno.writeTextFile"],
    smoke: `
      // The CAS (compute-engine) decides this one: 2/4 and 0.5 differ as text.
      const r = m.verifyMath("So it is $2/4$.", "0.5");
      if (r.correct !== true) throw new Error("verifyMath: " + JSON.stringify(r));
      const row = m.countdownTask({ count: 3 }).row(0, 0);
      if (typeof row.prompt !== "string") throw new Error("countdownTask: " + JSON.stringify(row));
      let error = "";
      try {
        m.judgeReward({
          baseUrl: "http://localhost:1", model: "m", promptTemplate: "{{completion}}",
          cache: { file: "cache.json" },
        });
      } catch (e) {
        error = String(e);
      }
      if (!/needs Deno's file system/.test(error)) throw new Error("judgeReward: " + error);
    `,
  },
  ...["core", "format", "math/mod", "tasks/mod", "vision/mod"].map((sub) => ({
    name: `@rlvr/rewards/${sub.replace(/\/mod$/, "")}`,
    file: `rewards/${sub}.ts`,
    deno: [],
    smoke: "",
  })),
];

const ROOT = new URL("./", import.meta.url);

async function run(args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: new URL("../", ROOT),
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { ok: out.success, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The bundle's remaining imports, as `deno info` parses them (strings in code do not count). */
async function importsOf(bundle: string): Promise<string[]> {
  const info = await run(["info", "--no-config", "--json", bundle]);
  assert.ok(info.ok, `deno info ${bundle} failed:\n${info.stderr}`);
  const graph = JSON.parse(info.stdout) as {
    roots: string[];
    modules: { specifier: string; dependencies?: { specifier: string }[] }[];
  };
  const root = graph.modules.find((m) => m.specifier === graph.roots[0]);
  return (root?.dependencies ?? []).map((d) => d.specifier);
}

/** Imports `bundle` in a worker without Deno's or Node's globals and runs `smoke` on it. */
function evaluateWithoutDeno(bundle: string, smoke: string): Promise<string> {
  const source = `
    for (const g of ["Deno", "process", "Buffer", "global", "setImmediate", "clearImmediate"]) {
      delete globalThis[g];
    }
    self.onmessage = async ({ data }) => {
      try {
        if (typeof globalThis.Deno !== "undefined") throw new Error("Deno is still defined");
        const m = await import(data.url);
        const AsyncFunction = (async () => {}).constructor;
        const out = await new AsyncFunction("m", data.smoke)(m);
        self.postMessage({ ok: true, out: out === undefined ? "" : String(out) });
      } catch (e) {
        self.postMessage({ ok: false, error: e instanceof Error ? e.stack ?? e.message : String(e) });
      }
    };
  `;
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const worker = new Worker(url, { type: "module" });
  return new Promise<string>((resolve, reject) => {
    const done = () => {
      worker.terminate();
      URL.revokeObjectURL(url);
    };
    worker.onmessage = ({ data }: MessageEvent<{ ok: boolean; out?: string; error?: string }>) => {
      done();
      if (data.ok) resolve(data.out ?? "");
      else reject(new Error(data.error));
    };
    worker.onerror = (e) => {
      e.preventDefault();
      done();
      reject(new Error(e.message));
    };
    worker.postMessage({ url: new URL(`file://${bundle}`).href, smoke });
  });
}

const dir = await Deno.makeTempDir({ prefix: "rlvr-web-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const sizes = new Map<string, number>();

for (const entry of ENTRIES) {
  Deno.test({
    name: `${entry.name}: bundles for the browser without node: imports, guarded Deno references ` +
      `only, and evaluates without Deno`,
    sanitizeResources: false,
    fn: async () => {
      const where = `${entry.name} (packages/${entry.file})`;
      const bundle = `${dir}/${entry.file.replaceAll("/", "_").replace(/\.ts$/, ".js")}`;
      const built = await run([
        "bundle",
        "--platform",
        "browser",
        "--format",
        "esm",
        "--minify",
        "-o",
        bundle,
        `packages/${entry.file}`,
      ]);
      assert.ok(built.ok, `${where}: deno bundle --platform browser failed:\n${built.stderr}`);
      sizes.set(entry.name, (await Deno.stat(bundle)).size);

      const imports = await importsOf(bundle);
      assert.deepEqual(
        imports,
        [],
        `${where}: the browser bundle still imports ${imports.join(", ")}; ` +
          (imports.some((s) => s.startsWith("node:"))
            ? "node: modules do not exist in a browser: move the code that needs them to the " +
              "package's Deno-only entry (e.g. /fs)"
            : "a browser bundle must be self-contained"),
      );

      const text = await Deno.readTextFile(bundle);
      const found = [...new Set(text.match(/\bDeno\.[A-Za-z_$][\w$]*/g) ?? [])].sort();
      const unexpected = found.filter((d) => !entry.deno.includes(d));
      assert.deepEqual(
        unexpected,
        [],
        `${where}: the browser bundle references ${unexpected.join(", ")}, not on the list of ` +
          `references guarded at call time; move that code to the package's Deno-only entry, or ` +
          `guard it with a globalThis.Deno check and add it to the list in web_entry_test.ts`,
      );

      try {
        await evaluateWithoutDeno(bundle, entry.smoke);
      } catch (e) {
        assert.fail(
          `${where}: the browser bundle failed in a worker without Deno: ${(e as Error).message}`,
        );
      }
    },
  });
}

Deno.test({
  name: "web entries: bundle sizes (minified)",
  fn: () => {
    for (const [name, size] of sizes) console.log(`${name}: ${(size / 1024).toFixed(1)} KiB`);
  },
});
